//! Table-driven tests of the SSE decoder and encoder.

use super::*;

/// An owned copy of an [`Event`]: (type, data, id, retry).
type Ev = (String, String, Option<String>, Option<u64>);

fn own(e: Event<'_>) -> Ev {
    (e.event_type.to_owned(), e.data.to_owned(), e.id.map(str::to_owned), e.retry)
}

fn msg(data: &str) -> Ev {
    ("message".into(), data.into(), None, None)
}

/// Feeds `chunks` to a fresh decoder with default caps, then finishes.
fn run(chunks: &[&[u8]]) -> (Vec<Ev>, SseDecoder) {
    let mut d = SseDecoder::default();
    let mut out = Vec::new();
    for c in chunks {
        d.feed(c, |e| out.push(own(e))).unwrap();
    }
    d.finish().unwrap();
    (out, d)
}

/// Checks `input` whole, one byte at a time, and at every one- and two-point split.
fn check_splits(input: &[u8], want: &[Ev]) {
    let name = String::from_utf8_lossy(input);
    assert_eq!(run(&[input]).0, want, "whole {name:?}");
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(&bytes).0, want, "bytewise {name:?}");
    for i in 0..=input.len() {
        for j in i..=input.len() {
            let got = run(&[&input[..i], &input[i..j], &[], &input[j..]]).0;
            assert_eq!(got, want, "split {i},{j} {name:?}");
        }
    }
}

#[test]
fn event_types_repeated_invalid_or_changed_are_each_decoded_as_sent() {
    // The last valid value is copied without a second validation: a value
    // of other bytes (a prefix, an invalid one, a long one) is decoded anew.
    let ev = |t: &str, d: &str| (t.to_owned(), d.to_owned(), None, None);
    let long = "e".repeat(KEPT_EVENT_TYPE_BYTES + 1);
    let mut input = Vec::new();
    let mut want = Vec::new();
    let types: [&[u8]; 10] = [
        b"delta",
        b"delta",
        b"delt",
        b"delta\xff",
        b"delta\xff",
        b"delta",
        b"",
        b"d\xc3\xa9",
        b"d\xc3",
        b"delta",
    ];
    for (i, t) in types.iter().enumerate() {
        input.extend_from_slice(b"event: ");
        input.extend_from_slice(t);
        input.extend_from_slice(format!("\ndata: {i}\n\n").as_bytes());
        let name = String::from_utf8_lossy(t);
        want.push(ev(if name.is_empty() { "message" } else { &name }, &i.to_string()));
    }
    for _ in 0..2 {
        input.extend_from_slice(format!("event: {long}\ndata: l\n\n").as_bytes());
        want.push(ev(&long, "l"));
    }
    input.extend_from_slice(b"data: m\n\n");
    want.push(msg("m"));
    assert_eq!(run(&[&input]).0, want);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(&bytes).0, want);
}

#[test]
fn fields_named_like_data_and_event_are_told_by_their_first_colon() {
    let ev = |t: &str, d: &str| (t.to_owned(), d.to_owned(), None, None);
    let table: &[(&[u8], &[Ev])] = &[
        (b"data:x\n\n", &[msg("x")]),
        (b"data:\n\n", &[msg("")]),
        (b"data\n\n", &[msg("")]),
        (b"data::x\n\n", &[msg(":x")]),
        (b"data : x\ndata: y\n\n", &[msg("y")]),
        (b"datum: x\ndata: y\n\n", &[msg("y")]),
        (b"dat: x\ndata:  y\n\n", &[msg(" y")]),
        (b"event:e\ndata: y\n\n", &[ev("e", "y")]),
        (b"event: e:f\ndata: y\n\n", &[ev("e:f", "y")]),
        (b"events: e\ndata: y\n\n", &[msg("y")]),
        (b"even: e\nevent\ndata: y\n\n", &[msg("y")]),
        (b":data: x\n:event: e\ndata: y\n\n", &[msg("y")]),
    ];
    for (input, want) in table {
        check_splits(input, want);
    }
}

#[test]
fn line_endings_in_every_mix() {
    let ab = [msg("a\nb")];
    let table: &[(&[u8], &[Ev])] = &[
        (b"data: a\ndata: b\n\n", &ab),
        (b"data: a\r\ndata: b\r\n\r\n", &ab),
        (b"data: a\rdata: b\r\r", &ab),
        (b"data: a\r\ndata: b\n\r", &ab),
        (b"data: a\rdata: b\n\r\n", &ab),
        (b"data: a\ndata: b\r\n\n", &ab),
        (b"data: a\n\rdata: b\r\n\r", &[msg("a"), msg("b")]),
        (b"data: a\r\r\ndata: b\r\n\n", &[msg("a"), msg("b")]),
        (b"data: a\n\r\n\r\ndata: b\r\r", &[msg("a"), msg("b")]),
        (b"\r\n\r\n\n\r\r", &[]),
        (b"data: a\n\ndata: b", &[msg("a")]),
        (b"data: a\r\n\r", &[msg("a")]),
    ];
    for (input, want) in table {
        check_splits(input, want);
    }
}

