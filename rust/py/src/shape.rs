//! The Python class for JSON shape matching: `streamwire._core.ShapeMatcher`.
//!
//! Templates arrive as Python values (dict, list, str, int, bool, None) and
//! become the core's `Spec`; a match becomes a tuple
//! `(template, *captures)`: strings as `str`, integers as `int`, an absent
//! optional capture as `None`, a `$raw` capture as the value's JSON text.
//!
//! The decoders' `feed_matched` builds its result with a [`Collector`]: one
//! tuple per match, or, for a matcher made with `runs=True`, one tuple per
//! *run*: consecutive matches of one template whose captures agree on all but
//! the last, `(template, *captures[:-1], [last capture, ...], first ticket)`.
//! A delta stream is mostly such runs (one block's text deltas), and a run
//! costs the adapter one dispatch instead of one per delta.
//!
//! Each decoder matches through a [`StreamShapes`]: the core's
//! [`ShapeCache`] for the stream (the skeletons of its last matches, so that
//! the next delta is matched by comparing bytes), tied to the one matcher it
//! was filled by. A WebSocket session, which has no decoder, matches each
//! message with a `MessageMatcher` (`message.rs`), which holds the same cache.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use streamwire_core::shape::{Capture, Decline, Match, ShapeCache, ShapeSet, Spec};

use crate::buffer::Bytes;
use crate::taker::MatchSink;
use crate::text::new_str;

/// Templates nest no deeper than this (a guard against cyclic containers).
const MAX_SPEC_DEPTH: usize = 64;

/// An ordered set of JSON shape templates; the first that matches wins.
#[pyclass(frozen, module = "streamwire._core", name = "ShapeMatcher")]
pub struct ShapeMatcher {
    pub(crate) shapes: ShapeSet,
    /// Whether `feed_matched` merges runs (see the module docs).
    runs: bool,
}

#[pymethods]
impl ShapeMatcher {
    #[new]
    #[pyo3(signature = (templates, *, runs = false))]
    fn new(templates: &Bound<'_, PyAny>, runs: bool) -> PyResult<Self> {
        let mut shapes = ShapeSet::new();
        for item in templates.try_iter()? {
            let item = item?;
            let (event, spec): (String, Bound<'_, PyAny>) = item
                .extract()
                .map_err(|_| PyTypeError::new_err("a template is an (sse event type, shape) pair"))?;
            let spec = spec_of(&spec, 0)?;
            let index = shapes.len();
            shapes.add(&event, &spec).map_err(|e| PyValueError::new_err(e.to_string()))?;
            if runs && shapes.captures_of(index) == Some(0) {
                return Err(PyValueError::new_err(format!(
                    "template {index} captures nothing: with runs=True every template needs a capture"
                )));
            }
        }
        Ok(ShapeMatcher { shapes, runs })
    }

    /// Whether `feed_matched` merges consecutive matches into runs.
    #[getter]
    fn runs(&self) -> bool {
        self.runs
    }

    /// Matches one payload (str, or UTF-8 bytes) of an SSE event of type
    /// `event`: `(template, *captures)`, or None when no template matches.
    #[pyo3(signature = (data, event = "message"))]
    fn r#match<'py>(&self, data: &Bound<'py, PyAny>, event: &str) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = data.py();
        with_text(data, |text| {
            let Ok(text) = text else { return Ok(None) };
            match self.shapes.match_payload(event, text) {
                Ok(m) => Ok(Some(match_tuple(py, &m, None)?)),
                Err(_) => Ok(None),
            }
        })
    }

