//! The Python class of `streamwire_core::json_array`: `streamwire._core.ArraySplitter`.
//!
//! `feed(data)` returns the completed elements as `bytes`; `feed_matched(data,
//! shapes)` matches each element against the templates of event type
//! `"message"` on the way (through the stream's shape cache, as the SSE
//! decoder does) and gives a match as `(template, *captures, ticket)`, with
//! `matched_element(ticket)` its bytes until the next call. An error does not
//! raise: the elements before it are returned and `error` says what broke
//! (`(kind, message, offset)`), as the adapter reports it in the stream.

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use streamwire_core::json_array::{ArraySplitter as CoreSplitter, Elements};
use streamwire_core::shape::Match;

use crate::buffer::Bytes;
use crate::shape::{Collector, ShapeMatcher, StreamShapes};
use crate::taker::SinkRef;

/// Incremental splitter of a streamed JSON array of objects.
#[pyclass(module = "streamwire._core", name = "ArraySplitter")]
pub struct ArraySplitter {
    inner: CoreSplitter,
    shapes: StreamShapes,
    /// The matched elements of the last `feed_matched` call, concatenated.
    matched: Vec<u8>,
    ends: Vec<usize>,
}

#[pymethods]
impl ArraySplitter {
    #[new]
    fn new(max_element_bytes: usize) -> Self {
        ArraySplitter {
            inner: CoreSplitter::new(max_element_bytes),
            shapes: StreamShapes::default(),
            matched: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// Splits more of the body; returns the elements it completed.
    fn feed<'py>(&mut self, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = data.py();
        let bytes = Bytes::borrow(data)?;
        let mut out = Vec::new();
        let _ = self.inner.feed(bytes.as_slice(), |element| out.push(PyBytes::new(py, element)));
        PyList::new(py, out)
    }

    /// `feed`, each element matched against `shapes` (see the module docs).
    #[pyo3(signature = (data, shapes, sink = None, out = None))]
    fn feed_matched<'py>(
        &mut self,
        data: &Bound<'py, PyAny>,
        shapes: &Bound<'py, ShapeMatcher>,
        sink: Option<Bound<'py, PyAny>>,
        out: Option<Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = data.py();
        let bytes = Bytes::borrow(data)?;
        self.matched.clear();
        self.ends.clear();
        let mut taker = SinkRef::borrow(sink.as_ref(), out.as_ref())?;
        let data = bytes.as_slice();
        let ArraySplitter { inner, shapes: cache, matched, ends } = self;
        let mut to = Matching {
            py,
            shapes,
            cache,
            matched,
            ends,
            out: Collector::with_sink(py, shapes.get(), taker.as_mut().map(SinkRef::as_sink), out),
            data_len: data.len(),
            text: streamwire_core::utf8::valid_prefix(data),
            conversion: Ok(()),
        };
        let _ = inner.feed_to(data, &mut to);
        let Matching { out, conversion, .. } = to;
        let out = out.finish();
        conversion?;
        PyList::new(py, out?)
    }

    /// The bytes of a match tuple's element, from the last `feed_matched` call.
    fn matched_element<'py>(&self, py: Python<'py>, ticket: usize) -> PyResult<Bound<'py, PyBytes>> {
        let end = *self.ends.get(ticket).ok_or_else(|| {
            PyIndexError::new_err("no such ticket: tickets last until the splitter's next call")
        })?;
        let start = if ticket == 0 { 0 } else { self.ends[ticket - 1] };
        Ok(PyBytes::new(py, &self.matched[start..end]))
    }

    /// `(bytes of an element in progress, whether the array was left open)`.
    fn finish(&self) -> (usize, bool) {
        self.inner.finish()
    }

    /// `start`, `first`, `after`, `next`, `element` or `end`.
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state().as_str()
    }

    /// `(kind, message, offset)` once the body broke, else None.
    #[getter]
    fn error(&self) -> Option<(&'static str, String, u64)> {
        self.inner.error().map(|e| (e.kind.as_str(), e.message.clone(), e.offset))
    }

    /// Bytes held: the element in progress.
    #[getter]
    fn buffered_bytes(&self) -> usize {
        self.inner.buffered_bytes()
    }

    /// The most bytes ever held.
    #[getter]
    fn peak_buffered_bytes(&self) -> usize {
        self.inner.peak_buffered_bytes()
    }

    /// Bytes fed, errors included.
    #[getter]
    fn bytes_fed(&self) -> u64 {
        self.inner.bytes_fed()
    }

    /// Elements handed out.
    #[getter]
    fn elements(&self) -> u64 {
        self.inner.elements()
    }
}

/// `feed_matched`'s handling of the elements: each one that starts in the
/// chunk is first offered to the stream's shape cache as the head of the
/// rest of the chunk (an element the last match's skeleton replays is
/// matched and found in one pass, without the splitter's scan); the others
/// are split, then matched as usual.
struct Matching<'a, 'py, 's> {
    py: Python<'py>,
    shapes: &'a Bound<'py, ShapeMatcher>,
    cache: &'a mut StreamShapes,
    matched: &'a mut Vec<u8>,
    ends: &'a mut Vec<usize>,
    out: Collector<'py, 's>,
    /// The chunk's length, and its longest UTF-8 prefix.
    data_len: usize,
    text: &'a str,
    conversion: PyResult<()>,
}

impl Matching<'_, '_, '_> {
    /// A match, kept under a ticket unless the sink took it.
    fn matched(&mut self, m: &Match<'_>, element: &[u8]) -> PyResult<()> {
        let ticket = self.ends.len();
        if !self.out.matched(m, ticket)? {
            self.matched.extend_from_slice(element);
            self.ends.push(self.matched.len());
        }
        Ok(())
    }
}

impl Elements for Matching<'_, '_, '_> {
    fn head(&mut self, rest: &[u8], cap: usize) -> Option<usize> {
        if self.conversion.is_err() {
            return None;
        }
        // `rest` is the chunk's tail from an ASCII `{`: a char boundary.
        let text = self.text.get(self.data_len - rest.len()..)?;
        let (m, length) = self.cache.match_head(self.shapes, "message", text)?;
        if length > cap {
            return None; // the splitter fails it
        }
        self.conversion = self.matched(&m, &rest[..length]);
        Some(length)
    }

    fn element(&mut self, element: &[u8]) {
        if self.conversion.is_err() {
            return;
        }
        self.conversion = match self.cache.match_bytes(self.shapes, "message", element) {
            Some(m) => self.matched(&m, element),
            None => self.out.other(PyBytes::new(self.py, element).into_any().unbind()),
        };
    }
}

/// Adds this module's class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArraySplitter>()?;
    Ok(())
}
