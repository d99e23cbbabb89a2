//! A small JSON object decoded straight into Python objects, or declined.
//!
//! A usage snapshot (Gemini sends one on every chunk) is a small object of
//! integers, short strings and a nested list or two. Decoding its text with
//! `json.loads` (or orjson) and then copying the result into the read-only
//! mapping a result carries costs more than everything else a chunk needs.
//! [`decode_object`] builds the same value directly, its outer object as an
//! instance of the given `dict` subclass, for a strict subset of JSON
//! (RFC 8259), and declines (None) everything else, so that the caller
//! decodes those with the package's own decoder:
//!
//! * objects, arrays, strings, `true`, `false`, `null`, JSON whitespace;
//! * integers of at most 18 digits, never `-0` (they fit `i64`; no float,
//!   fraction or exponent: whether two float parsers round alike is not
//!   worth proving here);
//! * strings with only the JSON escapes, `\u` surrogates only as a pair
//!   (a lone surrogate, which `json` accepts and orjson refuses, declines);
//! * at most [`MAX_DEPTH`] levels, no duplicate key in any object.
//!
//! For anything it accepts, the value equals what `json.loads` gives (and
//! what orjson gives: the two agree on this subset), with the same key
//! order. Object keys, integers and short strings come from a small cache
//! ([`ValueCache`]), as a stream's snapshots repeat the same ones.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyType};

use crate::text::new_str;

/// The deepest nesting decoded; deeper declines.
pub(crate) const MAX_DEPTH: usize = 32;
/// The most digits of an integer (fits `i64` unchecked).
const MAX_INT_DIGITS: usize = 18;
/// Keys kept in a [`ValueCache`], and the longest one kept.
const MAX_KEYS: usize = 64;
const MAX_KEY_BYTES: usize = 64;
/// Integers kept in a [`ValueCache`] (the most recent ones).
const MAX_INTS: usize = 8;
/// String values kept in a [`ValueCache`], and the longest one kept.
const MAX_STRS: usize = 8;
const MAX_STR_BYTES: usize = 32;

/// The Python objects a stream's snapshots keep repeating: object keys
/// (interned `str`s), and the last few integers and short string values
/// (`int` and `str` are immutable, so one object serves every snapshot that
/// holds the value, as it would serve two names in Python).
#[derive(Default)]
pub(crate) struct ValueCache {
    keys: Vec<(Box<str>, Py<PyString>)>,
    /// Where the key after the last one found is: snapshots repeat their
    /// keys in the same order, so that one is tried first.
    next_key: usize,
    ints: Vec<(i64, PyObject)>,
    strs: Vec<(Box<str>, Py<PyString>)>,
    /// The next slot of `ints` and of `strs` to replace, once they are full.
    next_int: usize,
    next_str: usize,
}

impl ValueCache {
    fn key<'py>(&mut self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyString>> {
        let guess = self.keys.get(self.next_key).filter(|(k, _)| &**k == key).map(|_| self.next_key);
        if let Some(at) = guess.or_else(|| self.keys.iter().position(|(k, _)| &**k == key)) {
            self.next_key = at + 1;
            return Ok(self.keys[at].1.bind(py).clone());
        }
        let fresh = PyString::intern(py, key);
        if self.keys.len() < MAX_KEYS && key.len() <= MAX_KEY_BYTES {
            self.keys.push((key.into(), fresh.clone().unbind()));
        }
        Ok(fresh)
    }

    /// `value` as an `int`: the one kept for it, or a new one, then kept.
    pub(crate) fn int<'py>(&mut self, py: Python<'py>, value: i64) -> Bound<'py, PyAny> {
        if let Some((_, cached)) = self.ints.iter().find(|(v, _)| *v == value) {
            return cached.bind(py).clone();
        }
        let fresh = value.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {});
        let entry = (value, fresh.clone().unbind());
        if self.ints.len() < MAX_INTS {
            self.ints.push(entry);
        } else {
            self.ints[self.next_int] = entry;
            self.next_int = (self.next_int + 1) % MAX_INTS;
        }
        fresh
    }

    /// A string value as a `str`: the one kept for a short one, or a new one.
    fn str<'py>(&mut self, py: Python<'py>, value: &str) -> PyResult<Bound<'py, PyString>> {
        if value.len() > MAX_STR_BYTES {
            return new_str(py, value);
        }
        if let Some((_, cached)) = self.strs.iter().find(|(v, _)| &**v == value) {
            return Ok(cached.bind(py).clone());
        }
        let fresh = new_str(py, value)?;
        let entry = (value.into(), fresh.clone().unbind());
        if self.strs.len() < MAX_STRS {
            self.strs.push(entry);
        } else {
            self.strs[self.next_str] = entry;
            self.next_str = (self.next_str + 1) % MAX_STRS;
        }
        Ok(fresh)
    }
}

