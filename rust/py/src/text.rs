//! Python `str` objects from UTF-8 text, the conversion every delta pays;
//! and the UTF-8 length of a `str`, which every result's metrics need.
//!
//! `PyString::new` is `PyUnicode_FromStringAndSize`, CPython's UTF-8 decoder.
//! For ASCII it is fast. For other text it guesses the narrowest storage,
//! widens it (a copy each time) when a wider character shows up, and shrinks
//! the allocation at the end; provider deltas are often CJK with an emoji
//! somewhere, which takes every one of those steps. [`new_str`] instead reads
//! the widest character off the UTF-8 lead bytes, allocates the exact string
//! once (`PyUnicode_New`) and writes the code points in (`units.rs`, with
//! its measurements). Measured with `benches/bench_strs.py` under both
//! builds (before `units.rs` took blocks for short texts and AVX2):
//! matching a 30-character CJK, emoji or Latin-1 delta takes 15–30% longer
//! with `PyString::new`, a 230-byte chat chunk about 15% longer.
//!
//! `PyUnicode_New` and the string's data pointer are not in the limited API,
//! so a build with the `abi3` feature (one wheel for every CPython >= 3.10)
//! uses `PyString::new` throughout; the default build targets one CPython
//! version and takes the fast path.

use pyo3::prelude::*;
use pyo3::types::PyString;

#[cfg(not(feature = "abi3"))]
use crate::units::{fill, widest_and_chars};

/// A Python `str` holding `text`.
#[cfg(feature = "abi3")]
pub(crate) fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    Ok(PyString::new(py, text))
}

/// A Python `str` holding `text`.
#[cfg(not(feature = "abi3"))]
pub(crate) fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    let bytes = text.as_bytes();
    if bytes.len() <= 1 {
        // CPython keeps the empty string and each one-character Latin-1
        // string once: its own constructor returns those.
        return Ok(PyString::new(py, text));
    }
    // The largest byte is the largest lead byte: ASCII below 0x80 (1 byte
    // per character in CPython's storage, a compact ASCII string),
    // 0xC2..=0xC3 start U+0080..=U+00FF (1 byte), 0xC4..=0xEF the rest of
    // the BMP (2 bytes), 0xF0..=0xF4 the supplementary planes (4 bytes).
    // CPython requires the narrowest storage that fits.
    let (widest, chars) = widest_and_chars(bytes);
    let max_char = match widest {
        0xF0.. => 0x10_FFFF,
        0xC4.. => 0xFFFF,
        0x80.. => 0xFF,
        _ => 0x7F,
    };
    let size = pyo3::ffi::Py_ssize_t::try_from(chars)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("text too long for a str"))?;
    // SAFETY: PyUnicode_New returns a new reference (or NULL with an
    // exception set), which `from_owned_ptr_or_err` takes over. Its data area
    // holds exactly `chars` code units of the width `max_char` needs,
    // suitably aligned, and nothing else refers to the new object until it is
    // returned. `text` has exactly `chars` characters (valid UTF-8: one
    // non-continuation byte each), so the copy (ASCII: one byte a character)
    // or `fill` writes every unit, each with a code point that fits the
    // width (`widest` bounds every character of `text`).
    unsafe {
        let obj = pyo3::ffi::PyUnicode_New(size, max_char);
        let string = Bound::from_owned_ptr_or_err(py, obj)?.downcast_into_unchecked::<PyString>();
        let data = pyo3::ffi::PyUnicode_DATA(obj);
        match max_char {
            // CPython's decoder checks every byte again before it copies;
            // ASCII (a base64 audio delta) is copied at once instead
            // (callgrind: 0.9 instructions a byte there, 0.1 here).
            0x7F => std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()),
            0xFF => fill(data.cast::<u8>(), chars, text),
            0xFFFF => fill(data.cast::<u16>(), chars, text),
            _ => fill(data.cast::<u32>(), chars, text),
        }
        Ok(string)
    }
}

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
