//! Python `str` objects from UTF-8 text, the conversion every delta pays;
//! and the UTF-8 length of a `str`, which every result's metrics need.
//!
//! `PyString::new` is `PyUnicode_FromStringAndSize`, CPython's UTF-8 decoder.
//! For ASCII it is fast. For other text it guesses the narrowest storage,
//! widens it (a copy each time) when a wider character shows up, and shrinks
//! the allocation at the end; provider deltas are often CJK with an emoji
//! somewhere, which takes every one of those steps. [`new_str`] instead reads
//! the widest character off the UTF-8 lead bytes, allocates the exact string
//! once (`PyUnicode_New`) and writes the code points in. Measured with
//! `benches/bench_strs.py` under both builds: matching a 30-character CJK,
//! emoji or Latin-1 delta takes 15–30% longer with `PyString::new`, a
//! 230-byte chat chunk about 15% longer; ASCII text (which takes
//! `PyString::new` in both builds) is up to 10% faster in the abi3 build.
//!
//! `PyUnicode_New` and the string's data pointer are not in the limited API,
//! so a build with the `abi3` feature (one wheel for every CPython >= 3.10)
//! uses `PyString::new` throughout; the default build targets one CPython
//! version and takes the fast path.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// A Python `str` holding `text`.
#[cfg(feature = "abi3")]
pub(crate) fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    Ok(PyString::new(py, text))
}

/// A Python `str` holding `text`.
#[cfg(not(feature = "abi3"))]
pub(crate) fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    let bytes = text.as_bytes();
    if bytes.is_ascii() {
        if bytes.len() <= SHORT_TEXT {
            return Ok(PyString::new(py, text));
        }
        // CPython's decoder checks every byte again before it copies; a long
        // ASCII text (a base64 audio delta) is copied at once instead
        // (callgrind: 0.9 instructions a byte there, 0.1 here).
        let size = pyo3::ffi::Py_ssize_t::try_from(bytes.len())
            .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("text too long for a str"))?;
        // SAFETY: as below, with `max_char` 127: a compact ASCII string of
        // `bytes.len()` one-byte units, all written by the copy (each byte is
        // ASCII, checked above).
        unsafe {
            let obj = pyo3::ffi::PyUnicode_New(size, 127);
            let string = Bound::from_owned_ptr_or_err(py, obj)?.downcast_into_unchecked::<PyString>();
            let data = pyo3::ffi::PyUnicode_DATA(obj).cast::<u8>();
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
            return Ok(string);
        }
    }
    // Continuation bytes (0x80..=0xBF) sort below every lead byte of a
    // multi-byte sequence, so the largest byte is the largest lead byte, and it
    // fixes the widest character: 0xC2..=0xC3 start U+0080..=U+00FF (1 byte
    // per character in CPython's storage), 0xC4..=0xEF the rest of the BMP (2
    // bytes), 0xF0..=0xF4 the supplementary planes (4 bytes). CPython requires
    // the narrowest storage that fits (string comparison relies on it).
    let (widest, chars) = widest_and_chars(bytes);
    let (max_char, width) = match widest {
        0xF0.. => (0x10_FFFF, 4),
        0xC4.. => (0xFFFF, 2),
        _ => (0xFF, 1),
    };
    let size = pyo3::ffi::Py_ssize_t::try_from(chars)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("text too long for a str"))?;
    // SAFETY: PyUnicode_New returns a new reference (or NULL with an
    // exception set), which `from_owned_ptr_or_err` takes over. Its data area
    // holds exactly `chars` code units of `width` bytes, suitably aligned, and
    // nothing else refers to the new object until it is returned. `text` has
    // exactly `chars` characters (valid UTF-8: one non-continuation byte
    // each), so `fill` writes every unit, each with a code point that fits the
    // width (`widest` bounds every character of `text`).
    unsafe {
        let obj = pyo3::ffi::PyUnicode_New(size, max_char);
        let string = Bound::from_owned_ptr_or_err(py, obj)?.downcast_into_unchecked::<PyString>();
        let data = pyo3::ffi::PyUnicode_DATA(obj);
        match width {
            1 => fill(data.cast::<u8>(), chars, text),
            2 => fill(data.cast::<u16>(), chars, text),
            _ => fill(data.cast::<u32>(), chars, text),
        }
        Ok(string)
    }
}

