//! Splitting a streamed JSON array of objects into its elements.
//!
//! Gemini's `streamGenerateContent` without `alt=sse` (Gemini API reference,
//! `models.streamGenerateContent`, checked 2026-11-29) writes its chunks as
//! the elements of one JSON array as they are generated (`[{...}\r\n,\r\n{...}]`).
//! [`ArraySplitter`] is fed the body in any chunking and hands out each
//! element's bytes as soon as its closing brace arrives, holding only the
//! element in progress and never scanning a byte twice. It does not parse
//! the elements: it tracks strings, escapes and brace depth to find where
//! each one ends (RFC 8259's grammar; brackets do not change the depth, and
//! a string may hold anything), and the caller decodes them. A caller that
//! can recognize an element whole where it starts (a shape matcher's cached
//! skeleton: [`Elements::head`]) spares it the scan: the splitter then goes
//! on after it.
//!
//! Between elements the splitter is a small machine, its transitions data
//! ([`next_state`]): whitespace, `[`, `{`, `,` and `]` move it; any other
//! byte, a missing or trailing comma, an element that is not an object, or
//! data after the closing bracket is an error ([`ErrorKind::InvalidJson`]).
//! A body that is one bare object (an HTTP error's `{"error": ...}`) is a
//! one-element array. An element larger than the cap is
//! [`ErrorKind::EventTooLarge`]. After an error the splitter takes nothing
//! more (it counts the bytes).

use crate::error::{ErrorKind, FramingError};

/// Where the splitter is between elements (or inside one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayState {
    /// Before the body's first byte (whitespace aside).
    Start,
    /// After `[`: an element or `]`.
    First,
    /// After an element: `,` or `]`.
    After,
    /// After `,`: an element.
    Next,
    /// Inside an element.
    Element,
    /// After `]`, or after a bare object: whitespace only.
    End,
}

impl ArrayState {
    /// A stable short name, e.g. `"first"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArrayState::Start => "start",
            ArrayState::First => "first",
            ArrayState::After => "after",
            ArrayState::Next => "next",
            ArrayState::Element => "element",
            ArrayState::End => "end",
        }
    }

    fn expected(self) -> &'static str {
        match self {
            ArrayState::Start => "'[' or '{'",
            ArrayState::First => "'{' or ']'",
            ArrayState::After => "',' or ']'",
            ArrayState::Next | ArrayState::Element => "'{'",
            ArrayState::End => "nothing after the end of the JSON text",
        }
    }
}

/// The between-elements transitions: `(state, byte) -> next state`, None
/// for a byte with no transition (an error). `{` enters [`ArrayState::Element`].
pub fn next_state(state: ArrayState, byte: u8) -> Option<ArrayState> {
    use ArrayState::*;
    match (state, byte) {
        (_, b' ' | b'\t' | b'\n' | b'\r') if state != Element => Some(state),
        (Start, b'[') => Some(First),
        (Start | First | Next, b'{') => Some(Element),
        (First | After, b']') => Some(End),
        (After, b',') => Some(Next),
        _ => None,
    }
}

/// Eight copies of a byte's lowest bit, and of its highest.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The candidate structural bytes of a slice, eight bytes at a time: for each
/// word, its offset and a mask with the high bit of each byte that may be a
/// `"`, `\\`, `{` or `}`.
///
/// An element's structural bytes are a few bytes apart (keys, short values),
/// where a `memchr` call per byte found costs more than the search. Each
/// byte's flag comes from the has-zero-byte trick on the word XOR the target,
/// which flags every target byte and may wrongly flag a byte just *above* a
/// flagged one (a borrow propagates upwards), never one below; so the caller
/// checks each flagged byte, in order.
struct Specials<'d> {
    words: std::slice::ChunksExact<'d, u8>,
    offset: usize,
    tail: Option<(usize, &'d [u8])>,
}

impl<'d> Specials<'d> {
    fn new(data: &'d [u8]) -> Self {
        let words = data.chunks_exact(8);
        let tail = Some((data.len() - words.remainder().len(), words.remainder()));
        Specials { words, offset: 0, tail }
    }
}

