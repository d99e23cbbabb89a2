//! Property-style EventStream tests, driven by a seeded PRNG (no external
//! crates): encode -> decode identity under random chunkings, detection of
//! every single-bit flip, degenerate lengths, caps, encoder refusals.

mod eventstream_common;

use std::time::Instant;

use eventstream_common::{message_json, random_chunks, run, Rng};
use serde_json::Value;
use streamwire_core::eventstream::{
    encode_message, EventStreamDecoder, Header, HeaderType, HeaderValue, Message, Validation,
    DEFAULT_MAX_MESSAGE_BYTES, MAX_HEADERS_BYTES,
};
use streamwire_core::ErrorKind;

/// An owned header value, so that generated data outlives the views.
#[derive(Debug, Clone)]
enum Owned {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Integer(i32),
    Long(i64),
    ByteArray(Vec<u8>),
    Str(String),
    Timestamp(i64),
    Uuid([u8; 16]),
}

impl Owned {
    fn view(&self) -> HeaderValue<'_> {
        match self {
            Owned::Bool(b) => HeaderValue::Bool(*b),
            Owned::Byte(v) => HeaderValue::Byte(*v),
            Owned::Short(v) => HeaderValue::Short(*v),
            Owned::Integer(v) => HeaderValue::Integer(*v),
            Owned::Long(v) => HeaderValue::Long(*v),
            Owned::ByteArray(b) => HeaderValue::ByteArray(b),
            Owned::Str(s) => HeaderValue::String(s),
            Owned::Timestamp(v) => HeaderValue::Timestamp(*v),
            Owned::Uuid(u) => HeaderValue::Uuid(*u),
        }
    }
}

/// One generated message: owned headers and payload.
struct Spec {
    headers: Vec<(String, Owned)>,
    payload: Vec<u8>,
}

impl Spec {
    fn headers(&self) -> Vec<Header<'_>> {
        self.headers.iter().map(|(n, v)| Header { name: n, value: v.view() }).collect()
    }

    fn json(&self) -> Value {
        message_json(&Message { headers: self.headers(), payload: &self.payload })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        encode_message(&self.headers(), &self.payload, out).unwrap();
    }
}

/// Characters of 1 to 4 UTF-8 bytes, so names and strings cross code points.
const CHARS: &[char] = &['a', 'Z', '0', ':', '-', '_', ' ', 'é', 'ß', '☃', '€', '😀', '𝄞'];

fn random_text(rng: &mut Rng, prefix: String, max_bytes: usize) -> String {
    let mut s = prefix;
    let target = rng.range(s.len().min(max_bytes), max_bytes);
    loop {
        let c = CHARS[rng.range(0, CHARS.len() - 1)];
        if s.len() + c.len_utf8() > target {
            return s;
        }
        s.push(c);
    }
}

/// A random integer biased toward the edges of its range.
fn edgy(rng: &mut Rng) -> u64 {
    match rng.range(0, 5) {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << rng.range(0, 63),
        3 => (1 << rng.range(0, 63)) - 1,
        _ => rng.next_u64(),
    }
}

/// A random value of any of the 10 types; variable-length ones take at most
/// `budget` bytes and, unless `big`, at most 40.
fn random_value(rng: &mut Rng, budget: usize, big: bool) -> Owned {
    let len_limit = |rng: &mut Rng| {
        let want = match rng.range(0, 9) {
            0 => 0,
            1 if big => 65535,
            2 if big => rng.range(0, 5000),
            _ => rng.range(0, 40),
        };
        want.min(budget).min(65535)
    };
    match HeaderType::from_id(rng.range(0, 9) as u8).unwrap() {
        HeaderType::BoolTrue => Owned::Bool(true),
        HeaderType::BoolFalse => Owned::Bool(false),
        HeaderType::Byte => Owned::Byte(edgy(rng) as i8),
        HeaderType::Short => Owned::Short(edgy(rng) as i16),
        HeaderType::Integer => Owned::Integer(edgy(rng) as i32),
        HeaderType::Long => Owned::Long(edgy(rng) as i64),
        HeaderType::Timestamp => Owned::Timestamp(edgy(rng) as i64),
        HeaderType::Uuid => Owned::Uuid(rng.bytes(16).try_into().unwrap()),
        HeaderType::ByteArray => {
            let n = len_limit(rng);
            Owned::ByteArray(rng.bytes(n))
        }
        HeaderType::String => {
            let n = len_limit(rng);
            Owned::Str(random_text(rng, String::new(), n))
        }
    }
}

