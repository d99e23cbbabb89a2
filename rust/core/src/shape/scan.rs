//! A strict single-pass scanner: the fast way to a match, never to a decline.
//!
//! [`scan`] walks the payload bytes and the pattern together and returns the
//! captures only when it is sure that the `serde_json` matcher
//! (`matcher.rs`) would match with the same captures; on anything else,
//! whether a mismatch or merely something it does not handle (an exponent,
//! a surrogate escape it cannot pair, a number it
//! cannot read exactly, nesting past [`MAX_DEPTH`]), it returns `None` and the
//! caller asks `serde_json`, whose answer (and decline reason) is the
//! definitive one. So it only has to be *at least as strict* as `serde_json`:
//!
//! * the whole input is one JSON text (RFC 8259) with JSON whitespace only;
//! * strings: no raw control characters, only the JSON escapes, `\u`
//!   surrogates only as a pair (the input is a `str`: UTF-8 already);
//! * numbers: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, no exponent, at most
//!   [`MAX_NUMBER_DIGITS`] digits before the point (always a finite `f64`);
//!   an integer capture or literal takes at most 18 digits and no fraction,
//!   and never `-0` (which `serde_json` reads as a float);
//! * object keys are compared byte for byte with the template's, so a key with
//!   an escape gives `None`.
//!
//! `tests.rs` and the `shape` fuzz target check the claim differentially.

use std::borrow::Cow;

use super::{Capture, CaptureKind, Captures, ObjectPattern, Pattern, MAX_CAPTURES};

/// The deepest nesting the scanner follows (`serde_json` allows 128).
const MAX_DEPTH: usize = 100;
/// The most digits before the point of a skipped number.
const MAX_NUMBER_DIGITS: usize = 100;
/// The most digits of an integer capture or literal (fits `i64` unchecked).
const MAX_INT_DIGITS: usize = 18;

/// Whether `root` matches `data` for sure; then `captures` holds its
/// captures (otherwise some of them, to be reset before another use).
///
/// With `tokens`, a sure match also leaves there the payload's *variable
/// tokens* in order: every value the pattern accepts whatever it holds (a
/// capture, an `$any`), with the scanner step that read it. Everything
/// between them is *fixed*: bytes the scan read and compared.
pub(super) fn scan<'a>(
    root: &Pattern,
    data: &'a str,
    captures: &mut Captures<'a>,
    tokens: Option<&mut Vec<Token>>,
) -> bool {
    let mut s = Scanner { text: data, b: data.as_bytes(), i: 0, captures, tokens };
    let scanned = s.value(root, 0).is_some();
    s.ws();
    scanned && s.i == data.len()
}

/// One variable token of a scanned payload: its byte span and the step that read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub start: usize,
    pub end: usize,
    pub step: Step,
}

/// The scanner step that reads a variable token (see [`Scanner::value`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// `$any` at this depth: any valid value, dropped.
    Skip(usize),
    /// `$str` into this capture slot.
    Str(usize),
    /// `$int` into this capture slot.
    Int(usize),
    /// `$raw` at this depth into this capture slot.
    Raw(usize, usize),
    /// Where a `$raw` token that a skeleton keeps in parts starts (its
    /// capture slot): reads nothing (see `cache.rs`, "in parts").
    RawStart(usize),
    /// Where such a token ends: its text from its start is the capture.
    RawEnd(usize),
}

/// A variable token of a skeleton: where it goes in the fixed bytes, the
/// step that reads it, and, for a short `$any` or `$raw` token, the old
/// token's bytes (`hint`, a range of the skeleton's hint bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Gap {
    pub at: usize,
    pub step: Step,
    pub hint: std::ops::Range<usize>,
}

