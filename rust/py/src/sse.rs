//! Python classes for Server-Sent Events and streaming UTF-8.

use std::cell::RefCell;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyBytes, PyList, PyString};
use streamwire_core::sse::{self, Event};
use streamwire_core::utf8::{self, Utf8Mode};
use streamwire_core::FramingError;

use crate::buffer::Bytes;
use crate::errors::{framing_error, usage_error};
use crate::feed::{self, Converted, Framed, Framing};
use crate::shape::{Collector, ShapeMatcher, StreamShapes};
use crate::taker::SinkRef;
use crate::text::new_str;

/// An event's data: small data is kept as UTF-8 until Python first reads it.
///
/// Building a `str` costs more than everything else the decoder does per
/// event (CPython re-scans the UTF-8 to pick a storage width), and callers
/// that parse the data as JSON in Rust never need it, so it is built on first
/// access, once, and the Rust copy is released then. Data larger than
/// [`LAZY_DATA_MAX`] becomes a `str` at once: a second copy of a large event
/// would cost memory, and the per-event saving is negligible there.
enum Data {
    Text(Box<str>),
    Object(Py<PyString>),
}

impl Data {
    /// The data as an event holds it.
    fn held(self) -> GILProtected<RefCell<Data>> {
        GILProtected::new(RefCell::new(self))
    }
}

/// The largest data kept as UTF-8 until first read (see [`Data`]).
const LAZY_DATA_MAX: usize = 64 * 1024;

/// One dispatched Server-Sent Event.
#[pyclass(frozen, module = "streamwire._core", name = "SseEvent")]
pub struct SseEvent {
    event: Py<PyString>,
    /// Only read and replaced with the GIL held (no lock: the first read
    /// of every event's data took two atomic operations more).
    data: GILProtected<RefCell<Data>>,
    id: Option<Py<PyString>>,
    retry: Option<u64>,
}

impl SseEvent {
    fn data_object(&self, py: Python<'_>) -> PyResult<Py<PyString>> {
        // Building the str runs no Python code, so nothing can read the
        // data again while it is borrowed here.
        let mut data = self.data.get(py).borrow_mut();
        Ok(match &*data {
            Data::Object(obj) => obj.clone_ref(py),
            Data::Text(text) => {
                let obj = new_str(py, text)?.unbind();
                *data = Data::Object(obj.clone_ref(py));
                obj
            }
        })
    }
}

#[pymethods]
impl SseEvent {
    #[new]
    #[pyo3(signature = (data = "", event = "message", id = None, retry = None))]
    fn new(
        py: Python<'_>,
        data: &str,
        event: &str,
        id: Option<Py<PyString>>,
        retry: Option<i128>,
    ) -> PyResult<Self> {
        let retry = non_negative(retry)?;
        Ok(SseEvent {
            event: PyString::new(py, event).unbind(),
            data: Data::Text(data.into()).held(),
            id,
            retry,
        })
    }

    /// The event type; "message" when the stream set none.
    #[getter]
    fn event(&self, py: Python<'_>) -> Py<PyString> {
        self.event.clone_ref(py)
    }

    /// The data lines joined by LF, without the trailing LF.
    #[getter]
    fn data(&self, py: Python<'_>) -> PyResult<Py<PyString>> {
        self.data_object(py)
    }

    /// The last event id at dispatch: None if never set, "" if cleared.
    #[getter]
    fn id(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.id.as_ref().map(|s| s.clone_ref(py))
    }