/// The largest byte of `bytes` and its number of characters (bytes that are
/// not UTF-8 continuation bytes, 0x80..=0xBF), in one pass of sixteen-byte
/// blocks: on x86_64 an SSE2 unsigned max and a compare whose mask is
/// counted, elsewhere a byte loop the compiler vectorizes.
#[cfg(not(feature = "abi3"))]
fn widest_and_chars(bytes: &[u8]) -> (u8, usize) {
    let mut blocks = bytes.chunks_exact(16);
    #[cfg(target_arch = "x86_64")]
    let (mut widest, mut continuations) = {
        use std::arch::x86_64::*;
        let mut continuations = 0u64;
        let mut lanes = [0u8; 16];
        let mut sums = [0u64; 2];
        // SAFETY: SSE2 is part of x86_64; each load reads one 16-byte block,
        // the stores write the 16 bytes of `lanes` and of `sums`.
        unsafe {
            let (zero, mut most) = (_mm_setzero_si128(), _mm_setzero_si128());
            // A continuation byte is below -0x40 as a signed byte.
            let bound = _mm_set1_epi8(-0x40);
            // Each lane counts its continuation bytes (a compare is -1 where
            // true), summed into the two halves' totals before a lane can
            // wrap: x86_64's baseline has no popcount instruction, and a
            // count per block cost more than the rest of the loop.
            let mut counts = zero;
            let mut rounds = 0;
            for block in &mut blocks {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                most = _mm_max_epu8(most, v);
                counts = _mm_sub_epi8(counts, _mm_cmplt_epi8(v, bound));
                rounds += 1;
                if rounds == 255 {
                    _mm_storeu_si128(sums.as_mut_ptr().cast(), _mm_sad_epu8(counts, zero));
                    continuations += sums[0] + sums[1];
                    (counts, rounds) = (zero, 0);
                }
            }
            _mm_storeu_si128(sums.as_mut_ptr().cast(), _mm_sad_epu8(counts, zero));
            continuations += sums[0] + sums[1];
            _mm_storeu_si128(lanes.as_mut_ptr().cast(), most);
        }
        (lanes.iter().copied().max().unwrap_or(0), usize::try_from(continuations).unwrap_or(0))
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (mut widest, mut continuations) = {
        let (mut widest, mut continuations) = (0u8, 0usize);
        for block in &mut blocks {
            let (mut most, mut count) = (0u8, 0u8);
            for &b in block {
                most = most.max(b);
                count += u8::from((b as i8) < -0x40);
            }
            widest = widest.max(most);
            continuations += usize::from(count);
        }
        (widest, continuations)
    };
    for &b in blocks.remainder() {
        widest = widest.max(b);
        continuations += usize::from((b as i8) < -0x40);
    }
    (widest, bytes.len() - continuations)
}

/// Writes the first `units` code points of `text` at `data`, one unit each.
///
/// A delta (short) goes character by character. A longer text, which in
/// provider JSON is mostly ASCII around the odd wide character, has its ASCII
/// widened sixteen bytes at a time (`widen16`), and a run of wide characters
/// goes on without a block test per character. Measured (callgrind, the
/// benches' chat stream with every event's data read): `new_str` took
/// ~1,050 instructions an event; ~900 with `widen16` and `widest_and_chars`
/// on SSE2 blocks; ~810 with the continuation bytes summed per lane and the
/// runs of wide characters.
///
/// # Safety
/// `data` is valid for writes of `units` units of `T`, suitably aligned.
#[cfg(not(feature = "abi3"))]
unsafe fn fill<T: From<u8> + TryFrom<u32> + Default>(data: *mut T, units: usize, text: &str) {
    if text.len() <= SHORT_TEXT {
        for (o, c) in text.chars().take(units).enumerate() {
            // A character too wide for `T` cannot occur (see `new_str`).
            data.add(o).write(T::try_from(u32::from(c)).unwrap_or_default());
        }
        return;
    }
    let bytes = text.as_bytes();
    let (mut i, mut o) = (0, 0);
    while o < units {
        // The ASCII bytes that start the next sixteen are as many
        // characters: widened at once (the rest of the sixteen units written
        // are written again below, in order).
        if i + 16 <= bytes.len() && o + 16 <= units {
            let ascii = widen16(bytes.as_ptr().add(i), data.add(o));
            i += ascii;
            o += ascii;
            if ascii == 16 {
                continue;
            }
        }
        // Then one character, and those that follow it up to the next ASCII
        // byte (a run of CJK goes on without a block test per character).
        loop {
            let Some((code, len)) = code_point(bytes, i) else { return };
            data.add(o).write(T::try_from(code).unwrap_or_default());
            i += len;
            o += 1;
            if o >= units || bytes.get(i).map_or(true, u8::is_ascii) {
                break;
            }
        }
    }
}

/// The code point of the UTF-8 sequence at `bytes[i]` and its length; None
/// past the end. (`bytes` is valid UTF-8, so the sequence is whole.)
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn code_point(bytes: &[u8], i: usize) -> Option<(u32, usize)> {
    let byte = |i: usize| u32::from(bytes.get(i).copied().unwrap_or(0) & 0x3F);
    let lead = *bytes.get(i)?;
    let lead32 = u32::from(lead);
    Some(match lead {
        0x00..=0x7F => (lead32, 1),
        0xC0..=0xDF => (((lead32 & 0x1F) << 6) | byte(i + 1), 2),
        0xE0..=0xEF => (((lead32 & 0x0F) << 12) | (byte(i + 1) << 6) | byte(i + 2), 3),
        _ => (((lead32 & 0x07) << 18) | (byte(i + 1) << 12) | (byte(i + 2) << 6) | byte(i + 3), 4),
    })
}

/// Writes the sixteen bytes at `src`, zero-extended, as sixteen units of `T`
/// at `dst`, and returns how many of them are ASCII before the first that is
/// not (16: all); the units from that one on are not characters. One SSE2
/// load, a sign-bit mask and unpacks on x86_64 (where SSE2 is always there),
/// the same a byte at a time elsewhere.
///
/// # Safety
/// `src` is valid for reads of 16 bytes; `dst` for writes of 16 units of
/// `T`, suitably aligned; `T` is 1, 2 or 4 bytes wide.
#[cfg(not(feature = "abi3"))]
#[inline(always)]
unsafe fn widen16<T: From<u8>>(src: *const u8, dst: *mut T) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let v = _mm_loadu_si128(src.cast());
        let zero = _mm_setzero_si128();
        let out = dst.cast::<__m128i>();
        match std::mem::size_of::<T>() {
            1 => _mm_storeu_si128(out, v),
            2 => {
                _mm_storeu_si128(out, _mm_unpacklo_epi8(v, zero));
                _mm_storeu_si128(out.add(1), _mm_unpackhi_epi8(v, zero));
            }
            _ => {
                let (lo, hi) = (_mm_unpacklo_epi8(v, zero), _mm_unpackhi_epi8(v, zero));
                _mm_storeu_si128(out, _mm_unpacklo_epi16(lo, zero));
                _mm_storeu_si128(out.add(1), _mm_unpackhi_epi16(lo, zero));
                _mm_storeu_si128(out.add(2), _mm_unpacklo_epi16(hi, zero));
                _mm_storeu_si128(out.add(3), _mm_unpackhi_epi16(hi, zero));
            }
        }
        // Bit k is byte k's high bit; bit 16 stops the count at 16.
        ((_mm_movemask_epi8(v) as u32) | 0x1_0000).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let block = std::slice::from_raw_parts(src, 16);
        for (k, &b) in block.iter().enumerate() {
            dst.add(k).write(T::from(b));
        }
        block.iter().take_while(|b| b.is_ascii()).count()
    }
}