impl Iterator for Specials<'_> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        if let Some(word) = self.words.next() {
            let v = u64::from_le_bytes(word.try_into().ok()?);
            let flag = |target: u8| {
                let x = v ^ (ONES * u64::from(target));
                x.wrapping_sub(ONES) & !x
            };
            let offset = self.offset;
            self.offset += 8;
            return Some((offset, (flag(b'"') | flag(b'\\') | flag(b'{') | flag(b'}')) & HIGHS));
        }
        let (offset, tail) = self.tail.take()?;
        let flags = tail.iter().enumerate().fold(0u64, |flags, (i, &c)| {
            let special = matches!(c, b'"' | b'\\' | b'{' | b'}');
            flags | (u64::from(special) << (8 * i + 7))
        });
        Some((offset, flags))
    }
}

/// Where [`ArraySplitter::feed_to`] hands the elements.
pub trait Elements {
    /// Offered each element that starts in the data fed, with the rest of
    /// that data from the element's `{`, and the most bytes an element may
    /// have: the element's length when this knows it and took the element
    /// whole (as one that a matched shape's skeleton replays:
    /// `ShapeSet::match_head_cached`); the splitter then goes on after it
    /// without scanning or buffering it. None (the default) leaves the
    /// element to the splitter, which gives it to [`Elements::element`] (or
    /// fails). A length returned must be that of one whole JSON object in
    /// `rest`, at most `cap`: its end is then where the splitter would have
    /// ended it. (Anything else is the caller's bug: the splitter then counts
    /// the rest of the data as that element rather than read it twice.)
    fn head(&mut self, _rest: &[u8], _cap: usize) -> Option<usize> {
        None
    }

    /// An element the splitter found, whole.
    fn element(&mut self, element: &[u8]);
}

/// Incremental splitter of a JSON array of objects (see the module docs).
#[derive(Debug, Clone)]
pub struct ArraySplitter {
    max_element_bytes: usize,
    state: ArrayState,
    /// The element in progress, from its `{`.
    buf: Vec<u8>,
    depth: usize,
    in_string: bool,
    /// Inside a string, right after a backslash: the next byte is escaped.
    escaped: bool,
    /// The body was one bare object: it is the only element.
    single: bool,
    /// Bytes before `buf[0]`, for error offsets.
    consumed: u64,
    bytes_fed: u64,
    elements: u64,
    peak: usize,
    error: Option<FramingError>,
}

impl ArraySplitter {
    /// A splitter whose elements may be at most `max_element_bytes` long.
    pub fn new(max_element_bytes: usize) -> Self {
        ArraySplitter {
            max_element_bytes,
            state: ArrayState::Start,
            buf: Vec::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            single: false,
            consumed: 0,
            bytes_fed: 0,
            elements: 0,
            peak: 0,
            error: None,
        }
    }

    /// Feeds more of the body; `element` gets each completed element's bytes,
    /// in order. An error stops the splitting: the elements before it were
    /// handed out, and the error is returned (and kept: [`ArraySplitter::error`]).
    pub fn feed(&mut self, data: &[u8], element: impl FnMut(&[u8])) -> Result<(), FramingError> {
        struct Whole<F>(F);
        impl<F: FnMut(&[u8])> Elements for Whole<F> {
            fn element(&mut self, element: &[u8]) {
                (self.0)(element)
            }
        }
        self.feed_to(data, &mut Whole(element))
    }

    /// [`ArraySplitter::feed`], offering each element that starts in `data`
    /// to [`Elements::head`] first (see there).
    pub fn feed_to(&mut self, data: &[u8], to: &mut impl Elements) -> Result<(), FramingError> {
        self.bytes_fed += data.len() as u64;
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        let mut rest = data;
        while !rest.is_empty() {
            if self.state == ArrayState::Element {
                rest = self.element(rest, to)?;
                continue;
            }
            let at = self.consumed;
            let byte = rest[0];
            let Some(next) = next_state(self.state, byte) else {
                let got = if (0x21..0x7F).contains(&byte) {
                    format!("'{}'", char::from(byte))
                } else {
                    format!("'byte 0x{byte:02x}'")
                };
                return Err(self.fail(
                    ErrorKind::InvalidJson,
                    format!("expected {}, got {got} (byte {at})", self.state.expected()),
                    at,
                ));
            };
            if next == ArrayState::Element {
                self.single = self.state == ArrayState::Start;
                let whole = |&n: &usize| n > 1 && n <= rest.len() && rest[n - 1] == b'}';
                if let Some(length) = to.head(rest, self.max_element_bytes) {
                    debug_assert!(whole(&length), "Elements::head claimed {length} bytes");
                    let length = if whole(&length) { length } else { rest.len() };
                    self.elements += 1;
                    self.consumed += length as u64;
                    self.state = if self.single { ArrayState::End } else { ArrayState::After };
                    rest = &rest[length..];
                    continue;
                }
                self.depth = 0;
                self.in_string = false;
                self.escaped = false;
                self.buf.clear();
            } else {
                rest = &rest[1..];
                self.consumed += 1;
            }
            self.state = next;
        }
        Ok(())
    }