/// Whether `data` matches the same pattern as a payload that [`scan`]
/// matched, for sure, by that payload's skeleton: its fixed bytes (`fixed`,
/// the payload without its variable tokens) must recur in `data` verbatim,
/// and at each gap (an offset into `fixed`, in order) a variable token must
/// follow that the very step that read the old one reads whole. Then the
/// scanner, walking `data`, would take exactly the steps it took on the old
/// payload: its every decision outside a variable token depends only on the
/// fixed bytes it reads, and a step reads one whole token, whatever it holds,
/// and is followed by the same bytes. So this is a match that [`scan`] would
/// have made, with these captures; a None is only "not this way"
/// (whitespace moved, a key added...), never a decline.
///
/// A token with a hint that recurs verbatim is taken without reading it
/// again: the same bytes at the same step are the same valid token, and
/// where it ends is checked by the fixed bytes that must follow it (a number
/// `12` followed by `3` would fail there).
///
/// A `$raw` value that the skeleton keeps in parts (`cache.rs`) is a
/// segment of fixed bytes and tokens between two marks (`Step::RawStart`,
/// `Step::RawEnd`) that read nothing: the capture is what lies between them.
///
/// The skeleton is matched against the head of `data`: the answer is the
/// length of the prefix it replays. The skeleton's payload was a whole JSON
/// value with nothing after it, so the prefix is one too (its last fixed
/// byte closes it), the one value that starts `data`; what follows it is
/// not read. A payload replays when that prefix is all of it.
pub(super) fn replay_head<'a>(
    fixed: &[u8],
    hints: &[u8],
    gaps: &[Gap],
    data: &'a str,
    captures: &mut Captures<'a>,
) -> Option<usize> {
    let mut s = Scanner { text: data, b: data.as_bytes(), i: 0, captures, tokens: None };
    let mut starts = [0usize; MAX_CAPTURES];
    let mut from = 0;
    for gap in gaps {
        let segment = fixed.get(from..gap.at)?;
        if !s.b.get(s.i..s.i + segment.len()).is_some_and(|here| equal(here, segment)) {
            return None;
        }
        s.i += segment.len();
        from = gap.at;
        if s.mark(gap.step, &mut starts)? {
            continue;
        }
        let hint = hints.get(gap.hint.clone()).unwrap_or_default();
        let start = s.i;
        if !hint.is_empty() && s.b.get(start..start + hint.len()).is_some_and(|here| equal(here, hint)) {
            s.i += hint.len();
            if let Step::Raw(slot, _) = gap.step {
                let text = data.get(start..s.i)?;
                if let Some(capture) = s.captures.get_mut(slot) {
                    *capture = Capture::Raw(text);
                }
            }
        } else {
            s.step(gap.step)?;
        }
    }
    let tail = fixed.get(from..)?;
    let end = s.i + tail.len();
    s.b.get(s.i..end).is_some_and(|here| equal(here, tail)).then_some(end)
}

/// A skeleton's payload with its hinted tokens in place, for [`replay_joined`].
#[derive(Debug, Clone, Default)]
pub(super) struct Joined {
    /// The payload's bytes outside its unhinted variable tokens.
    pub bytes: Vec<u8>,
    /// The unhinted tokens: where each goes in `bytes`, and its step.
    pub gaps: Vec<(usize, Step)>,
    /// The hinted `$raw` tokens: capture slot, start in `bytes`, length.
    pub raws: Vec<(usize, usize, usize)>,
}

/// [`replay_head`] in one pass, when every hint recurs: `joined` is the
/// skeleton's payload with its hinted tokens in place, so the bytes from one
/// unhinted token to the next are compared at once, where the token-by-token
/// replay compares a fixed segment, then a hint, then the next segment. Its
/// answer, when it has one, is the one `replay_head` gives (each hint
/// recurred, so `replay_head` took it the same way); None says only "not in
/// one pass" (a hint that did not recur included).
pub(super) fn replay_joined<'a>(
    joined: &Joined,
    data: &'a str,
    captures: &mut Captures<'a>,
) -> Option<usize> {
    let mut s = Scanner { text: data, b: data.as_bytes(), i: 0, captures, tokens: None };
    let bytes = &joined.bytes;
    let mut raws = joined.raws.iter().peekable();
    // Where `bytes[at]` is in `data`: `at + shift`, the unhinted tokens
    // before it having their own lengths.
    let mut shift = 0usize;
    let mut starts = [0usize; MAX_CAPTURES];
    let mut from = 0;
    for &(at, step) in &joined.gaps {
        let segment = bytes.get(from..at)?;
        if !s.b.get(s.i..s.i + segment.len()).is_some_and(|here| equal(here, segment)) {
            return None;
        }
        s.i += segment.len();
        while let Some(&&(slot, start, len)) = raws.peek().filter(|r| r.1 < at) {
            raws.next();
            let text = data.get(start + shift..start + shift + len)?;
            if let Some(capture) = s.captures.get_mut(slot) {
                *capture = Capture::Raw(text);
            }
        }
        from = at;
        if s.mark(step, &mut starts)? {
            continue;
        }
        let token_start = s.i;
        s.step(step)?;
        shift += s.i - token_start;
    }
    let tail = bytes.get(from..)?;
    let end = s.i + tail.len();
    if !s.b.get(s.i..end).is_some_and(|here| equal(here, tail)) {
        return None;
    }
    for &(slot, start, len) in raws {
        let text = data.get(start + shift..start + shift + len)?;
        if let Some(capture) = s.captures.get_mut(slot) {
            *capture = Capture::Raw(text);
        }
    }
    Some(end)
}

