//! Every case of `fixtures/sse/cases.json`, decoded whole, one byte at a time,
//! at every split point (inputs up to 512 bytes), at every pair of split
//! points (inputs up to 64 bytes) and at seeded random splits. Each run must
//! give exactly the expected events, last event ID and reconnection time.

use std::path::Path;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::Value;
use streamwire_core::sse::SseDecoder;
use streamwire_core::ErrorKind;

/// An event as (type, data, id, retry).
type Ev = (String, String, Option<String>, Option<u64>);

/// Random chunkings tried per case.
const RANDOM_RUNS: u64 = 48;
const EVERY_SPLIT_LIMIT: usize = 512;
const PAIR_SPLIT_LIMIT: usize = 64;

struct Case {
    name: String,
    input: Vec<u8>,
    tags: Vec<String>,
    want: Outcome,
}

#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<Ev>,
    last_event_id: Option<String>,
    reconnection_time: Option<u64>,
}

fn opt_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

fn cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sse/cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_str(&text).unwrap();
    json.as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_owned(),
            input: B64.decode(c["input_b64"].as_str().unwrap()).unwrap(),
            tags: c["tags"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
            want: Outcome {
                events: c["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| {
                        let event = e["event"].as_str().unwrap().to_owned();
                        let data = e["data"].as_str().unwrap().to_owned();
                        (event, data, opt_str(&e["id"]), e["retry"].as_u64())
                    })
                    .collect(),
                last_event_id: opt_str(&c["last_event_id"]),
                reconnection_time: c["reconnection_time"].as_u64(),
            },
        })
        .collect()
}

/// Decodes `chunks` in order with the given caps, then finishes.
fn run_with(max_line: usize, max_event: usize, chunks: &[&[u8]]) -> Result<Outcome, ErrorKind> {
    let mut d = SseDecoder::new(max_line, max_event);
    let mut events = Vec::new();
    for c in chunks {
        d.feed(c, |e| {
            events.push((e.event_type.to_owned(), e.data.to_owned(), e.id.map(str::to_owned), e.retry))
        })
        .map_err(|e| e.kind)?;
    }
    d.finish().map_err(|e| e.kind)?;
    assert_eq!(d.events_dispatched(), events.len() as u64);
    assert_eq!(d.bytes_fed(), chunks.iter().map(|c| c.len() as u64).sum::<u64>());
    assert_eq!(d.buffered_bytes(), 0);
    Ok(Outcome { events, last_event_id: d.last_event_id().map(str::to_owned), reconnection_time: d.retry() })
}

/// Decodes `input` cut at the (ascending) offsets `cuts`, with default caps.
fn run_cut(input: &[u8], cuts: &[usize]) -> Outcome {
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for &to in cuts {
        chunks.push(&input[from..to]);
        from = to;
    }
    chunks.push(&input[from..]);
    run_with(usize::MAX, usize::MAX, &chunks).expect("no cap can be hit")
}

fn check(case: &Case, cuts: &[usize], how: &str) {
    let got = run_cut(&case.input, cuts);
    assert_eq!(got, case.want, "case {} ({how}, cuts {cuts:?})", case.name);
}

/// A tiny deterministic PRNG (xorshift64*), so that failures replay.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// FNV-1a of the case name: a stable per-case seed.
fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3))
}

#[test]
fn file_has_74_uniquely_named_cases() {
    let cases = cases();
    assert_eq!(cases.len(), 74);
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 74);
}

#[test]
fn whole_and_one_byte_at_a_time() {
    for case in &cases() {
        check(case, &[], "whole");
        let every: Vec<usize> = (1..case.input.len()).collect();
        check(case, &every, "bytewise");
    }
}

#[test]
fn every_split_point() {
    for case in cases().iter().filter(|c| c.input.len() <= EVERY_SPLIT_LIMIT) {
        for i in 0..=case.input.len() {
            check(case, &[i], "split");
        }
    }
}

#[test]
fn every_pair_of_split_points() {
    for case in cases().iter().filter(|c| c.input.len() <= PAIR_SPLIT_LIMIT) {
        for i in 0..=case.input.len() {
            for j in i..=case.input.len() {
                check(case, &[i, j], "pair");
            }
        }
    }
}

#[test]
fn seeded_random_splits() {
    for case in &cases() {
        let len = case.input.len();
        for run in 0..RANDOM_RUNS {
            let seed = seed_of(&case.name) ^ run;
            let mut rng = Rng::new(seed);
            // Mix tiny, small and large chunks; empty chunks are allowed.
            let max = [4, 64, 4096][(run % 3) as usize];
            let mut cuts = Vec::new();
            let mut at = 0;
            loop {
                at += rng.below(max + 1) as usize;
                if at >= len {
                    break;
                }
                cuts.push(at);
            }
            check(case, &cuts, &format!("random seed {seed:#x}"));
        }
    }
}

/// Longest line of `input`, in bytes, under CRLF / LF / CR line endings.
fn longest_line(input: &[u8]) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for &b in input {
        if b == b'\r' || b == b'\n' {
            run = 0;
        } else {
            run += 1;
            longest = longest.max(run);
        }
    }
    longest
}

/// The `size` cases hold no cap of their own: they must pass with caps set
/// exactly to what they need, and fail with the right kind one byte below.
#[test]
fn size_cases_fit_tight_caps() {
    for case in cases().iter().filter(|c| c.tags.iter().any(|t| t == "size")) {
        let line = longest_line(&case.input);
        // Each event holds its data plus one LF per data line, of which the
        // dispatched data keeps all but the last. Names here are unset.
        let event = case.want.events.iter().map(|e| e.1.len() + 1).max().unwrap_or(0);
        let input: &[&[u8]] = &[&case.input];
        assert_eq!(run_with(line, event, input).as_ref(), Ok(&case.want), "case {}", case.name);
        let halves: &[&[u8]] = &[&case.input[..case.input.len() / 2], &case.input[case.input.len() / 2..]];
        assert_eq!(run_with(line, event, halves).as_ref(), Ok(&case.want), "case {}", case.name);
        assert_eq!(run_with(line - 1, usize::MAX, input), Err(ErrorKind::LineTooLarge), "case {}", case.name);
        assert_eq!(
            run_with(usize::MAX, event - 1, input),
            Err(ErrorKind::EventTooLarge),
            "case {}",
            case.name
        );
    }
}
