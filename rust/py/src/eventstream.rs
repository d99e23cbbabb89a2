//! Python classes for AWS EventStream messages.

use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use streamwire_core::eventstream::{
    self as es, Header, HeaderType, HeaderValue as CoreValue, Message, Validation,
};
use streamwire_core::FramingError;

use crate::buffer::Bytes;
use crate::errors::framing_error;
use crate::feed::{self, Converted, Framed, Framing};
use crate::shape::{Collector, ShapeMatcher, StreamShapes};

static UUID_CLS: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static DATETIME_CLS: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static TIMEDELTA_CLS: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static EPOCH: GILOnceCell<PyObject> = GILOnceCell::new();
static ONE_MS: GILOnceCell<PyObject> = GILOnceCell::new();

fn epoch(py: Python<'_>) -> PyResult<&PyObject> {
    EPOCH.get_or_try_init(py, || {
        let utc = py.import("datetime")?.getattr("timezone")?.getattr("utc")?;
        let dt = DATETIME_CLS.import(py, "datetime", "datetime")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("tzinfo", utc)?;
        Ok(dt.call((1970, 1, 1), Some(&kwargs))?.unbind())
    })
}

fn one_ms(py: Python<'_>) -> PyResult<&PyObject> {
    ONE_MS.get_or_try_init(py, || {
        let td = TIMEDELTA_CLS.import(py, "datetime", "timedelta")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("milliseconds", 1)?;
        Ok(td.call((), Some(&kwargs))?.unbind())
    })
}

/// A timestamp header as an aware UTC datetime, computed exactly from the
/// integer milliseconds. Outside `datetime`'s range (years 1..9999) it stays
/// an `int` of milliseconds rather than failing a valid frame.
fn timestamp_to_py(py: Python<'_>, ms: i64) -> PyResult<PyObject> {
    let as_datetime = || -> PyResult<Bound<'_, PyAny>> {
        let delta = one_ms(py)?.bind(py).call_method1("__mul__", (ms,))?;
        epoch(py)?.bind(py).call_method1("__add__", (delta,))
    };
    match as_datetime() {
        Ok(dt) if !dt.is_none() => Ok(dt.unbind()),
        // timedelta and datetime raise OverflowError past their ranges.
        Err(e) if !e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py) => Err(e),
        _ => Ok(ms.into_pyobject(py)?.into_any().unbind()),
    }
}

/// Python strings for header names and short values, built once per decoder:
/// a Bedrock stream repeats the same few (`:event-type`, `chunk`, ...); and
/// the last few whole header sets, which it repeats too (see [`HeaderSet`]).
#[derive(Default)]
struct StringCache {
    entries: Vec<(Box<str>, Py<PyString>)>,
    /// The most recent last.
    sets: Vec<Arc<HeaderSet>>,
}

impl StringCache {
    const MAX_ENTRIES: usize = 64;
    const MAX_LEN: usize = 64;
    /// Header sets kept for reuse, and the most name and value bytes one may
    /// hold (a larger set is built for its message alone).
    const MAX_SETS: usize = 4;
    const MAX_SET_BYTES: usize = 1024;

    fn get(&mut self, py: Python<'_>, s: &str) -> Py<PyString> {
        if s.len() > Self::MAX_LEN {
            return PyString::new(py, s).unbind();
        }
        if let Some((_, v)) = self.entries.iter().find(|(k, _)| &**k == s) {
            return v.clone_ref(py);
        }
        let v = PyString::new(py, s).unbind();
        if self.entries.len() < Self::MAX_ENTRIES {
            self.entries.push((s.into(), v.clone_ref(py)));
        }
        v
    }
}

