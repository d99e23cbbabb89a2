//! Unit tests of shape matching: captures, and every decline reason.

use std::borrow::Cow;

use super::*;

const CHAT_TEXT: &str = r#"{
    "id?": "$any", "object?": "chat.completion.chunk", "created?": "$any", "model?": "$any",
    "usage?": null,
    "choices": [{"index?": "$int", "delta": {"content": "$str", "role?": "$any"},
                 "logprobs?": "$any", "finish_reason?": null}]
}"#;

const CHAT_ARGS: &str = r#"{
    "id?": "$any", "object?": "chat.completion.chunk", "created?": "$any", "model?": "$any",
    "usage?": null,
    "choices": [{"index?": "$int",
                 "delta": {"tool_calls": [{"index": "$int", "function": {"arguments": "$str"}}]},
                 "logprobs?": "$any", "finish_reason?": null}]
}"#;

fn set(templates: &[(&str, &str)]) -> ShapeSet {
    let mut shapes = ShapeSet::new();
    for (event, spec) in templates {
        shapes.add(event, &Spec::parse(spec).expect("valid spec")).expect("compiles");
    }
    shapes
}

fn chat() -> ShapeSet {
    set(&[("message", CHAT_TEXT), ("message", CHAT_ARGS)])
}

/// The chat text template alone: with several templates, a decline reports
/// the reason of the last one tried.
fn text() -> ShapeSet {
    one(CHAT_TEXT)
}

fn one(spec: &str) -> ShapeSet {
    set(&[("message", spec)])
}

fn captures<'a>(shapes: &ShapeSet, data: &'a str) -> (usize, Vec<Capture<'a>>) {
    let m = shapes.match_payload("message", data).unwrap_or_else(|why| panic!("declined ({why}): {data}"));
    (m.template, m.captures().to_vec())
}

fn declines(shapes: &ShapeSet, data: &str) -> Decline {
    match shapes.match_payload("message", data) {
        Ok(m) => panic!("matched template {} with {:?}: {data}", m.template, m.captures()),
        Err(why) => why,
    }
}

fn s(text: &str) -> Capture<'_> {
    Capture::Str(Cow::Borrowed(text))
}

// --- matches -------------------------------------------------------------------------

#[test]
fn a_chat_text_chunk_matches_with_its_captures() {
    let data = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt",
        "choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}"#;
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Int(0), s("Hello")]));
}

#[test]
fn a_tool_arguments_fragment_matches_the_second_template() {
    let data =
        r#"{"choices":[{"index":2,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{\"a\""}}]}}]}"#;
    let (template, caps) = captures(&chat(), data);
    assert_eq!(template, 1);
    assert_eq!(caps, vec![Capture::Int(2), Capture::Int(3), Capture::Str(Cow::Owned("{\"a\"".into()))]);
}

#[test]
fn keys_match_in_any_order_and_captures_follow_the_template_order() {
    let data = r#"{"choices":[{"delta":{"content":"x"},"finish_reason":null,"index":7}],"model":"m"}"#;
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Int(7), s("x")]));
}

#[test]
fn an_absent_optional_capture_is_absent() {
    let data = r#"{"choices":[{"delta":{"content":""}}]}"#;
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Absent, s("")]));
}

#[test]
fn strings_without_escapes_are_borrowed_and_escapes_are_decoded() {
    let (_, caps) = captures(&chat(), r#"{"choices":[{"delta":{"content":"plain 数据 🙂"}}]}"#);
    assert!(matches!(&caps[1], Capture::Str(Cow::Borrowed("plain 数据 🙂"))));
    let escaped =
        r#"{"choices":[{"delta":{"content":"a\"b\\c\/d\b\f\n\r\t\u00e9\u6570\ud83d\ude42\u0000"}}]}"#;
    let (_, caps) = captures(&chat(), escaped);
    assert_eq!(caps[1], Capture::Str(Cow::Owned("a\"b\\c/d\u{8}\u{c}\n\r\té数🙂\u{0}".into())));
}

#[test]
fn escaped_keys_are_compared_decoded() {
    let data = r#"{"ch\u006fices":[{"d\u0065lta":{"content":"x"},"fin\u0069sh_reason":null}]}"#;
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Absent, s("x")]));
}