#[test]
fn cr_at_chunk_end_then_lf_in_next_chunk() {
    let table: &[(&[&[u8]], &[Ev])] = &[
        (&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"], &[msg("a\nb")]),
        (&[b"data: a\r", b"", b"", b"\n\r", b"", b"\n"], &[msg("a")]),
        (&[b"data: a\r", b"\r", b"\n"], &[msg("a")]),
        (&[b"data: a\n\r", b"\n\n"], &[msg("a")]),
        (&[b"data: a\r", b"data: b\r", b"\r"], &[msg("a\nb")]),
    ];
    for (chunks, want) in table {
        assert_eq!(run(chunks).0, *want, "{chunks:?}");
    }
    // The CR acts at once: the event is out before the next byte arrives.
    let mut d = SseDecoder::default();
    let mut n = 0;
    d.feed(b"data: a\n\r", |_| n += 1).unwrap();
    assert_eq!(n, 1);
    d.feed(b"\n", |_| n += 1).unwrap();
    assert_eq!((n, d.events_dispatched()), (1, 1));
}

#[test]
fn bom_stripped_once_at_stream_start_only() {
    let x = [msg("x")];
    let table: &[(&[&[u8]], &[Ev])] = &[
        (&[b"\xEF", b"\xBB\xBFdata: x\n\n"], &x),
        (&[b"\xEF\xBB", b"\xBFdata: x\n\n"], &x),
        (&[b"", b"", b"\xEF\xBB\xBF", b"data: x\n\n"], &x),
        (&[b"", b"\xEF", b"", b"\xBB", b"", b"\xBF", b"", b"data: x\n\n"], &x),
        (&[b"\xEF\xBB\xBF\n", b"data: x\n\n"], &x),
        // A second BOM is content: the field name becomes "\u{FEFF}data".
        (&[b"\xEF\xBB\xBF", b"\xEF\xBB\xBFdata: y\n\ndata: x\n\n"], &x),
        // A BOM prefix that turns out not to be one is content (U+FFFD here).
        (&[b"\xEF\xBB", b"data: y\n\ndata: x\n\n"], &x),
        (&[b"\xEF", b"data: y\n\ndata: x\n\n"], &x),
        // Not at the start: kept as U+FEFF.
        (&[b"data: \xEF\xBB", b"\xBFx\n\n"], &[msg("\u{FEFF}x")]),
        (&[b"\n", b"\xEF\xBB\xBFdata: y\n\n"], &[]),
        (&[b"event: \xEF\xBB\xBF\n", b"data: x\n\n"], &[("\u{FEFF}".into(), "x".into(), None, None)]),
    ];
    for (chunks, want) in table {
        assert_eq!(run(chunks).0, *want, "{chunks:?}");
    }
    // A held BOM prefix still counts in stream offsets.
    let mut d = SseDecoder::new(4, 100);
    d.feed(b"\xEF\xBB", |_| {}).unwrap();
    let e = d.feed(b"\xBF\n\ndata: x\n", |_| {}).unwrap_err();
    assert_eq!((e.kind, e.offset), (ErrorKind::LineTooLarge, 5));
}

#[test]
fn fields_and_values() {
    let table: &[(&[u8], &[Ev])] = &[
        (b"data:x\n\n", &[msg("x")]),
        (b"data:  x \n\n", &[msg(" x ")]),
        (b"data\n\n", &[msg("")]),
        (b"data:\ndata\n\n", &[msg("\n")]),
        (b": c\ndata: x\n:\n\n", &[msg("x")]),
        (b"data: a:b\n\n", &[msg("a:b")]),
        (b"DATA: a\ndata : b\n\n", &[]),
        (b"data: \xFFx\n\n", &[msg("\u{FFFD}x")]),
        (b"data: \xE2\x82\n\n", &[msg("\u{FFFD}")]),
        (b"event: e\n\ndata: x\n\n", &[msg("x")]),
        (b"event: e\nevent\ndata: x\n\n", &[msg("x")]),
        (b"event:  t\ndata: 1\ndata: 2\n\n", &[(" t".into(), "1\n2".into(), None, None)]),
        (
            b"id: 1\ndata: x\n\ndata: y\n\n",
            &[
                ("message".into(), "x".into(), Some("1".into()), None),
                ("message".into(), "y".into(), Some("1".into()), None),
            ],
        ),
        (b"id: 1\nid: a\0b\ndata: x\n\n", &[("message".into(), "x".into(), Some("1".into()), None)]),
        (b"id\ndata: x\n\n", &[("message".into(), "x".into(), Some(String::new()), None)]),
        (b"retry: 7\ndata: x\n\ndata: y\n\n", &[("message".into(), "x".into(), None, Some(7)), msg("y")]),
    ];
    for (input, want) in table {
        check_splits(input, want);
    }
}

#[test]
fn retry_values() {
    let table: &[(&[u8], Option<u64>)] = &[
        (b"retry: 0\n", Some(0)),
        (b"retry: 0300\n", Some(300)),
        (b"retry: 18446744073709551615\n", Some(u64::MAX)),
        (b"retry: 18446744073709551616\n", None),
        (b"retry: 99999999999999999999999\n", None),
        (b"retry: 5\nretry: 18446744073709551616\n", Some(5)),
        (b"retry: 5\nretry: x\n", Some(5)),
        (b"retry: 1a\n", None),
        (b"retry: -1\n", None),
        (b"retry: +1\n", None),
        (b"retry:  1\n", None),
        (b"retry: 1 \n", None),
        (b"retry: 1.5\n", None),
        (b"retry: \xD9\xA1\n", None), // ARABIC-INDIC DIGIT ONE is not ASCII
        (b"retry:\n", None),
        (b"retry\n", None),
        (b"Retry: 1\n", None),
    ];
    for (input, want) in table {
        assert_eq!(run(&[input]).1.retry(), *want, "{}", String::from_utf8_lossy(input));
    }
}

#[test]
fn id_commit_and_nul() {
    let table: &[(&[u8], Option<&str>)] = &[
        (b"id: 1\n\n", Some("1")),
        (b"id: 1\n", None),
        (b"id: 1\n\nid: 2\n", Some("1")),
        (b"id: 1\n\nid\n\n", Some("")),
        (b"id: a\0b\n\n", None),
        (b"id: 1\n\nid: \0\n\n", Some("1")),
        (b"id: x\xFFy\n\n", Some("x\u{FFFD}y")),
    ];
    for (input, want) in table {
        assert_eq!(run(&[input]).1.last_event_id(), *want, "{}", String::from_utf8_lossy(input));
    }
    // An id left uncommitted at finish() is dropped, not committed later.
    let mut d = SseDecoder::default();
    d.feed(b"id: 1\n\nid: 2\n", |_| {}).unwrap();
    d.finish().unwrap();
    let mut ids = Vec::new();
    d.feed(b"data: x\n\n", |e| ids.push(e.id.map(str::to_owned))).unwrap();
    assert_eq!(ids, [Some("1".to_owned())]);
}

/// Feeds `chunks` until one fails; returns the events seen and the error.
fn run_err(max_line: usize, max_event: usize, chunks: &[&[u8]]) -> (Vec<Ev>, FramingError, SseDecoder) {
    let mut d = SseDecoder::new(max_line, max_event);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, |e| out.push(own(e))) {
            return (out, e, d);
        }
    }
    let e = d.finish().expect_err("a cap must be exceeded");
    (out, e, d)
}