fn value_to_py(py: Python<'_>, v: &CoreValue<'_>, strings: &mut StringCache) -> PyResult<PyObject> {
    Ok(match v {
        CoreValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        CoreValue::Byte(x) => x.into_pyobject(py)?.into_any().unbind(),
        CoreValue::Short(x) => x.into_pyobject(py)?.into_any().unbind(),
        CoreValue::Integer(x) => x.into_pyobject(py)?.into_any().unbind(),
        CoreValue::Long(x) => x.into_pyobject(py)?.into_any().unbind(),
        CoreValue::ByteArray(b) => PyBytes::new(py, b).into_any().unbind(),
        CoreValue::String(s) => strings.get(py, s).into_any(),
        CoreValue::Timestamp(ms) => timestamp_to_py(py, *ms)?,
        CoreValue::Uuid(bytes) => {
            let cls = UUID_CLS.import(py, "uuid", "UUID")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("bytes", PyBytes::new(py, bytes))?;
            cls.call((), Some(&kwargs))?.unbind()
        }
    })
}

/// A message's headers as Python objects, shared by the messages of a
/// decoder that repeat them: a Bedrock stream sends the same three headers
/// on nearly every message, and building them (names and values looked up,
/// a vector of them allocated, then dropped with the message) was a quarter
/// of a message's cost (perf, 4 KiB chunks of `bench_eventstream.py`'s
/// workload). Every value is an immutable Python object, so sharing one is
/// invisible; each message still gets its own `headers` dict.
struct HeaderSet {
    typed: Vec<(Py<PyString>, HeaderType, PyObject)>,
    message_type: Option<Py<PyString>>,
    event_type: Option<Py<PyString>>,
    content_type: Option<Py<PyString>>,
    exception_type: Option<Py<PyString>>,
    /// The headers it was built from, to recognise a repeat.
    source: OwnedHeaders,
}

/// Whether `set` holds exactly `headers`, in order.
fn same_headers(set: &OwnedHeaders, headers: &[Header<'_>]) -> bool {
    set.len() == headers.len()
        && set.iter().zip(headers).all(|((name, value), h)| &**name == h.name && value.view() == h.value)
}

impl HeaderSet {
    fn build(py: Python<'_>, headers: &[Header<'_>], strings: &mut StringCache) -> PyResult<HeaderSet> {
        let mut typed = Vec::with_capacity(headers.len());
        let (mut message_type, mut event_type, mut content_type, mut exception_type) =
            (None, None, None, None);
        for Header { name, value } in headers {
            let key = strings.get(py, name);
            let val = value_to_py(py, value, strings)?;
            let slot = match *name {
                ":message-type" => Some(&mut message_type),
                ":event-type" => Some(&mut event_type),
                ":content-type" => Some(&mut content_type),
                ":exception-type" => Some(&mut exception_type),
                _ => None,
            };
            if let Some(slot) = slot {
                // Mirrors `headers`, where the last value of a repeated name
                // (lenient mode) wins: a later non-string value clears the slot.
                *slot = match value {
                    CoreValue::String(_) => Some(val.bind(py).downcast::<PyString>()?.clone().unbind()),
                    _ => None,
                };
            }
            typed.push((key, value.header_type(), val));
        }
        Ok(HeaderSet {
            typed,
            message_type,
            event_type,
            content_type,
            exception_type,
            source: headers.iter().map(|h| (h.name.into(), Owned::from_core(&h.value))).collect(),
        })
    }
}

impl StringCache {
    /// The header set of `headers`: a recent one that holds the same, or a
    /// new one (kept for reuse when small).
    fn header_set(&mut self, py: Python<'_>, headers: &[Header<'_>]) -> PyResult<Arc<HeaderSet>> {
        if let Some(set) = self.sets.iter().rev().find(|set| same_headers(&set.source, headers)) {
            return Ok(Arc::clone(set));
        }
        let set = Arc::new(HeaderSet::build(py, headers, self)?);
        let size: usize = headers.iter().map(|h| h.name.len() + h.value.wire_len()).sum();
        if size <= Self::MAX_SET_BYTES {
            if self.sets.len() == Self::MAX_SETS {
                self.sets.remove(0);
            }
            self.sets.push(Arc::clone(&set));
        }
        Ok(set)
    }
}

/// One AWS EventStream message.
#[pyclass(frozen, module = "streamwire._core", name = "EventStreamMessage")]
pub struct EventStreamMessage {
    /// Built from `header_set` on first access: an adapter reads the event
    /// type and the payload, rarely the dict (a fifth of a message's decode
    /// cost when built with it: callgrind, `bench_eventstream.py`'s workload).
    headers: GILOnceCell<Py<PyDict>>,
    header_set: Arc<HeaderSet>,
    payload: Py<PyBytes>,
}