/// A random message with unique header names (so it is valid in strict
/// mode) whose header block stays under the 128 KiB cap. Unless `big`, it
/// stays small (values of at most 40 bytes, payload of at most 64).
fn random_spec(rng: &mut Rng, max_headers: usize, big: bool) -> Spec {
    let mut headers = Vec::new();
    let mut block = 0usize;
    for i in 0..rng.range(0, max_headers) {
        // The index prefix keeps names unique; some names are the full 255.
        let name_max = if big && rng.range(0, 7) == 0 { 255 } else { rng.range(4, 30) };
        let name = random_text(rng, format!("{i}-"), name_max);
        let fixed = 2 + name.len() + 2;
        if block + fixed + 16 > MAX_HEADERS_BYTES {
            break;
        }
        let value = random_value(rng, MAX_HEADERS_BYTES - block - fixed, big);
        block += 2 + name.len() + value.view().wire_len_after_type();
        headers.push((name, value));
    }
    let payload_len = if big && rng.range(0, 9) == 0 { rng.range(0, 100_000) } else { rng.range(0, 64) };
    Spec { headers, payload: rng.bytes(payload_len) }
}

/// The wire size of a value after its type byte, for block budgeting.
trait WireLen {
    fn wire_len_after_type(&self) -> usize;
}

impl WireLen for HeaderValue<'_> {
    fn wire_len_after_type(&self) -> usize {
        match self {
            HeaderValue::Bool(_) => 0,
            HeaderValue::Byte(_) => 1,
            HeaderValue::Short(_) => 2,
            HeaderValue::Integer(_) => 4,
            HeaderValue::Long(_) | HeaderValue::Timestamp(_) => 8,
            HeaderValue::ByteArray(b) => 2 + b.len(),
            HeaderValue::String(s) => 2 + s.len(),
            HeaderValue::Uuid(_) => 16,
        }
    }
}

#[test]
fn encode_decode_identity_under_random_chunkings() {
    let mut rng = Rng::new(1);
    let mut seen_types = [false; 10];
    for round in 0..400 {
        let specs: Vec<Spec> = (0..rng.range(1, 5)).map(|_| random_spec(&mut rng, 14, true)).collect();
        let mut stream = Vec::new();
        let mut largest = 0;
        for s in &specs {
            let before = stream.len();
            s.encode(&mut stream);
            largest = largest.max(stream.len() - before);
            for (_, v) in &s.headers {
                seen_types[usize::from(v.view().header_type().id())] = true;
            }
        }
        let expected: Vec<Value> = specs.iter().map(Spec::json).collect();
        for validation in [Validation::Strict, Validation::Lenient] {
            let whole = run([stream.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, validation);
            assert!(whole.error.is_none(), "round {round}: {:?}", whole.error);
            assert_eq!(whole.messages, expected, "round {round}: whole");
            assert_eq!(whole.peak_buffered, 0, "round {round}: whole slice must not copy");
            for _ in 0..4 {
                let chunks = random_chunks(&stream, &mut rng);
                let out = run(chunks, DEFAULT_MAX_MESSAGE_BYTES, validation);
                assert!(out.error.is_none(), "round {round}: {:?}", out.error);
                assert_eq!(out.messages, expected, "round {round}: chunked");
                assert!(
                    out.peak_buffered <= largest,
                    "round {round}: peak {} > {largest}",
                    out.peak_buffered
                );
            }
        }
    }
    assert_eq!(seen_types, [true; 10], "the generator must cover all 10 types");
}

/// Frame start offsets of an encoded stream of `specs`.
fn encode_all(specs: &[Spec]) -> (Vec<u8>, Vec<usize>) {
    let mut stream = Vec::new();
    let mut starts = Vec::new();
    for s in specs {
        starts.push(stream.len());
        s.encode(&mut stream);
    }
    (stream, starts)
}

#[test]
fn every_single_bit_flip_is_detected() {
    let mut rng = Rng::new(2);
    for round in 0..12 {
        let specs: Vec<Spec> = (0..3).map(|_| random_spec(&mut rng, 4, false)).collect();
        let (stream, starts) = encode_all(&specs);
        let expected: Vec<Value> = specs.iter().map(Spec::json).collect();
        for bit in 0..stream.len() * 8 {
            let mut bad = stream.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let byte = bit / 8;
            // The frame the flip lands in, and where in it.
            let k = starts.iter().rposition(|&s| s <= byte).unwrap();
            let want = if byte - starts[k] < 12 { ErrorKind::PreludeCrc } else { ErrorKind::MessageCrc };
            let mut outcomes = vec![run([bad.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient)];
            if bit % 5 == 0 {
                outcomes.push(run(
                    random_chunks(&bad, &mut rng),
                    DEFAULT_MAX_MESSAGE_BYTES,
                    Validation::Lenient,
                ));
            }
            for out in outcomes {
                let e = out.error.unwrap_or_else(|| panic!("round {round}: bit {bit} flip went unnoticed"));
                assert_eq!(e.kind, want, "round {round}: bit {bit}");
                assert_eq!(e.offset, starts[k] as u64, "round {round}: bit {bit}");
                assert_eq!(out.messages, expected[..k], "round {round}: bit {bit}");
            }
        }
    }
}

/// A prelude with the given lengths and a correct prelude CRC.
fn prelude(total: u32, headers: u32) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&headers.to_be_bytes());
    let crc = crc32(&p);
    p.extend_from_slice(&crc.to_be_bytes());
    p
}