/// (max_line, max_event, chunks, kind, offset, events dispatched before the error)
type CapCase = (usize, usize, &'static [&'static [u8]], ErrorKind, u64, usize);

#[test]
fn caps_exceeded_fail_with_offset_and_stay_failed() {
    use ErrorKind::{EventTooLarge as Evt, LineTooLarge as Line};
    let table: &[CapCase] = &[
        (10, 100, &[b"data: 0123456789\n"], Line, 0, 0),
        (10, 100, &[b"data: a\n\ndata: 0123456789\n\n"], Line, 9, 1),
        (10, 100, &[b"data: a\n\ndata: 01", b"23", b"456789"], Line, 9, 1),
        (10, 100, &[b"data: a\n\nda", b"ta: 0123", b"45\n"], Line, 9, 1),
        (10, 100, &[b"\xEF\xBB\xBFdata: 0123456789"], Line, 3, 0),
        (10, 100, &[b"data: a\r", b"\n: 3456789\r\n: 3456789AB\n"], Line, 20, 0),
        (100, 10, &[b"data: 0123456789\n"], Evt, 0, 0),
        (100, 10, &[b"data: 12345\ndata: 6789\n\n"], Evt, 12, 0),
        (100, 10, &[b"data: 1\n\ndata: 12345\n", b"data: 6789\n\n"], Evt, 21, 1),
        (100, 10, &[b"event: abcdef\ndata: 1234\n\n"], Evt, 14, 0),
        (100, 10, &[b"data: 1234\nevent: abcdef\n\n"], Evt, 11, 0),
        (100, 10, &[b"data: 1234\n", b"event: abcdef\n\n"], Evt, 11, 0),
        // Lossy decoding can grow a value: 4 invalid bytes become 12.
        (100, 10, &[b"data: \xFF\xFF\xFF\xFF\n"], Evt, 0, 0),
    ];
    for &(max_line, max_event, chunks, kind, offset, before) in table {
        let (events, e, mut d) = run_err(max_line, max_event, chunks);
        assert_eq!((e.kind, e.offset, events.len()), (kind, offset, before), "{chunks:?}");
        assert_eq!(d.error(), Some(&e));
        assert_eq!(d.feed(b"\n\ndata: x\n\n", |_| panic!("failed decoder dispatched")), Err(e.clone()));
        assert_eq!(d.finish(), Err(e));
    }
    // At the caps exactly, nothing fails.
    let mut d = SseDecoder::new(10, 6);
    let mut got = Vec::new();
    d.feed(b"data: 1234\ndata:\n\n", |e| got.push(own(e))).unwrap();
    d.feed(b"event:\ndata: 0123\n\n", |e| got.push(own(e))).unwrap();
    d.finish().unwrap();
    assert_eq!(got, [msg("1234\n"), msg("0123")]);
}

