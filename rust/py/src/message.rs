//! Shape matching for WebSocket messages: `streamwire._core.MessageMatcher`.
//!
//! A WebSocket session has no decoder to match in: its adapter is handed one
//! message at a time. `MessageMatcher(shapes)` matches each one against the
//! templates of event type `"message"`, through the session's own
//! [`ShapeCache`] (so the session's next delta is matched by comparing bytes
//! with the last one's skeleton), and gives `(template, *captures, size)`,
//! `size` being the message's length in UTF-8 bytes (the adapter's byte
//! counter), or None. A string capture other than a template's last (an id
//! the adapter compares with the one it has) is handed out as the same `str`
//! object while its value does not change.
//!
//! Two conversions save the adapter Python steps per message, which is where
//! a session's time goes (`protocols/_lane.py`):
//!
//! * `build={template: (builder, *fixed)}`: the template's last capture is
//!   given as `builder.one(capture, *fixed)`, the adapter's event for it;
//! * `expect(template, equal, successor, taken)`: while set, a match of that
//!   template whose captures are the expected ones (each slot of `equal`
//!   equal to one of its values; the `successor` slot absent or one more than
//!   the last), no longer than `max_size` and whose last capture is a
//!   non-empty string is *taken*: the
//!   last capture is appended to the list `taken` and `match` returns the
//!   list `[last]` (built, with `build`) instead of a tuple. With `taken`
//!   None, a taken match is only counted, its last capture read as base64
//!   text (`tallied`: how many, and their decoded size as `b64_size` in
//!   `protocols/_turn.py` computes it), and `match` returns an empty list:
//!   a Realtime audio delta is then never copied. A template may have one
//!   expectation of each kind. What the expectations mean is the adapter's: it sets them
//!   for the state it is in and clears them (`release`) before that state
//!   changes.
//!
//! `feed(message)` is the session's whole fast path, installed as the
//! session's `feed_message` (`protocols/_websocket.py`): while the session is
//! `arm`ed (a lane is open), a taken match's list is returned as it is, with
//! no Python frame at all (measured with callgrind on a Responses text
//! delta: the Python method around `match` cost 1,600 instructions of the
//! 5,400 a message took); anything else is handed to `fallback(message,
//! matched)`, `matched` being `match`'s tuple or None (not armed, or no
//! match). `took` says how many events the last call returned if it was
//! taken here, None otherwise; `release` disarms and clears it.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use streamwire_core::shape::{Capture, ShapeCache};

use crate::buffer::Bytes;
use crate::objects::Builder;
use crate::shape::{capture_to_py, index_to_py, Key, ShapeMatcher};
use crate::sse::CachedStr;
use crate::text::new_str;

/// What a taken match must look like (see the module docs).
struct Expectation {
    template: usize,
    /// `(slot, allowed values)`.
    equal: Vec<(usize, Vec<Key>)>,
    /// `(slot, last value)`: an integer capture that must count up by one.
    successor: Option<(usize, Option<i64>)>,
    /// Where taken deltas go; None: they are tallied.
    taken: Option<Py<PyList>>,
    /// The largest message taken, in UTF-8 bytes.
    max_size: usize,
}

