//! JSON shape matching: take the fast path only for payloads of a known shape.
//!
//! A protocol adapter spends most of its time on a few dominant payload
//! shapes (a chat chunk carrying one text delta, an Anthropic `text_delta`, a
//! Responses `output_text.delta`), of which it needs two or three values.
//! Building every key and value of such a payload as a Python object, only to
//! look most of them up and drop them, costs more than everything else on the
//! hot path. A [`ShapeSet`] holds the shapes an adapter registered; matching
//! one payload either yields the template's index and its *captured* values,
//! or declines with a [`Decline`] reason, in which case the adapter runs its
//! general path on the full JSON. Matching is conservative by construction:
//!
//! * the whole payload must be one valid JSON text (RFC 8259), parsed with
//!   `serde_json`; anything it rejects declines, including three things that
//!   Python's `json` accepts: nesting deeper than 128 levels, lone surrogate
//!   escapes (`"\ud800"`), and numbers beyond `f64` (`1e400`);
//! * objects are *closed*: a key the template does not list, a duplicate key
//!   or a missing required key declines;
//! * a literal, a type or an array length that differs declines (`serde_json`
//!   reads `-0` as a float: an integer capture or literal declines it);
//! * an integer literal longer than [`MAX_DIGIT_RUN`] digits declines anywhere
//!   in the text: CPython refuses to convert such integers (its
//!   `int_max_str_digits` limit, whose lowest setting is 640), so `json.loads`
//!   would reject a payload that `serde_json` accepts.
//!
//! So a payload matches only if it is valid JSON that Python's `json.loads`
//! decodes to a value with exactly the template's structure, and every
//! captured value equals what `json.loads` gives for it.
//!
//! # Templates
//!
//! A template is written as a [`Spec`]: a JSON-like value (parse one from
//! JSON text with [`Spec::parse`]) in which
//!
//! * an object is a closed object pattern; a key ending in `?` is optional
//!   (the `?` is not part of the key); keys may come in any order in the
//!   payload;
//! * an array is a fixed-length array, element by element (`[]` matches only
//!   an empty array);
//! * `null`, `true`, `false`, an integer, or a string are literals that the
//!   value must equal (an integer literal matches only a JSON integer);
//! * the strings `"$any"` (any valid JSON value, ignored), `"$falsy"` (a value
//!   Python treats as false, ignored: `null`, `false`, `0`, `""`, `[]` or
//!   `{}`; a zero written as a float declines), `"$str"` (capture a string),
//!   `"$int"` (capture an integer that fits `i64`; a fraction or an exponent
//!   declines) and `"$raw"` (capture the value's JSON text, any type) are
//!   directives; a literal string starting with `$` is written with `$$`
//!   (`"$$ref"` matches the string `"$ref"`). Other `$` strings are errors,
//!   as are floats.
//!
//! Captures are numbered depth-first in the template's own key order; a
//! capture under an optional key that is absent is [`Capture::Absent`]. A
//! template has at most [`MAX_CAPTURES`] captures and an object at most 64
//! keys. Each template also names the SSE event type it applies to
//! (`"message"` for unnamed events).
//!
//! # Cost
//!
//! One parse per template tried, by a strict purpose-written scanner
//! (`scan.rs`) that only ever answers "a match, with these captures" when it
//! is sure `serde_json` would agree, and otherwise hands the payload to the
//! `serde_json` matcher, whose answer is the definitive one (so a payload that
//! does not match pays for both; the scanner gives up at the first
//! difference). The two are tested and fuzzed against each other
//! ([`ShapeSet::match_payload_reference`]).
//!
//! So that a payload of the second template does not pay for a full attempt
//! at the first, each template has a *probe*: its
//! deepest required key, quoted (`"content"`), which must occur literally in
//! the payload before the parse starts (one `memmem` search). A payload that
//! spells that key with escapes (`"cont\u0065nt"`) therefore declines with
//! [`Decline::MissingKey`]: declining is always safe.
//!
//! With a [`ShapeCache`], the template that matched the stream's last
//! payload is replayed first when no payload can match an earlier template
//! too (`disjoint`: their literals differ at a key both require, say): a
//! stream's next delta mostly has the last one's shape, and the templates
//! before it then cost neither a replay nor a probe. Its replay is still a
//! match the scanner would make, and no earlier template could match, so
//! the answer is the one trying them in order gives.