/// Texts up to this many bytes are filled character by character.
#[cfg(not(feature = "abi3"))]
const SHORT_TEXT: usize = 64;

/// The length of `text` in UTF-8 bytes, a lone surrogate counting 3 (as
/// `len(text.encode("utf-8", "surrogatepass"))`, without building the bytes).
///
/// Every character below U+0080 takes one byte, below U+0800 two, below
/// U+10000 three, the rest four: so the length is the character count plus
/// one per character at or above each of those thresholds. The default build
/// counts over the str's own storage; the `abi3` build encodes.
#[pyfunction]
pub(crate) fn utf8_length(text: &Bound<'_, PyString>) -> PyResult<usize> {
    utf8_length_of(text)
}

#[cfg(feature = "abi3")]
fn utf8_length_of(text: &Bound<'_, PyString>) -> PyResult<usize> {
    let bytes = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    bytes.len()
}

#[cfg(not(feature = "abi3"))]
fn utf8_length_of(text: &Bound<'_, PyString>) -> PyResult<usize> {
    use pyo3::ffi;
    let obj = text.as_ptr();
    // SAFETY: `obj` is a live str (the GIL held, `text` borrowed for the
    // call). Once ready, its storage is GET_LENGTH code units of KIND bytes
    // at DATA, immutable while we read it.
    unsafe {
        if ffi::PyUnicode_READY(obj) < 0 {
            return Err(PyErr::fetch(text.py()));
        }
        let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
        if ffi::PyUnicode_IS_ASCII(obj) != 0 {
            return Ok(len);
        }
        let data = ffi::PyUnicode_DATA(obj);
        Ok(len
            + match ffi::PyUnicode_KIND(obj) {
                ffi::PyUnicode_1BYTE_KIND => {
                    let units = std::slice::from_raw_parts(data.cast::<u8>(), len);
                    units.iter().filter(|&&c| c >= 0x80).count()
                }
                ffi::PyUnicode_2BYTE_KIND => {
                    let units = std::slice::from_raw_parts(data.cast::<u16>(), len);
                    extra_bytes(units, |c| u32::from(c >= 0x80) + u32::from(c >= 0x800))
                }
                _ => {
                    let units = std::slice::from_raw_parts(data.cast::<u32>(), len);
                    extra_bytes(units, |c| {
                        u32::from(c >= 0x80) + u32::from(c >= 0x800) + u32::from(c >= 0x1_0000)
                    })
                }
            })
    }
}

/// The sum of `extra(unit)` (at most 3 each) over `units`, in `u32` lanes:
/// summed as `usize` the loop is vectorized two lanes wide on x86_64's
/// baseline (SSE2), as `u32` four, and a joined text of a million CJK and
/// emoji characters is counted on every result of a long answer.
#[cfg(not(feature = "abi3"))]
fn extra_bytes<T: Copy>(units: &[T], extra: impl Fn(T) -> u32) -> usize {
    // 2^20 units of at most 3 each fit a u32.
    units.chunks(1 << 20).map(|block| block.iter().map(|&c| extra(c)).sum::<u32>() as usize).sum()
}