/// Bitwise CRC-32 (IEEE, reflected, as zlib): an independent check of the
/// crc32fast-based code under test.
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

#[test]
fn crc_matches_the_zlib_check_value() {
    // The standard CRC-32 check value, and the smallest valid frame by hand.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    let mut frame = prelude(16, 0);
    let crc = crc32(&frame);
    frame.extend_from_slice(&crc.to_be_bytes());
    let mut out = Vec::new();
    encode_message(&[], &[], &mut out).unwrap();
    assert_eq!(out, frame);
}

#[test]
fn degenerate_lengths_fail_without_looping() {
    for total in 0..16u32 {
        let p = prelude(total, 0);
        for validation in [Validation::Strict, Validation::Lenient] {
            let whole = run([p.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, validation);
            assert_eq!(whole.error.as_ref().map(|e| e.kind), Some(ErrorKind::Length), "total {total}");
            let bytewise = run(p.chunks(1), DEFAULT_MAX_MESSAGE_BYTES, validation);
            assert_eq!(bytewise.error.map(|e| e.kind), Some(ErrorKind::Length), "total {total}");
        }
    }
    // All zeros: the prelude CRC of eight zero bytes is not zero.
    let zeros = vec![0u8; 4096];
    let out = run([zeros.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
    assert_eq!(out.error.map(|e| (e.kind, e.offset)), Some((ErrorKind::PreludeCrc, 0)));
    // The empty message, many times over, decodes each time.
    let mut one = Vec::new();
    encode_message(&[], &[], &mut one).unwrap();
    let many = one.repeat(1000);
    let out = run([many.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert!(out.error.is_none());
    assert_eq!(out.messages_decoded, 1000);
    let out = run(many.chunks(7), DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.messages_decoded, 1000);
    assert!(out.peak_buffered <= 16);
}

#[test]
fn lengths_are_checked_before_waiting_or_allocating() {
    // A huge declared length with a valid CRC fails on the prelude alone:
    // the decoder neither waits for the body nor reserves room for it.
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    let e = dec.feed(&prelude(u32::MAX, 0), |_| panic!("no message")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Length);
    // Same through the buffered path, a byte at a time: the error comes at
    // the 12th byte, before `finish`.
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    let p = prelude(DEFAULT_MAX_MESSAGE_BYTES as u32 + 1, 0);
    for (i, b) in p.iter().enumerate() {
        let r = dec.feed(std::slice::from_ref(b), |_| panic!("no message"));
        assert_eq!(r.is_err(), i == 11, "byte {i}");
    }
    assert!(dec.peak_buffered_bytes() <= 12);
    // A prelude whose CRC fails is never trusted, even with harmless lengths.
    let mut p = prelude(16, 0);
    p[11] ^= 1;
    let out = run([p.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::PreludeCrc));
    // headers_length: one past the room of the frame, and one past the cap.
    let out = run([prelude(32, 17).as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::HeadersLength));
    let cap = MAX_HEADERS_BYTES as u32;
    let out = run([prelude(cap + 17, cap + 1).as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::HeadersLength));
    // A prelude that passes waits for its body: truncated at finish.
    let out = run([prelude(cap + 16, cap).as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::Truncated));
}

#[test]
fn the_message_cap_is_inclusive() {
    let spec = Spec { headers: vec![("n".into(), Owned::Long(1))], payload: vec![7; 60] };
    let mut frame = Vec::new();
    spec.encode(&mut frame);
    let len = frame.len();
    for (cap, ok) in [(len, true), (len - 1, false)] {
        let out = run(frame.chunks(9), cap, Validation::Strict);
        assert_eq!(out.error.map(|e| e.kind), if ok { None } else { Some(ErrorKind::Length) });
    }
}

#[test]
fn header_block_at_exactly_the_cap() {
    // Two byte-array headers named "a" and "b": 5 + n bytes each.
    let n1 = 65535;
    let n2 = MAX_HEADERS_BYTES - 10 - n1;
    let spec = Spec {
        headers: vec![
            ("a".into(), Owned::ByteArray(vec![1; n1])),
            ("b".into(), Owned::ByteArray(vec![2; n2])),
        ],
        payload: b"p".to_vec(),
    };
    let mut frame = Vec::new();
    spec.encode(&mut frame);
    assert_eq!(u32::from_be_bytes(frame[4..8].try_into().unwrap()) as usize, MAX_HEADERS_BYTES);
    let out = run(frame.chunks(4000), DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.messages, vec![spec.json()]);
    // One more byte and the encoder refuses.
    let big = [
        Header { name: "a", value: HeaderValue::ByteArray(&[1; 65535]) },
        Header { name: "b", value: HeaderValue::ByteArray(&vec![2; n2 + 1]) },
    ];
    let mut out = b"keep".to_vec();
    let e = encode_message(&big, b"", &mut out).unwrap_err();
    assert_eq!(e.kind, ErrorKind::HeadersLength);
    assert_eq!(out, b"keep");
}

#[test]
fn encoder_refuses_what_cannot_be_framed() {
    let long_name = "x".repeat(256);
    let long_value = vec![0u8; 65536];
    let long_text = "y".repeat(65536);
    let cases: Vec<(Vec<Header<'_>>, ErrorKind)> = vec![
        (vec![Header { name: "", value: HeaderValue::Bool(true) }], ErrorKind::HeaderName),
        (vec![Header { name: &long_name, value: HeaderValue::Byte(1) }], ErrorKind::HeaderName),
        (vec![Header { name: "v", value: HeaderValue::ByteArray(&long_value) }], ErrorKind::HeaderValue),
        (
            vec![
                Header { name: "ok", value: HeaderValue::Short(1) },
                Header { name: "v", value: HeaderValue::String(&long_text) },
            ],
            ErrorKind::HeaderValue,
        ),
    ];
    for (headers, kind) in cases {
        let mut out = b"prefix".to_vec();
        let e = encode_message(&headers, b"payload", &mut out).unwrap_err();
        assert_eq!(e.kind, kind);
        assert_eq!(out, b"prefix", "a refused message leaves the output untouched");
    }
    // Offsets point at the offending header inside the would-be frame.
    let headers = [
        Header { name: "ok", value: HeaderValue::Short(1) },
        Header { name: "", value: HeaderValue::Bool(false) },
    ];
    let e = encode_message(&headers, b"", &mut Vec::new()).unwrap_err();
    assert_eq!(e.offset, 12 + 2 + 2 + 2);
    // Exactly 255 bytes and 65535 bytes are fine, and decode back.
    let name = "n".repeat(255);
    let value = vec![9u8; 65535];
    let headers = [Header { name: &name, value: HeaderValue::ByteArray(&value) }];
    let mut out = Vec::new();
    encode_message(&headers, b"", &mut out).unwrap();
    let mut got = 0;
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    dec.feed(&out, |m| {
        assert_eq!(m.headers, headers);
        got += 1;
    })
    .unwrap();
    assert_eq!(got, 1);
}

#[test]
fn header_types_round_trip_their_ids_and_names() {
    let names = [
        "boolean_true",
        "boolean_false",
        "byte",
        "short",
        "integer",
        "long",
        "byte_array",
        "string",
        "timestamp",
        "uuid",
    ];
    for id in 0..=255u8 {
        match HeaderType::from_id(id) {
            Some(t) => {
                assert_eq!(t.id(), id);
                assert_eq!(t.as_str(), names[usize::from(id)]);
            }
            None => assert!(id > 9),
        }
    }
    assert_eq!(HeaderValue::Bool(true).header_type(), HeaderType::BoolTrue);
    assert_eq!(HeaderValue::Bool(false).header_type(), HeaderType::BoolFalse);
}

#[test]
fn structural_errors_need_a_passing_crc_and_name_the_defect() {
    // Hand-built header blocks with valid CRCs (the encoder cannot make them).
    let frame = |block: &[u8]| {
        let mut f = prelude(16 + block.len() as u32, block.len() as u32);
        f.extend_from_slice(block);
        let crc = crc32(&f);
        f.extend_from_slice(&crc.to_be_bytes());
        f
    };
    let cases: &[(&[u8], Option<ErrorKind>, Option<ErrorKind>)] = &[
        // (block, strict, lenient)
        (b"\x01a\x0a", Some(ErrorKind::HeaderType), Some(ErrorKind::HeaderType)),
        (b"\x01a\xff", Some(ErrorKind::HeaderType), Some(ErrorKind::HeaderType)),
        (b"\x00\x00", Some(ErrorKind::HeaderName), None),
        (b"\x05ab", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01a", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01a\x04\x00\x00\x01", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01a\x07\x00", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01a\x07\x00\x02x", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01a\x09\x00", Some(ErrorKind::HeaderValue), Some(ErrorKind::HeaderValue)),
        (b"\x01\xff\x00", Some(ErrorKind::Utf8), Some(ErrorKind::Utf8)),
        (b"\x01a\x07\x00\x02\xc3\x28", Some(ErrorKind::Utf8), Some(ErrorKind::Utf8)),
        (b"\x01a\x06\x00\x02\xc3\x28", None, None),
        (b"\x01a\x00\x01a\x01", Some(ErrorKind::DuplicateHeader), None),
        (b"\x00\x00\x00\x01", Some(ErrorKind::HeaderName), None),
    ];
    for (i, (block, strict, lenient)) in cases.iter().enumerate() {
        let f = frame(block);
        let s = run([f.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
        assert_eq!(s.error.map(|e| e.kind), *strict, "case {i}");
        let l = run(f.chunks(3), DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
        assert_eq!(l.error.map(|e| e.kind), *lenient, "case {i}");
    }
    // Strict finds duplicates among many headers too (past the linear scan).
    let mut block = Vec::new();
    for i in 0..40u8 {
        block.extend_from_slice(&[2, b'h', b'0' + i, 0]);
    }
    block.extend_from_slice(&[2, b'h', b'0' + 33, 1]);
    let out = run([frame(&block).as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    assert_eq!(out.error.map(|e| e.kind), Some(ErrorKind::DuplicateHeader));
}

#[test]
fn many_distinct_headers_are_fast_in_strict_mode() {
    // ~26,000 distinct two-byte names in one 128 KiB block: a quadratic
    // duplicate check would take seconds; this must not.
    let mut block = Vec::new();
    'outer: for a in 0x21..0x7fu8 {
        for b in 0x21..0x7fu8 {
            if block.len() + 4 > MAX_HEADERS_BYTES {
                break 'outer;
            }
            block.extend_from_slice(&[2, a, b, 0]);
        }
    }
    let mut f = prelude(16 + block.len() as u32, block.len() as u32);
    f.extend_from_slice(&block);
    let crc = crc32(&f);
    f.extend_from_slice(&crc.to_be_bytes());
    let start = Instant::now();
    let mut count = 0;
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    dec.feed(&f, |m| count = m.headers.len()).unwrap();
    assert_eq!(count, block.len() / 4);
    assert!(start.elapsed().as_secs() < 5);
}

#[test]
#[ignore = "timing; run with --release -- --ignored --nocapture"]
fn throughput_20000_small_messages() {
    // Bedrock-shaped frames of about 200 bytes: three string headers and a
    // small JSON delta.
    let mut stream = Vec::new();
    for i in 0..20_000u32 {
        let payload = format!("{{\"p\":\"abcdefghijklmnopqrstuvwxyzabcdefghijklmn\",\"delta\":{{\"text\":\"token {i:>8} of the stream\"}}}}");
        let headers = [
            Header { name: ":event-type", value: HeaderValue::String("contentBlockDelta") },
            Header { name: ":content-type", value: HeaderValue::String("application/json") },
            Header { name: ":message-type", value: HeaderValue::String("event") },
        ];
        encode_message(&headers, payload.as_bytes(), &mut stream).unwrap();
    }
    println!("{} bytes, {} per message", stream.len(), stream.len() / 20_000);
    for chunk in [stream.len(), 16 * 1024, 1500, 100] {
        // Best of 5, to see past cold caches.
        let mut best = std::time::Duration::MAX;
        for _ in 0..5 {
            let start = Instant::now();
            let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
            let mut n = 0usize;
            for c in stream.chunks(chunk) {
                dec.feed(c, |m| n += m.payload.len() + m.headers.len()).unwrap();
            }
            dec.finish().unwrap();
            assert_eq!(dec.messages_decoded(), 20_000);
            best = best.min(start.elapsed());
        }
        println!("chunks of {chunk} bytes: {best:?} for 20000 messages");
        // Loose: catches a pathological regression, not a slow machine.
        assert!(best.as_millis() < 500);
    }
}
