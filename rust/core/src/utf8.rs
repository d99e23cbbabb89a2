//! Incremental UTF-8 decoding with WHATWG Encoding Standard error handling.
//!
//! The Encoding Standard's UTF-8 decoder replaces each *maximal subpart* of an
//! ill-formed sequence with one U+FFFD, which is exactly the substitution Rust's
//! `String::from_utf8_lossy` performs (and what `Utf8Error::error_len`
//! reports). This module reuses that machinery on each chunk and only adds
//! what chunking requires: a held-back, incomplete trailing sequence (at most
//! 3 bytes) that is completed, or found invalid, by the next call.

use crate::error::{ErrorKind, FramingError};

/// What to do with ill-formed UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Utf8Mode {
    /// Replace every maximal ill-formed subpart with one U+FFFD.
    Replace,
    /// Fail with an [`ErrorKind::Utf8`] error at the first ill-formed byte.
    Strict,
}

/// A streaming UTF-8 decoder. It does not strip a byte order mark.
#[derive(Debug, Clone)]
pub struct Utf8Decoder {
    mode: Utf8Mode,
    /// The incomplete trailing sequence held back from earlier calls.
    pending: [u8; 4],
    pending_len: usize,
    /// Stream offset of the first byte of the next `decode` call.
    consumed: u64,
    error: Option<FramingError>,
}

/// Length of the sequence a lead byte starts, or 0 for a byte that can never
/// start one (continuation bytes, C0, C1, F5..FF).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

/// The allowed range of the second byte, per the Encoding Standard's "UTF-8
/// lower boundary" and "UTF-8 upper boundary": it excludes overlong forms
/// (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).
fn second_byte_range(lead: u8) -> (u8, u8) {
    match lead {
        0xE0 => (0xA0, 0xBF),
        0xED => (0x80, 0x9F),
        0xF0 => (0x90, 0xBF),
        0xF4 => (0x80, 0x8F),
        _ => (0x80, 0xBF),
    }
}

/// `bytes` as `&str` when they are valid UTF-8.
///
/// The SIMD validator of the `simdutf8` crate (runtime CPU detection): on
/// non-ASCII text it is several times faster than `std::str::from_utf8`,
/// which matters because providers' deltas are often CJK or emoji. It gives no
/// error position; callers that need one ask `std::str::from_utf8` after a
/// failure, so only invalid input pays twice.
pub fn str_of(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// The longest prefix of `bytes` that is UTF-8 (all of it, when it all is).
pub fn valid_prefix(bytes: &[u8]) -> &str {
    if let Some(text) = str_of(bytes) {
        return text;
    }
    let valid = simdutf8::compat::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len);
    str_of(&bytes[..valid]).unwrap_or_default()
}

