//! Encoding one message into a frame.

use super::header::{Header, HeaderValue};
use super::{MAX_HEADERS_BYTES, MIN_MESSAGE_LEN, PRELUDE_LEN};
use crate::error::{ErrorKind, FramingError};

/// Appends one EventStream frame carrying `headers` and `payload` to `out`.
///
/// The encoder is strict whatever a decoder accepts: it refuses, leaving
/// `out` untouched,
///
/// * a header name that is empty or longer than 255 bytes (`header_name`);
/// * a string or byte-array value longer than 65535 bytes (`header_value`);
/// * a header block longer than [`MAX_HEADERS_BYTES`] (`headers_length`),
///   which no conforming decoder would accept;
/// * a frame whose `total_length` does not fit in a u32 (`length`).
///
/// Duplicate names are written as given. A frame larger than a decoder's cap
/// (16 MiB by default) is written but will be refused by that decoder.
///
/// Error offsets are byte positions inside the frame that would have been
/// written: where the offending header starts, or 0 for `length`.
pub fn encode_message(headers: &[Header<'_>], payload: &[u8], out: &mut Vec<u8>) -> Result<(), FramingError> {
    // Validate and size everything before writing, so a refusal leaves `out`
    // as it was.
    let mut headers_len: usize = 0;
    for header in headers {
        let at = (PRELUDE_LEN + headers_len) as u64;
        // Format: u8 name length, so 1..=255 bytes.
        if header.name.is_empty() || header.name.len() > usize::from(u8::MAX) {
            return Err(FramingError::new(
                ErrorKind::HeaderName,
                at,
                format!("header name is {} bytes; it must be 1..=255", header.name.len()),
            ));
        }
        // Format: u16 length prefix for byte arrays and strings.
        let value_len = match header.value {
            HeaderValue::ByteArray(b) => Some(b.len()),
            HeaderValue::String(s) => Some(s.len()),
            _ => None,
        };
        if let Some(len) = value_len.filter(|&len| len > usize::from(u16::MAX)) {
            return Err(FramingError::new(
                ErrorKind::HeaderValue,
                at,
                format!("value of header {:?} is {len} bytes; at most 65535 fit", header.name),
            ));
        }
        // Each header: name length byte, name, type byte, value. The sum is
        // bounded by the check below before it could overflow, since every
        // header adds at most 2 + 255 + 2 + 65535 bytes.
        headers_len += 2 + header.name.len() + header.value.wire_len();
        if headers_len > MAX_HEADERS_BYTES {
            return Err(FramingError::new(
                ErrorKind::HeadersLength,
                at,
                format!("header block exceeds the {MAX_HEADERS_BYTES}-byte cap"),
            ));
        }
    }
    let total = MIN_MESSAGE_LEN
        .checked_add(headers_len)
        .and_then(|n| n.checked_add(payload.len()))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            FramingError::new(
                ErrorKind::Length,
                0,
                format!("a {}-byte payload makes the frame too long for a u32 length", payload.len()),
            )
        })?;
    // headers_len <= MAX_HEADERS_BYTES, so it fits a u32.
    let headers_len32 = headers_len as u32;

    let start = out.len();
    out.reserve(total as usize);
    // Prelude: total_length, headers_length, then CRC-32 of those 8 bytes.
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&headers_len32.to_be_bytes());
    let prelude_crc = crc32fast::hash(&out[start..start + 8]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    for header in headers {
        // The name length was checked above to fit a u8.
        out.push(header.name.len() as u8);
        out.extend_from_slice(header.name.as_bytes());
        out.push(header.value.header_type().id());
        match header.value {
            HeaderValue::Bool(_) => {}
            HeaderValue::Byte(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Short(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Integer(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::Long(v) | HeaderValue::Timestamp(v) => out.extend_from_slice(&v.to_be_bytes()),
            HeaderValue::ByteArray(b) => put_u16_prefixed(out, b),
            HeaderValue::String(s) => put_u16_prefixed(out, s.as_bytes()),
            HeaderValue::Uuid(u) => out.extend_from_slice(&u),
        }
    }
    out.extend_from_slice(payload);
    // Trailer: CRC-32 of the whole frame so far.
    let message_crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&message_crc.to_be_bytes());
    Ok(())
}

/// Writes a u16 big-endian length and the bytes; the caller checked the
/// length fits.
fn put_u16_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
    out.extend_from_slice(bytes);
}