#[test]
fn counters() {
    let mut d = SseDecoder::default();
    let first: &[u8] = b": hi\ndata: abc\n\n:\nevent: e\ndata: x";
    d.feed(first, |_| {}).unwrap();
    assert_eq!((d.comments_seen(), d.events_dispatched(), d.bytes_fed()), (2, 1, first.len() as u64));
    // Held: event type "e" (1) and the tail "data: x" (7).
    assert_eq!(d.buffered_bytes(), 8);
    d.feed(b"yz\ndata: q\n", |_| {}).unwrap();
    // "xyz\nq\n" plus "e".
    assert_eq!(d.buffered_bytes(), 7);
    assert_eq!(d.peak_buffered_bytes(), 10);
    d.feed(b"\n", |_| {}).unwrap();
    assert_eq!((d.buffered_bytes(), d.peak_buffered_bytes(), d.events_dispatched()), (0, 10, 2));
    d.feed(b"data: long", |_| {}).unwrap();
    d.finish().unwrap();
    assert_eq!((d.buffered_bytes(), d.bytes_fed()), (0, first.len() as u64 + 11 + 1 + 10));
}

#[test]
fn finish_discards_pending() {
    let table: &[&[&[u8]]] =
        &[&[b"data: x"], &[b"data: x\n"], &[b"data: x\r"], &[b"\xEF\xBB"], &[b"data: a\ndata: b\n"]];
    for chunks in table {
        let (events, d) = run(chunks);
        assert!(events.is_empty(), "{chunks:?}");
        assert_eq!(d.buffered_bytes(), 0);
    }
}

/// (data, event, id, retry, data as decoded)
type EncodeCase = (&'static str, Option<&'static str>, Option<&'static str>, Option<u64>, &'static str);

#[test]
fn encode_round_trips() {
    let table: &[EncodeCase] = &[
        ("hello", None, None, None, "hello"),
        ("", None, None, None, ""),
        ("\n", None, None, None, "\n"),
        ("a\r\nb\rc\nd", Some("delta"), Some("7"), Some(1500), "a\nb\nc\nd"),
        ("a\r\r\n\n", None, None, None, "a\n\n\n"),
        ("\r\n", None, None, None, "\n"),
        ("  two spaces", Some(" spaced"), Some(" 1"), None, "  two spaces"),
        (" x\n y", None, Some(""), Some(0), " x\n y"),
        ("ünïcødé 😀\u{2028}\u{FEFF}", Some("événement"), Some("ид"), None, "ünïcødé 😀\u{2028}\u{FEFF}"),
        (": not a comment", Some(""), None, None, ": not a comment"),
        ("nul\0inside", None, None, Some(u64::MAX), "nul\0inside"),
        ("{\"a\":1}", Some("message"), None, None, "{\"a\":1}"),
    ];
    for &(data, event, id, retry, decoded) in table {
        let mut wire = Vec::new();
        encode_sse(data, event, id, retry, &mut wire).unwrap();
        let want_type = match event {
            None | Some("") => "message",
            Some(t) => t,
        };
        let want = (want_type.to_owned(), decoded.to_owned(), id.map(str::to_owned), retry);
        let (events, d) = run(&[&wire]);
        assert_eq!(events, [want], "{:?}", String::from_utf8_lossy(&wire));
        assert_eq!(d.retry(), retry);
    }
    let mut wire = Vec::new();
    encode_sse(" a\nb", Some("t"), Some("1"), Some(5), &mut wire).unwrap();
    assert_eq!(wire, b"event: t\nid: 1\nretry: 5\ndata:  a\ndata: b\n\n");
}