impl Expectation {
    fn holds(&self, captures: &[Capture<'_>], size: usize) -> bool {
        let tally = self.taken.is_none();
        let last_ok = matches!(captures.last(), Some(Capture::Str(text)) if tally || !text.is_empty());
        last_ok
            && size <= self.max_size
            && self.equal.iter().all(|(slot, allowed)| {
                captures.get(*slot).is_some_and(|c| allowed.iter().any(|key| key.same(c)))
            })
            && match self.successor {
                None => true,
                Some((slot, last)) => match captures.get(slot) {
                    Some(Capture::Absent) => true,
                    Some(Capture::Int(value)) => last.is_some_and(|last| last.checked_add(1) == Some(*value)),
                    _ => false,
                },
            }
    }
}

/// Shape matching for the messages of one WebSocket session (see the module docs).
#[pyclass(module = "streamwire._core", name = "MessageMatcher")]
pub struct MessageMatcher {
    shapes: Py<ShapeMatcher>,
    cache: ShapeCache,
    keys: Vec<CachedStr>,
    builders: Vec<Option<(Py<Builder>, Py<PyTuple>)>>,
    expectations: Vec<Expectation>,
    matched: u64,
    matched_bytes: u64,
    tallied: (u64, i64),
    /// Whether `feed` matches (the session has a lane open).
    armed: bool,
    /// The events the last `feed` returned, when it took the message.
    took: Option<usize>,
    /// What `feed` hands every message it does not take to.
    fallback: Option<Py<PyAny>>,
}

/// What `match` found: a taken match's list, or the match's tuple.
enum Found<'py> {
    Taken(Bound<'py, PyList>),
    Matched(Bound<'py, PyTuple>),
}

#[pymethods]
impl MessageMatcher {
    #[new]
    #[pyo3(signature = (shapes, *, build = None))]
    fn new(shapes: Py<ShapeMatcher>, build: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut builders = Vec::new();
        for (template, spec) in build.into_iter().flat_map(|b| b.iter()) {
            let template: usize = template.extract()?;
            let spec = spec.downcast::<PyTuple>()?;
            let builder = spec.get_item(0)?.downcast::<Builder>()?.clone().unbind();
            let fixed = spec.get_slice(1, spec.len()).unbind();
            builder.get().check_fixed(fixed.bind(spec.py()).len())?;
            if builders.len() <= template {
                builders.resize_with(template + 1, || None);
            }
            builders[template] = Some((builder, fixed));
        }
        Ok(MessageMatcher {
            shapes,
            cache: ShapeCache::new(),
            keys: Vec::new(),
            builders,
            expectations: Vec::new(),
            matched: 0,
            matched_bytes: 0,
            tallied: (0, 0),
            armed: false,
            took: None,
            fallback: None,
        })
    }

    /// Feeds one message to the session (see the module docs): a taken
    /// match's list, or what `fallback(message, matched)` returns.
    #[pyo3(signature = (message, /))]
    fn feed<'py>(slf: &Bound<'py, Self>, message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let (found, fallback) = {
            let mut this = slf.try_borrow_mut()?;
            this.took = None;
            let found = if this.armed { this.find(message)? } else { None };
            if let Some(Found::Taken(list)) = found {
                this.took = Some(list.len());
                return Ok(list.into_any());
            }
            let Some(fallback) = &this.fallback else {
                return Err(PyRuntimeError::new_err("MessageMatcher.feed needs a fallback"));
            };
            (found, fallback.clone_ref(py))
        };
        // The borrow ends before the session's general path, which changes
        // the matcher (expect, release).
        match found {
            Some(Found::Matched(tuple)) => fallback.call1(py, (message, tuple)),
            _ => fallback.call1(py, (message, py.None())),
        }
        .map(|value| value.into_bound(py))
    }

    /// Whether `feed` matches messages (until `release`).
    fn arm(&mut self) {
        self.armed = true;
    }

    /// How many events the last `feed` returned if it took the message there, else None.
    #[getter]
    fn took(&self) -> Option<usize> {
        self.took
    }

    /// What `feed` hands the messages it does not take to.
    #[getter]
    fn fallback(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.fallback.as_ref().map(|f| f.clone_ref(py))
    }

    #[setter]
    fn set_fallback(&mut self, fallback: Option<Py<PyAny>>) {
        self.fallback = fallback;
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.fallback)?;
        visit.call(&self.shapes)?;
        for (builder, fixed) in self.builders.iter().flatten() {
            visit.call(builder)?;
            visit.call(fixed)?;
        }
        for expectation in &self.expectations {
            visit.call(&expectation.taken)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.fallback = None;
        self.expectations.clear();
    }

    /// `(template, *captures, size)` for one message, a taken match's list,
    /// or None (for anything but a str or a buffer of UTF-8 bytes too: the
    /// caller's general path then says what is wrong with it).
    #[pyo3(signature = (data, /))]
    fn r#match<'py>(&mut self, data: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.find(data)?.map(|found| match found {
            Found::Taken(list) => list.into_any(),
            Found::Matched(tuple) => tuple.into_any(),
        }))
    }

    /// Takes the matches of `template` whose captures are the expected ones
    /// (see the module docs) until `release()`: `equal` maps capture slots to
    /// a value or a tuple of allowed values (str, int or None); `successor`
    /// is `(slot, last value)` of an integer that must count up (the last
    /// value None: only an absent one passes); taken deltas go to `taken`
    /// (None: tallied as base64); a message longer than `max_size` UTF-8
    /// bytes is never taken. Replaces the template's earlier expectation of
    /// the same kind (taken or tallied); a match takes the first that holds.
    #[pyo3(signature = (template, equal, successor, taken, max_size))]
    fn expect(
        &mut self,
        template: usize,
        equal: &Bound<'_, PyDict>,
        successor: Option<(usize, Option<i64>)>,
        taken: Option<Py<PyList>>,
        max_size: usize,
    ) -> PyResult<()> {
        let mut slots = Vec::with_capacity(equal.len());
        for (slot, allowed) in equal.iter() {
            let slot: usize = slot.extract()?;
            let values = match allowed.downcast::<PyTuple>() {
                Ok(tuple) => tuple.iter().map(|v| key_of(&v)).collect::<PyResult<Vec<_>>>()?,
                Err(_) => vec![key_of(&allowed)?],
            };
            slots.push((slot, values));
        }
        let tally = taken.is_none();
        self.expectations.retain(|e| e.template != template || e.taken.is_none() != tally);
        self.expectations.push(Expectation { template, equal: slots, successor, taken, max_size });
        Ok(())
    }

    /// Stops taking matches (the adapter's state is about to change): no
    /// expectations, not armed, and `took` cleared.
    fn release(&mut self) {
        self.expectations.clear();
        self.armed = false;
        self.took = None;
    }

    /// The last value of an expectation's `successor` slot (None without one).
    #[getter]
    fn successor(&self) -> Option<i64> {
        self.expectations.iter().find_map(|e| e.successor).and_then(|(_, last)| last)
    }

    /// How many matches were tallied, and the decoded size of their base64.
    #[getter]
    fn tallied(&self) -> (u64, i64) {
        self.tallied
    }

    /// How many messages matched (taken or not), and their UTF-8 bytes.
    #[getter]
    fn matched(&self) -> (u64, u64) {
        (self.matched, self.matched_bytes)
    }

    /// The matcher whose templates apply.
    #[getter]
    fn shapes(&self, py: Python<'_>) -> Py<ShapeMatcher> {
        self.shapes.clone_ref(py)
    }

    /// How many messages were matched by replaying the skeleton of an
    /// earlier one (comparing bytes instead of parsing).
    #[getter]
    fn replayed(&self) -> u64 {
        self.cache.replayed()
    }
}