    /// Why `match` returns None for this payload (a short stable name such as
    /// "unknown_key"), or None when it matches.
    #[pyo3(signature = (data, event = "message"))]
    fn decline_reason(&self, data: &Bound<'_, PyAny>, event: &str) -> PyResult<Option<&'static str>> {
        with_text(data, |text| match text {
            Ok(text) => Ok(self.shapes.match_payload(event, text).err().map(Decline::as_str)),
            Err(reason) => Ok(Some(reason.as_str())),
        })
    }

    /// The number of captures of template `index`.
    fn captures(&self, index: usize) -> PyResult<usize> {
        self.shapes.captures_of(index).ok_or_else(|| PyValueError::new_err("no such template"))
    }

    fn __len__(&self) -> usize {
        self.shapes.len()
    }

    fn __repr__(&self) -> String {
        format!("ShapeMatcher(<{} templates>)", self.shapes.len())
    }
}

/// One stream's shape matching: a [`ShapeCache`] and the matcher it belongs to.
///
/// The cache holds a reference to its matcher, so the matcher outlives it and
/// another one (a caller may pass any matcher to any call) is told apart by
/// identity: the cache then starts afresh.
#[derive(Default)]
pub(crate) struct StreamShapes {
    cache: ShapeCache,
    owner: Option<Py<ShapeMatcher>>,
}

impl StreamShapes {
    /// Matches one payload of an SSE event (or EventStream message) of type `event`.
    pub fn match_payload<'a>(
        &mut self,
        matcher: &Bound<'_, ShapeMatcher>,
        event: &str,
        data: &'a str,
    ) -> Option<Match<'a>> {
        if !self.owner.as_ref().is_some_and(|owner| owner.as_ptr() == matcher.as_ptr()) {
            self.cache.clear();
            self.owner = Some(matcher.clone().unbind());
        }
        matcher.get().shapes.match_cached(&mut self.cache, event, data).ok()
    }

    /// [`StreamShapes::match_payload`] for a payload given as bytes, which
    /// must be UTF-8 (Python's json refuses anything else).
    pub fn match_bytes<'a>(
        &mut self,
        matcher: &Bound<'_, ShapeMatcher>,
        event: &str,
        data: &'a [u8],
    ) -> Option<Match<'a>> {
        if !matcher.get().shapes.handles_event(event) {
            return None;
        }
        self.match_payload(matcher, event, streamwire_core::utf8::str_of(data)?)
    }

    /// The match of the JSON value at the head of `data` and its length,
    /// when the cache replays one (`ShapeSet::match_head_cached`).
    pub fn match_head<'a>(
        &mut self,
        matcher: &Bound<'_, ShapeMatcher>,
        event: &str,
        data: &'a str,
    ) -> Option<(Match<'a>, usize)> {
        if !self.owner.as_ref().is_some_and(|owner| owner.as_ptr() == matcher.as_ptr()) {
            return None; // a cache filled by another matcher (or none) replays nothing
        }
        matcher.get().shapes.match_head_cached(&mut self.cache, event, data)
    }

    /// Matches found by replaying a skeleton.
    pub fn replayed(&self) -> u64 {
        self.cache.replayed()
    }
}

/// Runs `f` on `data`'s text: a str, or bytes that must be UTF-8 (else
/// `Err(Decline::Syntax)` is passed: Python's json would decode them the same).
fn with_text<T>(
    data: &Bound<'_, PyAny>,
    f: impl FnOnce(Result<&str, Decline>) -> PyResult<T>,
) -> PyResult<T> {
    if let Ok(s) = data.downcast::<PyString>() {
        return match s.to_str() {
            Ok(text) => f(Ok(text)),
            // A str with lone surrogates has no UTF-8 form.
            Err(_) => f(Err(Decline::Syntax)),
        };
    }
    let bytes = Bytes::borrow(data)?;
    match streamwire_core::utf8::str_of(bytes.as_slice()) {
        Some(text) => f(Ok(text)),
        None => f(Err(Decline::Syntax)),
    }
}

/// `(template, *captures)`, with `ticket` appended when given.
fn match_tuple<'py>(py: Python<'py>, m: &Match<'_>, ticket: Option<usize>) -> PyResult<Bound<'py, PyTuple>> {
    let captures = m.captures();
    let mut items = Vec::with_capacity(captures.len() + 2);
    items.push(index_to_py(py, m.template));
    for capture in captures {
        items.push(capture_to_py(py, capture)?);
    }
    if let Some(ticket) = ticket {
        items.push(index_to_py(py, ticket));
    }
    PyTuple::new(py, items)
}

pub(crate) fn index_to_py(py: Python<'_>, index: usize) -> Bound<'_, PyAny> {
    index.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {})
}

pub(crate) fn capture_to_py<'py>(py: Python<'py>, capture: &Capture<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match capture {
        Capture::Absent => py.None().into_bound(py),
        Capture::Str(text) => new_str(py, text)?.into_any(),
        Capture::Raw(text) => new_str(py, text)?.into_any(),
        Capture::Int(value) => value.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {}),
    })
}

