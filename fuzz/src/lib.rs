//! Fuzz harnesses for streamwire-core.
//!
//! Each `pub fn` here is one cargo-fuzz target's whole body (the files under
//! `fuzz_targets/` only call them), so that streamwire-core's test suite can
//! include this file and replay the committed corpora on stable Rust.
//!
//! # Input format
//!
//! The first [`CONFIG_LEN`] bytes of every input configure the run (see
//! [`Config`]): validation mode, size caps, and how the rest, the *body*, is
//! cut into chunks. Missing configuration bytes read as 0 (defaults, body fed
//! whole). Each body is decoded twice, whole and in the chunks the
//! configuration asks for, and the two runs must agree exactly: chunking must
//! never change what a decoder produces.
#![forbid(unsafe_code)]

use streamwire_core::eventstream::{
    encode_message, EventStreamDecoder, Message, Validation, DEFAULT_MAX_MESSAGE_BYTES,
};
use streamwire_core::shape::{nesting_exceeds, Capture, ShapeSet, Spec};
use streamwire_core::sse::SseDecoder;
use streamwire_core::{ErrorKind, FramingError};

/// Bytes of configuration at the start of every input.
pub const CONFIG_LEN: usize = 4;

/// How one input is decoded, read from its first [`CONFIG_LEN`] bytes.
///
/// * byte 0, flags: bit 0 selects lenient validation (EventStream); bits 1-2
///   select the size caps (see [`Config::eventstream_cap`] and
///   [`Config::sse_caps`]); bits 3-4 are repair options of
///   [`eventstream_repaired`];
/// * byte 1, chunking: 0 feeds the body whole; otherwise chunk sizes are
///   drawn at random from `0..=n`, with `n` this byte, or
///   `64 * (this byte & 0x7f)` when bit 7 is set;
/// * bytes 2-3, the seed of the chunk-size generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Byte 0.
    pub flags: u8,
    /// Byte 1.
    pub chunking: u8,
    /// Bytes 2-3, big-endian.
    pub seed: u16,
}

impl Config {
    /// Splits an input into its configuration and its body.
    pub fn parse(data: &[u8]) -> (Config, &[u8]) {
        let mut c = [0u8; CONFIG_LEN];
        let n = data.len().min(CONFIG_LEN);
        c[..n].copy_from_slice(&data[..n]);
        (Config { flags: c[0], chunking: c[1], seed: u16::from_be_bytes([c[2], c[3]]) }, &data[n..])
    }

    /// The configuration bytes, to build seed inputs.
    pub fn to_bytes(self) -> [u8; CONFIG_LEN] {
        let [s0, s1] = self.seed.to_be_bytes();
        [self.flags, self.chunking, s0, s1]
    }

    fn validation(self) -> Validation {
        if self.flags & 1 == 0 {
            Validation::Strict
        } else {
            Validation::Lenient
        }
    }

    /// The EventStream `max_message_bytes`: the default, or small caps that
    /// let the fuzzer reach the `length` checks and the cap boundary.
    pub fn eventstream_cap(self) -> usize {
        match (self.flags >> 1) & 3 {
            0 => DEFAULT_MAX_MESSAGE_BYTES,
            1 => 1 << 16,
            2 => 4096,
            _ => 64,
        }
    }

    /// The SSE `(max_line_bytes, max_event_bytes)`.
    pub fn sse_caps(self) -> (usize, usize) {
        match (self.flags >> 1) & 3 {
            0 => (16 << 20, 16 << 20),
            1 => (1024, 4096),
            2 => (64, 100),
            _ => (7, 10),
        }
    }

    /// The body cut into chunks as configured (empty chunks included: they
    /// are legal input too).
    pub fn chunks(self, body: &[u8]) -> Vec<&[u8]> {
        if self.chunking == 0 {
            return vec![body];
        }
        let max = if self.chunking & 0x80 != 0 {
            usize::from(self.chunking & 0x7f) * 64
        } else {
            usize::from(self.chunking)
        }
        .max(1);
        // xorshift64*, seeded from the input; never zero.
        let mut state = (u64::from(self.seed) << 16) ^ 0x9E37_79B9_7F4A_7C15;
        let mut out = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
            let n = (r as usize % (max + 1)).min(rest.len());
            let (a, b) = rest.split_at(n);
            out.push(a);
            rest = b;
        }
        out
    }
}