    /// A reconnection time (ms) set in this event's block, else None.
    #[getter]
    fn retry(&self) -> Option<u64> {
        self.retry
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let Ok(other) = other.downcast::<SseEvent>() else {
            return Ok(py.NotImplemented());
        };
        let o = other.get();
        let same = self.retry == o.retry
            && self.event.bind(py).to_str()? == o.event.bind(py).to_str()?
            && self.data_object(py)?.bind(py).to_str()? == o.data_object(py)?.bind(py).to_str()?
            && match (&self.id, &o.id) {
                (None, None) => true,
                (Some(a), Some(b)) => a.bind(py).to_str()? == b.bind(py).to_str()?,
                _ => false,
            };
        Ok(same.into_pyobject(py)?.to_owned().into_any().unbind())
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let id = self.id.as_ref().map(|s| s.clone_ref(py));
        (self.event.clone_ref(py), self.data_object(py)?, id, self.retry).into_pyobject(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let data_obj = self.data_object(py)?;
        let data = data_obj.bind(py).to_str()?;
        let shown = if data.chars().count() > 60 {
            let cut: String = data.chars().take(57).collect();
            format!("{:?}...", cut)
        } else {
            format!("{:?}", data)
        };
        let id = match &self.id {
            None => "None".to_owned(),
            Some(s) => format!("{:?}", s.bind(py).to_str()?),
        };
        let retry = self.retry.map_or("None".to_owned(), |r| r.to_string());
        Ok(format!(
            "SseEvent(event={:?}, data={}, id={}, retry={})",
            self.event.bind(py).to_str()?,
            shown,
            id,
            retry
        ))
    }
}

/// A Python string cached for the last value it was built from: event types
/// and ids repeat on almost every event, so each is built once, not per event.
pub(crate) struct CachedStr {
    text: String,
    py: Option<Py<PyString>>,
}

impl CachedStr {
    pub(crate) fn new() -> Self {
        CachedStr { text: String::new(), py: None }
    }

    pub(crate) fn get(&mut self, py: Python<'_>, s: &str) -> Py<PyString> {
        match &self.py {
            Some(cached) if self.text == s => cached.clone_ref(py),
            _ => {
                let fresh = PyString::new(py, s).unbind();
                self.text.clear();
                self.text.push_str(s);
                self.py = Some(fresh.clone_ref(py));
                fresh
            }
        }
    }
}

/// An event that `feed_matched` returned as a match tuple, kept until the
/// decoder's next call so that `matched_event` can give back its `SseEvent`.
struct MatchedEvent {
    /// The event's data: `text[start..end]` of [`Matched`].
    start: usize,
    end: usize,
    event: Py<PyString>,
    id: Option<Py<PyString>>,
}

/// The matched events of the last `feed_matched` call (see [`MatchedEvent`]).
#[derive(Default)]
struct Matched {
    events: Vec<MatchedEvent>,
    /// Their data, concatenated: one buffer instead of one allocation each.
    text: String,
}

/// A `Matched` buffer larger than this is released rather than kept for reuse.
const MATCHED_KEEP_BYTES: usize = 1024 * 1024;

impl Matched {
    fn clear(&mut self) {
        self.events.clear();
        if self.text.capacity() > MATCHED_KEEP_BYTES {
            self.text = String::new();
        } else {
            self.text.clear();
        }
    }
}

/// Incremental Server-Sent Events decoder with bounded buffers.
#[pyclass(module = "streamwire._core", name = "SseDecoder")]
pub struct SseDecoder {
    inner: sse::SseDecoder,
    event_type: CachedStr,
    id: CachedStr,
    matched: Matched,
    shapes: StreamShapes,
    /// The events of a GIL-released `feed`, kept between calls (see [`Pending`]).
    pending: Vec<Pending>,
    finished: bool,
}

fn event_to_py(
    py: Python<'_>,
    ev: &Event<'_>,
    types: &mut CachedStr,
    ids: &mut CachedStr,
) -> PyResult<Py<SseEvent>> {
    let event = types.get(py, ev.event_type);
    let id = ev.id.map(|s| ids.get(py, s));
    let data = if ev.data.len() <= LAZY_DATA_MAX {
        Data::Text(ev.data.into())
    } else {
        Data::Object(new_str(py, ev.data)?.unbind())
    };
    Py::new(py, SseEvent { event, data: data.held(), id, retry: ev.retry })
}

/// An event decoded with the GIL released, kept in Rust until its
/// `SseEvent` can be built (see [`crate::buffer::release_gil_bytes`]). Its
/// event type and id are indexes into the call's [`Names`].
struct Pending {
    event_type: usize,
    data: Box<str>,
    id: Option<usize>,
    retry: Option<u64>,
}

/// A `pending` buffer larger than this is released rather than kept for reuse.
const PENDING_KEEP: usize = 64 * 1024;

/// The event types (or the ids) of one released call, each kept once in a
/// row (streams repeat the same one on every event).
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    fn index(&mut self, name: &str) -> usize {
        match self.0.last() {
            Some(last) if last == name => self.0.len() - 1,
            _ => {
                self.0.push(name.to_owned());
                self.0.len() - 1
            }
        }
    }