fn message_to_py(
    py: Python<'_>,
    msg: &Message<'_>,
    strings: &mut StringCache,
) -> PyResult<Py<EventStreamMessage>> {
    let header_set = strings.header_set(py, &msg.headers)?;
    Py::new(
        py,
        EventStreamMessage {
            headers: GILOnceCell::new(),
            header_set,
            payload: PyBytes::new(py, msg.payload).unbind(),
        },
    )
}

fn opt_clone(py: Python<'_>, s: &Option<Py<PyString>>) -> Option<Py<PyString>> {
    s.as_ref().map(|s| s.clone_ref(py))
}

#[pymethods]
impl EventStreamMessage {
    /// Headers by name (a repeated name, accepted only in lenient mode, keeps
    /// the last value; `typed_headers` keeps all).
    #[getter]
    fn headers(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = self.headers.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
            let dict = PyDict::new(py);
            for (name, _, value) in &self.header_set.typed {
                dict.set_item(name.bind(py), value.bind(py))?;
            }
            Ok(dict.unbind())
        })?;
        Ok(dict.clone_ref(py))
    }

    /// Headers in wire order as `(name, type name, value)` tuples.
    #[getter]
    fn typed_headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .header_set
            .typed
            .iter()
            .map(|(k, t, v)| {
                PyTuple::new(
                    py,
                    [
                        k.clone_ref(py).into_any(),
                        PyString::new(py, t.as_str()).into_any().unbind(),
                        v.clone_ref(py),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The payload bytes.
    #[getter]
    fn payload(&self, py: Python<'_>) -> Py<PyBytes> {
        self.payload.clone_ref(py)
    }

    /// The `:message-type` header (`event`, `exception`, `error`), if any.
    #[getter]
    fn message_type(&self, py: Python<'_>) -> Option<Py<PyString>> {
        opt_clone(py, &self.header_set.message_type)
    }

    /// The `:event-type` header, if any.
    #[getter]
    fn event_type(&self, py: Python<'_>) -> Option<Py<PyString>> {
        opt_clone(py, &self.header_set.event_type)
    }

    /// The `:content-type` header, if any.
    #[getter]
    fn content_type(&self, py: Python<'_>) -> Option<Py<PyString>> {
        opt_clone(py, &self.header_set.content_type)
    }

    /// The `:exception-type` header, if any.
    #[getter]
    fn exception_type(&self, py: Python<'_>) -> Option<Py<PyString>> {
        opt_clone(py, &self.header_set.exception_type)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "EventStreamMessage(headers={}, payload=<{} bytes>)",
            self.headers(py)?.bind(py).repr()?,
            self.payload.bind(py).as_bytes().len()
        ))
    }
}

/// The headers of a matched message, owned (see [`Matched`]).
type OwnedHeaders = Vec<(Box<str>, Owned)>;

/// A message that `feed_matched` returned as a match tuple, kept until the
/// decoder's next call so that `matched_message` can give it back.
struct MatchedMessage {
    /// Its headers: an index into [`Matched::header_sets`].
    headers: usize,
    /// Its payload: `payloads[start..end]` of [`Matched`].
    start: usize,
    end: usize,
}

/// The matched messages of the last `feed_matched` call.
///
/// A stream repeats the same few header sets on nearly every message, so each
/// distinct set is kept once (compared with the sets kept so far, the latest
/// first), and the payloads share one buffer.
#[derive(Default)]
struct Matched {
    messages: Vec<MatchedMessage>,
    header_sets: Vec<OwnedHeaders>,
    payloads: Vec<u8>,
}

/// A `Matched` payload buffer larger than this is released rather than kept.
const MATCHED_KEEP_BYTES: usize = 1024 * 1024;
/// At most this many distinct header sets are compared before a new one is kept.
const MATCHED_SET_SCAN: usize = 4;

impl Matched {
    fn clear(&mut self) {
        self.messages.clear();
        self.header_sets.clear();
        if self.payloads.capacity() > MATCHED_KEEP_BYTES {
            self.payloads = Vec::new();
        } else {
            self.payloads.clear();
        }
    }

    /// Keeps `msg`; returns its ticket.
    fn keep(&mut self, msg: &Message<'_>) -> usize {
        let found = self
            .header_sets
            .iter()
            .enumerate()
            .rev()
            .take(MATCHED_SET_SCAN)
            .find(|(_, set)| same_headers(set, &msg.headers))
            .map(|(i, _)| i);
        let headers = found.unwrap_or_else(|| {
            self.header_sets
                .push(msg.headers.iter().map(|h| (h.name.into(), Owned::from_core(&h.value))).collect());
            self.header_sets.len() - 1
        });
        let start = self.payloads.len();
        self.payloads.extend_from_slice(msg.payload);
        self.messages.push(MatchedMessage { headers, start, end: self.payloads.len() });
        self.messages.len() - 1
    }
}

/// The string values of the `:message-type` and `:event-type` headers, as the
/// message's getters give them (the last one of a repeated name wins; a
/// non-string value counts as absent).
fn message_and_event_type<'a>(msg: &Message<'a>) -> (Option<&'a str>, Option<&'a str>) {
    let (mut message_type, mut event_type) = (None, None);
    for Header { name, value } in &msg.headers {
        let slot = match *name {
            ":message-type" => &mut message_type,
            ":event-type" => &mut event_type,
            _ => continue,
        };
        *slot = match value {
            CoreValue::String(s) => Some(*s),
            _ => None,
        };
    }
    (message_type, event_type)
}

