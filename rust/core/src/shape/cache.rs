//! A stream's memory of its last matches: skeletons to compare the next payload with.
//!
//! The payloads of one stream that share a shape are nearly the same bytes:
//! one chat chunk after another differs only in its text (the id, the model,
//! the creation time repeat), one Responses delta from the next only in its
//! text, sequence number and padding. A [`ShapeCache`] keeps, for each
//! template, the *skeleton* of the last payload the scanner matched: its
//! bytes without its variable tokens (the values a capture or `$any` takes,
//! whatever they are), and where those tokens were. A new payload whose bytes
//! are the skeleton's fixed bytes with a whole token of the right kind at
//! each gap is a match the scanner would have made, with those tokens as its
//! captures (the argument is on `scan::replay_head`), found by comparing bytes
//! instead of walking the pattern; anything else is matched as without a
//! cache, and a new scanned match replaces the skeleton. So the answer is
//! always [`ShapeSet::match_payload`]'s (tested and fuzzed against it).
//!
//! Most short tokens recur too (an id, a model name, `null`): while every
//! hint does, the payload is compared in one pass with its hints in place
//! (`scan::replay_joined`), from one token that must be read to the next;
//! the first payload replayed only by reading a hinted token anew (a
//! sequence number, a new timestamp) turns that off for the skeleton until
//! the next scan. Measured on the benches' chat stream (callgrind), the
//! replay took ~870 instructions a chunk token by token, ~280 in one pass.
//!
//! A long `$any` or `$raw` value that is an object or an array (a usage
//! snapshot) is kept *in parts*: its structure (keys, punctuation,
//! whitespace, `true`, `false`, `null`) among the fixed bytes, each string or
//! number in it a variable token of its own, read by the step that would
//! have read it inside the value (`Step::Skip` at its depth); the short
//! strings are hints, the numbers never are. A Gemini snapshot whose counts
//! change on every chunk then replays by comparing its keys and reading its
//! numbers, where a whole-value token was validated again each time (about
//! 2,500 instructions a chunk, callgrind). Why that is still the scanner's
//! match: the scanner's `skip` of the value reads the same bytes between
//! those values and a whole value at each, as the replay does (the
//! argument on `scan::replay_head`). For a `$raw`, a start and an end mark
//! give the capture's span. A stream whose values change their structure
//! (an array that grows) would pay a scan and a new skeleton for each
//! payload: after [`MAX_PART_MISSES`] replays of a skeleton with parts in a
//! row that failed, its template's values are kept whole again.
//!
//! One cache serves one stream (a decoder, a WebSocket session) and one
//! [`ShapeSet`](super::ShapeSet); its size is bounded: a skeleton keeps at
//! most [`MAX_FIXED_BYTES`] fixed bytes, twice (as they are, and with its
//! short hints in place for the one-pass replay; a payload with more leaves
//! none; its long variable tokens, a text or a base64 audio delta, are never
//! kept), and there is one per template.

use super::scan::{self, Gap, Joined, Step, Token};
use super::Captures;

/// The most fixed bytes a skeleton keeps; a payload with more leaves none.
pub const MAX_FIXED_BYTES: usize = 4096;
/// The longest `$any` or `$raw` token kept as a hint (see `scan::replay_head`):
/// ids, model names, timestamps, small objects, which mostly repeat.
const MAX_HINT_BYTES: usize = 64;
/// The most strings and numbers a value kept in parts may hold.
const MAX_PARTS: usize = 64;
/// Failed replays in a row of a template's skeleton with parts, after which
/// its values are kept whole.
pub(super) const MAX_PART_MISSES: u8 = 3;

/// What a payload's scanned match leaves for the next one.
#[derive(Debug, Clone, Default)]
struct Skeleton {
    /// The payload's bytes outside its variable tokens, in order.
    fixed: Vec<u8>,
    /// The short `$any` and `$raw` tokens, concatenated.
    hints: Vec<u8>,
    /// Each variable token: its offset in `fixed`, its step, its hint.
    gaps: Vec<Gap>,
    /// The same payload for the one-pass replay (`scan::replay_joined`):
    /// its bytes with the hinted tokens left in, the unhinted ones out.
    joined: Joined,
    /// Whether to try `joined` first: off once a hint did not recur (a
    /// payload replayed only with a token read anew), until the next scan.
    fast: bool,
    /// Whether a value is kept in parts.
    parts: bool,
}

/// The skeletons of one stream's last matches, one per template.
#[derive(Debug, Clone, Default)]
pub struct ShapeCache {
    skeletons: Vec<Option<Skeleton>>,
    /// The tokens of the scan in progress.
    scratch: Vec<Token>,
    /// Matches found by replaying a skeleton.
    replayed: u64,
    /// Per template: failed replays in a row of its skeleton with parts.
    part_misses: Vec<u8>,
    /// The strings and numbers of the value being kept in parts.
    parts: Vec<Part>,
    /// The template of the last match a scan or a replay found.
    last: Option<usize>,
}