/// Appends `bytes` to `out`, replacing ill-formed subparts with U+FFFD.
///
/// The fast path validates once ([`str_of`]); only invalid input pays for the
/// lossy conversion.
pub(crate) fn push_lossy(out: &mut String, bytes: &[u8]) {
    match str_of(bytes).ok_or(()) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

impl Utf8Decoder {
    /// Creates a decoder in the given mode.
    pub fn new(mode: Utf8Mode) -> Self {
        Utf8Decoder { mode, pending: [0; 4], pending_len: 0, consumed: 0, error: None }
    }

    /// Appends the decoded text of `data` to `out`; holds back an incomplete
    /// trailing sequence (max 3 bytes).
    ///
    /// Strict: invalid input → `Err(FramingError{kind: Utf8, offset})` where
    /// `offset` is the stream offset of the first byte of the ill-formed
    /// subpart; text before it has already been appended. The decoder then
    /// stays failed: every later call returns the same error.
    pub fn decode(&mut self, data: &[u8], out: &mut String) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let base = self.consumed;
        self.consumed += data.len() as u64;
        let mut rest = data;
        if self.pending_len > 0 {
            rest = self.complete_pending(rest, base, out)?;
        }
        if let Some(s) = str_of(rest) {
            out.push_str(s);
            return Ok(());
        }
        let mut at = base + (data.len() - rest.len()) as u64;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    return Ok(());
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // The prefix is known valid; re-checking it is the price of
                    // `forbid(unsafe_code)` and is paid on invalid input only.
                    if let Ok(s) = std::str::from_utf8(&rest[..valid]) {
                        out.push_str(s);
                    }
                    match e.error_len() {
                        None => {
                            // A valid but incomplete sequence ends the chunk.
                            let tail = &rest[valid..];
                            self.pending[..tail.len()].copy_from_slice(tail);
                            self.pending_len = tail.len();
                            return Ok(());
                        }
                        Some(n) => {
                            self.invalid(at + valid as u64, out)?;
                            rest = &rest[valid + n..];
                            at += (valid + n) as u64;
                        }
                    }
                }
            }
        }
    }

    /// Feeds bytes to the held-back sequence until it is complete, proven
    /// invalid, or `data` runs out; returns the bytes not consumed.
    fn complete_pending<'d>(
        &mut self,
        mut data: &'d [u8],
        base: u64,
        out: &mut String,
    ) -> Result<&'d [u8], FramingError> {
        let start = base - self.pending_len as u64;
        let needed = sequence_len(self.pending[0]);
        while self.pending_len < needed {
            let Some(&b) = data.first() else {
                return Ok(data); // still incomplete: keep holding it
            };
            let (lo, hi) =
                if self.pending_len == 1 { second_byte_range(self.pending[0]) } else { (0x80, 0xBF) };
            if !(lo..=hi).contains(&b) {
                // The held bytes are a maximal subpart: one U+FFFD. The
                // offending byte is not consumed ("prepend it to the stream")
                // and is decoded afresh by the caller.
                self.pending_len = 0;
                self.invalid(start, out)?;
                return Ok(data);
            }
            self.pending[self.pending_len] = b;
            self.pending_len += 1;
            data = &data[1..];
        }
        push_lossy(out, &self.pending[..self.pending_len]);
        self.pending_len = 0;
        Ok(data)
    }

    /// Handles one ill-formed subpart starting at stream offset `offset`.
    fn invalid(&mut self, offset: u64, out: &mut String) -> Result<(), FramingError> {
        match self.mode {
            Utf8Mode::Replace => {
                out.push('\u{FFFD}');
                Ok(())
            }
            Utf8Mode::Strict => {
                let e = FramingError::new(ErrorKind::Utf8, offset, "invalid UTF-8 sequence");
                self.error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// End of input: an incomplete held-back sequence becomes one U+FFFD
    /// (Replace) or an error (Strict).
    pub fn finish(&mut self, out: &mut String) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.pending_len == 0 {
            return Ok(());
        }
        let start = self.consumed - self.pending_len as u64;
        self.pending_len = 0;
        match self.mode {
            Utf8Mode::Replace => {
                out.push('\u{FFFD}');
                Ok(())
            }
            Utf8Mode::Strict => {
                let e = FramingError::new(ErrorKind::Utf8, start, "truncated UTF-8 sequence at end of input");
                self.error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Number of bytes of an incomplete sequence currently held back (0..=3).
    pub fn pending_bytes(&self) -> usize {
        self.pending_len
    }

    /// The error a strict decoder failed with, if it has failed.
    pub fn error(&self) -> Option<&FramingError> {
        self.error.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte strings whose lossy decoding is easy to get wrong when split.
    const TRICKY: &[&[u8]] = &[
        b"",
        b"plain ascii",
        "é€😀𝄞".as_bytes(),
        b"\xF0\x9F\x98\x80",
        b"\xF0\x9F\x98",
        b"\xF0\x9F\x98A",
        b"\xE2\x82\n",
        b"\xE2\x82\xE2\x82\xAC",
        b"\xC0\x8A",
        b"\xC1\xBF\xC2",
        b"\xED\xA0\x80\xED\x9F\xBF",
        b"\xE0\x80\xAF\xE0\xA0\x80",
        b"\xF4\x90\x80\x80\xF4\x8F\xBF\xBF",
        b"\xF5\x80\xFF\xFE",
        b"\x80\x80\xBF",
        b"a\xEF\xBB\xBFb\xEF\xBB",
        b"\xF0\x90\x80\xF0\x90\x80\x80",
        b"x\xF1\x80\x80\xE1\x80\xC2",
    ];

    fn check(parts: &[&[u8]], whole: &[u8]) {
        let mut d = Utf8Decoder::new(Utf8Mode::Replace);
        let mut out = String::new();
        for p in parts {
            d.decode(p, &mut out).unwrap();
            assert!(d.pending_bytes() <= 3);
        }
        d.finish(&mut out).unwrap();
        assert_eq!(out, String::from_utf8_lossy(whole), "parts {parts:02X?}");
    }

    #[test]
    fn lossy_equivalence_under_every_split() {
        for &s in TRICKY {
            check(&[s], s);
            for i in 0..=s.len() {
                check(&[&s[..i], &[], &s[i..]], s);
                for j in i..=s.len() {
                    check(&[&s[..i], &s[i..j], &s[j..]], s);
                }
            }
            let bytes: Vec<&[u8]> = s.chunks(1).collect();
            check(&bytes, s);
        }
    }

    #[test]
    fn lossy_equivalence_on_random_bytes_and_splits() {
        // Bytes at the edges of every lead/continuation range.
        const ALPHABET: &[u8] = &[
            0x00, 0x0A, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
            0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..20_000 {
            let len = next(12);
            let bytes: Vec<u8> = (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect();
            let mut parts = Vec::new();
            let mut at = 0;
            while at < len {
                let to = (at + next(4)).min(len);
                parts.push(&bytes[at..to]);
                at = to;
            }
            check(&parts, &bytes);
        }
    }

    #[test]
    fn holds_back_incomplete_sequence() {
        let mut d = Utf8Decoder::new(Utf8Mode::Replace);
        let mut out = String::new();
        for (chunk, pending, so_far) in [
            (&b"\xF0"[..], 1, ""),
            (b"\x9F", 2, ""),
            (b"\x98", 3, ""),
            (b"\x80!", 0, "😀!"),
            (b"\xE2\x82", 2, "😀!"),
            (b"x", 0, "😀!\u{FFFD}x"),
        ] {
            d.decode(chunk, &mut out).unwrap();
            assert_eq!((d.pending_bytes(), out.as_str()), (pending, so_far));
        }
    }

    #[test]
    fn strict_reports_offset_and_stays_failed() {
        let cases: &[(&[&[u8]], u64)] = &[
            (&[b"ab\xFFcd"], 2),
            (&[b"ab", b"c\xC0\x8A"], 3),
            (&[b"ab\xE2\x82", b"x"], 2),
            (&[b"ab\xE2", b"\x82", b"\x41"], 2),
            (&[b"\xED\xA0\x80"], 0),
        ];
        for &(parts, offset) in cases {
            let mut d = Utf8Decoder::new(Utf8Mode::Strict);
            let mut out = String::new();
            let mut err = None;
            for p in parts {
                if let Err(e) = d.decode(p, &mut out) {
                    err = Some(e);
                    break;
                }
            }
            let e = err.expect("strict decoder must fail");
            assert_eq!((e.kind, e.offset), (ErrorKind::Utf8, offset), "{parts:02X?}");
            assert_eq!(d.decode(b"ok", &mut out), Err(e.clone()));
            assert_eq!(d.finish(&mut out), Err(e));
        }
    }

    #[test]
    fn strict_truncated_at_finish() {
        let mut d = Utf8Decoder::new(Utf8Mode::Strict);
        let mut out = String::new();
        d.decode(b"abc\xF0\x9F", &mut out).unwrap();
        assert_eq!(out, "abc");
        let e = d.finish(&mut out).unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::Utf8, 3));
    }

    #[test]
    fn bom_is_not_stripped() {
        let mut d = Utf8Decoder::new(Utf8Mode::Strict);
        let mut out = String::new();
        d.decode(b"\xEF\xBB", &mut out).unwrap();
        d.decode(b"\xBFx", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        assert_eq!(out, "\u{FEFF}x");
    }
}
