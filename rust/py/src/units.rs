//! The code units of a CPython `str` from UTF-8: what `text::new_str` needs
//! to build one at its exact storage width, without CPython's decoder.
//!
//! CPython stores a `str` as one unit per character, each 1, 2 or 4 bytes
//! wide: the narrowest that holds its widest character (PEP 393; string
//! comparison relies on it). [`widest_and_chars`] reads that width (off the
//! largest lead byte) and the character count in one pass; [`fill`] writes
//! the units. Provider JSON is mostly ASCII around the odd wide character,
//! and so are most deltas, so both work on sixteen-byte blocks: SSE2 is
//! x86_64's baseline; where the CPU has AVX2 (checked once, at run time: a
//! wheel is built for the baseline), the pass takes 32-byte blocks and the
//! 2- and 4-byte units are widened by `vpmovzx`. The environment variable
//! `STREAMWIRE_NO_AVX2` (any value, read once) keeps to SSE2: the tests run
//! both ways. Elsewhere a byte loop the compiler vectorizes.
//!
//! Measured with callgrind on the benches' chat stream (20,000 events of
//! ~230 bytes, 70% CJK or emoji), every event's data read, `new_str` a call
//! with `PyUnicode_New`'s ~270 instructions included: 1,092 instructions
//! while texts of up to 64 bytes went a character at a time (a long one's
//! last sixteen bytes too), ASCII was checked in a pass of its own, and the
//! block pass went through an iterator, copied its last bytes to a zeroed
//! block and folded its max lane by lane; 866 with SSE2 as below. A
//! standalone copy of this file (no Python) took 862 instructions for a
//! non-ASCII event's storage with SSE2, 755 with AVX2.

/// A code unit of a `str`'s storage: one, two or four bytes.
pub(crate) trait Unit: Copy {
    /// The unit holding code point `code` (which fits: see `fill`).
    fn of(code: u32) -> Self;
}

impl Unit for u8 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code as u8
    }
}

impl Unit for u16 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code as u16
    }
}

impl Unit for u32 {
    #[inline(always)]
    fn of(code: u32) -> Self {
        code
    }
}

/// The largest byte of `bytes` and its number of characters (bytes that are
/// not UTF-8 continuation bytes, 0x80..=0xBF). Continuation bytes sort below
/// every lead byte of a multi-byte sequence, so the largest byte is the
/// largest lead byte, and it fixes the widest character.
pub(crate) fn widest_and_chars(bytes: &[u8]) -> (u8, usize) {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        if bytes.len() >= 32 && x86::avx2() {
            // SAFETY: the CPU has AVX2 (`avx2`).
            return unsafe { x86::widest_and_chars_avx2(bytes) };
        }
        return x86::widest_and_chars_sse2(bytes);
    }
    let (mut widest, mut continuations) = (0u8, 0usize);
    for &b in bytes {
        widest = widest.max(b);
        continuations += usize::from((b as i8) < -0x40);
    }
    (widest, bytes.len() - continuations)
}

/// Writes the `units` code points of `text` at `data`, one unit each.
///
/// # Safety
/// `data` is valid for writes of `units` units of `T`, suitably aligned;
/// `units` is the number of characters of `text`, and `T` holds its widest.
pub(crate) unsafe fn fill<T: Unit>(data: *mut T, units: usize, text: &str) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::mem::size_of::<T>() > 1 && units >= 16 && x86::avx2() {
            // The CPU has AVX2 (`avx2`); the rest is this function's contract.
            return x86::fill_avx2(data, units, text);
        }
        fill_with::<T, x86::Sse2>(data, units, text)
    }
    #[cfg(not(target_arch = "x86_64"))]
    fill_with::<T, Bytes>(data, units, text)
}