/// Strings longer than this are searched by `memchr2` past their first bytes.
const SWAR_BYTES: usize = 64;

/// The offset of the first byte below 0x20 (a raw control character), if any.
fn first_control(bytes: &[u8]) -> Option<usize> {
    let mut blocks = bytes.chunks_exact(64);
    let mut offset = 0;
    for block in &mut blocks {
        // Sixteen running minimums, one per byte of a lane, over the block's
        // four lanes: the compiler keeps them in one SSE2 register (`pminub`).
        // A fold to one value, or one with `b < 0x20` flags, is not
        // vectorized as well: measured on a 6,400-byte base64 delta, this
        // takes a sixth of the time of the flag fold it replaced.
        let mut low = [u8::MAX; 16];
        for lane in block.chunks_exact(16) {
            for (low, &b) in low.iter_mut().zip(lane) {
                *low = (*low).min(b);
            }
        }
        if low.iter().any(|&b| b < 0x20) {
            return block.iter().position(|&b| b < 0x20).map(|at| offset + at);
        }
        offset += 64;
    }
    blocks.remainder().iter().position(|&b| b < 0x20).map(|at| offset + at)
}

/// `a == b` for the short segments of a skeleton, inline (a `memcmp` call
/// per segment costs more than the comparison): eight bytes at a time, the
/// last word (or, below eight bytes, the last four, two or one) overlapping
/// the one before it instead of a byte loop over the remainder.
#[inline]
fn equal(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 64 {
        return a == b;
    }
    fn w8(s: &[u8], i: usize) -> u64 {
        s.get(i..i + 8).and_then(|w| w.try_into().ok()).map_or(0, u64::from_le_bytes)
    }
    fn w4(s: &[u8], i: usize) -> u32 {
        s.get(i..i + 4).and_then(|w| w.try_into().ok()).map_or(0, u32::from_le_bytes)
    }
    fn w2(s: &[u8], i: usize) -> u16 {
        s.get(i..i + 2).and_then(|w| w.try_into().ok()).map_or(0, u16::from_le_bytes)
    }
    match n {
        0 => true,
        1 => a[0] == b[0],
        2..=3 => w2(a, 0) == w2(b, 0) && w2(a, n - 2) == w2(b, n - 2),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        _ => {
            let mut i = 0;
            while i + 8 < n {
                if w8(a, i) != w8(b, i) {
                    return false;
                }
                i += 8;
            }
            w8(a, n - 8) == w8(b, n - 8)
        }
    }
}

/// Where the integer part of the JSON number at `from` ends (RFC 8259: an
/// optional `-`, then `0` or a non-zero digit and more digits), or None
/// when there is none.
pub fn integer_end(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from + usize::from(b.get(from) == Some(&b'-'));
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => {
            while let Some(b'0'..=b'9') = b.get(i) {
                i += 1;
            }
        }
        _ => return None,
    }
    Some(i)
}

/// The index of the next `"`, `\` or control byte of `b` from `from` on:
/// where a JSON string that continues at `from` ends or needs a closer look.
///
/// Eight bytes at a time: each mask below flags a byte that is (or is
/// below) the target, and may wrongly flag bytes *above* a flagged one
/// (borrows propagate upwards), never below it; so the lowest flag of
/// their union is exact.
///
/// Past the first 64 bytes (`SWAR_BYTES`: a long text, a base64 audio delta), the
/// quote or backslash is found by `memchr2` (vectorized) and the bytes
/// before it are checked for control bytes in blocks the compiler
/// vectorizes: measured on a 6,400-byte base64 delta (callgrind), a
/// fifth of the instructions of the eight-byte loop.
pub fn special(b: &[u8], from: usize) -> Option<usize> {
    let rest = b.get(from..)?;
    if rest.len() > SWAR_BYTES {
        if let Some(found) = special_in(from, rest.get(..SWAR_BYTES)?) {
            return Some(found);
        }
        let tail = rest.get(SWAR_BYTES..)?;
        let end = memchr::memchr2(b'"', b'\\', tail).unwrap_or(tail.len());
        let control = first_control(tail.get(..end)?);
        return match control {
            Some(at) => Some(from + SWAR_BYTES + at),
            None if end < tail.len() => Some(from + SWAR_BYTES + end),
            None => None,
        };
    }
    special_in(from, rest)
}