use std::borrow::Cow;
use std::fmt;

use memchr::memmem::Finder;

mod cache;
#[cfg(test)]
mod cache_tests;
mod matcher;
mod scan;
#[cfg(test)]
mod scan_tests;
mod spec;
#[cfg(test)]
mod tests;

pub use cache::ShapeCache;
pub use scan::{escape, integer_end, special};
pub use spec::{Spec, SpecError};

/// The most captures one template may have.
pub const MAX_CAPTURES: usize = 8;
/// The longest run of ASCII digits a matched payload may contain.
///
/// CPython's `int_max_str_digits` (default 4300, lowest non-zero setting 640)
/// makes `json.loads` reject longer integer literals; `serde_json` does not.
/// Runs inside strings count too: scanning bytes is simpler and only ever
/// declines more.
pub const MAX_DIGIT_RUN: usize = 640;
/// The most keys one object pattern may list.
const MAX_FIELDS: usize = 64;

/// Why a payload did not match any template. Diagnostics only: every decline
/// means the same thing to the caller (take the general path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decline {
    /// No template applies to the SSE event type.
    Event,
    /// Not valid JSON, or valid JSON that `serde_json` refuses (nesting
    /// deeper than 128, a lone surrogate escape, a number beyond `f64`).
    Syntax,
    /// An object has a key the template does not list.
    UnknownKey,
    /// An object repeats a key.
    DuplicateKey,
    /// An object lacks a key the template requires (or the payload spells the
    /// template's probe key with escapes: see "Cost" in the module docs).
    MissingKey,
    /// A value has another type, or differs from the template's literal.
    Mismatch,
    /// An array has another length than the template's.
    Length,
    /// An integer capture got a fraction, an exponent, or a value beyond `i64`.
    IntRange,
    /// The payload has a run of more than [`MAX_DIGIT_RUN`] digits.
    LongNumber,
}

impl Decline {
    /// A stable short name, e.g. `"unknown_key"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decline::Event => "event",
            Decline::Syntax => "syntax",
            Decline::UnknownKey => "unknown_key",
            Decline::DuplicateKey => "duplicate_key",
            Decline::MissingKey => "missing_key",
            Decline::Mismatch => "mismatch",
            Decline::Length => "length",
            Decline::IntRange => "int_range",
            Decline::LongNumber => "long_number",
        }
    }
}

impl fmt::Display for Decline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a template captures at one of its capture points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureKind {
    /// `"$str"`: a JSON string, unescaped.
    Str,
    /// `"$int"`: a JSON integer that fits `i64`.
    Int,
    /// `"$raw"`: the JSON text of any value, as it appears in the payload.
    Raw,
}

/// One captured value, borrowing the payload where it can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture<'a> {
    /// The capture sits under an optional key that was absent.
    Absent,
    /// A string (borrowed when it had no escapes).
    Str(Cow<'a, str>),
    /// An integer.
    Int(i64),
    /// A value's JSON text, exactly as in the payload.
    Raw(&'a str),
}

/// The captures of one match attempt, by slot.
type Captures<'a> = [Capture<'a>; MAX_CAPTURES];

/// A successful match: which template, and its captures in template order.
#[derive(Debug)]
pub struct Match<'a> {
    /// The index of the matching template, in registration order.
    pub template: usize,
    captures: [Capture<'a>; MAX_CAPTURES],
    len: usize,
}

impl<'a> Match<'a> {
    /// The captured values, in the template's capture order.
    pub fn captures(&self) -> &[Capture<'a>] {
        &self.captures[..self.len]
    }
}