/// The message `matched` keeps under `ticket`, as a Python object.
fn kept_to_py(
    py: Python<'_>,
    matched: &Matched,
    ticket: usize,
    strings: &mut StringCache,
) -> PyResult<Py<EventStreamMessage>> {
    let m = matched
        .messages
        .get(ticket)
        .ok_or_else(|| PyIndexError::new_err("no such ticket: tickets last until the decoder's next call"))?;
    let headers = matched.header_sets.get(m.headers).map_or(&[][..], Vec::as_slice);
    let msg = Message {
        headers: headers.iter().map(|(name, value)| Header { name, value: value.view() }).collect(),
        payload: matched.payloads.get(m.start..m.end).unwrap_or_default(),
    };
    message_to_py(py, &msg, strings)
}

impl Framing for EventStreamDecoder {
    type Unit = EventStreamMessage;
    const NAME: &'static str = "EventStreamDecoder";

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
        out: &mut Converted<EventStreamMessage>,
    ) -> Result<(), FramingError> {
        let EventStreamDecoder { inner, strings, .. } = self;
        inner.feed(data, |msg| out.push(|| message_to_py(py, &msg, strings)))
    }

    /// `feed` of a large immutable chunk: decoded (CRCs checked) with the GIL
    /// released, every message kept in Rust as `feed_matched` keeps its
    /// matches, then the same `EventStreamMessage`s built, in the same order,
    /// with the GIL back. (`feed_matched` keeps the GIL: see `SseDecoder`'s.)
    fn frame_released(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<Framed<EventStreamMessage>> {
        let EventStreamDecoder { inner, strings, matched, .. } = self;
        let fed = py.allow_threads(|| {
            inner.feed(data, |msg| {
                matched.keep(&msg);
            })
        });
        let mut out: Vec<Py<EventStreamMessage>> = Vec::with_capacity(matched.messages.len());
        for ticket in 0..matched.messages.len() {
            out.push(kept_to_py(py, matched, ticket, strings)?);
        }
        Ok((out, fed))
    }
}

/// Incremental AWS EventStream decoder: CRC-checked, bounded.
#[pyclass(module = "streamwire._core", name = "EventStreamDecoder")]
pub struct EventStreamDecoder {
    inner: es::EventStreamDecoder,
    strings: StringCache,
    matched: Matched,
    shapes: StreamShapes,
    finished: bool,
}