/// An integer member of a decoded object's outer object: its key (an
/// interned `str`, the same object as `PyString::intern` gives for its
/// text), its value (and the `int` the decoded object holds for it), and
/// where its token is in the text.
pub(crate) struct Member {
    pub(crate) key: Py<PyString>,
    pub(crate) value: i64,
    pub(crate) object: PyObject,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// What [`decode_object`] notes of the outer object besides its value.
#[derive(Default)]
pub(crate) struct Outer {
    /// Its integer members, in text order.
    pub(crate) ints: Vec<Member>,
}

impl Outer {
    fn clear(&mut self) {
        self.ints.clear();
    }

    /// The integer member `key` (compared by identity: keys are interned).
    pub(crate) fn member(&self, key: &Py<PyString>) -> Option<&Member> {
        self.ints.iter().find(|m| m.key.as_ptr() == key.as_ptr())
    }
}

/// `text` decoded, its outer value an object built as an instance of
/// `mapping` (a `dict` subclass whose constructor takes no arguments), or
/// None when `text` is not in the subset (see the module docs).
///
/// `outer` gets the outer object's integer members (see [`Outer`]).
pub(crate) fn decode_object<'py>(
    py: Python<'py>,
    text: &str,
    mapping: &Bound<'py, PyType>,
    keys: &mut ValueCache,
    outer: &mut Outer,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    outer.clear();
    let mut d = Decoder { py, text, b: text.as_bytes(), i: 0, keys, outer };
    d.ws();
    if d.peek() != Some(b'{') {
        return Ok(None);
    }
    let outer = new_mapping(mapping)?;
    let Ok(outer) = outer.downcast_into::<PyDict>() else { return Ok(None) };
    if !d.fill_object(&outer, 1)? {
        return Ok(None);
    }
    d.ws();
    Ok((d.i == d.b.len()).then_some(outer))
}

/// Whether `mapping(*)` is an empty `dict` made by `dict`'s own `__new__`
/// and `__init__` (which [`new_mapping`] relies on).
pub(crate) fn plain_mapping(mapping: &Bound<'_, PyType>) -> PyResult<bool> {
    let py = mapping.py();
    let dict = py.get_type::<PyDict>();
    Ok(mapping.is_subclass(&dict)?
        && mapping.getattr("__new__")?.is(&dict.getattr("__new__")?)
        && mapping.getattr("__init__")?.is(&dict.getattr("__init__")?))
}

/// An empty instance of `mapping` (a [`plain_mapping`]): its `tp_new` with
/// no arguments, which is `mapping()` without the call's dispatch (`dict`'s
/// `__init__` does nothing without arguments).
pub(crate) fn new_mapping<'py>(mapping: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    let py = mapping.py();
    let tp = mapping.as_type_ptr();
    let args = pyo3::types::PyTuple::empty(py);
    // SAFETY: a live type object whose `tp_new` is dict's (checked by the
    // caller through `plain_mapping`), called as `type.__call__` calls it;
    // returns a new reference or NULL with an exception set.
    unsafe {
        let slot = ffi::PyType_GetSlot(tp, ffi::Py_tp_new);
        if slot.is_null() {
            return mapping.call0();
        }
        let new: ffi::newfunc = std::mem::transmute(slot);
        Bound::from_owned_ptr_or_err(py, new(tp, args.as_ptr(), std::ptr::null_mut()))
    }
}

struct Decoder<'a, 'py, 'k> {
    py: Python<'py>,
    text: &'a str,
    b: &'a [u8],
    i: usize,
    keys: &'k mut ValueCache,
    outer: &'k mut Outer,
}

/// `Ok(None)`: declined; else the value, and its value if it is an integer.
type Decoded<'py> = PyResult<Option<(Bound<'py, PyAny>, Option<i64>)>>;