/// How sixteen bytes become sixteen units.
trait Widen {
    /// Writes the sixteen bytes at `src`, zero-extended, as sixteen units of
    /// `T` at `dst`, and returns how many of them are ASCII before the first
    /// that is not (16: all); the units from that one on are not characters.
    ///
    /// # Safety
    /// `src` is valid for reads of 16 bytes; `dst` for writes of 16 units of
    /// `T`, suitably aligned; the CPU has the instructions the way uses.
    unsafe fn widen16<T: Unit>(src: *const u8, dst: *mut T) -> usize;
}

/// [`fill`] with blocks widened by `W`: while sixteen bytes and sixteen
/// units are left, the ASCII that starts the next sixteen bytes is widened
/// at once, and a run of wide characters goes on without a block test per
/// character; the rest, a character at a time.
///
/// # Safety
/// As [`fill`]'s, and the CPU has what `W` uses.
#[inline(always)]
unsafe fn fill_with<T: Unit, W: Widen>(data: *mut T, units: usize, text: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let (mut i, mut o) = (0, 0);
    while i + 16 <= n && o + 16 <= units {
        // The units past the ASCII that starts the block are written again
        // below, in order.
        let ascii = W::widen16(bytes.as_ptr().add(i), data.add(o));
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

/// A byte at a time (no x86_64).
#[cfg(not(target_arch = "x86_64"))]
struct Bytes;

#[cfg(not(target_arch = "x86_64"))]
impl Widen for Bytes {
    #[inline(always)]
    unsafe fn widen16<T: Unit>(src: *const u8, dst: *mut T) -> usize {
        let block = std::slice::from_raw_parts(src, 16);
        for (k, &b) in block.iter().enumerate() {
            dst.add(k).write(T::of(u32::from(b)));
        }
        block.iter().take_while(|b| b.is_ascii()).count()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    use super::{fill_with, Unit, Widen};

    /// Whether to take the AVX2 ways: the CPU has it, and
    /// `STREAMWIRE_NO_AVX2` is not set.
    pub(super) fn avx2() -> bool {
        static AVX2: OnceLock<bool> = OnceLock::new();
        *AVX2.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2") && std::env::var_os("STREAMWIRE_NO_AVX2").is_none()
        })
    }

    /// `MASK[r..r + 32]` (or `MASK[16 + r..32 + r]`, sixteen lanes) sets the
    /// last `r` lanes.
    static MASK: [u8; 64] = {
        let mut mask = [0u8; 64];
        let mut k = 32;
        while k < 64 {
            mask[k] = 0xFF;
            k += 1;
        }
        mask
    };

    /// The sum of a vector's bytes.
    #[inline(always)]
    fn sum128(v: __m128i) -> usize {
        // SAFETY: SSE2 is part of x86_64.
        unsafe {
            let s = _mm_sad_epu8(v, _mm_setzero_si128());
            (_mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s))) as usize
        }
    }

    /// The largest of a vector's bytes.
    #[inline(always)]
    fn max128(mut most: __m128i) -> u8 {
        // SAFETY: SSE2 is part of x86_64.
        unsafe {
            most = _mm_max_epu8(most, _mm_srli_si128::<8>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<4>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<2>(most));
            most = _mm_max_epu8(most, _mm_srli_si128::<1>(most));
            (_mm_cvtsi128_si32(most) & 0xFF) as u8
        }
    }

    /// `widest_and_chars` of at least 16 bytes, in sixteen-byte blocks: an
    /// unsigned max, and a compare whose -1s each lane sums (up to 255
    /// blocks, then the lanes are added: x86_64's baseline has no popcount).
    /// The last bytes, fewer than sixteen, are the tail of one more block
    /// that ends with the text, its lanes already counted masked off.
    pub(super) fn widest_and_chars_sse2(bytes: &[u8]) -> (u8, usize) {
        let n = bytes.len();
        // SAFETY: SSE2 is part of x86_64. `n` >= 16; every load reads
        // sixteen bytes within `bytes` (`i + 16 <= n` in the loop, `n - 16`
        // after it) or within `MASK` (`16 + r` + 16 <= 47).
        unsafe {
            let p = bytes.as_ptr();
            let zero = _mm_setzero_si128();
            // A continuation byte is below -0x40 as a signed byte.
            let bound = _mm_set1_epi8(-0x40);
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
                continuations += sum128(counts);
            }
            let r = n - i;
            if r > 0 {
                let v = _mm_loadu_si128(p.add(n - 16).cast());
                most = _mm_max_epu8(most, v);
                let mask = _mm_loadu_si128(MASK.as_ptr().add(16 + r).cast());
                continuations += sum128(_mm_sub_epi8(zero, _mm_and_si128(_mm_cmplt_epi8(v, bound), mask)));
            }
            (max128(most), n - continuations)
        }
    }

    /// `widest_and_chars_sse2` in 32-byte blocks, for at least 32 bytes.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn widest_and_chars_avx2(bytes: &[u8]) -> (u8, usize) {
        let n = bytes.len();
        // Every load reads 32 bytes within `bytes` (`n` >= 32; `i + 32 <=
        // n` in the loop, `n - 32` after it) or within `MASK` (`r` < 32).
        let p = bytes.as_ptr();
        let zero = _mm256_setzero_si256();
        let bound = _mm256_set1_epi8(-0x40);
        let sum =
            |v: __m256i| sum128(_mm_add_epi8(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v)));
        let (mut most, mut continuations, mut i) = (zero, 0, 0);
        while i + 32 <= n {
            // 127 blocks at most: the two halves' counts are added as bytes.
            let last = (n - 32).min(i + 126 * 32);
            let mut counts = zero;
            while i <= last {
                let v = _mm256_loadu_si256(p.add(i).cast());
                most = _mm256_max_epu8(most, v);
                counts = _mm256_sub_epi8(counts, _mm256_cmpgt_epi8(bound, v));
                i += 32;
            }
            continuations += sum(counts);
        }
        let r = n - i;
        if r > 0 {
            let v = _mm256_loadu_si256(p.add(n - 32).cast());
            most = _mm256_max_epu8(most, v);
            let mask = _mm256_loadu_si256(MASK.as_ptr().add(r).cast());
            continuations += sum(_mm256_sub_epi8(zero, _mm256_and_si256(_mm256_cmpgt_epi8(bound, v), mask)));
        }
        let most = _mm_max_epu8(_mm256_castsi256_si128(most), _mm256_extracti128_si256::<1>(most));
        (max128(most), n - continuations)
    }

    /// Unpacks with SSE2.
    pub(super) struct Sse2;

    impl Widen for Sse2 {
        #[inline(always)]
        unsafe fn widen16<T: Unit>(src: *const u8, dst: *mut T) -> usize {
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
    }

    /// Zero-extends with AVX2 (`vpmovzxbw`, `vpmovzxbd`).
    struct Avx2;

    impl Widen for Avx2 {
        #[inline(always)]
        unsafe fn widen16<T: Unit>(src: *const u8, dst: *mut T) -> usize {
            let v = _mm_loadu_si128(src.cast());
            match std::mem::size_of::<T>() {
                1 => _mm_storeu_si128(dst.cast(), v),
                2 => _mm256_storeu_si256(dst.cast(), _mm256_cvtepu8_epi16(v)),
                _ => {
                    let out = dst.cast::<__m256i>();
                    _mm256_storeu_si256(out, _mm256_cvtepu8_epi32(v));
                    _mm256_storeu_si256(out.add(1), _mm256_cvtepu8_epi32(_mm_srli_si128::<8>(v)));
                }
            }
            ((_mm_movemask_epi8(v) as u32) | 0x1_0000).trailing_zeros() as usize
        }
    }

    /// `fill` with AVX2's blocks.
    ///
    /// # Safety
    /// As `fill`'s, and the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fill_avx2<T: Unit>(data: *mut T, units: usize, text: &str) {
        fill_with::<T, Avx2>(data, units, text)
    }
}
