//! A stream's next usage snapshot decoded as its last one with new figures.
//!
//! Gemini sends a `usageMetadata` snapshot on every chunk, and from one chunk
//! to the next only its counts change: `{"promptTokenCount": 1187,
//! "candidatesTokenCount": 39, ...}` then `... 52 ...`. Decoding each one
//! anew (`json_value::decode_object`) builds every key, value and nested
//! container again; measured with callgrind on the benches' `gemini-tools`
//! stream, that was about 6,100 instructions a chunk, a third of all the
//! chunk cost. [`Snapshots`] keeps the last text decoded and a private copy
//! of its outer object; a text that is that text with some of its outer
//! integer members' tokens replaced by other integer tokens is decoded by
//! copying that object (its key table at once) and setting those members.
//!
//! Why that is the decode: the new text is the old one, byte for byte,
//! except that some tokens `-?(0|[1-9][0-9]*)` of at most 18 digits (the
//! decoder's integers, `int_token`), each the value of a member of the outer
//! object, are other such tokens, and each is followed by the byte that
//! followed the old one (the comparison goes on from there). A JSON text
//! stays valid, with the same structure, when an integer value is replaced
//! by another integer, so the decoder would build the same value with those
//! members' new values: the same keys in the same order (a key's position
//! does not depend on its value), the same nested values. Anything else
//! (whitespace, a string, a key, a nested figure, a member added) is decoded
//! in full.
//!
//! The copy is shallow: its nested objects and arrays are the ones the
//! last full decode built (and handed out), so they are shared by the
//! snapshots of one stream that did not change them, as `provider_content`
//! values are shared by one stream's results: read-only (docs/design.md
//! "Limits and memory"). The outer object, which the adapter's mapping type
//! keeps read-only, is copied from a private one, never handed out, so that
//! the next snapshot's members cannot have been changed by a caller.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

use crate::json_value::{decode_object, int_token, new_mapping, Outer, ValueCache};

/// The longest snapshot text kept (a usage object is a few hundred bytes);
/// a longer one is decoded in full every time.
const MAX_TEXT_BYTES: usize = 4096;

/// The last snapshot decoded: its text, a private copy of its outer object,
/// and that object's integer members (see the module docs).
struct Snapshot {
    /// Empty when the text was too long to keep (nothing is patched then).
    text: String,
    base: Option<Py<PyDict>>,
    outer: Outer,
}

/// The last snapshot a stream decoded, and how many were decoded by patching.
#[derive(Default)]
pub(crate) struct Snapshots {
    last: Option<Snapshot>,
    patched: u64,
}

impl Snapshots {
    /// The outer object's integer members of the last snapshot decoded.
    pub(crate) fn outer(&self) -> Option<&Outer> {
        self.last.as_ref().map(|s| &s.outer)
    }

    /// How many snapshots were decoded by patching the last one.
    pub(crate) fn patched(&self) -> u64 {
        self.patched
    }

    /// `text` decoded as a `mapping`: the last snapshot patched if it can be,
    /// else decoded in full (`decode_object`) and kept; None: declined (not
    /// in the decoder's subset), the last snapshot kept.
    pub(crate) fn decode<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        mapping: &Bound<'py, PyType>,
        keys: &mut ValueCache,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        if let Some(last) = &mut self.last {
            if let Some(value) = last.patch(py, text, mapping)? {
                self.patched += 1;
                return Ok(Some(value));
            }
        }
        let mut outer = Outer::default();
        let Some(value) = decode_object(py, text, mapping, keys, &mut outer)? else { return Ok(None) };
        self.last = Some(Snapshot::keep(text, &value, outer)?);
        Ok(Some(value))
    }
}

impl Snapshot {
    /// The snapshot of `text`, just decoded into `value` with `outer`.
    fn keep(text: &str, value: &Bound<'_, PyDict>, outer: Outer) -> PyResult<Snapshot> {
        if text.len() > MAX_TEXT_BYTES {
            return Ok(Snapshot { text: String::new(), base: None, outer });
        }
        let base = PyDict::new(value.py());
        base.update(value.as_mapping())?;
        Ok(Snapshot { text: text.to_owned(), base: Some(base.unbind()), outer })
    }

