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
    if bytes.len() <= 1 {
        // CPython keeps the empty string and each one-character Latin-1
        // string once: its own constructor returns those.
        return Ok(PyString::new(py, text));
    }
    // Continuation bytes (0x80..=0xBF) sort below every lead byte of a
    // multi-byte sequence, so the largest byte is the largest lead byte, and it
    // fixes the widest character: ASCII below 0x80 (1 byte per character in
    // CPython's storage, a compact ASCII string), 0xC2..=0xC3 start
    // U+0080..=U+00FF (1 byte), 0xC4..=0xEF the rest of the BMP (2 bytes),
    // 0xF0..=0xF4 the supplementary planes (4 bytes). CPython requires the
    // narrowest storage that fits (string comparison relies on it).
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

/// The largest byte of `bytes` and its number of characters (bytes that are
/// not UTF-8 continuation bytes, 0x80..=0xBF).
///
/// On x86_64, sixteen-byte SSE2 blocks: an unsigned max, and a compare
/// whose -1s each lane sums (up to 255 blocks, then the lanes are added up:
/// x86_64's baseline has no popcount). The last bytes, fewer than sixteen,
/// are the tail of one more block that ends with the text, its lanes already
/// counted masked off; the lanes' max is folded by shifts. A text shorter
/// than a block is read a byte at a time.
#[cfg(not(feature = "abi3"))]
fn widest_and_chars(bytes: &[u8]) -> (u8, usize) {
    let n = bytes.len();
    #[cfg(target_arch = "x86_64")]
    if n >= 16 {
        // SAFETY: SSE2 is part of x86_64. Every load reads sixteen bytes
        // within `bytes` (`i + 16 <= n` in the loop, `n - 16` after it) or
        // within `TAIL_MASK` (`r` <= 15, so `r + 16` <= 31).
        unsafe {
            use std::arch::x86_64::*;
            let p = bytes.as_ptr();
            let zero = _mm_setzero_si128();
            // A continuation byte is below -0x40 as a signed byte.
            let bound = _mm_set1_epi8(-0x40);
            let sum = |counts: __m128i| {
                let s = _mm_sad_epu8(counts, zero);
                (_mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s))) as usize
            };
            let (mut most, mut continuations, mut i) = (zero, 0, 0);
            while i + 16 <= n {
                let last = (n - 16).min(i + 254 * 16);
                let mut counts = zero;
                while i <= last {
                    let v = _mm_loadu_si128(p.add(i).cast());
                    most = _mm_max_epu8(most, v);
                    counts = _mm_sub_epi8(counts, _mm_cmplt_epi8(v, bound));
                    i += 16;
                }
                continuations += sum(counts);
            }
            let r = n - i;
            if r > 0 {
                let v = _mm_loadu_si128(p.add(n - 16).cast());
                most = _mm_max_epu8(most, v);
                let mask = _mm_loadu_si128(TAIL_MASK.as_ptr().add(r).cast());
                let found = _mm_and_si128(_mm_cmplt_epi8(v, bound), mask);
                continuations += sum(_mm_sub_epi8(zero, found));
            }
            most = _mm_max_epu8(most, _mm_srli_si128::<8>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<4>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<2>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<1>(most));
            return ((_mm_cvtsi128_si32(most) & 0xFF) as u8, n - continuations);
        }
    }
    let (mut widest, mut continuations) = (0u8, 0usize);
    for &b in bytes {
        widest = widest.max(b);
        continuations += usize::from((b as i8) < -0x40);
    }
    (widest, n - continuations)
}

/// `TAIL_MASK[r..r + 16]` sets the last `r` of sixteen lanes (`r` < 16).
#[cfg(all(not(feature = "abi3"), target_arch = "x86_64"))]
static TAIL_MASK: [u8; 32] = {
    let mut mask = [0u8; 32];
    let mut k = 16;
    while k < 32 {
        mask[k] = 0xFF;
        k += 1;
    }
    mask
};

