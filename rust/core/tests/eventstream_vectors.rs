//! Every EventStream vector under `fixtures/eventstream/`, decoded whole, one
//! byte at a time, split at every point, and in seeded random chunkings. Each
//! run must give exactly the expected messages, then exactly the expected
//! error kind (or none), with the same error offset whatever the chunking.

mod eventstream_common;

use std::fs;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use eventstream_common::{random_chunks, run, seed_of, split_at, uuid_string, Outcome, Rng};
use serde_json::{json, Value};
use streamwire_core::eventstream::{
    encode_message, EventStreamDecoder, HeaderType, Validation, DEFAULT_MAX_MESSAGE_BYTES,
};

/// Random chunkings tried per vector.
const RANDOM_RUNS: u64 = 64;

/// Above this size, "every split point" is thinned out (see
/// [`split_points`]): the 64 KiB vectors would otherwise cost billions of
/// CRC bytes in a debug build while exercising no new code path.
const EXHAUSTIVE_SPLIT_LIMIT: usize = 4096;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/eventstream")
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// One vector: bytes, the messages expected before the end or the error,
/// the expected error kind, and whether the expectation only holds in
/// strict mode.
struct Vector {
    name: String,
    bytes: Vec<u8>,
    messages: Vec<Value>,
    error: Option<String>,
    strict_only: bool,
}

/// Reads an `expect` object of the `generated.json` format.
fn parse_expect(expect: &Value) -> (Vec<Value>, Option<String>) {
    let error = expect.get("error").and_then(Value::as_str).map(str::to_owned);
    let messages = if let Some(list) = expect.get("messages") {
        list.as_array().unwrap().clone()
    } else if expect.get("headers").is_some() {
        vec![json!({"headers": expect["headers"], "payload_b64": expect["payload_b64"]})]
    } else {
        Vec::new()
    };
    (messages, error)
}

fn generated_vectors() -> Vec<Vector> {
    let list = read_json(&fixtures().join("generated.json"));
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let (messages, error) = parse_expect(&v["expect"]);
            Vector {
                name: format!("generated/{}", v["name"].as_str().unwrap()),
                bytes: B64.decode(v["message_b64"].as_str().unwrap()).unwrap(),
                messages,
                error,
                strict_only: v.get("strict").and_then(Value::as_bool).unwrap_or(false),
            }
        })
        .collect()
}

fn smithy_vectors() -> Vec<Vector> {
    let list = read_json(&fixtures().join("smithy-rs.expect.json"));
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let file = v["file"].as_str().unwrap();
            let (messages, error) = parse_expect(&v["expect"]);
            Vector {
                name: format!("smithy-rs/{file}"),
                bytes: fs::read(fixtures().join("smithy-rs").join(file)).unwrap(),
                messages,
                error,
                strict_only: false,
            }
        })
        .collect()
}

/// The aws-sdk-go `decoded/positive` JSON, translated to our format: type ids
/// become names, and string and uuid values (base64 there) become text.
/// The frame-level fields are checked against the raw bytes on the way.
fn aws_decoded_to_ours(decoded: &Value, bytes: &[u8], name: &str) -> Value {
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(u64::from(be(0)), decoded["total_length"].as_u64().unwrap(), "{name}");
    assert_eq!(u64::from(be(4)), decoded["headers_length"].as_u64().unwrap(), "{name}");
    // The upstream JSON prints CRCs as signed 32-bit integers.
    assert_eq!(be(8), decoded["prelude_crc"].as_i64().unwrap() as i32 as u32, "{name}");
    assert_eq!(be(bytes.len() - 4), decoded["message_crc"].as_i64().unwrap() as i32 as u32, "{name}");
    let headers: Vec<Value> = decoded["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let ty = HeaderType::from_id(h["type"].as_u64().unwrap() as u8).unwrap();
            let raw = || B64.decode(h["value"].as_str().unwrap()).unwrap();
            let value = match ty {
                HeaderType::String => json!(String::from_utf8(raw()).unwrap()),
                HeaderType::Uuid => json!(uuid_string(&raw().try_into().unwrap())),
                _ => h["value"].clone(),
            };
            json!({"name": h["name"], "type": ty.as_str(), "value": value})
        })
        .collect();
    json!({"headers": headers, "payload_b64": decoded["payload"]})
}

