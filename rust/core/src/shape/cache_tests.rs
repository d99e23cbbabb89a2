//! Tests of `ShapeCache`: a cached match is always the match `match_payload` makes.

use super::*;

fn set(templates: &[(&str, &str)]) -> ShapeSet {
    let mut shapes = ShapeSet::new();
    for (event, spec) in templates {
        shapes.add(event, &Spec::parse(spec).expect("valid spec")).expect("compiles");
    }
    shapes
}

const CHAT_TEXT: &str = r#"{
    "id?": "$any", "object?": "chat.completion.chunk", "created?": "$any", "model?": "$any",
    "usage?": null,
    "choices": [{"index?": "$int", "delta": {"content": "$str", "role?": "$any"},
                 "logprobs?": "$any", "finish_reason?": null}]
}"#;

const CHAT_ARGS: &str = r#"{
    "id?": "$any", "usage?": null,
    "choices": [{"index?": "$int",
                 "delta": {"tool_calls": [{"index": "$int", "function": {"arguments": "$str"}}]},
                 "finish_reason?": null}]
}"#;

const RAW: &str =
    r#"{"type": "$str", "usage?": "$raw", "n?": "$int", "x?": "$falsy", "lit?": [true, 3, "s"]}"#;

type Answer<'a> = Result<(usize, Vec<Capture<'a>>), Decline>;

fn answer<'a>(r: Result<Match<'a>, Decline>) -> Answer<'a> {
    r.map(|m| (m.template, m.captures().to_vec()))
}

/// Feeds `payloads` through one cache; each answer must be `match_payload`'s.
fn same_answers(shapes: &ShapeSet, event: &str, payloads: &[String]) -> ShapeCache {
    let mut cache = ShapeCache::new();
    for data in payloads {
        let cached = answer(shapes.match_cached(&mut cache, event, data));
        assert_eq!(cached, answer(shapes.match_payload(event, data)), "{data}");
    }
    cache
}

fn chat_chunk(id: &str, created: u64, text: &str) -> String {
    let text = serde_json::to_string(text).expect("a JSON string");
    format!(
        r#"{{"id":"{id}","object":"chat.completion.chunk","created":{created},"model":"gpt-4o","choices":[{{"index":0,"delta":{{"content":{text}}},"logprobs":null,"finish_reason":null}}]}}"#
    )
}

#[test]
fn a_stream_of_deltas_is_matched_by_replay_with_each_delta_captured() {
    let shapes = set(&[("message", CHAT_TEXT), ("message", CHAT_ARGS)]);
    let texts =
        ["Hello", "", "q\"uote\\", "数据🙂", "\u{0}\n\t", " ", "a\u{2028}b", "\u{1F469}\u{200D}\u{1F4BB}"];
    let payloads: Vec<String> = (0..200)
        .map(|i| chat_chunk("chatcmpl-1", 1_700_000_000 + i / 50, texts[i as usize % texts.len()]))
        .collect();
    let cache = same_answers(&shapes, "message", &payloads);
    // One scan for the first chunk; every other one replays (the created time
    // changing is a variable token: `$any`).
    assert_eq!(cache.replayed(), 199);
}