/// A code unit of a `str`'s storage: one, two or four bytes.
#[cfg(not(feature = "abi3"))]
trait Unit: Copy {
    /// The unit holding code point `code` (which fits: see `new_str`).
    fn of(code: u32) -> Self;
}

#[cfg(not(feature = "abi3"))]
impl Unit for u8 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code as u8
    }
}

#[cfg(not(feature = "abi3"))]
impl Unit for u16 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code as u16
    }
}

#[cfg(not(feature = "abi3"))]
impl Unit for u32 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code
    }
}

/// Writes the `units` code points of `text` at `data`, one unit each.
///
/// Provider JSON is mostly ASCII around the odd wide character, and so are
/// most deltas: while sixteen bytes and sixteen units are left, the ASCII
/// that starts the next sixteen bytes is widened at once (`widen16`), and a
/// run of wide characters goes on without a block test per character; the
/// rest, a character at a time.
///
/// Measured with callgrind on the benches' chat stream, every event's data
/// read (`new_str` a call, `PyUnicode_New`'s ~270 included): ~1,050
/// instructions at first; ~900 with `widen16` and `widest_and_chars` on
/// SSE2 blocks; ~810 with the continuation bytes summed per lane and the
/// runs of wide characters (not counting `PyUnicode_New`); 1,092 with it,
/// while texts of up to 64 bytes went a character at a time, a long one's
/// last sixteen bytes too, ASCII was checked in a pass of its own, and
/// `widest_and_chars` went through an iterator, copied its last bytes to a
/// zeroed block and folded its max lane by lane. 866 as now.
///
/// # Safety
/// `data` is valid for writes of `units` units of `T`, suitably aligned,
/// and `units` is the number of characters of `text`.
#[cfg(not(feature = "abi3"))]
unsafe fn fill<T: Unit>(data: *mut T, units: usize, text: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let (mut i, mut o) = (0, 0);
    while i + 16 <= n && o + 16 <= units {
        // The units past the ASCII that starts the block are written again
        // below, in order.
        let ascii = widen16(bytes.as_ptr().add(i), data.add(o));
        i += ascii;
        o += ascii;
        if ascii == 16 {
            continue;
        }
        // The byte at `i` is not ASCII: that character, and those that
        // follow it up to the next ASCII byte (a run of CJK).
        loop {
            let (code, len) = wide(bytes, i);
            data.add(o).write(T::of(code));
            i += len;
            o += 1;
            if bytes.get(i).map_or(true, u8::is_ascii) {
                break;
            }
        }
    }
    while o < units {
        let Some(&byte) = bytes.get(i) else { return };
        let (code, len) = if byte.is_ascii() { (u32::from(byte), 1) } else { wide(bytes, i) };
        data.add(o).write(T::of(code));
        i += len;
        o += 1;
    }
}

/// The code point of the multi-byte UTF-8 sequence at `bytes[i]` (a lead
/// byte) and its length. (`bytes` is valid UTF-8, so the sequence is whole;
/// a byte past the end would read as 0.)
#[cfg(not(feature = "abi3"))]
#[inline(always)]
fn wide(bytes: &[u8], i: usize) -> (u32, usize) {
    let at = |k: usize| u32::from(bytes.get(i + k).copied().unwrap_or(0));
    let lead = at(0);
    if lead < 0xE0 {
        (((lead & 0x1F) << 6) | (at(1) & 0x3F), 2)
    } else if lead < 0xF0 {
        (((lead & 0x0F) << 12) | ((at(1) & 0x3F) << 6) | (at(2) & 0x3F), 3)
    } else {
        (((lead & 0x07) << 18) | ((at(1) & 0x3F) << 12) | ((at(2) & 0x3F) << 6) | (at(3) & 0x3F), 4)
    }
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
unsafe fn widen16<T: Unit>(src: *const u8, dst: *mut T) -> usize {
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
            dst.add(k).write(T::of(u32::from(b)));
        }
        block.iter().take_while(|b| b.is_ascii()).count()
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