#[pymethods]
impl EventStreamDecoder {
    #[new]
    #[pyo3(signature = (max_message_bytes = es::DEFAULT_MAX_MESSAGE_BYTES, validation = "strict"))]
    fn new(max_message_bytes: usize, validation: &str) -> PyResult<Self> {
        let validation = match validation {
            "strict" => Validation::Strict,
            "lenient" => Validation::Lenient,
            other => {
                return Err(PyValueError::new_err(format!(
                    "validation must be 'strict' or 'lenient', not {other:?}"
                )))
            }
        };
        Ok(EventStreamDecoder {
            inner: es::EventStreamDecoder::new(max_message_bytes, validation),
            strings: StringCache::default(),
            matched: Matched::default(),
            shapes: StreamShapes::default(),
            finished: false,
        })
    }

    /// Decodes a chunk (any buffer of bytes); returns the messages it completed.
    fn feed<'py>(&mut self, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        feed::feed(self, data)
    }

    /// Decodes a chunk like `feed`, matching on the way the JSON payload of
    /// each message whose `:message-type` is `event` against the templates of
    /// `shapes` for its `:event-type`: a message that matches becomes the
    /// tuple `(template, *captures, ticket)` instead of an
    /// `EventStreamMessage`, or joins a run tuple for a matcher made with
    /// `runs=True` (see [`Collector`]). `matched_message(ticket)` gives the
    /// message back until the decoder's next call.
    fn feed_matched<'py>(
        &mut self,
        data: &Bound<'py, PyAny>,
        shapes: &Bound<'py, ShapeMatcher>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = data.py();
        feed::start(self, py, "feed_matched")?;
        let bytes = Bytes::borrow(data)?;
        let matcher = shapes;
        let mut out = Collector::new(py, matcher.get());
        let mut conversion: PyResult<()> = Ok(());
        let EventStreamDecoder { inner, strings, matched, shapes, .. } = self;
        let fed = inner.feed(bytes.as_slice(), |msg| {
            if conversion.is_err() {
                return;
            }
            let found = match message_and_event_type(&msg) {
                (Some("event"), Some(event)) => shapes.match_bytes(matcher, event, msg.payload),
                _ => None,
            };
            conversion = match found {
                Some(m) => out.matched(&m, matched.keep(&msg)).map(drop),
                None => message_to_py(py, &msg, strings).and_then(|m| out.other(m.into_any())),
            };
        });
        conversion?;
        feed::listed(py, fed, out.finish()?)
    }

    /// The `EventStreamMessage` of a match tuple's `ticket`, from the last
    /// `feed_matched` call; IndexError once the decoder was called again.
    fn matched_message(&mut self, py: Python<'_>, ticket: usize) -> PyResult<Py<EventStreamMessage>> {
        let EventStreamDecoder { matched, strings, .. } = self;
        kept_to_py(py, matched, ticket, strings)
    }

    /// Ends the input; raises `FramingError(kind="truncated")` if bytes of an
    /// unfinished message remain.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        self.matched.clear();
        self.finished = true;
        self.inner.finish().map_err(|e| framing_error::<EventStreamMessage>(py, &e, Vec::new()))
    }

    /// Bytes the decoder holds now.
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

    /// Messages decoded so far.
    #[getter]
    fn messages_decoded(&self) -> u64 {
        self.inner.messages_decoded()
    }
}

/// A header value with an explicit wire type, for `encode_eventstream`.
#[pyclass(frozen, module = "streamwire._core", name = "HeaderValue")]
pub struct PyHeaderValue {
    kind: HeaderType,
    value: PyObject,
}

