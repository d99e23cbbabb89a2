//! `json_array::ArraySplitter` against its spec-literal reference
//! (`fuzz/src/lib.rs`, `split_array_reference`) under every chunking: whole,
//! one byte at a time, every split point, seeded random splits; on bodies
//! written by hand and on single-byte mutations of them.

#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod harness;

use harness::{split_array, split_array_reference};

const BODIES: &[&str] = &[
    "[]",
    " [ ] ",
    "[{}]",
    r#"[{"candidates": [{"content": {"parts": [{"text": "a}b{c\"d\\"}]}}]}
,
{"usageMetadata": {"promptTokenCount": 3}}
]"#,
    r#"{"error": {"code": 429, "message": "quota {exhausted}", "status": "RESOURCE_EXHAUSTED"}}"#,
    "[{\"a\": \"\\\\\"}, {\"b\": \"\\\"}\"}, {\"c\": {\"d\": [1, {\"e\": \"é🙂\"}]}}]",
    "[{},]",
    "[,{}]",
    "[{}{}]",
    "[1]",
    "[{}] x",
    "{} {}",
    "[{\"open\": ",
    "[{}, {\"a\": \"\\",
    "\u{feff}[{}]",
];

fn seeded_splits(len: usize, seed: u64) -> Vec<usize> {
    let mut state = seed | 1;
    let mut points: Vec<usize> = (0..8)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % (len as u64 + 1)) as usize
        })
        .collect();
    points.sort_unstable();
    points
}

fn check(body: &[u8], cap: usize) {
    let reference = split_array_reference(body, cap);
    let whole = split_array(&[body], cap);
    let errored = reference.1.is_some();
    let same = |got: &harness::ArrayRun, how: &str| {
        if errored {
            assert_eq!((&got.0, got.1), (&reference.0, reference.1), "{how}: {body:?}");
        } else {
            assert_eq!(got, &reference, "{how}: {body:?}");
        }
    };
    same(&whole, "whole");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    same(&split_array(&bytes, cap), "one byte at a time");
    for at in 0..=body.len() {
        same(&split_array(&[&body[..at], &body[at..]], cap), "one split");
    }
    for seed in 1..8 {
        let points = seeded_splits(body.len(), seed);
        let mut chunks = Vec::new();
        let mut from = 0;
        for &p in &points {
            chunks.push(&body[from..p]);
            from = p;
        }
        chunks.push(&body[from..]);
        same(&split_array(&chunks, cap), "random splits");
    }
}

#[test]
fn the_splitter_is_the_reference_under_every_chunking() {
    for body in BODIES {
        for cap in [1 << 20, 12, 5] {
            check(body.as_bytes(), cap);
        }
    }
}

#[test]
fn mutations_are_split_as_the_reference_splits_them() {
    let alphabet = b" \t\r\n[]{},\"\\:x\xc3";
    for body in BODIES {
        let body = body.as_bytes();
        for i in 0..body.len() {
            let mut variants = vec![[&body[..i], &body[i + 1..]].concat()];
            for &b in alphabet {
                variants.push([&body[..i], &[b][..], &body[i + 1..]].concat());
            }
            for v in variants {
                check(&v, 1 << 20);
            }
        }
    }
}

#[test]
fn elements_come_out_whole_and_memory_is_one_element() {
    let body = br#"[{"a": "x"}, {"b": [1, 2, {"c": "}"}]}, {}]"#;
    let mut splitter = streamwire_core::json_array::ArraySplitter::new(1 << 20);
    let mut out = Vec::new();
    for chunk in body.chunks(3) {
        splitter.feed(chunk, |e| out.push(String::from_utf8(e.to_vec()).unwrap())).unwrap();
    }
    assert_eq!(out, [r#"{"a": "x"}"#, r#"{"b": [1, 2, {"c": "}"}]}"#, "{}"]);
    assert_eq!(splitter.peak_buffered_bytes(), 25); // the largest element
    assert_eq!(
        (splitter.buffered_bytes(), splitter.elements(), splitter.bytes_fed()),
        (0, 3, body.len() as u64)
    );
    assert_eq!(splitter.state().as_str(), "end");
}