/// A decoded EventStream message, owned, for comparing runs.
#[derive(Debug, Clone, PartialEq)]
struct OwnedMessage {
    headers: Vec<(String, String)>,
    payload: Vec<u8>,
}

impl OwnedMessage {
    fn of(m: &Message<'_>) -> Self {
        OwnedMessage {
            headers: m.headers.iter().map(|h| (h.name.to_owned(), format!("{:?}", h.value))).collect(),
            payload: m.payload.to_vec(),
        }
    }
}

/// What one EventStream decoding run produced.
#[derive(Debug, PartialEq)]
struct EsOutcome {
    messages: Vec<OwnedMessage>,
    error: Option<FramingError>,
    /// Every message re-encoded, back to back; `None` if one could not be
    /// (lenient mode lets through empty names, which the encoder refuses).
    reencoded: Option<Vec<u8>>,
}

/// Feeds `chunks` to a fresh decoder, checking its invariants after every
/// call, then `finish`es it.
fn decode_eventstream(chunks: &[&[u8]], cap: usize, validation: Validation) -> EsOutcome {
    let mut dec = EventStreamDecoder::new(cap, validation);
    let mut messages = Vec::new();
    let mut reencoded = Some(Vec::new());
    let mut error = None;
    let mut fed = 0u64;
    for chunk in chunks {
        fed += chunk.len() as u64;
        let r = dec.feed(chunk, |m| {
            messages.push(OwnedMessage::of(&m));
            if let Some(out) = reencoded.as_mut() {
                if encode_message(&m.headers, m.payload, out).is_err() {
                    assert!(
                        validation == Validation::Lenient && m.headers.iter().any(|h| h.name.is_empty()),
                        "a decoded message failed to re-encode: {m:?}"
                    );
                    reencoded = None;
                }
            }
        });
        assert_eq!(dec.bytes_fed(), fed);
        // Memory bound: never more than one message, which is at most `cap`.
        assert!(dec.buffered_bytes() <= cap, "buffered {} > cap {cap}", dec.buffered_bytes());
        assert!(dec.peak_buffered_bytes() <= cap);
        if let Err(e) = r {
            error = Some(e);
            break;
        }
    }
    if error.is_none() {
        error = dec.finish().err();
    }
    assert_eq!(dec.messages_decoded(), messages.len() as u64);
    if let Some(e) = &error {
        // Failed for good: same error, nothing more decoded, memory released.
        assert_eq!(dec.error(), Some(e));
        assert_eq!(dec.feed(b"\0\0\0\x10\0\0\0\0", |_| panic!("decoded after failing")).as_ref(), Err(e));
        assert_eq!(dec.finish().as_ref(), Err(e));
        assert_eq!(dec.buffered_bytes(), 0);
    }
    EsOutcome { messages, error, reencoded }
}

/// Decodes `body` whole and chunked as `config` says; checks they agree and
/// that what was decoded is exactly a prefix of the input, frame for frame.
fn check_eventstream(config: Config, body: &[u8]) -> EsOutcome {
    let cap = config.eventstream_cap();
    let validation = config.validation();
    let whole = decode_eventstream(&[body], cap, validation);
    let chunked = decode_eventstream(&config.chunks(body), cap, validation);
    assert_eq!(whole, chunked, "chunking changed the result");
    if let Some(re) = &whole.reencoded {
        // The format has no slack, so decoding then encoding must give back
        // the very bytes that were decoded...
        assert_eq!(re.as_slice(), &body[..re.len()], "re-encoding differs from the input");
        // ...and an error is reported at the start of the first frame that
        // did not decode.
        match &whole.error {
            Some(e) => assert_eq!(e.offset, re.len() as u64, "error offset: {e:?}"),
            None => assert_eq!(re.len(), body.len(), "bytes left over without an error"),
        }
        // Decoding the re-encoding gives the same messages again.
        let again = decode_eventstream(&[re], cap, validation);
        assert_eq!(again.error, None);
        assert_eq!(again.messages, whole.messages);
    }
    whole
}