/// A compiled pattern (see the module docs for the spec grammar).
#[derive(Debug, Clone, PartialEq)]
enum Pattern {
    Any,
    Falsy,
    Null,
    Bool(bool),
    Int(i64),
    Str(Box<str>),
    Capture(CaptureKind, usize),
    Object(ObjectPattern),
    Array(Box<[Pattern]>),
}

#[derive(Debug, Clone, PartialEq)]
struct ObjectPattern {
    fields: Box<[Field]>,
    /// Bit `i` is set when `fields[i]` is required.
    required: u64,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    key: Box<str>,
    pattern: Pattern,
}

#[derive(Debug, Clone)]
struct Template {
    event: Box<str>,
    root: Pattern,
    captures: usize,
    /// The quoted deepest required key, if the template requires one.
    probe: Option<Finder<'static>>,
    /// Whether no payload matches both this template and an earlier one for
    /// the same event type ([`disjoint`]): a match of this one is then the
    /// first template's match, whichever templates come before it.
    exclusive: bool,
}

/// An ordered set of templates; the first one that matches a payload wins.
#[derive(Debug, Clone, Default)]
pub struct ShapeSet {
    templates: Vec<Template>,
}

impl ShapeSet {
    /// An empty set (it matches nothing).
    pub fn new() -> Self {
        ShapeSet::default()
    }

    /// Registers a template for payloads of SSE events of type `event`;
    /// returns its index. An invalid spec is an error and registers nothing.
    pub fn add(&mut self, event: &str, spec: &Spec) -> Result<usize, SpecError> {
        let mut captures = 0;
        let root = spec::compile(spec, &mut captures)?;
        if captures > MAX_CAPTURES {
            return Err(SpecError::new(format!(
                "a template has {captures} captures; at most {MAX_CAPTURES} are allowed"
            )));
        }
        let probe = deepest_required_key(&root, 0).map(|(_, key)| {
            let quoted = format!("\"{key}\"");
            Finder::new(quoted.as_bytes()).into_owned()
        });
        let exclusive =
            self.templates.iter().filter(|t| &*t.event == event).all(|t| disjoint(&t.root, &root));
        self.templates.push(Template { event: event.into(), root, captures, probe, exclusive });
        Ok(self.templates.len() - 1)
    }

    /// The number of templates.
    pub fn len(&self) -> usize {
        self.templates.len()
    }

    /// Whether no template was registered.
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// The number of captures of template `index` (None if there is none).
    pub fn captures_of(&self, index: usize) -> Option<usize> {
        self.templates.get(index).map(|t| t.captures)
    }

    /// Whether any template applies to SSE events of type `event`: a cheap
    /// test before [`ShapeSet::match_payload`].
    pub fn handles_event(&self, event: &str) -> bool {
        self.templates.iter().any(|t| &*t.event == event)
    }