/// [`special`] within `rest` (the input from `from` on, or its
/// first bytes), eight bytes at a time.
fn special_in(from: usize, rest: &[u8]) -> Option<usize> {
    let mut chunks = rest.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let v = u64::from_le_bytes(chunk.try_into().ok()?);
        let quote = v ^ (ONES * u64::from(b'"'));
        let backslash = v ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (v.wrapping_sub(ONES * 0x20) & !v);
        let flags = flags & HIGHS;
        if flags != 0 {
            return Some(from + offset + (flags.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    let found = chunks.remainder().iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
    Some(from + offset + found)
}

struct Scanner<'a, 'c> {
    /// The input; `b` is its bytes. Strings are sliced from it at ASCII
    /// delimiters (quotes, backslashes), which are always char boundaries.
    text: &'a str,
    b: &'a [u8],
    i: usize,
    captures: &'c mut Captures<'a>,
    /// Where the variable tokens go, when the caller keeps a skeleton.
    tokens: Option<&'c mut Vec<Token>>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// `a == b`, inline: keys and literals are short, and a `memcmp` call per
/// comparison costs more than comparing them.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

impl<'a> Scanner<'a, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Consumes `byte` (after whitespace).
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        if self.peek() == Some(byte) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }

    fn value(&mut self, pattern: &Pattern, depth: usize) -> Option<()> {
        self.ws();
        let step = match pattern {
            Pattern::Any => Step::Skip(depth),
            Pattern::Capture(CaptureKind::Str, slot) => Step::Str(*slot),
            Pattern::Capture(CaptureKind::Int, slot) => Step::Int(*slot),
            Pattern::Capture(CaptureKind::Raw, slot) => Step::Raw(*slot, depth),
            Pattern::Falsy => return self.falsy(),
            Pattern::Null => return self.literal(b"null"),
            Pattern::Bool(true) => return self.literal(b"true"),
            Pattern::Bool(false) => return self.literal(b"false"),
            Pattern::Int(expected) => return (self.int()? == *expected).then_some(()),
            Pattern::Str(expected) => {
                return same(self.string()?.as_bytes(), expected.as_bytes()).then_some(())
            }
            Pattern::Object(object) => return self.object(object, depth + 1),
            Pattern::Array(items) => return self.array(items, depth + 1),
        };
        let start = self.i;
        self.step(step)?;
        if let Some(tokens) = &mut self.tokens {
            tokens.push(Token { start, end: self.i, step });
        }
        Some(())
    }

    /// At a `$raw` token's start or end mark (`Step::RawStart`,
    /// `Step::RawEnd`) in a replay: notes where it starts in `starts`, or
    /// captures it from there; true for a mark. Reads nothing.
    fn mark(&mut self, step: Step, starts: &mut [usize; MAX_CAPTURES]) -> Option<bool> {
        match step {
            Step::RawStart(slot) => *starts.get_mut(slot)? = self.i,
            Step::RawEnd(slot) => {
                let text = self.text.get(*starts.get(slot)?..self.i)?;
                *self.captures.get_mut(slot)? = Capture::Raw(text);
            }
            _ => return Some(false),
        }
        Some(true)
    }

    /// Reads one variable token (after the whitespace before it).
    fn step(&mut self, step: Step) -> Option<()> {
        match step {
            // Marks are the replays' (`mark`); the scanner never makes one.
            Step::RawStart(_) | Step::RawEnd(_) => None,
            Step::Skip(depth) => self.skip(depth),
            Step::Str(slot) => {
                let text = self.string()?;
                *self.captures.get_mut(slot)? = Capture::Str(text);
                Some(())
            }
            Step::Int(slot) => {
                let value = self.int()?;
                *self.captures.get_mut(slot)? = Capture::Int(value);
                Some(())
            }
            Step::Raw(slot, depth) => {
                // The value's text, without the whitespace around it (as
                // serde_json's RawValue has it), once skipping it validated it.
                let start = self.i;
                self.skip(depth)?;
                *self.captures.get_mut(slot)? = Capture::Raw(self.text.get(start..self.i)?);
                Some(())
            }
        }
    }

    fn object(&mut self, object: &ObjectPattern, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH || self.peek() != Some(b'{') {
            return None;
        }
        self.i += 1;
        let mut seen = 0u64;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
        } else {
            loop {
                self.ws();
                let key = self.plain_key()?;
                let index = object.fields.iter().position(|f| same(f.key.as_bytes(), key))?;
                let bit = 1u64 << index;
                if seen & bit != 0 {
                    return None;
                }
                seen |= bit;
                self.eat(b':')?;
                self.value(&object.fields.get(index)?.pattern, depth)?;
                self.ws();
                match self.peek()? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        (object.required & !seen == 0).then_some(())
    }

    fn array(&mut self, items: &[Pattern], depth: usize) -> Option<()> {
        if depth > MAX_DEPTH || self.peek() != Some(b'[') {
            return None;
        }
        self.i += 1;
        if items.is_empty() {
            return self.eat(b']');
        }
        for (n, item) in items.iter().enumerate() {
            self.value(item, depth)?;
            self.eat(if n + 1 == items.len() { b']' } else { b',' })?;
        }
        Some(())
    }

    /// A key without escapes: its raw bytes (validity is the template's: a key
    /// is only used when it equals one of the template's keys).
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        let end = start + self.b.get(start..)?.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        if self.b.get(end) != Some(&b'"') {
            return None;
        }
        self.i = end + 1;
        self.b.get(start..end)
    }

    /// The index of the next `"`, `\` or control byte from `from` on ([`special`]).
    fn special(&self, from: usize) -> Option<usize> {
        special(self.b, from)
    }

    /// A string: validated, unescaped, borrowed when it has no escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let mut start = self.i + 1;
        let mut owned: Option<String> = None;
        loop {
            let at = self.special(start)?;
            let segment = self.text.get(start..at)?;
            match self.b.get(at)? {
                b'"' => {
                    self.i = at + 1;
                    return Some(match owned {
                        None => Cow::Borrowed(segment),
                        Some(mut text) => {
                            text.push_str(segment);
                            Cow::Owned(text)
                        }
                    });
                }
                b'\\' => {
                    // Room for the rest of a delta: growing it cost more
                    // than the bytes (callgrind, the benches' Gemini chunks).
                    let text = owned.get_or_insert_with(|| String::with_capacity(2 * (at - start) + 128));
                    text.push_str(segment);
                    let (c, len) = escape(self.b, at)?;
                    text.push(c);
                    start = at + len;
                }
                _ => return None,
            }
        }
    }

    /// A number's digits: `(digits before the point, has a fraction)`.
    fn number(&mut self) -> Option<(usize, bool)> {
        let start = self.i + usize::from(self.peek() == Some(b'-'));
        self.i = integer_end(self.b, self.i)?;
        let digits = self.i - start;
        let mut fraction = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            let from = self.i;
            while let Some(b'0'..=b'9') = self.peek() {
                self.i += 1;
            }
            if self.i == from {
                return None;
            }
            fraction = true;
        }
        match self.peek() {
            Some(b'e' | b'E' | b'0'..=b'9') => None,
            _ => Some((digits, fraction)),
        }
    }

    /// An integer of at most [`MAX_INT_DIGITS`] digits, not `-0`.
    fn int(&mut self) -> Option<i64> {
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        let (digits, fraction) = self.number()?;
        if fraction || digits > MAX_INT_DIGITS {
            return None;
        }
        let text = self.b.get(start + usize::from(negative)..self.i)?;
        let magnitude = text.iter().fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        if negative {
            (magnitude != 0).then_some(-magnitude)
        } else {
            Some(magnitude)
        }
    }

    fn falsy(&mut self) -> Option<()> {
        match self.peek()? {
            b'n' => self.literal(b"null"),
            b'f' => self.literal(b"false"),
            b'0' => (self.int()? == 0).then_some(()),
            b'"' => self.string()?.is_empty().then_some(()),
            b'[' => {
                self.i += 1;
                self.eat(b']')
            }
            b'{' => {
                self.i += 1;
                self.eat(b'}')
            }
            _ => None,
        }
    }

    /// Any JSON value, validated and dropped.
    fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => {
                let (digits, _) = self.number()?;
                (digits <= MAX_NUMBER_DIGITS).then_some(())
            }
            b'[' => {
                if depth + 1 > MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'{' => {
                if depth + 1 > MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return None;
                    }
                    self.string()?;
                    self.eat(b':')?;
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }
}

/// The JSON escape at `b[at]` (a backslash): its character and its length in
/// bytes; None for an escape RFC 8259 does not define, or a `\u` surrogate
/// that is not half of a pair (which `serde_json` refuses).
pub fn escape(b: &[u8], at: usize) -> Option<(char, usize)> {
    let hex4 = |at: usize| {
        let digits = b.get(at..at + 4)?;
        digits.iter().try_fold(0u32, |acc, &d| Some(acc * 16 + char::from(d).to_digit(16)?))
    };
    let c = match b.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(at + 2)?;
            return match unit {
                0xD800..=0xDBFF => {
                    if b.get(at + 6..at + 8) != Some(b"\\u") {
                        return None;
                    }
                    let low = hex4(at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    Some((char::from_u32(code)?, 12))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((char::from_u32(unit)?, 6)),
            };
        }
        _ => return None,
    };
    Some((c, 2))
}