    fn get(&self, index: usize) -> &str {
        self.0.get(index).map_or("", String::as_str)
    }
}

#[pymethods]
impl SseDecoder {
    #[new]
    #[pyo3(signature = (max_line_bytes = sse::DEFAULT_MAX_LINE_BYTES, max_event_bytes = sse::DEFAULT_MAX_EVENT_BYTES))]
    fn new(max_line_bytes: usize, max_event_bytes: usize) -> Self {
        SseDecoder {
            inner: sse::SseDecoder::new(max_line_bytes, max_event_bytes),
            event_type: CachedStr::new(),
            id: CachedStr::new(),
            matched: Matched::default(),
            shapes: StreamShapes::default(),
            pending: Vec::new(),
            finished: false,
        }
    }

    /// Decodes a chunk (any buffer of bytes); returns the events it completed.
    fn feed<'py>(&mut self, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        feed::feed(self, data)
    }

    /// Decodes a chunk like `feed`, matching each event's data against
    /// `shapes` on the way: an event that matches a template becomes the tuple
    /// `(template, *captures, ticket)` instead of an `SseEvent`, or joins a
    /// run tuple for a matcher made with `runs=True` (see [`Collector`]);
    /// events whose block set `retry` are never matched. `matched_event(ticket)`
    /// gives the `SseEvent` back until the decoder's next call. With an armed
    /// `sink`, the matches it takes at the head of the call append their
    /// events to `out` instead (a `TextUsageTaker` or `TextTaker`).
    #[pyo3(signature = (data, shapes, sink = None, out = None))]
    fn feed_matched<'py>(
        &mut self,
        data: &Bound<'py, PyAny>,
        shapes: &Bound<'py, ShapeMatcher>,
        sink: Option<Bound<'py, PyAny>>,
        out: Option<Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = data.py();
        feed::start(self, py, "feed_matched")?;
        let bytes = Bytes::borrow(data)?;
        let matcher = shapes;
        let mut taker = SinkRef::borrow(sink.as_ref(), out.as_ref())?;
        let mut out = Collector::with_sink(py, matcher.get(), taker.as_mut().map(SinkRef::as_sink), out);
        let mut conversion: PyResult<()> = Ok(());
        let SseDecoder { inner, event_type, id, matched, shapes, .. } = self;
        let fed = inner.feed(bytes.as_slice(), |ev| {
            if conversion.is_err() {
                return;
            }
            // A decline (an event no template applies to included) is an SseEvent.
            let found = match ev.retry {
                None => shapes.match_payload(matcher, ev.event_type, ev.data),
                Some(_) => None,
            };
            conversion = match found {
                Some(m) => {
                    let ticket = matched.events.len();
                    match out.matched(&m, ticket) {
                        Ok(false) => {
                            let start = matched.text.len();
                            matched.text.push_str(ev.data);
                            matched.events.push(MatchedEvent {
                                start,
                                end: matched.text.len(),
                                event: event_type.get(py, ev.event_type),
                                id: ev.id.map(|s| id.get(py, s)),
                            });
                            Ok(())
                        }
                        Ok(true) => Ok(()),
                        Err(e) => Err(e),
                    }
                }
                None => event_to_py(py, &ev, event_type, id).and_then(|e| out.other(e.into_any())),
            };
        });
        let out = out.finish();
        conversion?;
        feed::listed(py, fed, out?)
    }

    /// The `SseEvent` of a match tuple's `ticket`, from the last `feed_matched`
    /// call; IndexError once the decoder was called again.
    fn matched_event(&self, py: Python<'_>, ticket: usize) -> PyResult<Py<SseEvent>> {
        let m = self.matched.events.get(ticket).ok_or_else(|| {
            PyIndexError::new_err("no such ticket: tickets last until the decoder's next call")
        })?;
        let data = &self.matched.text[m.start..m.end];
        let data = if data.len() <= LAZY_DATA_MAX {
            Data::Text(data.into())
        } else {
            Data::Object(new_str(py, data)?.unbind())
        };
        Py::new(
            py,
            SseEvent {
                event: m.event.clone_ref(py),
                data: data.held(),
                id: m.id.as_ref().map(|s| s.clone_ref(py)),
                retry: None,
            },
        )
    }

    /// Ends the input. An unterminated event is discarded, per the spec, so
    /// this returns an empty list; it raises if the decoder had failed.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.matched.clear();
        self.finished = true;
        match self.inner.finish() {
            Ok(()) => Ok(PyList::empty(py)),
            Err(err) => Err(framing_error::<SseEvent>(py, &err, Vec::new())),
        }
    }

    /// The last event id seen: None if never set, "" if cleared.
    #[getter]
    fn last_event_id(&self) -> Option<&str> {
        self.inner.last_event_id()
    }

    /// The stream's reconnection time in milliseconds, if a retry field set it.
    #[getter]
    fn retry(&self) -> Option<u64> {
        self.inner.retry()
    }

    /// Bytes the decoder holds now (tail line, data and type buffers).
    #[getter]
    fn buffered_bytes(&self) -> usize {
        self.inner.buffered_bytes()
    }

    /// The largest `buffered_bytes` ever held.
    #[getter]
    fn peak_buffered_bytes(&self) -> usize {
        self.inner.peak_buffered_bytes()
    }

    /// Bytes fed so far.
    #[getter]
    fn bytes_fed(&self) -> u64 {
        self.inner.bytes_fed()
    }

    /// Events dispatched so far.
    #[getter]
    fn events_dispatched(&self) -> u64 {
        self.inner.events_dispatched()
    }

    /// Events `feed_matched` matched by replaying the skeleton of an earlier
    /// one (comparing bytes instead of parsing).
    #[getter]
    fn shapes_replayed(&self) -> u64 {
        self.shapes.replayed()
    }

    /// Comment lines (keep-alives) seen so far.
    #[getter]
    fn comments_seen(&self) -> u64 {
        self.inner.comments_seen()
    }
}

