//! Python `str` objects from UTF-8 text: the conversion every delta pays.
//!
//! `PyString::new` is `PyUnicode_FromStringAndSize`, CPython's UTF-8 decoder.
//! For ASCII it is fast. For other text it guesses the narrowest storage,
//! widens it (a copy each time) when a wider character shows up, and shrinks
//! the allocation at the end; provider deltas are often CJK with an emoji
//! somewhere, which takes every one of those steps. [`new_str`] instead reads
//! the widest character off the UTF-8 lead bytes, allocates the exact string
//! once (`PyUnicode_New`) and writes the code points in. Measured on the
//! benches' Bedrock stream (`benches/bench_pipeline_bedrock.py`), this halves
//! the cost of building a delta's `str`.
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
        return Ok(PyString::new(py, text));
    }
    // Continuation bytes (0x80..=0xBF) sort below every lead byte of a
    // multi-byte sequence, so the largest byte is the largest lead byte, and it
    // fixes the widest character: 0xC2..=0xC3 start U+0080..=U+00FF (1 byte
    // per character in CPython's storage), 0xC4..=0xEF the rest of the BMP (2
    // bytes), 0xF0..=0xF4 the supplementary planes (4 bytes). CPython requires
    // the narrowest storage that fits (string comparison relies on it).
    let widest = bytes.iter().copied().max().unwrap_or(0);
    let chars = bytes.iter().filter(|&&b| (b as i8) >= -0x40).count();
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

/// Writes the first `units` code points of `text` at `data`, one unit each.
///
/// # Safety
/// `data` is valid for writes of `units` units of `T`, suitably aligned.
#[cfg(not(feature = "abi3"))]
unsafe fn fill<T: TryFrom<u32> + Default>(data: *mut T, units: usize, text: &str) {
    for (i, c) in text.chars().take(units).enumerate() {
        // A character too wide for `T` cannot occur (see `new_str`).
        data.add(i).write(T::try_from(u32::from(c)).unwrap_or_default());
    }
}