    /// Matches one payload of an SSE event of type `event` against the
    /// templates for that type, in registration order.
    ///
    /// On a decline, the reason is the one of the last template tried.
    pub fn match_payload<'a>(&self, event: &str, data: &'a str) -> Result<Match<'a>, Decline> {
        self.run(event, data, true)
    }

    /// [`ShapeSet::match_payload`] for a payload given as bytes: bytes that are
    /// not UTF-8 decline with [`Decline::Syntax`] (as Python's `json` refuses
    /// them), once a template for `event` applies.
    pub fn match_bytes<'a>(&self, event: &str, data: &'a [u8]) -> Result<Match<'a>, Decline> {
        if !self.handles_event(event) {
            return Err(Decline::Event);
        }
        let text = crate::utf8::str_of(data).ok_or(Decline::Syntax)?;
        self.match_payload(event, text)
    }

    /// [`ShapeSet::match_payload`] without the fast scanner: `serde_json`
    /// alone decides. Its answer is the definition of a match; it is public
    /// for differential tests (the scanner must never disagree with it).
    pub fn match_payload_reference<'a>(&self, event: &str, data: &'a str) -> Result<Match<'a>, Decline> {
        self.run(event, data, false)
    }

    /// [`ShapeSet::match_payload`], remembering in `cache` the skeleton of
    /// each template's last scanned match, so that a payload that differs from
    /// it only inside its variable tokens (a stream's next delta) is matched
    /// by comparing bytes (see [`ShapeCache`]). The answer is always the one
    /// `match_payload` gives.
    pub fn match_cached<'a>(
        &self,
        cache: &mut ShapeCache,
        event: &str,
        data: &'a str,
    ) -> Result<Match<'a>, Decline> {
        cache.fit(self.templates.len());
        self.attempt(event, data, true, Some(cache))
    }

    /// The match of a payload that is the head of `data` (a JSON value with
    /// more after it, as in a JSON array's body), found by replaying the
    /// skeleton `cache` holds for the first template of type `event`:
    /// `(match, payload length)`. A replayed skeleton is a match the scanner
    /// would make (see [`ShapeCache`]) and the first template wins, so this
    /// is [`ShapeSet::match_cached`]'s answer for `&data[..length]`. None
    /// says only that no replay found one: the caller then finds the
    /// payload's end itself and matches it as usual.
    pub fn match_head_cached<'a>(
        &self,
        cache: &mut ShapeCache,
        event: &str,
        data: &'a str,
    ) -> Option<(Match<'a>, usize)> {
        let index = self.templates.iter().position(|t| &*t.event == event)?;
        let template = &self.templates[index];
        let mut m = Match {
            template: index,
            captures: std::array::from_fn(|_| Capture::Absent),
            len: template.captures,
        };
        let length = cache.replay_head(index, data, &mut m.captures)?;
        // As in `attempt`: a payload with a long digit run is declined.
        if has_digit_run(data.as_bytes().get(..length)?, MAX_DIGIT_RUN + 1) {
            return None;
        }
        cache.count_replay(true);
        Some((m, length))
    }

    /// The matching loop; `fast` tries the scanner first.
    fn run<'a>(&self, event: &str, data: &'a str, fast: bool) -> Result<Match<'a>, Decline> {
        self.attempt(event, data, fast, None)
    }

    fn attempt<'a>(
        &self,
        event: &str,
        data: &'a str,
        fast: bool,
        mut cache: Option<&mut ShapeCache>,
    ) -> Result<Match<'a>, Decline> {
        let bytes = data.as_bytes();
        // The template that matched the stream's last payload, replayed first
        // when no payload can match an earlier one too (`exclusive`): a
        // delta stream's next payload mostly has the last one's shape, and
        // the templates before it then cost neither a replay nor a probe.
        let mut tried = None;
        if let Some(cache) = cache.as_deref_mut() {
            if let Some((index, template)) = cache.last().and_then(|i| Some((i, self.templates.get(i)?))) {
                if template.exclusive && &*template.event == event {
                    let mut m = Match {
                        template: index,
                        captures: std::array::from_fn(|_| Capture::Absent),
                        len: template.captures,
                    };
                    if cache.replay(index, data, &mut m.captures) {
                        // As below: a payload with a long digit run is declined.
                        if has_digit_run(bytes, MAX_DIGIT_RUN + 1) {
                            return Err(Decline::LongNumber);
                        }
                        cache.count_replay(true);
                        return Ok(m);
                    }
                    tried = Some(index);
                }
            }
        }
        let mut reason = Decline::Event;
        let mut checked_digits = false;
        for (index, template) in self.templates.iter().enumerate() {
            if &*template.event != event {
                continue;
            }
            let mut m = Match {
                template: index,
                captures: std::array::from_fn(|_| Capture::Absent),
                len: template.captures,
            };
            // A replayed skeleton is a match the scanner would make (its probe
            // key is among the fixed bytes); templates before this one were
            // tried in full, so the first match still wins.
            let replayed = tried != Some(index)
                && cache.as_deref_mut().is_some_and(|cache| cache.replay(index, data, &mut m.captures));
            let (mut found, mut scanned) = (replayed, false);
            let probed = found || template.probe.as_ref().map_or(true, |probe| probe.find(bytes).is_some());
            if !found && probed && fast {
                m.captures = std::array::from_fn(|_| Capture::Absent);
                // The scanner's matches are sure; its `false` is not a decline.
                let tokens = cache.as_deref_mut().map(ShapeCache::tokens);
                found = scan::scan(&template.root, data, &mut m.captures, tokens);
                scanned = found;
            }
            // The digit runs are looked for once the payload has been read
            // through (by the replay or the scan), not before: it probes
            // every 641st byte, which in a payload not yet in the CPU's cache
            // (a 6,400-byte audio delta) costs a cache miss each, where a
            // sequential read is prefetched. The answer is the same: nothing
            // is returned or kept before this check.
            if !checked_digits {
                if has_digit_run(bytes, MAX_DIGIT_RUN + 1) {
                    return Err(Decline::LongNumber);
                }
                checked_digits = true;
            }
            if found {
                if let Some(cache) = cache.as_deref_mut() {
                    if scanned {
                        cache.keep(index, data);
                    }
                    cache.count_replay(replayed);
                    cache.set_last(index);
                }
                return Ok(m);
            }
            if !probed {
                reason = Decline::MissingKey;
                continue;
            }
            match matcher::match_template(&template.root, data) {
                Ok(captures) => {
                    return Ok(Match { template: index, captures, len: template.captures });
                }
                Err(why) => reason = why,
            }
        }
        Err(reason)
    }
}