    /// `text` decoded as an instance of `mapping` if it is this snapshot's
    /// text with other integer tokens for some of its outer integer members
    /// (see the module docs), the snapshot then being `text`'s; None, having
    /// changed nothing, otherwise.
    fn patch<'py>(
        &mut self,
        py: Python<'py>,
        text: &str,
        mapping: &Bound<'py, PyType>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(base) = &self.base else { return Ok(None) };
        let Some(changes) = changes(self.text.as_bytes(), text.as_bytes(), &self.outer) else {
            return Ok(None);
        };
        let Ok(out) = new_mapping(mapping)?.downcast_into::<PyDict>() else { return Ok(None) };
        let base = base.bind(py);
        let mut delta = 0isize;
        let mut pending = changes.iter().peekable();
        for (at, member) in self.outer.ints.iter_mut().enumerate() {
            match pending.next_if(|change| change.member == at) {
                Some(change) => {
                    // A count that changed is new: not one for the cache of
                    // values that repeat (it would only push one out).
                    let object =
                        change.value.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {});
                    base.set_item(member.key.bind(py), &object)?;
                    (member.value, member.object) = (change.value, object.unbind());
                    delta = signed(change.end) - signed(member.end);
                    (member.start, member.end) = (change.start, change.end);
                }
                None => {
                    member.start = shifted(member.start, delta);
                    member.end = shifted(member.end, delta);
                }
            }
        }
        self.text.clear();
        self.text.push_str(text);
        // An empty dict updated from a dict without deleted entries takes a
        // copy of its key table (CPython's `dict_merge`): no key is hashed.
        out.update(base.as_mapping())?;
        Ok(Some(out))
    }
}

/// One outer integer member whose token changed: its index in
/// `Outer::ints`, its new value and its new token's span.
struct Change {
    member: usize,
    value: i64,
    start: usize,
    end: usize,
}

/// The members whose tokens `new` changes, if `new` is `old` with only
/// integer tokens of `outer`'s members replaced by other integer tokens.
fn changes(old: &[u8], new: &[u8], outer: &Outer) -> Option<Vec<Change>> {
    let members = &outer.ints;
    let mut found = Vec::new();
    let (mut i, mut j, mut next) = (0usize, 0usize, 0usize);
    loop {
        let same = common_prefix(old.get(i..)?, new.get(j..)?);
        i += same;
        j += same;
        if i == old.len() && j == new.len() {
            return Some(found);
        }
        // The texts differ at `i` / `j`: inside (or just past) the next
        // member's token, or the answer is no. Members are in text order
        // and what lies before `i` since the last change is the same bytes.
        while members.get(next).is_some_and(|m| m.end < i) {
            next += 1;
        }
        let member = members.get(next)?;
        if member.start > i {
            return None;
        }
        let start = j.checked_sub(i - member.start)?;
        let (value, end) = int_token(new, start)?;
        found.push(Change { member: next, value, start, end });
        (i, j, next) = (member.end, end, next + 1);
    }
}

/// The length of the longest common prefix of `a` and `b`, eight bytes at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let word = |s: &[u8]| s.get(i..i + 8).and_then(|w| w.try_into().ok()).map_or(0, u64::from_le_bytes);
        let diff = word(a) ^ word(b);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a
        .get(i..n)
        .unwrap_or_default()
        .iter()
        .zip(b.get(i..n).unwrap_or_default())
        .take_while(|(x, y)| x == y)
        .count()
}

fn signed(at: usize) -> isize {
    isize::try_from(at).unwrap_or(isize::MAX)
}

/// `at` moved by `delta` (positions after a changed token; never below zero).
fn shifted(at: usize, delta: isize) -> usize {
    at.checked_add_signed(delta).unwrap_or(0)
}