/// Target `eventstream_raw`: arbitrary bytes. Must never panic; the buffer
/// stays within the cap; chunking never changes the outcome; whatever decodes
/// re-encodes to the input's own bytes.
pub fn eventstream_raw(data: &[u8]) {
    let (config, body) = Config::parse(data);
    check_eventstream(config, body);
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// Rewrites the CRCs of every frame that can be delimited in `body`, so that
/// a mutated input gets past both checksums and exercises header parsing.
///
/// With flag bit 3, a `total_length` outside `16..=remaining` is first set
/// to the remaining length; with bit 4, a `headers_length` larger than the
/// frame allows is set to the largest it allows. Returns the repaired bytes.
pub fn repair_eventstream(config: Config, body: &[u8]) -> Vec<u8> {
    let mut buf = body.to_vec();
    let mut at = 0;
    while buf.len() - at >= 12 {
        let rem = buf.len() - at;
        let mut total = be_u32(&buf, at) as usize;
        if config.flags & 0x08 != 0 && !(16..=rem).contains(&total) && rem >= 16 {
            total = rem;
            put_u32(&mut buf, at, total as u32);
        }
        if config.flags & 0x10 != 0 && (16..=rem).contains(&total) {
            let room = (total - 16) as u32;
            if be_u32(&buf, at + 4) > room {
                put_u32(&mut buf, at + 4, room);
            }
        }
        let prelude_crc = crc32(&buf[at..at + 8]);
        put_u32(&mut buf, at + 8, prelude_crc);
        if !(16..=rem).contains(&total) {
            break;
        }
        let message_crc = crc32(&buf[at..at + total - 4]);
        put_u32(&mut buf, at + total - 4, message_crc);
        at += total;
    }
    buf
}

/// CRC-32 (IEEE, as zlib), bitwise: independent of the crate under test.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Target `eventstream_repaired`: like [`eventstream_raw`], on input whose
/// CRCs were repaired by [`repair_eventstream`]. On top of the raw checks: a
/// CRC error can no longer happen, and every decoded message re-encodes and
/// decodes to the same message.
pub fn eventstream_repaired(data: &[u8]) {
    let (config, body) = Config::parse(data);
    let repaired = repair_eventstream(config, body);
    let outcome = check_eventstream(config, &repaired);
    if let Some(e) = &outcome.error {
        assert!(
            !matches!(e.kind, ErrorKind::PreludeCrc | ErrorKind::MessageCrc),
            "CRC error on repaired input: {e:?}"
        );
    }
}

/// An SSE event, owned: type, data, id, retry.
type OwnedEvent = (String, String, Option<String>, Option<u64>);

/// What one SSE decoding run produced.
#[derive(Debug, PartialEq)]
struct SseOutcome {
    events: Vec<OwnedEvent>,
    error: Option<FramingError>,
    last_event_id: Option<String>,
    retry: Option<u64>,
}

fn decode_sse(chunks: &[&[u8]], caps: (usize, usize)) -> SseOutcome {
    let mut dec = SseDecoder::new(caps.0, caps.1);
    let mut events = Vec::new();
    let mut error = None;
    for chunk in chunks {
        let r = dec.feed(chunk, |ev| {
            events.push((ev.event_type.to_owned(), ev.data.to_owned(), ev.id.map(str::to_owned), ev.retry));
        });
        if let Err(e) = r {
            error = Some(e);
            break;
        }
    }
    if error.is_none() {
        error = dec.finish().err();
    }
    if let Some(e) = &error {
        assert_eq!(dec.error(), Some(e));
        assert_eq!(dec.feed(b"data: x\n\n", |_| panic!("event after failing")).as_ref(), Err(e));
    }
    SseOutcome { events, error, last_event_id: dec.last_event_id().map(str::to_owned), retry: dec.retry() }
}

/// Target `sse`: arbitrary bytes to `SseDecoder`, whole and chunked. Must
/// never panic, and chunking must not change the events, the error, the last
/// event ID or the retry value.
pub fn sse(data: &[u8]) {
    let (config, body) = Config::parse(data);
    let caps = config.sse_caps();
    let whole = decode_sse(&[body], caps);
    let chunked = decode_sse(&config.chunks(body), caps);
    assert_eq!(whole, chunked, "chunking changed the SSE result");
}

/// Template sets of target `shape`, chosen by an input's first byte: the SSE
/// event type and the templates, in [`streamwire_core::shape`]'s grammar.
const SHAPE_SETS: &[(&str, &[&str])] = &[
    (
        "message",
        &[
            r#"{"id?": "$any", "object?": "chat.completion.chunk", "model?": "$any", "usage?": null,
                "choices": [{"index?": "$int", "delta": {"content": "$str", "role?": "$any",
                "refusal?": "$falsy"}, "logprobs?": "$any", "finish_reason?": null}]}"#,
            r#"{"id?": "$any", "choices": [{"index?": "$int", "delta": {"tool_calls": [{"index": "$int",
                "id?": null, "function": {"arguments": "$str"}}]}, "finish_reason?": null}]}"#,
        ],
    ),
    (
        "message",
        &[
            r#"{"a?": "$falsy", "b": ["$int", "$raw", null, true, 0, "$$x"], "c?": {"d": "$str", "e": []}}"#,
            r#"{"k\"q?": {}, "": "$str", "n?": -7, "f": false}"#,
            r#""$raw""#,
        ],
    ),
    (
        "content_block_delta",
        &[
            r#"{"type": "content_block_delta", "index": "$int", "delta": {"type": "text_delta", "text": "$str"}}"#,
            r#"{"type": "content_block_delta", "index": "$int", "delta": {"type": "input_json_delta", "partial_json": "$str"}}"#,
        ],
    ),
    ("contentBlockDelta", &[r#"{"contentBlockIndex": "$int", "delta": {"text": "$str"}, "p?": "$any"}"#]),
    (
        "message",
        &[r#"{"candidates": [{"content": {"parts": [{"text": "$str"}], "role?": "$any"}, "index?": "$int"}],
            "usageMetadata?": "$raw", "modelVersion?": "$any", "responseId?": "$str", "createTime?": "$any"}"#],
    ),
];

/// Whether `value` (as serde_json reads it) has the shape of `spec`; pushes
/// the captures it would have. The oracle of target `shape`.
fn spec_matches(spec: &Spec, value: &serde_json::Value, out: &mut Vec<String>) -> bool {
    use serde_json::Value;
    match (spec, value) {
        (Spec::Str(s), _) if s == "$any" => true,
        (Spec::Str(s), _) if s == "$raw" => {
            out.push(format!("raw:{value}"));
            true
        }
        (Spec::Str(s), v) if s == "$falsy" => match v {
            Value::Null | Value::Bool(false) => true,
            Value::Number(n) => n.as_i64() == Some(0) || n.as_u64() == Some(0),
            Value::String(t) => t.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        },
        (Spec::Str(s), Value::String(t)) if s == "$str" => {
            out.push(format!("str:{t}"));
            true
        }
        (Spec::Str(s), Value::Number(n)) if s == "$int" => match n.as_i64() {
            Some(i) => {
                out.push(format!("int:{i}"));
                true
            }
            None => false,
        },
        (Spec::Str(s), _) if s.starts_with('$') && !s.starts_with("$$") => false,
        (Spec::Str(s), Value::String(t)) => {
            s.strip_prefix('$').filter(|r| r.starts_with('$')).unwrap_or(s) == t
        }
        (Spec::Null, Value::Null) => true,
        (Spec::Bool(b), Value::Bool(v)) => b == v,
        (Spec::Int(i), Value::Number(n)) => n.as_i64() == Some(*i),
        (Spec::Array(items), Value::Array(values)) => {
            items.len() == values.len() && items.iter().zip(values).all(|(s, v)| spec_matches(s, v, out))
        }
        (Spec::Object(fields), Value::Object(map)) => {
            let key_of = |name: &str| name.strip_suffix('?').unwrap_or(name).to_owned();
            if map.keys().any(|k| !fields.iter().any(|(name, _)| key_of(name) == *k)) {
                return false;
            }
            fields.iter().all(|(name, sub)| match map.get(&key_of(name)) {
                Some(v) => spec_matches(sub, v, out),
                None if name.ends_with('?') => {
                    out.extend((0..capture_count(sub)).map(|_| "absent".to_owned()));
                    true
                }
                None => false,
            })
        }
        _ => false,
    }
}

fn capture_count(spec: &Spec) -> usize {
    match spec {
        Spec::Str(s) => usize::from(matches!(s.as_str(), "$str" | "$int" | "$raw")),
        Spec::Array(items) => items.iter().map(capture_count).sum(),
        Spec::Object(fields) => fields.iter().map(|(_, s)| capture_count(s)).sum(),
        _ => 0,
    }
}

/// A match's template and captures, comparable.
fn summary<'a>(m: &streamwire_core::shape::Match<'a>) -> (usize, Vec<Capture<'a>>) {
    (m.template, m.captures().to_vec())
}