/// A capture kept past its payload, to compare the next match's with.
#[derive(Debug, PartialEq)]
pub(crate) enum Key {
    Absent,
    Str(String),
    Int(i64),
    Raw(String),
}

impl Key {
    pub(crate) fn of(capture: &Capture<'_>) -> Key {
        match capture {
            Capture::Absent => Key::Absent,
            Capture::Str(text) => Key::Str(text.to_string()),
            Capture::Int(value) => Key::Int(*value),
            Capture::Raw(text) => Key::Raw((*text).to_owned()),
        }
    }

    pub(crate) fn same(&self, capture: &Capture<'_>) -> bool {
        match (self, capture) {
            (Key::Absent, Capture::Absent) => true,
            (Key::Str(a), Capture::Str(b)) => a == b,
            (Key::Int(a), Capture::Int(b)) => a == b,
            (Key::Raw(a), Capture::Raw(b)) => a == b,
            _ => false,
        }
    }
}

/// An open run: its tuple's head (template and key captures as Python
/// objects), the key to compare with, the last captures so far, the first ticket.
struct Run<'py> {
    template: usize,
    key: Vec<Key>,
    head: Vec<Bound<'py, PyAny>>,
    values: Vec<Bound<'py, PyAny>>,
    first: usize,
}

/// The list a decoder's `feed_matched` returns, built unit by unit: match
/// tuples (merged into runs when the matcher says so) and the decoder's own
/// objects for everything else, in stream order.
///
/// With a sink (an armed taker, [`MatchSink`], and the list of events it
/// appends to), the matches at the head of the call go to the sink first:
/// each one it takes is done with, and the first one it does not take, or
/// any other unit, ends the sink's part (the adapter's state must see the
/// units after it in order).
pub(crate) struct Collector<'py, 's> {
    py: Python<'py>,
    runs: bool,
    out: Vec<PyObject>,
    run: Option<Run<'py>>,
    sink: Option<(&'s mut dyn MatchSink, Bound<'py, PyList>)>,
}

impl<'py, 's> Collector<'py, 's> {
    pub fn new(py: Python<'py>, matcher: &ShapeMatcher) -> Self {
        Collector { py, runs: matcher.runs, out: Vec::new(), run: None, sink: None }
    }

    /// The same, with `taker` taking matches first (see the type's docs).
    pub fn with_sink(
        py: Python<'py>,
        matcher: &ShapeMatcher,
        taker: Option<&'s mut dyn MatchSink>,
        events: Option<Bound<'py, PyList>>,
    ) -> Self {
        let mut collector = Collector::new(py, matcher);
        collector.sink = taker.zip(events);
        collector
    }

    /// A match, whose unit the decoder keeps under `ticket` (tickets of one
    /// call are consecutive, so a run's are `first..first + len`) unless
    /// this returns true: the sink took it, and the ticket is not used.
    pub fn matched(&mut self, m: &Match<'_>, ticket: usize) -> PyResult<bool> {
        let py = self.py;
        if let Some((taker, events)) = &mut self.sink {
            if taker.sink(py, m, events)? {
                return Ok(true);
            }
            self.end_sink();
        }
        self.collect(m, ticket)?;
        Ok(false)
    }

    /// Ends the sink's part of the call: it takes nothing more.
    fn end_sink(&mut self) {
        if let Some((taker, _)) = self.sink.take() {
            taker.disarm();
        }
    }

    fn collect(&mut self, m: &Match<'_>, ticket: usize) -> PyResult<()> {
        let py = self.py;
        let Some((last, key)) = m.captures().split_last().filter(|_| self.runs) else {
            self.flush()?;
            self.out.push(match_tuple(py, m, Some(ticket))?.into_any().unbind());
            return Ok(());
        };
        if let Some(run) = &mut self.run {
            if run.template == m.template
                && run.key.len() == key.len()
                && run.key.iter().zip(key).all(|(k, c)| k.same(c))
            {
                run.values.push(capture_to_py(py, last)?);
                return Ok(());
            }
        }
        self.flush()?;
        let mut head = Vec::with_capacity(key.len() + 1);
        head.push(index_to_py(py, m.template));
        for capture in key {
            head.push(capture_to_py(py, capture)?);
        }
        let values = vec![capture_to_py(py, last)?];
        let key = key.iter().map(Key::of).collect();
        self.run = Some(Run { template: m.template, key, head, values, first: ticket });
        Ok(())
    }