fn aws_sdk_go_vectors() -> Vec<Vector> {
    let root = fixtures().join("aws-sdk-go");
    let mut out = Vec::new();
    for polarity in ["positive", "negative"] {
        let mut names: Vec<String> = fs::read_dir(root.join("encoded").join(polarity))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        for file in names {
            let name = format!("aws-sdk-go/{polarity}/{file}");
            let bytes = fs::read(root.join("encoded").join(polarity).join(&file)).unwrap();
            let decoded_path = root.join("decoded").join(polarity).join(&file);
            let (messages, error) = if polarity == "positive" {
                (vec![aws_decoded_to_ours(&read_json(&decoded_path), &bytes, &name)], None)
            } else {
                let text = fs::read_to_string(&decoded_path).unwrap();
                let kind = match text.trim() {
                    "Prelude checksum mismatch" => "prelude_crc",
                    "Message checksum mismatch" => "message_crc",
                    other => panic!("{name}: unknown expected error {other:?}"),
                };
                (Vec::new(), Some(kind.to_owned()))
            };
            out.push(Vector { name, bytes, messages, error, strict_only: false });
        }
    }
    out
}

fn all_vectors() -> Vec<Vector> {
    let mut v = aws_sdk_go_vectors();
    v.extend(smithy_vectors());
    v.extend(generated_vectors());
    v
}

/// Split points to try: all of them for small vectors; for large ones, every
/// point in the first and last 300 bytes (preludes, headers, trailers) and a
/// stride through the middle.
fn split_points(len: usize) -> Vec<usize> {
    if len <= EXHAUSTIVE_SPLIT_LIMIT {
        return (0..=len).collect();
    }
    (0..=len).filter(|&i| i <= 300 || i + 300 >= len || i % 509 == 0).collect()
}

/// Checks one run against a vector; returns the error offset, if any.
fn check(v: &Vector, how: &str, out: &Outcome, lenient: bool) -> Option<u64> {
    assert_eq!(out.messages, v.messages, "{} ({how}): messages", v.name);
    let kind = out.error.as_ref().map(|e| e.kind.as_str().to_owned());
    assert_eq!(kind, v.error, "{} ({how}, lenient={lenient}): error {:?}", v.name, out.error);
    assert_eq!(out.messages_decoded, v.messages.len() as u64);
    out.error.as_ref().map(|e| e.offset)
}

/// Runs one vector under every chunking strategy in one validation mode,
/// against the given expectation.
fn exercise(v: &Vector, validation: Validation) {
    let lenient = validation == Validation::Lenient;
    let max = DEFAULT_MAX_MESSAGE_BYTES;

    let whole = run([v.bytes.as_slice()], max, validation);
    let offset = check(v, "whole", &whole, lenient);
    assert_eq!(whole.bytes_fed, v.bytes.len() as u64);
    if v.error.is_none() {
        // Every message lay whole in the one slice: nothing may be copied.
        assert_eq!(whole.peak_buffered, 0, "{}: whole-slice decode buffered bytes", v.name);
    }
    // Largest frame the vector could hold: the buffer must stay within it.
    let frame_bound = v.bytes.len();

    let bytewise = run(v.bytes.chunks(1), max, validation);
    assert_eq!(check(v, "bytewise", &bytewise, lenient), offset, "{}: offset", v.name);
    assert!(bytewise.peak_buffered <= frame_bound);

    for i in split_points(v.bytes.len()) {
        let out = run(split_at(&v.bytes, &[i]), max, validation);
        assert_eq!(check(v, &format!("split at {i}"), &out, lenient), offset, "{}: offset", v.name);
        assert!(out.peak_buffered <= frame_bound);
    }

    let mut rng = Rng::new(seed_of(&v.name));
    for r in 0..RANDOM_RUNS {
        let chunks = random_chunks(&v.bytes, &mut rng);
        let out = run(chunks, max, validation);
        assert_eq!(check(v, &format!("random run {r}"), &out, lenient), offset, "{}: offset", v.name);
        assert!(out.peak_buffered <= frame_bound);
    }
}

#[test]
fn vector_set_is_complete() {
    // Guards against a fixture directory silently going missing.
    assert_eq!(aws_sdk_go_vectors().len(), 9);
    assert_eq!(smithy_vectors().len(), 11);
    assert_eq!(generated_vectors().len(), 38);
}