/// The nesting of `data` as the doc of [`nesting_exceeds`] defines it,
/// measured one byte at a time: the reference the screen is checked against.
pub fn naive_nesting_exceeds(data: &[u8], limit: usize) -> bool {
    let (mut depth, mut i) = (0usize, 0usize);
    while i < data.len() {
        match data[i] {
            b'"' => {
                i += 1;
                loop {
                    match data.get(i) {
                        None => return false,
                        Some(b'"') => break,
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// A JSON text's nesting depth, as serde_json reads the text: every member
/// counts, a repeated key's earlier values too (a `serde_json::Value` keeps
/// only the last of them, and with it would understate the depth).
struct Depth(usize);

impl<'de> serde::Deserialize<'de> for Depth {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DepthVisitor)
    }
}

struct DepthVisitor;

impl<'de> serde::de::Visitor<'de> for DepthVisitor {
    type Value = Depth;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_str<E>(self, _: &str) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_unit<E>(self) -> Result<Depth, E> {
        Ok(Depth(0))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Depth, A::Error> {
        let mut deepest = 0;
        while let Some(Depth(d)) = seq.next_element()? {
            deepest = deepest.max(d);
        }
        Ok(Depth(deepest + 1))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Depth, A::Error> {
        let mut deepest = 0;
        while let Some((serde::de::IgnoredAny, Depth(d))) = map.next_entry()? {
            deepest = deepest.max(d);
        }
        Ok(Depth(deepest + 1))
    }
}

/// The nesting screen of `_json.loads` ([`nesting_exceeds`]) on `body`: the
/// same answer as the byte-at-a-time reference at every limit tried, and for
/// a valid JSON text, exactly its depth.
pub fn check_nesting(body: &[u8]) {
    for limit in [0, 1, 2, 3, 4, 8, 64, 256] {
        assert_eq!(nesting_exceeds(body, limit), naive_nesting_exceeds(body, limit), "limit {limit}");
    }
    if let Ok(Depth(depth)) = serde_json::from_slice::<Depth>(body) {
        assert!(!nesting_exceeds(body, depth), "deeper than {depth}");
        assert!(depth == 0 || nesting_exceeds(body, depth - 1), "not as deep as {depth}");
    }
}

/// Target `shape`: the first byte picks a template set ([`SHAPE_SETS`]), the
/// rest is one payload. Must never panic; a match must be valid JSON whose
/// value (as serde_json reads it) has the template's shape, with the same
/// captures. Declining is always allowed. The fast scanner and the
/// `serde_json` matcher must give the same answer (and decline reason).
/// The payload also goes through the nesting screen ([`check_nesting`]).
pub fn shape(data: &[u8]) {
    let Some((&which, body)) = data.split_first() else { return };
    check_nesting(body);
    let (event, sources) = SHAPE_SETS[usize::from(which) % SHAPE_SETS.len()];
    let specs: Vec<Spec> = sources.iter().map(|s| Spec::parse(s).expect("a valid template")).collect();
    let mut set = ShapeSet::new();
    for spec in &specs {
        set.add(event, spec).expect("a template that compiles");
    }
    let Ok(text) = std::str::from_utf8(body) else {
        assert!(set.match_bytes(event, body).is_err(), "matched bytes that are not UTF-8");
        return;
    };
    // A stream's cache (skeletons, one-pass replays) answers each of its
    // payloads as a match without one does: the lines of the body in turn.
    let mut cache = streamwire_core::shape::ShapeCache::new();
    for line in text.split('\n') {
        let cached = set.match_cached(&mut cache, event, line).map(|m| summary(&m));
        assert_eq!(cached, set.match_payload(event, line).map(|m| summary(&m)), "cached: {line}");
    }
    // The fast scanner never disagrees with serde_json (the reference).
    let fast = set.match_payload(event, text);
    let reference = set.match_payload_reference(event, text);
    assert_eq!(fast.as_ref().map(summary), reference.as_ref().map(summary), "scanner vs serde_json: {text}");
    let bytes = set.match_bytes(event, body);
    assert_eq!(bytes.as_ref().map(summary), fast.as_ref().map(summary), "bytes vs str: {text}");
    let Ok(m) = fast else { return };
    let value: serde_json::Value = serde_json::from_str(text).expect("a match is one JSON text");
    let mut expected = Vec::new();
    assert!(spec_matches(&specs[m.template], &value, &mut expected), "matched another shape: {text}");
    let got: Vec<String> = m
        .captures()
        .iter()
        .map(|c| match c {
            Capture::Absent => "absent".to_owned(),
            Capture::Str(s) => format!("str:{s}"),
            Capture::Int(i) => format!("int:{i}"),
            Capture::Raw(raw) => {
                let v: serde_json::Value = serde_json::from_str(raw).expect("a raw capture is JSON");
                format!("raw:{v}")
            }
        })
        .collect();
    assert_eq!(got, expected, "captures differ: {text}");
}

/// What [`ArraySplitter`](streamwire_core::json_array::ArraySplitter) gives
/// for some chunks: the elements, the error (kind, offset), the final state.
pub type ArrayRun = (Vec<Vec<u8>>, Option<(&'static str, u64)>, &'static str, (usize, bool));

/// Splits `chunks` with a fresh splitter capped at `cap` bytes.
pub fn split_array(chunks: &[&[u8]], cap: usize) -> ArrayRun {
    let mut splitter = streamwire_core::json_array::ArraySplitter::new(cap);
    let mut elements = Vec::new();
    for chunk in chunks {
        let _ = splitter.feed(chunk, |e| elements.push(e.to_vec()));
    }
    let error = splitter.error().map(|e| (e.kind.as_str(), e.offset));
    (elements, error, splitter.state().as_str(), splitter.finish())
}

/// [`split_array`] with each element that the last matched element's
/// skeleton replays found by that match ([`Elements::head`] through
/// `ShapeSet::match_head_cached`), as the binding's `feed_matched` does: the
/// elements must be the same.
///
/// [`Elements::head`]: streamwire_core::json_array::Elements::head
pub fn split_array_heads(chunks: &[&[u8]], cap: usize) -> ArrayRun {
    use streamwire_core::json_array::Elements;
    use streamwire_core::shape::{ShapeCache, ShapeSet, Spec};

    struct Heads {
        shapes: ShapeSet,
        cache: ShapeCache,
        elements: Vec<Vec<u8>>,
    }
    impl Elements for Heads {
        fn head(&mut self, rest: &[u8], cap: usize) -> Option<usize> {
            let text = streamwire_core::utf8::valid_prefix(rest);
            let (_, length) = self.shapes.match_head_cached(&mut self.cache, "message", text)?;
            if length > cap {
                return None;
            }
            self.elements.push(rest[..length].to_vec());
            Some(length)
        }
        fn element(&mut self, element: &[u8]) {
            if let Some(text) = streamwire_core::utf8::str_of(element) {
                let _ = self.shapes.match_cached(&mut self.cache, "message", text);
            }
            self.elements.push(element.to_vec());
        }
    }
    let mut shapes = ShapeSet::new();
    let spec = r#"{"t?": "$str", "n?": "$int", "u?": "$raw", "a?": "$any", "x?": [{"y": "$str"}]}"#;
    shapes.add("message", &Spec::parse(spec).expect("a valid spec")).expect("compiles");
    let mut heads = Heads { shapes, cache: ShapeCache::new(), elements: Vec::new() };
    let mut splitter = streamwire_core::json_array::ArraySplitter::new(cap);
    for chunk in chunks {
        let _ = splitter.feed_to(chunk, &mut heads);
    }
    let error = splitter.error().map(|e| (e.kind.as_str(), e.offset));
    (heads.elements, error, splitter.state().as_str(), splitter.finish())
}

/// The spec-literal reference of the splitter: one byte at a time, every rule
/// spelled out (RFC 8259 strings and escapes, brace depth, the between-elements
/// transitions), nothing skipped ahead.
pub fn split_array_reference(body: &[u8], cap: usize) -> ArrayRun {
    use streamwire_core::json_array::{next_state, ArrayState};
    let (mut state, mut elements, mut current) = (ArrayState::Start, Vec::new(), Vec::new());
    let (mut depth, mut in_string, mut escaped, mut single) = (0usize, false, false, false);
    for (at, &byte) in body.iter().enumerate() {
        let at = at as u64;
        if state != ArrayState::Element {
            match next_state(state, byte) {
                None => return (elements, Some(("invalid_json", at)), state.as_str(), (0, false)),
                Some(ArrayState::Element) => {
                    single = state == ArrayState::Start;
                    (depth, in_string, escaped) = (0, false, false);
                    current.clear();
                    state = ArrayState::Element;
                }
                Some(next) => {
                    state = next;
                    continue;
                }
            }
        }
        current.push(byte);
        if current.len() > cap {
            let start = at + 1 - current.len() as u64;
            return (elements, Some(("event_too_large", start)), state.as_str(), (0, false));
        }
        if escaped {
            escaped = false;
        } else if in_string {
            match byte {
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        elements.push(std::mem::take(&mut current));
                        state = if single { ArrayState::End } else { ArrayState::After };
                    }
                }
                _ => {}
            }
        }
    }
    let pending = if state == ArrayState::Element { current.len() } else { 0 };
    let unclosed = matches!(state, ArrayState::First | ArrayState::After | ArrayState::Next)
        || (state == ArrayState::Element && !single);
    (elements, None, state.as_str(), (pending, unclosed))
}

/// Target `json_array`: the body split whole, in the configured chunks, and
/// by the reference must agree exactly (elements, error kind and offset,
/// state); the cap is chosen by flags bits 1-2.
pub fn json_array(data: &[u8]) {
    let (config, body) = Config::parse(data);
    let cap = [1 << 20, 64, 7, 300][usize::from((config.flags >> 1) & 3)];
    let reference = split_array_reference(body, cap);
    let whole = split_array(&[body], cap);
    let chunked = split_array(&config.chunks(body), cap);
    let heads = split_array_heads(&config.chunks(body), cap);
    let without_finish = |r: &ArrayRun| (r.0.clone(), r.1, r.2);
    if reference.1.is_some() {
        // After an error the state and what finish() says are not compared.
        assert_eq!((&whole.0, whole.1), (&reference.0, reference.1), "whole vs reference");
        assert_eq!((&chunked.0, chunked.1), (&reference.0, reference.1), "chunked vs reference");
        assert_eq!((&heads.0, heads.1), (&reference.0, reference.1), "heads vs reference");
        return;
    }
    assert_eq!(whole, reference, "whole vs reference");
    assert_eq!(without_finish(&chunked), without_finish(&reference), "chunked vs reference");
    assert_eq!(chunked.3, reference.3, "chunked finish vs reference");
    assert_eq!(without_finish(&heads), without_finish(&reference), "heads vs reference");
}