#[test]
fn the_first_matching_template_still_wins() {
    // A payload of template 1 leaves its skeleton, in which "kind" is `$any`;
    // the next payload's kind is template 0's literal: template 0 must win.
    let shapes =
        set(&[("message", r#"{"kind": "a", "v": "$str"}"#), ("message", r#"{"kind": "$any", "v": "$str"}"#)]);
    let payloads: Vec<String> =
        ["b", "a", "b", "c", "a", "a"].iter().map(|k| format!(r#"{{"kind":"{k}","v":"x{k}"}}"#)).collect();
    same_answers(&shapes, "message", &payloads);
    let mut cache = ShapeCache::new();
    assert_eq!(shapes.match_cached(&mut cache, "message", &payloads[0]).map(|m| m.template), Ok(1));
    assert_eq!(shapes.match_cached(&mut cache, "message", &payloads[1]).map(|m| m.template), Ok(0));
}

#[test]
fn what_differs_outside_the_tokens_is_matched_afresh_or_declined() {
    let shapes = set(&[("message", CHAT_TEXT), ("message", CHAT_ARGS)]);
    let base = chat_chunk("c", 1, "x");
    let payloads = vec![
        base.clone(),
        base.replace(r#""index":0"#, r#""index": 0"#), // whitespace moved: scanned again
        base.replace(r#""content":"x""#, r#""content":5"#), // a token of another kind
        base.replace(r#""logprobs":null"#, r#""logprobs":null,"extra":1"#), // an unknown key
        base.replace(r#""index":0"#, r#""index":0.5"#), // a fraction in an integer capture
        base.replace(r#""index":0"#, r#""index":-0"#),
        base.replace(r#""created":1"#, r#""created":1e400"#), // beyond f64: serde declines
        base.replace(r#""content":"x""#, r#""content":"\ud800""#), // a lone surrogate
        base.replace(r#""content":"x""#, &format!(r#""content":"{}""#, "7".repeat(700))), // a long digit run
        base.replace(r#""model":"gpt-4o""#, r#""model":{"a":[1,{"b":null}]}"#), // `$any` takes any value
        base.replace(r#""content":"x""#, r#""content":"x","content":"y""#), // a repeated key
        base.clone(),
        format!("{base} "),
        format!("{base}}}"),
        base[..base.len() - 1].to_owned(),
    ];
    same_answers(&shapes, "message", &payloads);
}

#[test]
fn a_declined_long_digit_run_is_neither_kept_nor_counted() {
    // The digit runs are looked for after the replay or the scan: a payload
    // they decline leaves no skeleton and no replay, first or later.
    let shapes = set(&[("message", CHAT_TEXT)]);
    let digits = chat_chunk("c", 1, &"7".repeat(700));
    let mut cache = ShapeCache::new();
    let declined = shapes.match_cached(&mut cache, "message", &digits).map(|m| m.template);
    assert_eq!(declined, Err(Decline::LongNumber));
    assert_eq!((cache.replayed(), cache.held_bytes()), (0, 0));
    for _ in 0..2 {
        assert!(shapes.match_cached(&mut cache, "message", &chat_chunk("c", 1, "x")).is_ok());
    }
    let declined = shapes.match_cached(&mut cache, "message", &digits).map(|m| m.template);
    assert_eq!((declined, cache.replayed()), (Err(Decline::LongNumber), 1));
}

#[test]
fn raw_captures_and_literals_replay_as_they_scan() {
    let shapes = set(&[("e", RAW)]);
    let payloads: Vec<String> = [
        r#"{"type":"a","usage":{"in":1,"out":[2,3]},"n":4,"x":null,"lit":[true,3,"s"]}"#,
        r#"{"type":"b","usage":"text","n":5,"x":null,"lit":[true,3,"s"]}"#,
        r#"{"type":"c","usage":[],"n":-6,"x":null,"lit":[true,3,"s"]}"#,
        r#"{"type":"c","usage":[],"n":-6,"x":0,"lit":[true,3,"s"]}"#,
        r#"{"type":"c","usage":[],"n":-6,"x":0,"lit":[true,4,"s"]}"#,
        r#"{"type":"c","usage":[1,],"n":-6,"x":0,"lit":[true,3,"s"]}"#,
        r#"{"type":"d","n":7}"#,
        r#"{"type":"e","n":8}"#,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let cache = same_answers(&shapes, "e", &payloads);
    assert!(cache.replayed() >= 3, "replayed {}", cache.replayed());
}

#[test]
fn a_large_token_is_never_kept_and_large_fixed_parts_leave_no_skeleton() {
    let shapes = set(&[("e", r#"{"type": "audio", "delta": "$str", "pad?": "$any"}"#)]);
    let audio = |n: usize| format!(r#"{{"type":"audio","delta":"{}"}}"#, "QUJD".repeat(n));
    let payloads = vec![audio(25_000), audio(25_001), audio(3)];
    let cache = same_answers(&shapes, "e", &payloads);
    assert_eq!(cache.replayed(), 2);
    assert!(cache.held_bytes() < 256, "held {}", cache.held_bytes());
    // A fixed part beyond the bound: matched, and nothing kept.
    let key = "k".repeat(cache::MAX_FIXED_BYTES);
    let wide = set(&[("e", &format!(r#"{{"type": "audio", "delta": "$str", "{key}?": null}}"#))]);
    let big = format!(r#"{{"type":"audio","delta":"x","{key}":null}}"#);
    let cache = same_answers(&wide, "e", &[big.clone(), big]);
    assert_eq!((cache.replayed(), cache.held_bytes()), (0, 0));
}

/// A small deterministic generator (xorshift64*), so the test needs no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One byte of `bytes` removed, replaced or inserted, from [`ALPHABET`].
    fn mutate(&mut self, bytes: &mut Vec<u8>) {
        let at = self.below(bytes.len());
        match self.below(3) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes[at] = ALPHABET[self.below(ALPHABET.len())],
            _ => bytes.insert(at, ALPHABET[self.below(ALPHABET.len())]),
        }
    }
}

/// The bytes a mutation puts in: JSON's structural and literal bytes, and a control byte.
const ALPHABET: &[u8] = b"{}[]\",:\\0123456789-+.eEntrufals \t\n\x01u";

#[test]
fn mutated_streams_get_the_answers_match_payload_gives() {
    // Seeds of every template, then each followed by mutations: a cache holds
    // the skeletons of valid matches while its neighbours are broken in
    // every way one byte can break them.
    let shapes = set(&[("message", CHAT_TEXT), ("message", CHAT_ARGS), ("message", RAW)]);
    let seeds = [
        chat_chunk("c1", 1, "Hé \"q\" 🙂"),
        r#"{"choices":[{"index":1,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"a\": [1, 2.5e3]}"}}]}}],"usage":null}"#.to_owned(),
        r#"{"type":"t","usage":{"a":[1,2,{"b":"c"}]},"n":12,"x":"","lit":[true,3,"s"]}"#.to_owned(),
    ];
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut stream = Vec::new();
    for _ in 0..6000 {
        let seed = seeds[rng.below(seeds.len())].as_bytes();
        let mut bytes = seed.to_vec();
        if rng.below(3) != 0 {
            rng.mutate(&mut bytes);
        }
        if let Ok(text) = String::from_utf8(bytes) {
            stream.push(text);
        }
    }
    let cache = same_answers(&shapes, "message", &stream);
    assert!(cache.replayed() > 1000, "replayed {}", cache.replayed());
}

#[test]
fn long_strings_are_scanned_as_serde_json_reads_them() {
    // Past its first 64 bytes a string is searched by memchr2 and checked for
    // control bytes in blocks: a quote, a backslash escape or a raw control
    // byte at every offset of strings around those bounds.
    let shapes = set(&[("e", r#"{"d": "$str", "k?": "$any"}"#)]);
    let mut cache = ShapeCache::new();
    for len in [63, 64, 65, 95, 96, 97, 130, 300] {
        for at in 0..len {
            for special in ["\"", "\\n", "\\u00e9", "\u{1}", "\u{1f}", "\u{7f}", "é"] {
                let mut text = "A".repeat(len);
                text.replace_range(at..=at, special);
                let data = format!(r#"{{"d":"{text}","k":1}}"#);
                let fast = answer(shapes.match_payload("e", &data));
                assert_eq!(fast, answer(shapes.match_payload_reference("e", &data)), "{data}");
                assert_eq!(answer(shapes.match_cached(&mut cache, "e", &data)), fast, "{data}");
            }
        }
    }
}

#[test]
fn a_replayed_head_is_the_first_value_and_matches_as_it_would_alone() {
    // A JSON array's body: each payload followed by what may come after an
    // element (a separator, the next element, the end, garbage). A head the
    // cache replays must be the first JSON value of the text, matched as
    // `match_cached` matches that value alone; mutated payloads keep the
    // skeletons honest.
    let shapes = set(&[("message", RAW), ("message", CHAT_TEXT)]);
    let seed = r#"{"type":"t","usage":{"a":[1,2,{"b":"c"}]},"n":12,"x":"","lit":[true,3,"s"]}"#;
    let tails = ["", "]", "\r\n,\r\n", ",{\"type\":\"u\"}", "}", "x", "  ,", "\"\\"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cache = ShapeCache::new();
    let mut heads = 0;
    for _ in 0..6000 {
        let mut bytes = seed.as_bytes().to_vec();
        if rng.below(3) == 0 {
            rng.mutate(&mut bytes);
        }
        let Ok(payload) = String::from_utf8(bytes) else { continue };
        let data = format!("{payload}{}", tails[rng.below(tails.len())]);
        if let Some((m, length)) = shapes.match_head_cached(&mut cache, "message", &data) {
            heads += 1;
            let head = &data[..length];
            let mut values = serde_json::Deserializer::from_str(&data).into_iter::<serde_json::Value>();
            assert!(matches!(values.next(), Some(Ok(_))), "{data}");
            assert_eq!(values.byte_offset(), length, "{data}");
            let alone = answer(shapes.match_payload("message", head));
            assert_eq!(Ok((m.template, m.captures().to_vec())), alone, "{data}");
        } else {
            // As the splitter would: the payload alone, matched and kept.
            let _ = shapes.match_cached(&mut cache, "message", &payload);
        }
    }
    assert!(heads > 2000, "heads {heads}");
}

/// A Gemini chunk's template: its usage snapshot is a `$raw` capture.
const GEMINI: &str = r#"{
    "candidates": [{"content": {"parts": [{"text": "$str"}], "role?": "$any"}, "index?": "$int"}],
    "usageMetadata?": "$raw", "modelVersion?": "$any", "responseId?": "$str"
}"#;

/// A Gemini chunk as the API spaces it, with a usage snapshot.
fn gemini_chunk(text: &str, usage: &str) -> String {
    let text = serde_json::to_string(text).expect("a JSON string");
    format!(
        r#"{{"candidates": [{{"content": {{"parts": [{{"text": {text}}}],"role": "model"}},"index": 0}}],"usageMetadata": {usage},"modelVersion": "gemini-2.5-flash","responseId": "xYh1aPXqKpqVz7IPlrSn0Aw"}}"#
    )
}

fn snapshot(candidates: &str, total: &str) -> String {
    format!(
        r#"{{"promptTokenCount": 1187,"candidatesTokenCount": {candidates},"totalTokenCount": {total},"promptTokensDetails": [{{"modality": "TEXT","tokenCount": 1187}}],"thoughtsTokenCount": 1009}}"#
    )
}

#[test]
fn a_snapshot_whose_counts_change_replays_in_parts() {
    // The usage snapshot (longer than a hint) is kept in parts: its numbers
    // are read on every chunk, whatever they became, its structure compared.
    let shapes = set(&[("message", GEMINI)]);
    let counts = ["1", "12", "123", "9", "-4", "0", "2.5", "1e3", "18446744073709551616", "7"];
    let payloads: Vec<String> = (0..200)
        .map(|i| {
            let n = counts[i % counts.len()];
            gemini_chunk(&format!("t{i} \"q\"\n"), &snapshot(n, &(2196 + i).to_string()))
        })
        .collect();
    let cache = same_answers(&shapes, "message", &payloads);
    // All but the first and the twenty with an exponent, which the scanner
    // leaves to serde_json (no replay reads one either).
    assert_eq!(cache.replayed(), 179);
    let mut cache = ShapeCache::new();
    for data in &payloads {
        let m = shapes.match_cached(&mut cache, "message", data).expect("a match");
        let Capture::Raw(raw) = m.captures()[2] else { panic!("no raw capture: {data}") };
        assert!(data.contains(&format!(r#""usageMetadata": {raw},"modelVersion""#)), "{raw}");
        let value: serde_json::Value = serde_json::from_str(raw).expect("the capture is JSON");
        assert!(value.get("promptTokensDetails").is_some(), "{raw}");
    }
}

#[test]
fn a_value_in_parts_takes_any_value_at_its_parts_and_nothing_else() {
    // Each variant changes what is in one place of a long `$any` or `$raw`
    // value: a part (a string or a number) to any value, or the structure
    // around them, which must be scanned again (or declined) as without a cache.
    let shapes = set(&[("e", r#"{"kind": "$str", "u": "$raw", "v?": "$any"}"#)]);
    let base = r#"{"kind":"k","u":{"a":1,"list":[1,2,"three",{"x":"yyyyyyyyyyyyyyyy"}],"s":"a longer string value","t":true,"n":null},"v":{"p":[1.5,-2,"q"],"r":"padding to be long enough for parts"}}"#;
    let variants = [
        ("\"a\":1", "\"a\":-12.5e+3"),
        ("\"a\":1", "\"a\":\"one\""),
        ("\"a\":1", "\"a\":[1,[2,{\"deep\":[]}]]"),
        ("\"a\":1", "\"a\":{}"),
        ("\"three\"", "3"),
        ("\"three\"", "\"thr\\\"ee\\u00e9\""),
        ("\"three\"", "\"\\ud800\""),
        ("\"three\"", "\"a\u{1}b\""),
        ("\"three\"", "\"\""),
        ("\"yyyyyyyyyyyyyyyy\"", &format!("\"{}\"", "z".repeat(200))),
        ("\"a\":1", "\"a\":01"),
        ("\"a\":1", "\"a\":1."),
        ("\"a\":1", "\"a\":1e400"),
        ("\"a\":1", "\"a\":-"),
        ("\"a\":1", "\"a\": 1"),
        ("\"a\":1", "\"b\":1"),
        ("\"a\":1", "\"a\":1,\"a\":2"),
        ("\"a\":1", "1:1"),
        ("\"a\":1", "[]:1"),
        ("\"a\":1", "\"a\"1"),
        ("\"t\":true", "\"t\":false"),
        ("\"t\":true", "\"t\":tru"),
        ("[1,2,", "[1,2,9,"),
        ("[1,2,", "[1,"),
        ("-2", "-2]"),
        ("1.5", "1.5,"),
        ("\"q\"", "\"q\"}"),
        ("\"kind\":\"k\"", "\"kind\":\"other\""),
    ];
    let mut payloads = vec![base.to_owned()];
    for (from, to) in variants {
        assert!(base.contains(from), "{from}");
        payloads.push(base.replacen(from, to, 1));
        payloads.push(base.to_owned());
    }
    let cache = same_answers(&shapes, "e", &payloads);
    assert!(cache.replayed() >= 25, "replayed {}", cache.replayed());
}

#[test]
fn a_part_nested_past_the_scanners_depth_is_not_replayed() {
    // A value kept in parts, its parts at depth 97: a part that becomes an
    // array past the scanner's depth (100) is scanned again (and left to
    // serde_json, which declines past 128): the replay must read each part
    // at its own depth, not the value's.
    let shapes = set(&[("e", r#"{"u": "$raw"}"#)]);
    let open = "[".repeat(96);
    let close = "]".repeat(96);
    let payload = |inner: &str| format!(r#"{{"u":{open}{inner},"{}"{close}}}"#, "s".repeat(80));
    let payloads: Vec<String> = [1, 3, 4, 20, 40, 0]
        .iter()
        .flat_map(|&k| [payload("0"), payload(&format!("{}1{}", "[".repeat(k), "]".repeat(k)))])
        .collect();
    same_answers(&shapes, "e", &payloads);
}

#[test]
fn values_whose_structure_keeps_changing_are_kept_whole_again() {
    // A growing array in a long `$any`: each skeleton in parts fails the
    // next payload; after MAX_PART_MISSES misses in a row the value is kept
    // whole and every payload replays again.
    let shapes = set(&[("e", r#"{"kind": "$str", "log?": "$any"}"#)]);
    let payloads: Vec<String> = (4..64)
        .map(|n| {
            let items: Vec<String> =
                (0..n).map(|i| format!(r#"{{"token":"t{i}","logprob":-0.{i}}}"#)).collect();
            format!(r#"{{"kind":"k{n}","log":[{}]}}"#, items.join(","))
        })
        .collect();
    let cache = same_answers(&shapes, "e", &payloads);
    // In parts (each long enough), MAX_PART_MISSES misses, then whole again:
    // replayed from then on, whatever the array holds.
    let misses = u64::from(cache::MAX_PART_MISSES);
    assert_eq!(cache.replayed(), 60 - 1 - misses, "replayed {}", cache.replayed());
}

#[test]
fn mutated_snapshots_get_the_answers_match_payload_gives() {
    // As the mutation test above, for payloads whose `$raw` is kept in parts,
    // and, through `match_head_cached`, for the same payloads followed by
    // what may come after a JSON array's element.
    let shapes = set(&[("message", GEMINI), ("message", RAW)]);
    let seeds = [
        gemini_chunk("Hé \"q\" 🙂", &snapshot("39", "2235")),
        r#"{"type":"t","usage":{"a":[1,2,{"b":"c"}],"long":"a string that makes the value long","n":-1.5e3},"n":12,"x":"","lit":[true,3,"s"]}"#.to_owned(),
    ];
    let tails = ["", "]", "\r\n,\r\n", ",{\"type\":\"u\"}", "}", "x"];
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    let mut stream = Vec::new();
    let mut cache = ShapeCache::new();
    let mut heads = 0;
    for _ in 0..6000 {
        let mut bytes = seeds[rng.below(seeds.len())].as_bytes().to_vec();
        for _ in 0..rng.below(3) {
            rng.mutate(&mut bytes);
        }
        let Ok(payload) = String::from_utf8(bytes) else { continue };
        let data = format!("{payload}{}", tails[rng.below(tails.len())]);
        if let Some((m, length)) = shapes.match_head_cached(&mut cache, "message", &data) {
            heads += 1;
            let mut values = serde_json::Deserializer::from_str(&data).into_iter::<serde_json::Value>();
            assert!(matches!(values.next(), Some(Ok(_))), "{data}");
            assert_eq!(values.byte_offset(), length, "{data}");
            let alone = answer(shapes.match_payload("message", &data[..length]));
            assert_eq!(Ok((m.template, m.captures().to_vec())), alone, "{data}");
        } else {
            let _ = shapes.match_cached(&mut cache, "message", &payload);
        }
        stream.push(payload);
    }
    assert!(heads > 1000, "heads {heads}");
    let cache = same_answers(&shapes, "message", &stream);
    assert!(cache.replayed() > 1000, "replayed {}", cache.replayed());
}

/// Anthropic's three fast-path deltas (`protocols/anthropic.py`'s `SHAPES`).
fn anthropic_delta(kind: &str, field: &str) -> String {
    format!(
        r#"{{"type": "content_block_delta", "index": "$int", "delta": {{"type": "{kind}", "{field}": "$str"}}}}"#
    )
}

const ANTHROPIC_FIELDS: [(&str, &str); 3] =
    [("text_delta", "text"), ("thinking_delta", "thinking"), ("input_json_delta", "partial_json")];

fn anthropic_shapes() -> ShapeSet {
    let specs: Vec<String> =
        ANTHROPIC_FIELDS.iter().map(|(kind, field)| anthropic_delta(kind, field)).collect();
    set(&[
        ("content_block_delta", &specs[0]),
        ("content_block_delta", &specs[1]),
        ("content_block_delta", &specs[2]),
    ])
}

fn anthropic_payload(template: usize, index: usize, value: &str) -> String {
    let (kind, field) = ANTHROPIC_FIELDS[template];
    let value = serde_json::to_string(value).expect("a JSON string");
    format!(
        r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"{kind}","{field}":{value}}}}}"#
    )
}

#[test]
fn disjoint_templates_are_those_no_payload_matches_both() {
    let pattern = |spec: &str| {
        let mut captures = 0;
        spec::compile(&Spec::parse(spec).expect("valid spec"), &mut captures).expect("compiles")
    };
    let cases = [
        // Literals, types, lengths.
        (r#""a""#, r#""b""#, true),
        (r#""a""#, r#""a""#, false),
        (r#""$str""#, r#""a""#, false),
        (r#""$str""#, "1", true),
        (r#""$int""#, "1", false),
        ("1", "2", true),
        ("true", "false", true),
        ("null", r#""$str""#, true),
        (r#""$any""#, "1", false),
        (r#""$falsy""#, "null", false),
        (r#""$raw""#, r#""a""#, false),
        ("[1, 2]", "[1]", true),
        ("[1, 2]", r#"[1, "$int"]"#, false),
        ("[1, 2]", "[1, 3]", true),
        // Objects: a required key the other does not list, or disjoint values.
        (r#"{"a": "$str"}"#, r#"{"b": "$str"}"#, true),
        (r#"{"a?": "$str"}"#, r#"{"b?": "$str"}"#, false),
        (r#"{"a": "$str", "b?": 1}"#, r#"{"a": "$str", "b": 2}"#, true),
        (r#"{"a?": "x"}"#, r#"{"a?": "y"}"#, false),
        (r#"{"a": {"t": "x"}}"#, r#"{"a": {"t": "y"}}"#, true),
        (r#"{"a": {"t": "x"}}"#, r#"{"a": {"t": "$any"}}"#, false),
        (r#"{"a": "$str"}"#, r#"{"a": "$str", "b?": 1}"#, false),
    ];
    for (a, b, expected) in cases {
        assert_eq!(disjoint(&pattern(a), &pattern(b)), expected, "{a} / {b}");
        assert_eq!(disjoint(&pattern(b), &pattern(a)), expected, "{b} / {a}");
    }
    let specs: Vec<String> =
        ANTHROPIC_FIELDS.iter().map(|(kind, field)| anthropic_delta(kind, field)).collect();
    for (i, a) in specs.iter().enumerate() {
        for (j, b) in specs.iter().enumerate() {
            assert_eq!(disjoint(&pattern(a), &pattern(b)), i != j, "{a} / {b}");
        }
    }
}

#[test]
fn blocks_that_change_template_and_index_get_the_answers_match_payload_gives() {
    // Thinking, text and tool input deltas of blocks 0, 1, 2, ... in every
    // order, mutated now and then: the template matched last is replayed
    // first (no earlier template can match its payloads), and every answer
    // is still the first matching template's.
    let shapes = anthropic_shapes();
    let values = ["", "Hé \"q\" 🙂", "{\"a\": [1, 2.5e3]}", "\\", "\u{0}\n"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut stream = Vec::new();
    let (mut template, mut index) = (1, 0);
    for _ in 0..6000 {
        if rng.below(20) == 0 {
            template = rng.below(3);
            index = rng.below(4);
        }
        let mut bytes = anthropic_payload(template, index, values[rng.below(values.len())]).into_bytes();
        if rng.below(4) == 0 {
            rng.mutate(&mut bytes);
        }
        if let Ok(text) = String::from_utf8(bytes) {
            stream.push(text);
        }
    }
    let cache = same_answers(&shapes, "content_block_delta", &stream);
    assert!(cache.replayed() > 3000, "replayed {}", cache.replayed());
    // Other event types are not matched by a last template of another type.
    let mut cache = ShapeCache::new();
    let payload = anthropic_payload(1, 0, "x");
    assert_eq!(shapes.match_cached(&mut cache, "content_block_delta", &payload).map(|m| m.template), Ok(1));
    assert_eq!(shapes.match_cached(&mut cache, "message", &payload).map(|m| m.template), Err(Decline::Event));
}

#[test]
fn a_long_digit_run_declines_a_payload_the_last_template_replays() {
    let shapes = anthropic_shapes();
    let mut cache = ShapeCache::new();
    for _ in 0..2 {
        let payload = anthropic_payload(1, 0, "x");
        assert_eq!(
            shapes.match_cached(&mut cache, "content_block_delta", &payload).map(|m| m.template),
            Ok(1)
        );
    }
    let digits = anthropic_payload(1, 0, &"7".repeat(700));
    let declined = shapes.match_cached(&mut cache, "content_block_delta", &digits).map(|m| m.template);
    assert_eq!((declined, cache.replayed()), (Err(Decline::LongNumber), 1));
}

#[test]
fn templates_an_earlier_one_may_match_are_not_replayed_first() {
    // "kind": "$any" overlaps "kind": "a": template 1 never goes first, and a
    // payload of template 0 after a run of template 1's is template 0's.
    let shapes =
        set(&[("message", r#"{"kind": "a", "v": "$str"}"#), ("message", r#"{"kind": "$any", "v": "$str"}"#)]);
    let mut cache = ShapeCache::new();
    let payload = |kind: &str| format!(r#"{{"kind":"{kind}","v":"x"}}"#);
    for kind in ["b", "b", "a", "b", "a", "a"] {
        let expected = if kind == "a" { 0 } else { 1 };
        let got = shapes.match_cached(&mut cache, "message", &payload(kind)).map(|m| m.template);
        assert_eq!(got, Ok(expected), "{kind}");
    }
}