impl MessageMatcher {
    /// `match`'s work.
    fn find<'py>(&mut self, data: &Bound<'py, PyAny>) -> PyResult<Option<Found<'py>>> {
        let py = data.py();
        let bytes;
        // Whether every character is one byte (then a capture's length is its
        // character count, which `b64_size` needs): known for a `str` from its
        // length in characters, kept by CPython, against its UTF-8 length.
        let mut ascii = false;
        let text = if let Ok(s) = data.downcast::<PyString>() {
            match s.to_str() {
                Ok(text) => {
                    ascii = s.len()? == text.len();
                    text
                }
                Err(_) => return Ok(None),
            }
        } else {
            bytes = match Bytes::borrow(data) {
                Ok(bytes) => bytes,
                Err(_) => return Ok(None),
            };
            match streamwire_core::utf8::str_of(bytes.as_slice()) {
                Some(text) => text,
                None => return Ok(None),
            }
        };
        let MessageMatcher { shapes, cache, keys, builders, expectations, tallied, .. } = self;
        let Ok(m) = shapes.get().shapes.match_cached(cache, "message", text) else { return Ok(None) };
        self.matched += 1;
        self.matched_bytes += u64::try_from(text.len()).unwrap_or(u64::MAX);
        let captures = m.captures();
        let builder = builders.get(m.template).and_then(Option::as_ref);
        let last_object = |capture: &Capture<'_>| -> PyResult<Bound<'py, PyAny>> {
            let value = capture_to_py(py, capture)?;
            match builder {
                Some((builder, fixed)) => builder.get().make(&value, fixed.bind(py)),
                None => Ok(value),
            }
        };
        let size = text.len();
        if let Some(expected) =
            expectations.iter_mut().find(|e| e.template == m.template && e.holds(captures, size))
        {
            if let Some((slot, last)) = &mut expected.successor {
                if let Some(Capture::Int(value)) = captures.get(*slot) {
                    *last = Some(*value);
                }
            }
            if let Some(Capture::Str(delta)) = captures.last() {
                let Some(taken) = &expected.taken else {
                    tallied.0 += 1;
                    tallied.1 += b64_size(delta, ascii);
                    return Ok(Some(Found::Taken(PyList::empty(py))));
                };
                let value = new_str(py, delta)?;
                taken.bind(py).append(&value)?;
                let item = match builder {
                    Some((builder, fixed)) => builder.get().make(value.as_any(), fixed.bind(py))?,
                    None => value.into_any(),
                };
                return Ok(Some(Found::Taken(PyList::new(py, [item])?)));
            }
        }
        let mut items = Vec::with_capacity(captures.len() + 2);
        items.push(index_to_py(py, m.template));
        for (slot, capture) in captures.iter().enumerate() {
            items.push(match capture {
                Capture::Str(value) if slot + 1 < captures.len() => {
                    if keys.len() <= slot {
                        keys.resize_with(slot + 1, CachedStr::new);
                    }
                    keys[slot].get(py, value).into_bound(py).into_any()
                }
                _ if slot + 1 == captures.len() => last_object(capture)?,
                _ => capture_to_py(py, capture)?,
            });
        }
        items.push(index_to_py(py, text.len()));
        Ok(Some(Found::Matched(PyTuple::new(py, items)?)))
    }
}

/// The decoded size of a base64 text, without decoding it: `b64_size` of
/// `protocols/_turn.py` (characters times 3/4, less the padding; not
/// validated, as the general path does not validate it either). With
/// `ascii`, `text` is known to hold one byte per character: counting them is
/// the one pass over a 6,400-byte audio delta this saves.
fn b64_size(text: &str, ascii: bool) -> i64 {
    let chars = if ascii { text.len() } else { text.chars().count() };
    let chars = i64::try_from(chars).unwrap_or(i64::MAX);
    let padding = if text.ends_with("==") { 2 } else { i64::from(text.ends_with('=')) };
    if chars == 0 {
        return 0;
    }
    chars * 3 / 4 - padding
}

/// An expected capture value as a [`Key`].
fn key_of(value: &Bound<'_, PyAny>) -> PyResult<Key> {
    if value.is_none() {
        return Ok(Key::Absent);
    }
    if let Ok(text) = value.downcast::<PyString>() {
        return Ok(Key::Str(text.to_str()?.to_owned()));
    }
    value
        .extract::<i64>()
        .map(Key::Int)
        .map_err(|_| PyValueError::new_err("an expected capture is a str, an int or None"))
}

/// Adds this module's class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MessageMatcher>()?;
    Ok(())
}
