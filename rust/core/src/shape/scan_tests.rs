//! Tests of the scanner's string search on long strings (a base64 audio
//! delta, a long text): a special byte (a quote, a backslash, a control
//! character) at any offset, on either side of the block boundaries of
//! `Scanner::special`, is found where it is.

use super::*;

fn delta() -> ShapeSet {
    let mut shapes = ShapeSet::new();
    let spec = Spec::parse(r#"{"delta": "$str", "n?": "$int"}"#).expect("valid spec");
    shapes.add("e", &spec).expect("compiles");
    shapes
}

/// The combined matcher and the `serde_json` reference give the same answer.
fn agree(shapes: &ShapeSet, data: &str) {
    let fast = shapes.match_payload("e", data).map(|m| m.captures().to_vec());
    let reference = shapes.match_payload_reference("e", data).map(|m| m.captures().to_vec());
    assert_eq!(fast, reference, "{data:?}");
}

/// Lengths around the scanner's eight-byte words and 64-byte blocks, past
/// its first 64 bytes (every offset up to two blocks past them), and a
/// 6,400-byte delta.
fn lengths() -> impl Iterator<Item = usize> {
    (0..=140).chain([255, 256, 257, 6400])
}

#[test]
fn a_special_byte_is_found_at_every_offset_of_a_long_string() {
    let shapes = delta();
    for len in lengths() {
        let plain = "A".repeat(len);
        agree(&shapes, &format!(r#"{{"delta":"{plain}","n":1}}"#));
        // Of the long ones, the offsets at each 64-byte block edge and the last 16.
        let offsets: Vec<usize> = if len <= 140 {
            (0..len).collect()
        } else {
            (0..len).filter(|at| at % 64 < 2 || at % 64 == 63 || at + 16 > len).collect()
        };
        for at in offsets {
            for special in ["\u{1}", "\u{1f}", "\t", "\\n", "\\u00e9", "\\\"", "\\", "\"", "\u{7f}", "é"] {
                let text = format!("{}{special}{}", &plain[..at], &plain[at..]);
                agree(&shapes, &format!(r#"{{"delta":"{text}","n":2}}"#));
            }
        }
    }
}

#[test]
fn a_long_string_is_captured_whole() {
    let shapes = delta();
    for len in lengths() {
        let text = "Ab+/".repeat(len / 4 + 1)[..len].to_owned();
        let data = format!(r#"{{"n":3,"delta":"{text}"}}"#);
        let m = shapes.match_payload("e", &data).expect("matches");
        assert_eq!(m.captures(), [Capture::Str(text.as_str().into()), Capture::Int(3)]);
    }
}