#[test]
fn a_template_is_tried_only_when_its_deepest_required_key_occurs() {
    // The text template's probe is "content": an arguments fragment skips it.
    let fragment = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}"#;
    assert_eq!(text().match_payload("message", fragment).err(), Some(Decline::MissingKey));
    assert_eq!(captures(&chat(), fragment).0, 1);
    // So the probe key spelled with escapes declines (safely).
    let escaped = r#"{"choices":[{"delta":{"cont\u0065nt":"x"}}]}"#;
    assert_eq!(text().match_payload("message", escaped).err(), Some(Decline::MissingKey));
    for not_chunk in ["[DONE]", "\"x\"", "null", ""] {
        assert_eq!(text().match_payload("message", not_chunk).err(), Some(Decline::MissingKey));
    }
    // A key JSON must escape is never a probe; a template without required keys has none.
    let quoted = one(r#"{"a\"b": {"c\\d": "$str"}}"#);
    assert_eq!(captures(&quoted, r#"{"a\"b": {"c\\d": "x"}}"#), (0, vec![s("x")]));
    assert_eq!(captures(&one(r#"{"a?": "$int"}"#), "{}"), (0, vec![Capture::Absent]));
    assert_eq!(captures(&one(r#""$str""#), r#""x""#), (0, vec![s("x")]));
}

#[test]
fn json_whitespace_around_and_inside_is_accepted() {
    let data = " \t\r\n{ \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } } ] } \n\t\r ";
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Absent, s("x")]));
}

#[test]
fn ignored_values_may_be_anything_valid() {
    let data = r#"{"id":{"a":[1,2.5e-3,-0,true,false,null,"\u00e9"]},"model":[],"created":-1.5E+10,
        "choices":[{"delta":{"content":"x","role":{"nested":{"deep":[[[]]]}}},"logprobs":{"x":1}}]}"#;
    assert_eq!(captures(&chat(), data), (0, vec![Capture::Absent, s("x")]));
}

#[test]
fn integers_across_the_i64_range_are_captured() {
    let spec = r#"{"a": "$int", "b": "$int", "c": "$int", "d": "$int"}"#;
    let data = r#"{"a": -9223372036854775808, "b": 9223372036854775807, "c": 0, "d": -1}"#;
    let (_, caps) = captures(&one(spec), data);
    assert_eq!(caps, vec![Capture::Int(i64::MIN), Capture::Int(i64::MAX), Capture::Int(0), Capture::Int(-1)]);
}

#[test]
fn raw_captures_are_the_value_text_exactly() {
    let spec = r#"{"usage?": "$raw", "n": "$raw", "s": "$raw"}"#;
    let data = r#"{ "usage" :  {"a": [1, 2.0], "b": "\u00e9"} , "n": -1.5e3, "s": "x"}"#;
    let (_, caps) = captures(&one(spec), data);
    assert_eq!(
        caps,
        vec![
            Capture::Raw(r#"{"a": [1, 2.0], "b": "\u00e9"}"#),
            Capture::Raw("-1.5e3"),
            Capture::Raw("\"x\"")
        ]
    );
}

#[test]
fn literals_of_every_kind_match_equal_values() {
    let spec = r#"{"t": "text_delta", "n": null, "b": true, "f": false, "i": 3, "e": [], "o": {},
                   "d": "$$ref", "neg": -4}"#;
    let data = r#"{"t":"text_delta","n":null,"b":true,"f":false,"i":3,"e":[],"o":{},"d":"$ref","neg":-4}"#;
    assert_eq!(captures(&one(spec), data), (0, vec![]));
}

#[test]
fn the_first_matching_template_wins_and_event_types_select_templates() {
    let shapes = set(&[
        (
            "content_block_delta",
            r#"{"type": "content_block_delta", "index": "$int", "delta": {"type": "text_delta", "text": "$str"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type": "content_block_delta", "index": "$int", "delta": {"type": "input_json_delta", "partial_json": "$str"}}"#,
        ),
        ("message", r#"{"type": "$str"}"#),
        ("message", r#"{"type": "$any"}"#),
    ]);
    let text = r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#;
    let json =
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{"}}"#;
    assert_eq!(shapes.match_payload("content_block_delta", text).map(|m| m.template), Ok(0));
    assert_eq!(shapes.match_payload("content_block_delta", json).map(|m| m.template), Ok(1));
    assert_eq!(shapes.match_payload("message", r#"{"type":"x"}"#).map(|m| m.template), Ok(2));
    assert_eq!(shapes.match_payload("message", r#"{"type":1}"#).map(|m| m.template), Ok(3));
    assert!(shapes.handles_event("message") && !shapes.handles_event("ping"));
    assert_eq!(shapes.captures_of(1), Some(2));
    assert_eq!(shapes.captures_of(9), None);
}

// --- declines, one test per reason -----------------------------------------------------

#[test]
fn an_event_type_without_templates_declines_event() {
    assert_eq!(
        chat().match_payload("error", r#"{"choices":[{"delta":{"content":"x"}}]}"#).err(),
        Some(Decline::Event)
    );
    assert_eq!(ShapeSet::new().match_payload("message", "{}").err(), Some(Decline::Event));
}

#[test]
fn anything_that_is_not_one_json_text_declines_syntax() {
    let chat = text();
    let ok = r#"{"choices":[{"delta":{"content":"x"}}]}"#;
    for bad in [
        r#"{"choices":[{"delta":{"content":"x"}}]"#,           // truncated
        r#"{"choices":[{"delta":{"content":"x"}}]}}"#,         // extra data
        r#"{"choices":[{"delta":{"content":"x"}}]} x"#,        // trailing garbage
        r#"{"choices":[{"delta":{"content":"x"}}],}"#,         // trailing comma
        r#"{"choices":[{"delta":{"content":"x",}}]}"#,         // trailing comma, captured object
        r#"{"choices":[{"delta":{"content":"x"}}],"id":NaN}"#, // not JSON (Python accepts it)
        r#"{"choices":[{"delta":{"content":"x"}}],"id":Infinity}"#,
        r#"{"choices":[{"delta":{"content":"x"}}],"id":01}"#, // leading zero
        r#"{"choices":[{"delta":{"content":"x"}}],"id":1.}"#,
        r#"{"choices":[{"delta":{"content":"x"}}],"id":.5}"#,
        r#"{"choices":[{"delta":{"content":"x"}}],"id":-}"#,
        r#"{"choices":[{"delta":{"content":"x"}}],"id":+1}"#,
        r#"{"choices":[{"delta":{"content":"x"}}],"id":'x'}"#,
        r#"{"choices":[{"delta":{"content":"\x"}}]}"#, // invalid escape
        r#"{"choices":[{"delta":{"content":"\u12"}}]}"#, // short \u escape
        r#"{"choices":[{"delta":{"content":"\ud83d"}}]}"#, // lone surrogate, captured
        r#"{"choices":[{"delta":{"content":"\ude42\ud83d"}}]}"#, // reversed pair, captured
        r#"{"choices":[{"delta":{"content":"x"}}],"id":"\q"}"#, // invalid escape, ignored
        r#"{"choices":[{"delta":{"content":"x"}}],"id":"\ud800"}"#, // lone surrogate, ignored (Python accepts it)
        r#"{"choices":[{"delta":{"content":"x"}}],"id":1e400}"#,    // beyond f64 (Python: inf)
        "{\"choices\":[{\"delta\":{\"content\":\"a\u{1}b\"}}]}",    // raw control character
        "{\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"id\":\"\t\"}",
        "\u{feff}{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", // a BOM is not whitespace
        "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\u{a0}",   // nor is NBSP
        r#"{"choices":[{"delta":{"content":"x"}}] "id":1}"#,       // missing comma
        r#"{"choices" [{"delta":{"content":"x"}}]}"#,              // missing colon
        r#"{choices:[{"delta":{"content":"x"}}]}"#,                // unquoted key
    ] {
        assert_eq!(declines(&chat, bad), Decline::Syntax, "{bad:?}");
    }
    assert_eq!(captures(&chat, ok).0, 0);
}

#[test]
fn nesting_deeper_than_serde_json_allows_declines_syntax() {
    let deep = format!(
        r#"{{"choices":[{{"delta":{{"content":"x"}}}}],"id":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert_eq!(declines(&text(), &deep), Decline::Syntax);
    let fine = format!(
        r#"{{"choices":[{{"delta":{{"content":"x"}}}}],"id":{}{}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(captures(&chat(), &fine).0, 0);
}

#[test]
fn a_key_the_template_does_not_list_declines_unknown_key() {
    let chat = text();
    assert_eq!(declines(&chat, r#"{"choices":[{"delta":{"content":"x"}}],"error":{}}"#), Decline::UnknownKey);
    assert_eq!(
        declines(&chat, r#"{"choices":[{"delta":{"content":"x"}}],"x_unknown":null}"#),
        Decline::UnknownKey
    );
    // Keys are case-sensitive and compared after unescaping.
    assert_eq!(declines(&chat, r#"{"Choices":[{"delta":{"content":"x"}}]}"#), Decline::UnknownKey);
    // The trailing '?' of an optional key is not part of the key.
    assert_eq!(declines(&chat, r#"{"choices":[{"delta":{"content":"x"}}],"id?":1}"#), Decline::UnknownKey);
}

#[test]
fn a_repeated_key_declines_duplicate_key() {
    let chat = text();
    assert_eq!(
        declines(&chat, r#"{"choices":[{"delta":{"content":"x","content":"y"}}]}"#),
        Decline::DuplicateKey
    );
    assert_eq!(
        declines(&chat, r#"{"id":1,"choices":[{"delta":{"content":"x"}}],"id":2}"#),
        Decline::DuplicateKey
    );
    assert_eq!(
        declines(&chat, r#"{"choices":[{"delta":{"content":"x"}}],"choic\u0065s":[]}"#),
        Decline::DuplicateKey
    );
}

#[test]
fn a_missing_required_key_declines_missing_key() {
    assert_eq!(declines(&text(), r#"{"choices":[{"delta":{}}]}"#), Decline::MissingKey);
    assert_eq!(declines(&text(), r#"{"model":"m"}"#), Decline::MissingKey);
}

#[test]
fn another_type_or_literal_declines_mismatch() {
    let chat = text();
    for bad in [
        r#"{"choices":[{"delta":{"content":null}}]}"#,  // $str got null
        r#"{"choices":[{"delta":{"content":1}}]}"#,     // $str got a number
        r#"{"choices":[{"delta":{"content":["x"]}}]}"#, // $str got an array
        r#"{"choices":[{"index":"0","delta":{"content":"x"}}]}"#, // $int got a string
        r#"{"choices":[{"index":true,"delta":{"content":"x"}}]}"#, // $int got a boolean
        r#"{"choices":[{"index":null,"delta":{"content":"x"}}]}"#, // $int got null
        r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#, // null literal
        r#"{"choices":[{"delta":{"content":"x"}}],"usage":{}}"#, // null literal got {}
        r#"{"choices":[{"delta":{"content":"x"}}],"usage":[]}"#, // null literal got []
        r#"{"choices":[{"delta":{"content":"x"}}],"object":"chat.completion"}"#, // string literal
        r#"{"choices":{"delta":{"content":"x"}}}"#,     // array expected
        r#"{"choices":[["content"]]}"#,                 // object expected
        r#"[{"choices":[{"delta":{"content":"x"}}]}]"#, // object expected
    ] {
        assert_eq!(declines(&chat, bad), Decline::Mismatch, "{bad}");
    }
    let literals = one(r#"{"i": 1, "b": false, "n?": null}"#);
    assert_eq!(declines(&literals, r#"{"i": 2, "b": false}"#), Decline::Mismatch);
    assert_eq!(declines(&literals, r#"{"i": 1.0, "b": false}"#), Decline::Mismatch);
    assert_eq!(declines(&literals, r#"{"i": 1, "b": 0}"#), Decline::Mismatch);
    assert_eq!(declines(&literals, r#"{"i": 1, "b": false, "n": false}"#), Decline::Mismatch);
    assert_eq!(declines(&literals, r#"{"i": 18446744073709551615, "b": false}"#), Decline::Mismatch);
}

#[test]
fn an_array_of_another_length_declines_length() {
    let chat = text();
    assert_eq!(declines(&chat, r#"{"choices":[],"model":"content"}"#), Decline::Length);
    let two = r#"{"choices":[{"delta":{"content":"x"}},{"delta":{"content":"y"}}]}"#;
    assert_eq!(declines(&chat, two), Decline::Length);
    assert_eq!(declines(&one(r#"{"logprobs": []}"#), r#"{"logprobs": [null]}"#), Decline::Length);
}

#[test]
fn an_integer_capture_out_of_range_declines_int_range() {
    let shapes = one(r#"{"i": "$int"}"#);
    // serde_json parses "-0" as a float (Python: the int 0): a decline, which is safe.
    for bad in [
        "-0",
        "1.0",
        "1e2",
        "-0.0",
        "9223372036854775808",
        "-9223372036854775809",
        "100000000000000000000000",
    ] {
        assert_eq!(declines(&shapes, &format!(r#"{{"i": {bad}}}"#)), Decline::IntRange, "{bad}");
    }
}

#[test]
fn a_digit_run_python_would_refuse_declines_long_number() {
    let digits = "1".repeat(MAX_DIGIT_RUN + 1);
    assert_eq!(
        declines(&text(), &format!(r#"{{"choices":[{{"delta":{{"content":"x"}}}}],"id":{digits}}}"#)),
        Decline::LongNumber
    );
    // Conservative: a run inside a string declines too.
    assert_eq!(
        declines(&text(), &format!(r#"{{"choices":[{{"delta":{{"content":"{digits}"}}}}]}}"#)),
        Decline::LongNumber
    );
    let fits = "1".repeat(MAX_DIGIT_RUN);
    let big = "9".repeat(300); // beyond u64, within f64: Python's int, serde_json's float
    let data = format!(r#"{{"choices":[{{"delta":{{"content":"{fits}"}}}}],"id":{big}}}"#);
    assert_eq!(captures(&chat(), &data).1[1], Capture::Str(Cow::Borrowed(fits.as_str())));
}

#[test]
fn decline_names_are_stable() {
    let all = [
        (Decline::Event, "event"),
        (Decline::Syntax, "syntax"),
        (Decline::UnknownKey, "unknown_key"),
        (Decline::DuplicateKey, "duplicate_key"),
        (Decline::MissingKey, "missing_key"),
        (Decline::Mismatch, "mismatch"),
        (Decline::Length, "length"),
        (Decline::IntRange, "int_range"),
        (Decline::LongNumber, "long_number"),
    ];
    for (reason, name) in all {
        assert_eq!(reason.as_str(), name);
        assert_eq!(reason.to_string(), name);
    }
}

// --- specs ---------------------------------------------------------------------------

#[test]
fn invalid_specs_are_errors() {
    let mut shapes = ShapeSet::new();
    for bad in
        [r#"{"a": "$float"}"#, r#"{"a": 1.5}"#, r#"{"a": 18446744073709551615}"#, r#"{"a": 1, "a?": 2}"#, "["]
    {
        let compiled = Spec::parse(bad).and_then(|spec| shapes.add("message", &spec));
        assert!(compiled.is_err(), "{bad}");
    }
    let wide = Spec::Object((0..65).map(|i| (format!("k{i}"), Spec::Null)).collect());
    assert!(shapes.add("message", &wide).unwrap_err().to_string().contains("at most 64"));
    let many = Spec::Array(vec![Spec::Str("$str".into()); MAX_CAPTURES + 1]);
    assert!(shapes.add("message", &many).unwrap_err().to_string().contains("captures"));
    assert!(shapes.is_empty());
    let full = Spec::Array(vec![Spec::Str("$str".into()); MAX_CAPTURES]);
    assert_eq!(shapes.add("message", &full), Ok(0));
    assert_eq!(shapes.len(), 1);
}

#[test]
fn a_spec_keeps_its_key_order() {
    let spec = Spec::parse(r#"{"b": "$int", "a": ["$str", true, null]}"#).expect("valid");
    assert_eq!(
        spec,
        Spec::Object(vec![
            ("b".into(), Spec::Str("$int".into())),
            ("a".into(), Spec::Array(vec![Spec::Str("$str".into()), Spec::Bool(true), Spec::Null])),
        ])
    );
}

#[test]
fn sixty_four_keys_are_tracked_for_duplicates_and_requirements() {
    let spec = Spec::Object((0..64).map(|i| (format!("k{i}"), Spec::Int(i))).collect());
    let mut shapes = ShapeSet::new();
    shapes.add("message", &spec).expect("64 keys compile");
    let body: Vec<String> = (0..64).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let all = format!("{{{}}}", body.join(","));
    assert_eq!(shapes.match_payload("message", &all).map(|m| m.template), Ok(0));
    let missing_last = format!("{{{}}}", body[..63].join(","));
    assert_eq!(declines(&shapes, &missing_last), Decline::MissingKey);
    let repeated_last = format!("{{{},\"k63\":63}}", body.join(","));
    assert_eq!(declines(&shapes, &repeated_last), Decline::DuplicateKey);
}

// --- an oracle: serde_json's own reading of mutated payloads ---------------------------

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
}

fn mutate(rng: &mut Rng, seed: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"{}[]\",:\\0123456789-+.eEntrufals \t\n\x01\xc3\xa9u";
    let mut bytes = seed.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
            2 => {
                let end = (at + 1 + rng.below(12)).min(bytes.len());
                let piece = bytes[at.min(end)..end].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
        }
    }
    bytes
}

/// What serde_json reads at the capture points of the two chat templates.
fn oracle(template: usize, value: &serde_json::Value) -> Vec<Capture<'static>> {
    let choice = &value["choices"][0];
    let int = |v: &serde_json::Value| v.as_i64().map_or(Capture::Absent, Capture::Int);
    let text = |v: &serde_json::Value| Capture::Str(Cow::Owned(v.as_str().expect("a string").to_owned()));
    if template == 0 {
        vec![int(&choice["index"]), text(&choice["delta"]["content"])]
    } else {
        let fragment = &choice["delta"]["tool_calls"][0];
        vec![int(&choice["index"]), int(&fragment["index"]), text(&fragment["function"]["arguments"])]
    }
}

#[test]
fn mutated_payloads_match_only_as_serde_json_reads_them() {
    let seeds = [
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hé \"q\" 🙂"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"choices":[{"index":1,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"a\": [1, 2.5e3]}"}}]}}],"usage":null}"#,
        r#" { "choices" : [ { "delta" : { "content" : "\u00e9\ud83d\ude42\n" } , "index" : 10 } ] } "#,
    ];
    let chat = chat();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut matched, mut declined) = (0, 0);
    for seed in seeds {
        assert!(chat.match_payload("message", seed).is_ok(), "{seed}");
        for _ in 0..3000 {
            let Ok(text) = String::from_utf8(mutate(&mut rng, seed)) else { continue };
            let Ok(m) = chat.match_payload("message", &text) else {
                declined += 1;
                continue;
            };
            matched += 1;
            let value: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("matched invalid JSON ({e}): {text}"));
            let object = value.as_object().expect("an object");
            assert!(object
                .keys()
                .all(|k| ["id", "object", "created", "model", "choices", "usage"].contains(&k.as_str())));
            assert_eq!(value["choices"].as_array().map(Vec::len), Some(1), "{text}");
            let expected = oracle(m.template, &value);
            let got: Vec<Capture<'_>> = m.captures().to_vec();
            let got: Vec<Capture<'static>> = got
                .into_iter()
                .map(|c| match c {
                    Capture::Str(s) => Capture::Str(Cow::Owned(s.into_owned())),
                    Capture::Int(i) => Capture::Int(i),
                    Capture::Absent => Capture::Absent,
                    Capture::Raw(_) => unreachable!("no raw captures here"),
                })
                .collect();
            assert_eq!(got, expected, "{text}");
        }
    }
    // The mutations must exercise both outcomes.
    assert!(matched > 300 && declined > 3000, "matched {matched}, declined {declined}");
}

#[test]
fn falsy_matches_what_python_treats_as_false() {
    let shapes = one(r#"{"a?": "$falsy", "b": "$str"}"#);
    for falsy in ["null", "false", "0", "\"\"", "[]", "{}", " [ ] ", "{ }"] {
        let data = format!(r#"{{"a": {falsy}, "b": "x"}}"#);
        assert_eq!(captures(&shapes, &data), (0, vec![s("x")]), "{falsy}");
    }
    // -0 and 0.0 are zero in Python too, but floats decline (see FalsyVisitor).
    for truthy in
        ["true", "1", "-1", "\"0\"", "\" \"", "[null]", "[[]]", r#"{"k":null}"#, "0.0", "-0", "5e-324"]
    {
        let data = format!(r#"{{"a": {truthy}, "b": "x"}}"#);
        assert_eq!(declines(&shapes, &data), Decline::Mismatch, "{truthy}");
    }
    assert_eq!(declines(&shapes, r#"{"a": [, "b": "x"}"#), Decline::Syntax);
}

#[test]
fn raw_captures_decline_what_other_values_decline() {
    let shapes = one(r#"{"r": "$raw"}"#);
    let deep = format!(r#"{{"r": {}{}}}"#, "[".repeat(200), "]".repeat(200));
    assert_eq!(declines(&shapes, &deep), Decline::Syntax);
    assert_eq!(declines(&shapes, r#"{"r": "\ud83d`\ude42"}"#), Decline::Syntax);
    assert_eq!(declines(&shapes, r#"{"r": [1e400]}"#), Decline::Syntax);
    let fine = format!(r#"{{"r": {}{}}}"#, "[".repeat(100), "]".repeat(100));
    assert_eq!(captures(&shapes, &fine).1.len(), 1);
}

// --- the fast scanner ----------------------------------------------------------

const BEDROCK_TEXT: &str = r#"{"contentBlockIndex": "$int", "delta": {"text": "$str"}, "p?": "$any"}"#;

/// The scanner's verdict for `data` against the single template `spec`.
fn scanned<'a>(spec: &str, data: &'a str) -> Option<Vec<Capture<'a>>> {
    let shapes = one(spec);
    let template = &shapes.templates[0];
    let mut captures = std::array::from_fn(|_| Capture::Absent);
    scan::scan(&template.root, data, &mut captures, None).then(|| captures[..template.captures].to_vec())
}

#[test]
fn the_scanner_takes_the_dominant_shapes() {
    let got = scanned(
        BEDROCK_TEXT,
        r#"{"contentBlockIndex":0,"delta":{"text":"a\nb \u00e9 \ud83d\ude00"},"p":"xyz"}"#,
    );
    assert_eq!(
        got,
        Some(vec![Capture::Int(0), Capture::Str(Cow::Owned("a\nb \u{e9} \u{1f600}".to_owned()))])
    );
    let got = scanned(BEDROCK_TEXT, " {\"delta\" : {\"text\":\"pl\u{e9}in\"} ,\"contentBlockIndex\":-12 } ");
    assert_eq!(got, Some(vec![Capture::Int(-12), Capture::Str(Cow::Borrowed("pl\u{e9}in"))]));
    let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",
        "choices":[{"index":0,"delta":{"content":"hi"},"logprobs":null,"finish_reason":null}]}"#;
    assert!(scanned(CHAT_TEXT, chunk).is_some());
}

#[test]
fn the_scanner_gives_up_on_what_it_does_not_handle() {
    for data in [
        r#"{"contentBlockIndex":0,"delta":{"text":"a"},"p":1e3}"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"\ud800"}}"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"\udc00\ud800"}}"#,
        r#"{"contentBlockIndex":-0,"delta":{"text":"a"}}"#,
        r#"{"contentBlockIndex":0.0,"delta":{"text":"a"}}"#,
        r#"{"contentBlockIndex":01,"delta":{"text":"a"}}"#,
        r#"{"contentBlockIndex":1234567890123456789,"delta":{"text":"a"}}"#,
        r#"{"contentBlockIndex":0,"delta":{"t\u0065xt":"a"}}"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"a"},}"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"a"}} x"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"a"},"p":[1,]}"#,
        r#"{"contentBlockIndex":0,"delta":{"text":"a"},"p":"\x"}"#,
        "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"a\tb\"}}",
        "\u{feff}{\"contentBlockIndex\":0,\"delta\":{\"text\":\"a\"}}",
    ] {
        assert_eq!(scanned(BEDROCK_TEXT, data), None, "{data}");
    }
}

#[test]
fn the_scanner_takes_raw_captures_as_their_text() {
    let spec = r#"{"a": "$raw", "b?": "$raw"}"#;
    for (data, a, b) in [
        (r#"{"a": 1}"#, "1", None),
        (r#"{"a" :  {"x": [1, "y", null]} , "b":"s"}"#, r#"{"x": [1, "y", null]}"#, Some(r#""s""#)),
        ("{\"a\":\n[ ]\t}", "[ ]", None),
        (r#"{"b": -0.5, "a": "\ud83d\ude42"}"#, r#""\ud83d\ude42""#, Some("-0.5")),
    ] {
        let captures = scanned(spec, data).unwrap_or_else(|| panic!("scanned {data}"));
        let b = b.map_or(Capture::Absent, Capture::Raw);
        assert_eq!(captures, vec![Capture::Raw(a), b], "{data}");
    }
    // What it cannot vouch for goes to serde_json: an exponent, a lone surrogate.
    assert_eq!(scanned(spec, r#"{"a": 1e5}"#), None);
    assert_eq!(scanned(spec, r#"{"a": "\ud83d"}"#), None);
}

/// The scanner against `serde_json` on every input: the combined matcher and
/// the reference give the same answer (this is the fuzz target's check too).
fn agree(shapes: &ShapeSet, event: &str, data: &str) {
    let fast = shapes.match_payload(event, data).map(|m| (m.template, m.captures().to_vec()));
    let reference = shapes.match_payload_reference(event, data).map(|m| (m.template, m.captures().to_vec()));
    assert_eq!(fast, reference, "{data}");
    let bytes = shapes.match_bytes(event, data.as_bytes()).map(|m| (m.template, m.captures().to_vec()));
    assert_eq!(bytes.ok(), reference.ok(), "{data}");
}

#[test]
fn the_scanner_agrees_with_serde_json_on_mutations() {
    let shapes = set(&[("e", BEDROCK_TEXT), ("e", r#"{"a?": "$falsy", "b": ["$int", null, true, 0, "x"]}"#)]);
    let seeds = [
        r#"{"contentBlockIndex":3,"delta":{"text":"h\u00e9\"\\\/\b\f\n\r\t\ud83d\ude00"},"p":[{"q":-1.5},"s",null,false,true,{}]}"#,
        r#"{"a":0,"b":[-7,null,true,0,"x"]}"#,
        r#"{"a":{},"b":[1, null , true ,0,"x"] }"#,
        r#"{"a":"","b":[9223372036854775807,null,true,0,"x"]}"#,
    ];
    // Every single-byte deletion, duplication and replacement by a JSON-relevant byte.
    let alphabet = b" \t\n\"\\{}[],:-+.0129eEtfnu\x01\x7f";
    for seed in seeds {
        agree(&shapes, "e", seed);
        let bytes = seed.as_bytes();
        for i in 0..bytes.len() {
            let mut variants =
                vec![[&bytes[..i], &bytes[i + 1..]].concat(), [&bytes[..=i], &bytes[i..]].concat()];
            for &b in alphabet {
                variants.push([&bytes[..i], &[b][..], &bytes[i + 1..]].concat());
            }
            for v in variants {
                match std::str::from_utf8(&v) {
                    Ok(text) => agree(&shapes, "e", text),
                    Err(_) => assert!(shapes.match_bytes("e", &v).is_err()),
                }
            }
        }
    }
}

#[test]
fn digit_runs_are_found_wherever_they_are() {
    fn naive(data: &[u8], len: usize) -> bool {
        len == 0 || data.windows(len).any(|w| w.iter().all(u8::is_ascii_digit))
    }
    let samples: [&[u8]; 9] = [
        b"",
        b"1",
        b"12345",
        b"a12345",
        b"1234a5678",
        b"{\"n\": -9223372036854775809}",
        b"{\"n\": 922337203685477580}",
        b"x1y22z333w4444v55555",
        b"123456789012345678901234567890",
    ];
    for data in samples {
        for len in 0..=data.len() + 1 {
            assert_eq!(super::has_digit_run(data, len), naive(data, len), "{data:?} {len}");
        }
    }
    // Every split of a run by one non-digit, at every length.
    for total in 1..40 {
        for cut in 0..=total {
            let mut data = vec![b'7'; total];
            data.insert(cut, b'.');
            for len in 1..=total + 1 {
                assert_eq!(super::has_digit_run(&data, len), naive(&data, len), "{total} {cut} {len}");
            }
        }
    }
}