impl<'a, 'py> Decoder<'a, 'py, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Decoded<'py> {
        let py = self.py;
        self.ws();
        let value = match self.peek() {
            Some(b'{') => {
                if depth >= MAX_DEPTH {
                    return Ok(None);
                }
                let dict = PyDict::new(py);
                self.fill_object(&dict, depth + 1)?.then(|| dict.into_any())
            }
            Some(b'[') => {
                if depth >= MAX_DEPTH {
                    return Ok(None);
                }
                self.array(depth + 1)?
            }
            Some(b'"') => match self.string() {
                Some(s) => Some(self.keys.str(py, &s)?.into_any()),
                None => None,
            },
            Some(b't') => self.word(b"true").then(|| PyBool::new(py, true).to_owned().into_any()),
            Some(b'f') => self.word(b"false").then(|| PyBool::new(py, false).to_owned().into_any()),
            Some(b'n') => self.word(b"null").then(|| py.None().into_bound(py)),
            Some(b'-' | b'0'..=b'9') => {
                return Ok(self.int().map(|v| (self.keys.int(py, v), Some(v))));
            }
            _ => None,
        };
        Ok(value.map(|v| (v, None)))
    }

    fn word(&mut self, word: &[u8]) -> bool {
        if self.b.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    /// The members of the object at `self.i` (a `{`) into `dict`; false: declined.
    fn fill_object(&mut self, dict: &Bound<'py, PyDict>, depth: usize) -> PyResult<bool> {
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(true);
        }
        let mut members = 0usize;
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Ok(false);
            }
            let Some(key) = self.string() else { return Ok(false) };
            let key = self.keys.key(self.py, &key)?;
            self.ws();
            if self.peek() != Some(b':') {
                return Ok(false);
            }
            self.i += 1;
            self.ws();
            let start = self.i;
            let Some((value, int)) = self.value(depth)? else { return Ok(false) };
            if let (1, Some(int)) = (depth, int) {
                let (key, object) = (key.clone().unbind(), value.clone().unbind());
                self.outer.ints.push(Member { key, value: int, object, start, end: self.i });
            }
            dict.set_item(key, value)?;
            members += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    // A repeated key leaves fewer entries than members.
                    return Ok(dict.len() == members);
                }
                _ => return Ok(false),
            }
        }
    }

    fn array(&mut self, depth: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = self.py;
        self.i += 1;
        let list = PyList::empty(py);
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Some(list.into_any()));
        }
        loop {
            let Some((item, _)) = self.value(depth)? else { return Ok(None) };
            list.append(item)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Some(list.into_any()));
                }
                _ => return Ok(None),
            }
        }
    }

    /// The string at `self.i` (a quote), unescaped; None: declined.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let start = self.i + 1;
        let end = streamwire_core::shape::special(self.b, start)?;
        let text: &'a str = self.text;
        if self.b.get(end) == Some(&b'"') {
            self.i = end + 1;
            return text.get(start..end).map(std::borrow::Cow::Borrowed);
        }
        let mut owned = String::from(text.get(start..end)?);
        let mut at = end;
        loop {
            match *self.b.get(at)? {
                b'"' => {
                    self.i = at + 1;
                    return Some(std::borrow::Cow::Owned(owned));
                }
                b'\\' => {
                    let (c, len) = streamwire_core::shape::escape(self.b, at)?;
                    owned.push(c);
                    at += len;
                }
                c if c < 0x20 => return None,
                _ => {
                    let run = streamwire_core::shape::special(self.b, at)?;
                    owned.push_str(text.get(at..run)?);
                    at = run;
                }
            }
        }
    }

    fn int(&mut self) -> Option<i64> {
        let (value, end) = int_token(self.b, self.i)?;
        self.i = end;
        Some(value)
    }
}

/// The integer token at `b[from..]` and where it ends: at most
/// [`MAX_INT_DIGITS`] digits, not `-0`, with no fraction or exponent after
/// it (the subset's integers); None for anything else.
pub(crate) fn int_token(b: &[u8], from: usize) -> Option<(i64, usize)> {
    let negative = b.get(from) == Some(&b'-');
    let start = from + usize::from(negative);
    let end = streamwire_core::shape::integer_end(b, from)?;
    if matches!(b.get(end), Some(b'.' | b'e' | b'E' | b'0'..=b'9')) || end - start > MAX_INT_DIGITS {
        return None;
    }
    let magnitude = b.get(start..end)?.iter().fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
    match (negative, magnitude) {
        (true, 0) => None,
        (true, m) => Some((-m, end)),
        (false, m) => Some((m, end)),
    }
}