impl Framing for SseDecoder {
    type Unit = SseEvent;
    const NAME: &'static str = "SseDecoder";

    fn failed(&self) -> Option<&FramingError> {
        self.inner.error()
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn clear_matched(&mut self) {
        self.matched.clear();
    }

    fn frame(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        out: &mut Converted<SseEvent>,
    ) -> Result<(), FramingError> {
        let SseDecoder { inner, event_type, id, .. } = self;
        inner.feed(data, |ev| out.push(|| event_to_py(py, &ev, event_type, id)))
    }

    /// `feed` of a large immutable chunk: framed with the GIL released, then
    /// the same `SseEvent`s built, in the same order, with the GIL back.
    /// (`feed_matched` keeps the GIL: measured, its matched events' Python
    /// objects are most of its work, so a release made two threads no faster
    /// and one slower; `benches/bench_gil.py`.)
    fn frame_released(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<Framed<SseEvent>> {
        let SseDecoder { inner, event_type, id, pending, .. } = self;
        let (mut types, mut ids) = (Names::default(), Names::default());
        let fed = py.allow_threads(|| {
            inner.feed(data, |ev| {
                pending.push(Pending {
                    event_type: types.index(ev.event_type),
                    data: ev.data.into(),
                    id: ev.id.map(|last| ids.index(last)),
                    retry: ev.retry,
                })
            })
        });
        let mut out: Vec<Py<SseEvent>> = Vec::with_capacity(pending.len());
        for ev in pending.drain(..) {
            let event = event_type.get(py, types.get(ev.event_type));
            let last_id = ev.id.map(|i| id.get(py, ids.get(i)));
            let data = if ev.data.len() <= LAZY_DATA_MAX {
                Data::Text(ev.data)
            } else {
                Data::Object(new_str(py, &ev.data)?.unbind())
            };
            out.push(Py::new(py, SseEvent { event, data: data.held(), id: last_id, retry: ev.retry })?);
        }
        if pending.capacity() > PENDING_KEEP {
            *pending = Vec::new();
        }
        Ok((out, fed))
    }
}

/// Streaming UTF-8 decoder: U+FFFD replacement, or `strict=True` to raise.
#[pyclass(module = "streamwire._core", name = "Utf8Decoder")]
pub struct Utf8Decoder {
    inner: utf8::Utf8Decoder,
    finished: bool,
}

#[pymethods]
impl Utf8Decoder {
    #[new]
    #[pyo3(signature = (strict = false))]
    fn new(strict: bool) -> Self {
        let mode = if strict { Utf8Mode::Strict } else { Utf8Mode::Replace };
        Utf8Decoder { inner: utf8::Utf8Decoder::new(mode), finished: false }
    }

    /// Decodes a chunk; an incomplete trailing sequence is held back.
    /// In strict mode an error's `.partial` holds the text decoded before it.
    fn decode(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
        if self.finished && self.inner.error().is_none() {
            return Err(usage_error(py, "Utf8Decoder.decode() called after finish()"));
        }
        let bytes = Bytes::borrow(data)?;
        let mut out = String::with_capacity(bytes.as_slice().len());
        match self.inner.decode(bytes.as_slice(), &mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(framing_error(py, &e, text_partial(py, &out))),
        }
    }

    /// Ends the input: a held-back incomplete sequence becomes U+FFFD (or raises).
    fn finish(&mut self, py: Python<'_>) -> PyResult<String> {
        self.finished = true;
        let mut out = String::new();
        match self.inner.finish(&mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(framing_error(py, &e, text_partial(py, &out))),
        }
    }

    /// Bytes of an incomplete sequence held back for the next call.
    #[getter]
    fn pending_bytes(&self) -> usize {
        self.inner.pending_bytes()
    }
}

fn text_partial(py: Python<'_>, text: &str) -> Vec<Py<PyString>> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![PyString::new(py, text).unbind()]
    }
}

/// Encodes one event as SSE bytes; CR, LF or NUL in `event` or `id` is a ValueError.
#[pyfunction]
#[pyo3(signature = (data, event = None, id = None, retry = None))]
fn encode_sse<'py>(
    py: Python<'py>,
    data: &str,
    event: Option<&str>,
    id: Option<&str>,
    retry: Option<i128>,
) -> PyResult<Bound<'py, PyBytes>> {
    let retry = non_negative(retry)?;
    let mut out = Vec::with_capacity(data.len() + 16);
    sse::encode_sse(data, event, id, retry, &mut out).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &out))
}

/// A retry time must be a non-negative number of milliseconds.
fn non_negative(retry: Option<i128>) -> PyResult<Option<u64>> {
    retry
        .map(|r| {
            u64::try_from(r).map_err(|_| {
                PyValueError::new_err("retry must be a number of milliseconds from 0 to 2**64-1")
            })
        })
        .transpose()
}

/// Adds this module's classes and functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SseEvent>()?;
    m.add_class::<SseDecoder>()?;
    m.add_class::<Utf8Decoder>()?;
    m.add_function(wrap_pyfunction!(encode_sse, m)?)?;
    m.add("DEFAULT_MAX_LINE_BYTES", sse::DEFAULT_MAX_LINE_BYTES)?;
    m.add("DEFAULT_MAX_EVENT_BYTES", sse::DEFAULT_MAX_EVENT_BYTES)?;
    Ok(())
}
