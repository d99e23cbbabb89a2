//! Replays the committed cargo-fuzz corpora (`fuzz/corpus/<target>/`)
//! through the fuzz harnesses themselves, on stable Rust and without
//! libFuzzer, so that every seed and every crash once minimized into the
//! corpus stays a regression test.

use std::fs;
use std::path::Path;

// The harnesses are plain functions over `streamwire_core`; including their
// file keeps one source of truth for what the fuzz targets check.
#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "{target}: empty corpus");
    for path in entries {
        let data = fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Err(panic) = std::panic::catch_unwind(|| run(&data)) {
            panic!("{target}/{name}: {panic:?}");
        }
    }
}

#[test]
fn eventstream_raw_corpus() {
    replay("eventstream_raw", harness::eventstream_raw);
}

#[test]
fn eventstream_repaired_corpus() {
    replay("eventstream_repaired", harness::eventstream_repaired);
}

#[test]
fn sse_corpus() {
    replay("sse", harness::sse);
}

#[test]
fn json_array_corpus() {
    replay("json_array", harness::json_array);
}

#[test]
fn shape_corpus() {
    replay("shape", harness::shape);
}

/// The nesting screen of `_json.loads` against the harness's reference, on
/// samples and on every string of its interesting bytes up to length 7.
#[test]
fn nesting_screen_agrees_with_the_reference() {
    let samples: [&[u8]; 12] = [
        b"",
        b"[]",
        b"[[[]]]",
        b"{\"a\": [{\"b\": []}]}",
        b"[\"[[[[\", [\"{{{{\"]]",
        b"[\"\\\"[[[\", []]",
        b"[\"\\\\\", [[]]]",
        b"]]]][[[",
        b"[[[\"unterminated [[[[",
        b"[\"\\",
        b"{\"a\":{\"b\":{\"c\":{}}}}",
        b"[[], [[]], [[[]]], [[[[]]]]]",
    ];
    for data in samples {
        harness::check_nesting(data);
    }
    let alphabet = b"[]{}\"\\x";
    let mut data = Vec::new();
    for len in 0..=6u32 {
        for mut n in 0..alphabet.len().pow(len) {
            data.clear();
            for _ in 0..len {
                data.push(alphabet[n % alphabet.len()]);
                n /= alphabet.len();
            }
            for limit in 0..4 {
                let screen = streamwire_core::shape::nesting_exceeds(&data, limit);
                assert_eq!(screen, harness::naive_nesting_exceeds(&data, limit), "{data:?}");
            }
        }
    }
    let deep = [vec![b'['; 300], vec![b']'; 300]].concat();
    assert!(streamwire_core::shape::nesting_exceeds(&deep, 256));
    assert!(!streamwire_core::shape::nesting_exceeds(&deep, 300));
}