#[test]
fn every_vector_strict() {
    for v in all_vectors() {
        exercise(&v, Validation::Strict);
    }
}

#[test]
fn every_vector_lenient() {
    for mut v in all_vectors() {
        if v.strict_only {
            match v.error.as_deref() {
                // The size caps are not a matter of validation mode.
                Some("length" | "headers_length") => {}
                // What lenient mode exists for: these decode, as one message.
                Some("header_name" | "duplicate_header") => {
                    let whole = run([v.bytes.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
                    assert!(whole.error.is_none(), "{}: lenient failed: {:?}", v.name, whole.error);
                    assert_eq!(whole.messages.len(), 1, "{}", v.name);
                    v.messages = whole.messages;
                    v.error = None;
                }
                other => panic!("{}: unexpected strict-only error {other:?}", v.name),
            }
        }
        exercise(&v, Validation::Lenient);
    }
}

#[test]
fn lenient_keeps_empty_names_and_duplicates() {
    let g = generated_vectors();
    let find = |n: &str| g.iter().find(|v| v.name == format!("generated/{n}")).unwrap();

    let mut names = Vec::new();
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
    dec.feed(&find("header_name_length_0").bytes, |m| {
        names.extend(m.headers.iter().map(|h| h.name.to_owned()));
    })
    .unwrap();
    assert_eq!(names, [""]);

    let mut seen = Vec::new();
    let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
    dec.feed(&find("duplicate_header_name").bytes, |m| {
        assert_eq!(m.headers.len(), 2, "both repeats are kept, in wire order");
        seen.push(m.header(":event-type").cloned().map(|v| format!("{v:?}")));
    })
    .unwrap();
    // Last one wins for the lookup.
    assert_eq!(seen, [Some("String(\"b\")".to_owned())]);
}

#[test]
fn every_valid_vector_reencodes_byte_for_byte() {
    // The vectors are canonical encodings, so decode -> encode must give the
    // very same bytes, message by message.
    for v in all_vectors().into_iter().filter(|v| v.error.is_none() && !v.strict_only) {
        let mut dec = EventStreamDecoder::new(DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
        let mut out = Vec::new();
        dec.feed(&v.bytes, |m| encode_message(&m.headers, m.payload, &mut out).unwrap()).unwrap();
        dec.finish().unwrap();
        assert_eq!(out, v.bytes, "{}", v.name);
    }
}

#[test]
fn error_offset_is_the_failing_message_start() {
    let g = generated_vectors();
    let v = g.iter().find(|v| v.name == "generated/valid_then_bad_crc").unwrap();
    let out = run([v.bytes.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Strict);
    let first_len = u32::from_be_bytes(v.bytes[..4].try_into().unwrap());
    assert_eq!(out.error.unwrap().offset, u64::from(first_len));
}

#[test]
fn every_bit_flip_in_valid_vectors_is_detected() {
    // CRC-32 catches every single-bit error, and no length is trusted before
    // its CRC, so a flipped bit must surface as prelude_crc (in the first 12
    // bytes of a frame) or message_crc, after exactly the earlier messages.
    for v in
        all_vectors().into_iter().filter(|v| v.error.is_none() && v.bytes.len() <= EXHAUSTIVE_SPLIT_LIMIT)
    {
        // Frame starts, read from the (valid) total_length fields.
        let mut starts = Vec::new();
        let mut at = 0;
        while at < v.bytes.len() {
            starts.push(at);
            at += u32::from_be_bytes(v.bytes[at..at + 4].try_into().unwrap()) as usize;
        }
        for bit in 0..v.bytes.len() * 8 {
            let mut bad = v.bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let k = starts.iter().rposition(|&s| s <= bit / 8).unwrap();
            let want = if bit / 8 - starts[k] < 12 { "prelude_crc" } else { "message_crc" };
            let out = run([bad.as_slice()], DEFAULT_MAX_MESSAGE_BYTES, Validation::Lenient);
            let e = out.error.unwrap_or_else(|| panic!("{}: bit {bit} flip went unnoticed", v.name));
            assert_eq!(e.kind.as_str(), want, "{}: bit {bit}", v.name);
            assert_eq!(e.offset, starts[k] as u64, "{}: bit {bit}", v.name);
            assert_eq!(out.messages, v.messages[..k], "{}: bit {bit}", v.name);
        }
    }
}