/// A string or number inside a value kept in parts: its span in the value,
/// and the depth `skip` reads it at.
#[derive(Debug, Clone, Copy)]
struct Part {
    start: usize,
    end: usize,
    depth: usize,
}

impl ShapeCache {
    /// An empty cache.
    pub fn new() -> Self {
        ShapeCache::default()
    }

    /// Forgets every skeleton (for another [`ShapeSet`](super::ShapeSet)).
    pub fn clear(&mut self) {
        self.skeletons.clear();
        self.last = None;
    }

    /// How many matches were found by replaying a skeleton.
    pub fn replayed(&self) -> u64 {
        self.replayed
    }

    /// Bytes held (for a stream's memory accounting).
    pub fn held_bytes(&self) -> usize {
        let held = |s: &Skeleton| s.fixed.capacity() + s.hints.capacity() + s.joined.bytes.capacity();
        self.skeletons.iter().flatten().map(held).sum()
    }

    /// Makes room for `templates` skeletons.
    pub(super) fn fit(&mut self, templates: usize) {
        if self.skeletons.len() < templates {
            self.skeletons.resize_with(templates, || None);
            self.part_misses.resize(templates, 0);
        }
    }

    /// Whether `data` replays template `index`'s skeleton (captures filled).
    pub(super) fn replay<'a>(&mut self, index: usize, data: &'a str, captures: &mut Captures<'a>) -> bool {
        self.replay_head(index, data, captures) == Some(data.len())
    }

    /// The length of the head of `data` that replays template `index`'s
    /// skeleton (captures filled), if one does (see `scan::replay_head`):
    /// in one pass over the bytes with its hints in place while they recur
    /// (`scan::replay_joined`), else token by token.
    pub(super) fn replay_head<'a>(
        &mut self,
        index: usize,
        data: &'a str,
        captures: &mut Captures<'a>,
    ) -> Option<usize> {
        let Some(Some(s)) = self.skeletons.get_mut(index) else { return None };
        let parts = s.parts;
        let mut end = None;
        if s.fast {
            end = scan::replay_joined(&s.joined, data, captures);
        }
        if end.is_none() {
            end = scan::replay_head(&s.fixed, &s.hints, &s.gaps, data, captures);
            // Replayed, though not in one pass: a hint did not recur (a
            // sequence number, a timestamp). Token by token from now on.
            s.fast &= end.is_none();
        }
        if parts && end.is_some() {
            if let Some(misses) = self.part_misses.get_mut(index) {
                *misses = 0;
            }
        }
        end
    }

    /// The template of the last match a scan or a replay found.
    pub(super) fn last(&self) -> Option<usize> {
        self.last
    }

    /// Records the template of a match a scan or a replay found.
    pub(super) fn set_last(&mut self, index: usize) {
        self.last = Some(index);
    }

    /// Counts a match returned (`replayed`: found by [`ShapeCache::replay`]).
    pub(super) fn count_replay(&mut self, replayed: bool) {
        self.replayed += u64::from(replayed);
    }

    /// Where a scan records its tokens.
    pub(super) fn tokens(&mut self) -> &mut Vec<Token> {
        self.scratch.clear();
        &mut self.scratch
    }

    /// Keeps the skeleton of `data`, just matched by template `index` with
    /// the tokens the scan left in `scratch`.
    pub(super) fn keep(&mut self, index: usize, data: &str) {
        let bytes = data.as_bytes();
        let variable: usize = self.scratch.iter().map(|t| t.end - t.start).sum();
        let Some(slot) = self.skeletons.get_mut(index) else { return };
        let Some(misses) = self.part_misses.get_mut(index) else { return };
        if slot.as_ref().is_some_and(|s| s.parts) {
            // Its replay failed (this payload was scanned): a miss.
            *misses = misses.saturating_add(1);
        }
        let Some(mut budget) = MAX_FIXED_BYTES.checked_sub(bytes.len().saturating_sub(variable)) else {
            *slot = None;
            return;
        };
        let in_parts = *misses < MAX_PART_MISSES;
        let skeleton = slot.get_or_insert_with(Skeleton::default);
        let mut out = Builder::new(skeleton);
        let mut from = 0;
        for token in &self.scratch {
            out.fixed(bytes.get(from..token.start).unwrap_or_default());
            let value = bytes.get(token.start..token.end).unwrap_or_default();
            from = token.end;
            let (slot, depth) = match token.step {
                Step::Skip(depth) => (None, depth),
                Step::Raw(slot, depth) => (Some(slot), depth),
                _ => {
                    out.token(token.step, value, false);
                    continue;
                }
            };
            if value.len() <= MAX_HINT_BYTES {
                out.token(token.step, value, true);
                continue;
            }
            let parts = &mut self.parts;
            parts.clear();
            let structure = if in_parts { parts_of(value, depth, parts) } else { None };
            match structure {
                Some(structure) if structure <= budget => {
                    budget -= structure;
                    out.in_parts(slot, value, parts);
                }
                _ => out.token(token.step, value, false),
            }
        }
        out.fixed(bytes.get(from..).unwrap_or_default());
        skeleton.fast = true;
    }
}