#[test]
fn encode_refuses_line_breaks_and_nul() {
    let table: &[(Option<&str>, Option<&str>, &str)] = &[
        (Some("a\nb"), None, "SSE event must not contain LF"),
        (Some("a\rb"), None, "SSE event must not contain CR"),
        (Some("a\0b"), None, "SSE event must not contain NUL"),
        (None, Some("1\r\n"), "SSE id must not contain CR"),
        (None, Some("\n"), "SSE id must not contain LF"),
        (None, Some("1\0"), "SSE id must not contain NUL"),
    ];
    for &(event, id, message) in table {
        let mut wire = b"kept".to_vec();
        let e = encode_sse("x", event, id, None, &mut wire).unwrap_err();
        assert_eq!((e.message(), e.to_string().as_str(), wire.as_slice()), (message, message, &b"kept"[..]));
    }
}

#[test]
fn single_data_line_fast_path_is_exact() {
    // The deferred single-line value must behave exactly like the buffered one.
    let mut d = SseDecoder::new(64, 8);
    let mut got = Vec::new();
    d.feed(b"data: 1234567\n\nevent: t\ndata: 123456\n\n", |e| got.push(own(e))).unwrap();
    d.feed(b"data: a\n", |e| got.push(own(e))).unwrap();
    assert_eq!(d.buffered_bytes(), 2);
    d.feed(b"data: b\n\ndata: \xFF\n\n", |e| got.push(own(e))).unwrap();
    assert_eq!(
        got,
        [msg("1234567"), ("t".into(), "123456".into(), None, None), msg("a\nb"), msg("\u{FFFD}")]
    );
}

/// A naive reading of the spec, for differential testing: decode the whole
/// input, strip one BOM, split into lines, then run the field steps.
fn reference(input: &[u8]) -> (Vec<Ev>, Option<String>, Option<u64>) {
    let decoded = String::from_utf8_lossy(input);
    let text = decoded.strip_prefix('\u{FEFF}').unwrap_or(&decoded);
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => {
                lines.push(std::mem::take(&mut cur));
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            _ => cur.push(c),
        }
    }
    let (mut events, mut data, mut kind, mut id_buf, mut last_id) =
        (vec![], String::new(), String::new(), None, None);
    let (mut retry, mut block_retry) = (None, None);
    for line in lines {
        if line.is_empty() {
            last_id.clone_from(&id_buf);
            let r = block_retry.take();
            if !data.is_empty() {
                data.pop();
                let t = if kind.is_empty() { "message".to_owned() } else { kind.clone() };
                events.push((t, data.clone(), last_id.clone(), r));
            }
            data.clear();
            kind.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match name {
            "event" => kind = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => id_buf = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    retry = Some(ms);
                    block_retry = Some(ms);
                }
            }
            _ => {}
        }
    }
    (events, last_id, retry)
}

#[test]
fn matches_naive_reference_on_random_streams() {
    const TOKENS: &[&[u8]] = &[
        b"data",
        b"data:",
        b"data: ",
        b"event:",
        b"event: ",
        b"id:",
        b"id",
        b"retry:",
        b"retry: ",
        b"7",
        b"99999999999999999999",
        b"x",
        b" ",
        b":",
        b"\r",
        b"\n",
        b"\r\n",
        b"\n\n",
        b"\0",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"\xBB",
        b"\xBF",
        b"\xE2\x82",
        b"\xAC",
        b"\xF0\x9F\x98\x80",
        b"\xFF",
        "\u{e9}".as_bytes(),
    ];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..5_000 {
        let mut input = Vec::new();
        for _ in 0..next(40) {
            input.extend_from_slice(TOKENS[next(TOKENS.len())]);
        }
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < input.len() {
            let to = (at + next(6)).min(input.len());
            chunks.push(&input[at..to]);
            at = to;
        }
        let (events, d) = run(&chunks);
        let got = (events, d.last_event_id().map(str::to_owned), d.retry());
        assert_eq!(got, reference(&input), "{:?}", String::from_utf8_lossy(&input));
    }
}