/// Whether no JSON value matches both `a` and `b`; false when unsure.
///
/// Sure only of what the matchers decline in any case: a value of another
/// JSON type, a different literal, an array of another length, and objects
/// (closed) one of which requires a key that the other does not list or whose
/// values can never match both. `$any`, `$falsy` and `$raw` are never ruled out.
fn disjoint(a: &Pattern, b: &Pattern) -> bool {
    match (a, b) {
        (Pattern::Object(x), Pattern::Object(y)) => objects_disjoint(x, y) || objects_disjoint(y, x),
        (Pattern::Array(x), Pattern::Array(y)) => {
            x.len() != y.len() || x.iter().zip(y.iter()).any(|(p, q)| disjoint(p, q))
        }
        (Pattern::Bool(x), Pattern::Bool(y)) => x != y,
        (Pattern::Int(x), Pattern::Int(y)) => x != y,
        (Pattern::Str(x), Pattern::Str(y)) => x != y,
        _ => match (json_type(a), json_type(b)) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        },
    }
}

/// Whether a key that `x` requires rules out every match of `y`: `y` does
/// not list it (its objects are closed), or its values under the two are disjoint.
fn objects_disjoint(x: &ObjectPattern, y: &ObjectPattern) -> bool {
    x.fields.iter().enumerate().any(|(i, field)| {
        x.required & (1u64 << i) != 0
            && match y.fields.iter().find(|other| other.key == field.key) {
                None => true,
                Some(other) => disjoint(&field.pattern, &other.pattern),
            }
    })
}

/// The JSON type every value a pattern matches has, if there is one.
fn json_type(pattern: &Pattern) -> Option<u8> {
    Some(match pattern {
        Pattern::Null => 0,
        Pattern::Bool(_) => 1,
        Pattern::Int(_) | Pattern::Capture(CaptureKind::Int, _) => 2,
        Pattern::Str(_) | Pattern::Capture(CaptureKind::Str, _) => 3,
        Pattern::Array(_) => 4,
        Pattern::Object(_) => 5,
        Pattern::Any | Pattern::Falsy | Pattern::Capture(CaptureKind::Raw, _) => return None,
    })
}