fn header_type_from_name(name: &str) -> PyResult<HeaderType> {
    (0u8..=9)
        .filter_map(HeaderType::from_id)
        .find(|t| t.as_str() == name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown EventStream header type {name:?}")))
}

#[pymethods]
impl PyHeaderValue {
    #[new]
    #[pyo3(signature = (r#type, value = None))]
    fn new(py: Python<'_>, r#type: &str, value: Option<PyObject>) -> PyResult<Self> {
        let kind = header_type_from_name(r#type)?;
        let value = match kind {
            HeaderType::BoolTrue => PyBool::new(py, true).to_owned().into_any().unbind(),
            HeaderType::BoolFalse => PyBool::new(py, false).to_owned().into_any().unbind(),
            _ => value
                .ok_or_else(|| PyValueError::new_err(format!("{} header needs a value", kind.as_str())))?,
        };
        // Validate now, so a bad value fails where it was written.
        let _ = Owned::from_explicit(py, kind, value.bind(py))?;
        Ok(PyHeaderValue { kind, value })
    }

    /// The wire type name.
    #[getter]
    fn r#type(&self) -> &'static str {
        self.kind.as_str()
    }

    /// The value.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyObject {
        self.value.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("HeaderValue({:?}, {})", self.kind.as_str(), self.value.bind(py).repr()?))
    }
}

/// A header value converted from Python, owning its bytes while encoding.
enum Owned {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Integer(i32),
    Long(i64),
    ByteArray(Vec<u8>),
    String(String),
    Timestamp(i64),
    Uuid([u8; 16]),
}

impl Owned {
    /// An owned copy of a decoded value.
    fn from_core(v: &CoreValue<'_>) -> Owned {
        match v {
            CoreValue::Bool(b) => Owned::Bool(*b),
            CoreValue::Byte(x) => Owned::Byte(*x),
            CoreValue::Short(x) => Owned::Short(*x),
            CoreValue::Integer(x) => Owned::Integer(*x),
            CoreValue::Long(x) => Owned::Long(*x),
            CoreValue::ByteArray(b) => Owned::ByteArray(b.to_vec()),
            CoreValue::String(s) => Owned::String((*s).to_owned()),
            CoreValue::Timestamp(ms) => Owned::Timestamp(*ms),
            CoreValue::Uuid(u) => Owned::Uuid(*u),
        }
    }

    fn from_explicit(py: Python<'_>, kind: HeaderType, v: &Bound<'_, PyAny>) -> PyResult<Owned> {
        Ok(match kind {
            HeaderType::BoolTrue => Owned::Bool(true),
            HeaderType::BoolFalse => Owned::Bool(false),
            HeaderType::Byte => Owned::Byte(v.extract()?),
            HeaderType::Short => Owned::Short(v.extract()?),
            HeaderType::Integer => Owned::Integer(v.extract()?),
            HeaderType::Long => Owned::Long(v.extract()?),
            HeaderType::ByteArray => Owned::ByteArray(Bytes::borrow(v)?.as_slice().to_vec()),
            HeaderType::String => Owned::String(v.extract()?),
            HeaderType::Timestamp => Owned::Timestamp(datetime_to_ms(py, v)?),
            HeaderType::Uuid => Owned::Uuid(uuid_bytes(py, v)?),
        })
    }

    /// The documented default mapping of plain Python values.
    fn from_plain(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Owned> {
        if let Ok(h) = v.downcast::<PyHeaderValue>() {
            let h = h.get();
            return Owned::from_explicit(py, h.kind, h.value.bind(py));
        }
        if let Ok(b) = v.downcast::<PyBool>() {
            return Ok(Owned::Bool(b.is_true()));
        }
        if let Ok(s) = v.downcast::<PyString>() {
            return Ok(Owned::String(s.to_str()?.to_owned()));
        }
        if v.downcast::<PyBytes>().is_ok() || v.downcast::<PyByteArray>().is_ok() {
            return Ok(Owned::ByteArray(Bytes::borrow(v)?.as_slice().to_vec()));
        }
        if v.is_instance_of::<pyo3::types::PyInt>() {
            let i: i64 = v
                .extract()
                .map_err(|_| PyOverflowError::new_err("an int header value must fit in 64 signed bits"))?;
            return Ok(match i32::try_from(i) {
                Ok(small) => Owned::Integer(small),
                Err(_) => Owned::Long(i),
            });
        }
        let dt = DATETIME_CLS.import(py, "datetime", "datetime")?;
        if v.is_instance(dt)? {
            return Ok(Owned::Timestamp(datetime_to_ms(py, v)?));
        }
        let uuid = UUID_CLS.import(py, "uuid", "UUID")?;
        if v.is_instance(uuid)? {
            return Ok(Owned::Uuid(uuid_bytes(py, v)?));
        }
        Err(PyTypeError::new_err(format!(
            "no default EventStream header type for {}; wrap it in HeaderValue(type, value)",
            v.get_type().name()?
        )))
    }

    fn view(&self) -> CoreValue<'_> {
        match self {
            Owned::Bool(b) => CoreValue::Bool(*b),
            Owned::Byte(x) => CoreValue::Byte(*x),
            Owned::Short(x) => CoreValue::Short(*x),
            Owned::Integer(x) => CoreValue::Integer(*x),
            Owned::Long(x) => CoreValue::Long(*x),
            Owned::ByteArray(b) => CoreValue::ByteArray(b),
            Owned::String(s) => CoreValue::String(s),
            Owned::Timestamp(ms) => CoreValue::Timestamp(*ms),
            Owned::Uuid(u) => CoreValue::Uuid(*u),
        }
    }
}

