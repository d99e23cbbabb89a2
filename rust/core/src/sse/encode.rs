//! Encoding one event as `text/event-stream` bytes.

use std::fmt;

use memchr::memchr2;

/// A value that cannot be written as an SSE field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    message: String,
}

impl EncodeError {
    fn new(message: impl Into<String>) -> Self {
        EncodeError { message: message.into() }
    }

    /// A human-readable explanation.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}

/// Rejects values that would end their line early or be ignored on decode.
///
/// CR and LF would end the field's line. A NUL would make the decoder ignore
/// an `id` field; it is refused in `event` too, since no caller means one.
fn check_single_line(field: &str, value: &str) -> Result<(), EncodeError> {
    match value.bytes().find(|b| matches!(b, b'\r' | b'\n' | 0)) {
        None => Ok(()),
        Some(b) => Err(EncodeError::new(format!(
            "SSE {field} must not contain {}",
            match b {
                b'\r' => "CR",
                b'\n' => "LF",
                _ => "NUL",
            }
        ))),
    }
}

/// Writes `name: value` and LF. An empty value is written as `name:`.
///
/// The one space is always written before a non-empty value because the
/// decoder removes exactly one leading space: a value that itself starts with
/// a space keeps it.
fn write_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.push(b':');
    if !value.is_empty() {
        out.push(b' ');
        out.extend_from_slice(value);
    }
    out.push(b'\n');
}

/// Encodes one event: data split on any line ending (CRLF, LF, CR) into
/// several `data:` lines; `event:`/`id:`/`retry:` lines when given; ends with
/// a blank line.
///
/// Decoding the output with [`super::SseDecoder`] yields the same event,
/// except that line endings inside `data` come back as LF (the format has no
/// way to carry which ending was used). Empty `data` is written as one empty
/// `data:` line, so the event is still dispatched, with data "". An `event`
/// or `id` containing CR, LF or NUL is refused and `out` is left untouched.
pub fn encode_sse(
    data: &str,
    event: Option<&str>,
    id: Option<&str>,
    retry: Option<u64>,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    if let Some(event) = event {
        check_single_line("event", event)?;
    }
    if let Some(id) = id {
        check_single_line("id", id)?;
    }
    out.reserve(data.len() + 16);
    if let Some(event) = event {
        write_field(out, b"event", event.as_bytes());
    }
    if let Some(id) = id {
        write_field(out, b"id", id.as_bytes());
    }
    if let Some(ms) = retry {
        write_field(out, b"retry", ms.to_string().as_bytes());
    }
    let mut rest = data.as_bytes();
    while let Some(k) = memchr2(b'\r', b'\n', rest) {
        write_field(out, b"data", &rest[..k]);
        let crlf = rest[k] == b'\r' && rest.get(k + 1) == Some(&b'\n');
        rest = &rest[k + 1 + usize::from(crlf)..];
    }
    write_field(out, b"data", rest);
    out.push(b'\n');
    Ok(())
}
