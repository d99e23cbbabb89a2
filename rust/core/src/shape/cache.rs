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
/// The longest `$any` or `$raw` token kept as a hint (see `scan::replay`):
/// ids, model names, timestamps, small objects, which mostly repeat.
const MAX_HINT_BYTES: usize = 64;

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
}

/// The skeletons of one stream's last matches, one per template.
#[derive(Debug, Clone, Default)]
pub struct ShapeCache {
    skeletons: Vec<Option<Skeleton>>,
    /// The tokens of the scan in progress.
    scratch: Vec<Token>,
    /// Matches found by replaying a skeleton.
    replayed: u64,
}

impl ShapeCache {
    /// An empty cache.
    pub fn new() -> Self {
        ShapeCache::default()
    }

    /// Forgets every skeleton (for another [`ShapeSet`](super::ShapeSet)).
    pub fn clear(&mut self) {
        self.skeletons.clear();
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
        if s.fast {
            if let Some(end) = scan::replay_joined(&s.joined, data, captures) {
                return Some(end);
            }
        }
        let end = scan::replay_head(&s.fixed, &s.hints, &s.gaps, data, captures)?;
        // Replayed, though not in one pass: a hint did not recur (a
        // sequence number, a timestamp). Token by token from now on.
        s.fast = false;
        Some(end)
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
    /// the tokens of `tokens_for`.
    pub(super) fn keep(&mut self, index: usize, data: &str) {
        let bytes = data.as_bytes();
        let variable: usize = self.scratch.iter().map(|t| t.end - t.start).sum();
        let Some(slot) = self.skeletons.get_mut(index) else { return };
        if bytes.len().saturating_sub(variable) > MAX_FIXED_BYTES {
            *slot = None;
            return;
        }
        let skeleton = slot.get_or_insert_with(Skeleton::default);
        skeleton.fixed.clear();
        skeleton.hints.clear();
        skeleton.gaps.clear();
        let joined = &mut skeleton.joined;
        joined.bytes.clear();
        joined.gaps.clear();
        joined.raws.clear();
        let mut from = 0;
        for token in &self.scratch {
            let between = bytes.get(from..token.start).unwrap_or_default();
            skeleton.fixed.extend_from_slice(between);
            joined.bytes.extend_from_slice(between);
            let first = skeleton.hints.len();
            let hinted = matches!(token.step, Step::Skip(_) | Step::Raw(..));
            let value = bytes.get(token.start..token.end).unwrap_or_default();
            if hinted && value.len() <= MAX_HINT_BYTES {
                skeleton.hints.extend_from_slice(value);
                if let Step::Raw(slot, _) = token.step {
                    joined.raws.push((slot, joined.bytes.len(), value.len()));
                }
                joined.bytes.extend_from_slice(value);
            } else {
                joined.gaps.push((joined.bytes.len(), token.step));
            }
            let hint = first..skeleton.hints.len();
            skeleton.gaps.push(Gap { at: skeleton.fixed.len(), step: token.step, hint });
            from = token.end;
        }
        let tail = bytes.get(from..).unwrap_or_default();
        skeleton.fixed.extend_from_slice(tail);
        joined.bytes.extend_from_slice(tail);
        skeleton.fast = true;
    }
}
