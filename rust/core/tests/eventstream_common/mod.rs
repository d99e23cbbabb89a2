//! Helpers shared by the EventStream integration tests: a tiny deterministic
//! PRNG, a canonical JSON form of decoded messages, and a driver that feeds a
//! byte stream to a decoder in given chunks and records what came out.
#![allow(dead_code)]

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::{json, Value};
use streamwire_core::eventstream::{EventStreamDecoder, HeaderValue, Message, Validation};
use streamwire_core::FramingError;

/// xorshift64*: enough randomness for split points and test data, with no
/// external crate and a fixed seed so every failure reproduces.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // A zero state would stay zero forever.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-enough in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as usize
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// FNV-1a, to derive a per-vector seed from its name.
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// The 8-4-4-4-12 lowercase form of a UUID.
pub fn uuid_string(u: &[u8; 16]) -> String {
    let hex: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// A decoded message in the `generated.json` vector format.
pub fn message_json(m: &Message<'_>) -> Value {
    let headers: Vec<Value> = m
        .headers
        .iter()
        .map(|h| {
            let value = match &h.value {
                HeaderValue::Bool(b) => json!(b),
                HeaderValue::Byte(v) => json!(v),
                HeaderValue::Short(v) => json!(v),
                HeaderValue::Integer(v) => json!(v),
                HeaderValue::Long(v) | HeaderValue::Timestamp(v) => json!(v),
                HeaderValue::ByteArray(b) => json!(B64.encode(b)),
                HeaderValue::String(s) => json!(s),
                HeaderValue::Uuid(u) => json!(uuid_string(u)),
            };
            json!({"name": h.name, "type": h.value.header_type().as_str(), "value": value})
        })
        .collect();
    json!({"headers": headers, "payload_b64": B64.encode(m.payload)})
}

/// What one decoding run produced.
#[derive(Debug)]
pub struct Outcome {
    pub messages: Vec<Value>,
    pub error: Option<FramingError>,
    pub peak_buffered: usize,
    pub bytes_fed: u64,
    pub messages_decoded: u64,
}

/// Feeds `chunks` in order, then calls `finish` unless a feed failed, and
/// checks the decoder's bookkeeping along the way: a failed decoder repeats
/// its error, and the buffer never holds more than `max_message` bytes.
pub fn run<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    max_message: usize,
    validation: Validation,
) -> Outcome {
    let mut dec = EventStreamDecoder::new(max_message, validation);
    let mut messages = Vec::new();
    let mut error = None;
    let mut fed = 0u64;
    for chunk in chunks {
        fed += chunk.len() as u64;
        if let Err(e) = dec.feed(chunk, |m| messages.push(message_json(&m))) {
            error = Some(e);
            break;
        }
        assert!(dec.buffered_bytes() <= max_message, "buffer above the cap");
        assert_eq!(dec.bytes_fed(), fed);
    }
    if error.is_none() {
        error = dec.finish().err();
    }
    if let Some(e) = &error {
        // Sticky: the same error from every later call, and nothing decoded.
        assert_eq!(dec.error(), Some(e));
        let before = messages.len();
        assert_eq!(dec.feed(b"\x00\x00\x00\x10", |m| messages.push(message_json(&m))).as_ref(), Err(e));
        assert_eq!(dec.finish().as_ref(), Err(e));
        assert_eq!(messages.len(), before);
        assert_eq!(dec.buffered_bytes(), 0);
    } else {
        assert_eq!(dec.buffered_bytes(), 0);
    }
    assert_eq!(dec.messages_decoded(), messages.len() as u64);
    Outcome {
        messages,
        error,
        peak_buffered: dec.peak_buffered_bytes(),
        bytes_fed: dec.bytes_fed(),
        messages_decoded: dec.messages_decoded(),
    }
}

/// `bytes` cut at the given increasing positions.
pub fn split_at<'b>(bytes: &'b [u8], cuts: &[usize]) -> Vec<&'b [u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for &c in cuts {
        out.push(&bytes[start..c]);
        start = c;
    }
    out.push(&bytes[start..]);
    out
}

/// Random chunk sizes: sometimes tiny, sometimes large.
pub fn random_chunks<'b>(bytes: &'b [u8], rng: &mut Rng) -> Vec<&'b [u8]> {
    let max = match rng.range(0, 3) {
        0 => 3,
        1 => 17,
        2 => 300,
        _ => bytes.len().max(1),
    };
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        // Empty chunks are legal input too.
        let n = rng.range(0, max).min(rest.len());
        let (a, b) = rest.split_at(n);
        out.push(a);
        rest = b;
    }
    out
}