/// Fills a skeleton from its payload's fixed bytes and tokens, in order.
struct Builder<'s> {
    skeleton: &'s mut Skeleton,
}

impl<'s> Builder<'s> {
    fn new(skeleton: &'s mut Skeleton) -> Self {
        skeleton.fixed.clear();
        skeleton.hints.clear();
        skeleton.gaps.clear();
        skeleton.joined.bytes.clear();
        skeleton.joined.gaps.clear();
        skeleton.joined.raws.clear();
        skeleton.parts = false;
        Builder { skeleton }
    }

    fn fixed(&mut self, bytes: &[u8]) {
        self.skeleton.fixed.extend_from_slice(bytes);
        self.skeleton.joined.bytes.extend_from_slice(bytes);
    }

    /// A variable token read by `step`, its bytes a hint (`hinted`) or not.
    fn token(&mut self, step: Step, value: &[u8], hinted: bool) {
        let s = &mut *self.skeleton;
        let first = s.hints.len();
        if hinted {
            s.hints.extend_from_slice(value);
            if let Step::Raw(slot, _) = step {
                s.joined.raws.push((slot, s.joined.bytes.len(), value.len()));
            }
            s.joined.bytes.extend_from_slice(value);
        } else {
            s.joined.gaps.push((s.joined.bytes.len(), step));
        }
        let hint = first..s.hints.len();
        s.gaps.push(Gap { at: s.fixed.len(), step, hint });
    }

    /// A long value kept in parts (`parts`, from [`parts_of`]), between the
    /// marks of its `$raw` capture `slot` if it has one.
    fn in_parts(&mut self, slot: Option<usize>, value: &[u8], parts: &[Part]) {
        self.skeleton.parts = true;
        if let Some(slot) = slot {
            self.token(Step::RawStart(slot), &[], false);
        }
        let mut from = 0;
        for part in parts {
            self.fixed(value.get(from..part.start).unwrap_or_default());
            let bytes = value.get(part.start..part.end).unwrap_or_default();
            // Short strings mostly recur (a modality, a name); numbers are
            // the counts that change, never hints (the one-pass replay stays).
            let hinted = bytes.first() == Some(&b'"') && bytes.len() <= MAX_HINT_BYTES;
            self.token(Step::Skip(part.depth), bytes, hinted);
            from = part.end;
        }
        self.fixed(value.get(from..).unwrap_or_default());
        if let Some(slot) = slot {
            self.token(Step::RawEnd(slot), &[], false);
        }
    }
}

/// The strings and numbers of `value` (a JSON value the scanner's `skip`
/// read at `depth`) that are values, not keys, into `parts` with the depth
/// `skip` reads each at; returns the bytes of everything else, its
/// structure. None for a value that is not an object or an array, or that
/// holds more than [`MAX_PARTS`] such values.
fn parts_of(value: &[u8], depth: usize, parts: &mut Vec<Part>) -> Option<usize> {
    if !matches!(value.first(), Some(b'{' | b'[')) {
        return None;
    }
    let mut level = depth;
    let mut held = 0;
    let mut i = 0;
    while let Some(&byte) = value.get(i) {
        match byte {
            b'{' | b'[' => {
                level += 1;
                i += 1;
            }
            b'}' | b']' => {
                level = level.checked_sub(1)?;
                i += 1;
            }
            b'"' => {
                let end = super::string_end(value, i + 1)?;
                let mut after = end;
                while let Some(b' ' | b'\t' | b'\n' | b'\r') = value.get(after) {
                    after += 1;
                }
                // A key is followed by its colon: it stays among the fixed bytes.
                if value.get(after) != Some(&b':') {
                    parts.push(Part { start: i, end, depth: level });
                    held += end - i;
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = value.get(i) {
                    i += 1;
                }
                parts.push(Part { start, end: i, depth: level });
                held += i - start;
            }
            _ => i += 1,
        }
        if parts.len() > MAX_PARTS {
            return None;
        }
    }
    Some(value.len() - held)
}