    /// A unit no template matched, as the decoder's own object.
    pub fn other(&mut self, obj: PyObject) -> PyResult<()> {
        self.end_sink();
        self.flush()?;
        self.out.push(obj);
        Ok(())
    }

    fn flush(&mut self) -> PyResult<()> {
        if let Some(run) = self.run.take() {
            let py = self.py;
            let mut items = run.head;
            items.push(PyList::new(py, run.values)?.into_any());
            items.push(index_to_py(py, run.first));
            self.out.push(PyTuple::new(py, items)?.into_any().unbind());
        }
        Ok(())
    }

    /// Everything collected, in order.
    pub fn finish(mut self) -> PyResult<Vec<PyObject>> {
        self.end_sink();
        self.flush()?;
        Ok(self.out)
    }
}

/// Converts a Python template value to the core's `Spec`.
fn spec_of(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Spec> {
    if depth > MAX_SPEC_DEPTH {
        return Err(PyValueError::new_err(format!("a shape nests deeper than {MAX_SPEC_DEPTH} levels")));
    }
    if obj.is_none() {
        Ok(Spec::Null)
    } else if let Ok(b) = obj.downcast::<PyBool>() {
        Ok(Spec::Bool(b.is_true()))
    } else if obj.is_instance_of::<PyInt>() {
        obj.extract::<i64>()
            .map(Spec::Int)
            .map_err(|_| PyValueError::new_err("an integer literal in a shape must fit in 64 bits"))
    } else if let Ok(s) = obj.downcast::<PyString>() {
        Ok(Spec::Str(s.to_str()?.to_owned()))
    } else if let Ok(dict) = obj.downcast::<PyDict>() {
        let mut entries = Vec::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key: String =
                key.extract().map_err(|_| PyTypeError::new_err("the keys of a shape must be str"))?;
            entries.push((key, spec_of(&value, depth + 1)?));
        }
        Ok(Spec::Object(entries))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj.try_iter()?.map(|item| spec_of(&item?, depth + 1)).collect::<PyResult<_>>()?;
        Ok(Spec::Array(items))
    } else if obj.is_instance_of::<PyFloat>() {
        Err(PyValueError::new_err("a shape cannot hold a float literal"))
    } else {
        Err(PyTypeError::new_err(format!(
            "a shape holds dict, list, str, int, bool or None, not {}",
            obj.get_type().name()?
        )))
    }
}

/// Runs `screen` over the UTF-8 bytes of `data` (a str, or any buffer).
fn screen_text<T>(data: &Bound<'_, PyAny>, screen: impl Fn(&[u8]) -> T) -> PyResult<T> {
    if let Ok(s) = data.downcast::<PyString>() {
        if let Ok(text) = s.to_str() {
            return Ok(screen(text.as_bytes()));
        }
        // Lone surrogates: no UTF-8 form; encoded otherwise, they change no
        // digit and no bracket.
        let bytes = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
        return Ok(screen(Bytes::borrow(&bytes)?.as_slice()));
    }
    Ok(screen(Bytes::borrow(data)?.as_slice()))
}

/// Whether `data` (str, or bytes) holds a run of at least `length` ASCII
/// digits (see `streamwire_core::shape::has_digit_run`).
#[pyfunction]
fn has_digit_run(data: &Bound<'_, PyAny>, length: usize) -> PyResult<bool> {
    screen_text(data, |bytes| streamwire_core::shape::has_digit_run(bytes, length))
}

/// Whether the JSON text `data` (str, or bytes) nests deeper than `limit`
/// levels (see `streamwire_core::shape::nesting_exceeds`).
#[pyfunction]
fn json_nesting_exceeds(data: &Bound<'_, PyAny>, limit: usize) -> PyResult<bool> {
    screen_text(data, |bytes| streamwire_core::shape::nesting_exceeds(bytes, limit))
}

/// Adds this module's class and function to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ShapeMatcher>()?;
    m.add_function(wrap_pyfunction!(has_digit_run, m)?)?;
    m.add_function(wrap_pyfunction!(json_nesting_exceeds, m)?)?;
    Ok(())
}