/// The deepest key that every match must contain (the last one at that
/// depth), with its depth: a key under required keys and array elements
/// only. Keys that JSON must escape are skipped: they never occur literally.
fn deepest_required_key(pattern: &Pattern, depth: usize) -> Option<(usize, &str)> {
    fn deeper<'k>(
        best: Option<(usize, &'k str)>,
        found: Option<(usize, &'k str)>,
    ) -> Option<(usize, &'k str)> {
        match (best, found) {
            (Some(b), Some(f)) if f.0 < b.0 => Some(b),
            (b, None) => b,
            (_, f) => f,
        }
    }
    match pattern {
        Pattern::Object(object) => {
            let mut best = None;
            for (i, field) in object.fields.iter().enumerate() {
                if object.required & (1u64 << i) == 0 {
                    continue;
                }
                let literal = field.key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
                if literal {
                    best = deeper(best, Some((depth + 1, &*field.key)));
                }
                best = deeper(best, deepest_required_key(&field.pattern, depth + 1));
            }
            best
        }
        Pattern::Array(items) => {
            items.iter().fold(None, |best, item| deeper(best, deepest_required_key(item, depth + 1)))
        }
        _ => None,
    }
}

/// Whether the JSON text `data` nests arrays and objects more than `limit`
/// levels deep.
///
/// Brackets inside strings do not count (a string ends at its first
/// unescaped quote; an unterminated one ends the text). It is a screen for a
/// recursive decoder, not a validator: on text that is not JSON it answers
/// for the brackets as written, unmatched closing brackets lowering the
/// depth no further than zero, so a `true` means that a decoder following the
/// text would have gone deeper than `limit` before it could fail. Text with at
/// most `limit` opening brackets in all is answered by one vectorized count.
pub fn nesting_exceeds(data: &[u8], limit: usize) -> bool {
    if data.len() <= limit || memchr::memchr2_iter(b'[', b'{', data).count() <= limit {
        return false;
    }
    let mut depth = 0usize;
    let mut at = 0usize;
    while let Some(found) = memchr::memchr3(b'"', b'[', b'{', &data[at..]) {
        let i = at + found;
        match data[i] {
            b'"' => match string_end(data, i + 1) {
                Some(end) => {
                    // Closing brackets between the last opening one and here.
                    depth = depth.saturating_sub(closings(&data[at..i]));
                    at = end;
                    continue;
                }
                None => return false,
            },
            _ => {
                depth = depth.saturating_sub(closings(&data[at..i])) + 1;
                if depth > limit {
                    return true;
                }
            }
        }
        at = i + 1;
    }
    false
}

/// The offset just past the string whose contents start at `from`, or None
/// if it is not terminated.
fn string_end(data: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let found = memchr::memchr2(b'"', b'\\', data.get(from..)?)?;
        let i = from + found;
        if data[i] == b'"' {
            return Some(i + 1);
        }
        from = i + 2; // an escape and the byte it escapes
    }
}

/// The closing brackets in `data` (which holds no quote).
fn closings(data: &[u8]) -> usize {
    memchr::memchr2_iter(b']', b'}', data).count()
}

/// Whether `data` holds a run of at least `len` consecutive ASCII digits.
///
/// A JSON integer outside the 64-bit range has at least 19 digits, so a text
/// without a 19-digit run holds none (a digit run inside a string only makes
/// the answer a cautious yes). Probes every `len`-th byte: a non-digit there
/// rules out every run that would cover it.
pub fn has_digit_run(data: &[u8], len: usize) -> bool {
    if len == 0 {
        return true;
    }
    let digit = |i: usize| data.get(i).is_some_and(u8::is_ascii_digit);
    let mut start = 0;
    while start + len <= data.len() {
        let last = start + len - 1;
        if !digit(last) {
            start = last + 1;
            continue;
        }
        let mut first = last;
        while first > start && digit(first - 1) {
            first -= 1;
        }
        if first == start {
            return true;
        }
        start = first;
    }
    false
}