    /// Scans `data` as the element in progress continues; returns what
    /// follows the element's end (empty if it has not ended).
    fn element<'d>(&mut self, data: &'d [u8], to: &mut impl Elements) -> Result<&'d [u8], FramingError> {
        let room = self.max_element_bytes.saturating_sub(self.buf.len());
        // An escape pending from the last feed covers this feed's first byte.
        let mut skip = if std::mem::take(&mut self.escaped) { Some(0) } else { None };
        let mut end = None;
        'scan: for (offset, mut flags) in Specials::new(data) {
            while flags != 0 {
                let k = offset + (flags.trailing_zeros() / 8) as usize;
                flags &= flags - 1;
                let Some(&byte) = data.get(k) else { break 'scan };
                if skip == Some(k) {
                    continue; // the byte a backslash escapes
                }
                match byte {
                    b'"' => self.in_string = !self.in_string,
                    // A backslash escapes the next byte (inside a string only).
                    b'\\' if self.in_string => skip = Some(k + 1),
                    b'{' if !self.in_string => self.depth += 1,
                    b'}' if !self.in_string => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            end = Some(k + 1);
                            break 'scan;
                        }
                    }
                    // A false flag (see `Specials`), or a byte that does not
                    // count where it is.
                    _ => {}
                }
            }
        }
        if end.is_none() && skip == Some(data.len()) {
            self.escaped = true;
        }
        let taken = end.unwrap_or(data.len());
        if taken > room {
            let at = self.consumed;
            let message = format!("an element passed max_element_bytes ({})", self.max_element_bytes);
            return Err(self.fail(ErrorKind::EventTooLarge, format!("{message} (byte {at})"), at));
        }
        self.buf.extend_from_slice(&data[..taken]);
        self.peak = self.peak.max(self.buf.len());
        let Some(end) = end else { return Ok(&data[data.len()..]) };
        to.element(&self.buf);
        self.elements += 1;
        self.consumed += self.buf.len() as u64;
        self.buf.clear();
        self.state = if self.single { ArrayState::End } else { ArrayState::After };
        Ok(&data[end..])
    }

    fn fail(&mut self, kind: ErrorKind, message: String, offset: u64) -> FramingError {
        let err = FramingError::new(kind, offset, message);
        self.error = Some(err.clone());
        self.buf = Vec::new();
        err
    }

    /// The input ended: `(bytes of an element in progress, whether the array
    /// was left open)`.
    pub fn finish(&self) -> (usize, bool) {
        let pending = if self.state == ArrayState::Element { self.buf.len() } else { 0 };
        let unclosed = matches!(self.state, ArrayState::First | ArrayState::After | ArrayState::Next)
            || (self.state == ArrayState::Element && !self.single);
        (pending, unclosed)
    }

    /// Where the splitter is.
    pub fn state(&self) -> ArrayState {
        self.state
    }

    /// The error that stopped it, if any.
    pub fn error(&self) -> Option<&FramingError> {
        self.error.as_ref()
    }

    /// Bytes held: the element in progress.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    /// The most bytes ever held.
    pub fn peak_buffered_bytes(&self) -> usize {
        self.peak
    }

    /// Bytes fed, errors included.
    pub fn bytes_fed(&self) -> u64 {
        self.bytes_fed
    }

    /// Elements handed out.
    pub fn elements(&self) -> u64 {
        self.elements
    }
}