fn datetime_to_ms(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<i64> {
    if v.is_instance_of::<pyo3::types::PyInt>() && !v.is_instance_of::<PyBool>() {
        return v
            .extract()
            .map_err(|_| PyOverflowError::new_err("a timestamp in milliseconds must fit in 64 signed bits"));
    }
    if !v.is_instance(DATETIME_CLS.import(py, "datetime", "datetime")?)? {
        return Err(PyTypeError::new_err(format!(
            "a timestamp header needs an aware datetime or int milliseconds, not {}",
            v.get_type().name()?
        )));
    }
    if v.getattr("tzinfo")?.is_none() {
        return Err(PyValueError::new_err(
            "a timestamp header needs a timezone-aware datetime (or int milliseconds)",
        ));
    }
    let delta = v.call_method1("__sub__", (epoch(py)?.bind(py),))?;
    delta.call_method1("__floordiv__", (one_ms(py)?.bind(py),))?.extract()
}

fn uuid_bytes(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<[u8; 16]> {
    let cls = UUID_CLS.import(py, "uuid", "UUID")?;
    let raw: Vec<u8> = if v.is_instance(cls)? {
        v.getattr("bytes")?.extract()?
    } else {
        Bytes::borrow(v)?.as_slice().to_vec()
    };
    raw.try_into().map_err(|_| PyValueError::new_err("a uuid header needs a uuid.UUID or 16 bytes"))
}

/// Encodes one message. Plain values map to: bool -> boolean, int -> integer
/// when it fits in 32 bits else long, bytes -> byte_array, str -> string,
/// aware datetime -> timestamp, UUID -> uuid; `HeaderValue` sets the type.
#[pyfunction]
#[pyo3(signature = (headers, payload = None))]
fn encode_eventstream<'py>(
    py: Python<'py>,
    headers: &Bound<'py, PyAny>,
    payload: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let pairs: Bound<'py, PyAny> = if let Ok(d) = headers.downcast::<PyDict>() {
        d.items().into_any()
    } else if headers.hasattr("items")? {
        headers.call_method0("items")?
    } else {
        headers.clone()
    };
    let mut owned: Vec<(String, Owned)> = Vec::new();
    for item in pairs.try_iter()? {
        let (name, value): (String, Bound<'py, PyAny>) = item?.extract()?;
        owned.push((name, Owned::from_plain(py, &value)?));
    }
    let views: Vec<Header<'_>> =
        owned.iter().map(|(n, v)| Header { name: n.as_str(), value: v.view() }).collect();
    let payload = match payload {
        Some(p) => Some(Bytes::borrow(p)?),
        None => None,
    };
    let body = payload.as_ref().map_or(&[][..], |p| p.as_slice());
    let mut out = Vec::new();
    es::encode_message(&views, body, &mut out).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &out))
}

/// Adds this module's classes and functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EventStreamMessage>()?;
    m.add_class::<EventStreamDecoder>()?;
    m.add_class::<PyHeaderValue>()?;
    m.add_function(wrap_pyfunction!(encode_eventstream, m)?)?;
    m.add("DEFAULT_MAX_MESSAGE_BYTES", es::DEFAULT_MAX_MESSAGE_BYTES)?;
    Ok(())
}
