//! Framing errors: a stable kind, a byte offset and a human message.

use std::fmt;

/// The stable, machine-readable kind of a framing error.
///
/// [`ErrorKind::as_str`] gives the short string exposed to Python as
/// `FramingError.kind`; those strings are part of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An SSE line grew past `max_line_bytes`.
    LineTooLarge,
    /// An SSE event's buffered data grew past `max_event_bytes`.
    EventTooLarge,
    /// Invalid UTF-8 met by a strict decoder (or an EventStream string header).
    Utf8,
    /// The input ended inside a message.
    Truncated,
    /// The EventStream prelude CRC-32 did not match.
    PreludeCrc,
    /// The EventStream message CRC-32 did not match.
    MessageCrc,
    /// An EventStream total length below 16 bytes or above the cap.
    Length,
    /// An EventStream headers length that does not fit the frame or the cap.
    HeadersLength,
    /// An EventStream header value type id outside 0..=9.
    HeaderType,
    /// An EventStream header name that is empty (strict mode).
    HeaderName,
    /// An EventStream header that runs past the header block.
    HeaderValue,
    /// An EventStream header name repeated in one message (strict mode).
    DuplicateHeader,
    /// A JSON array body broken between its elements (`json_array`).
    InvalidJson,
}

impl ErrorKind {
    /// The short string used as `FramingError.kind` in Python.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::LineTooLarge => "line_too_large",
            ErrorKind::EventTooLarge => "event_too_large",
            ErrorKind::Utf8 => "utf8",
            ErrorKind::Truncated => "truncated",
            ErrorKind::PreludeCrc => "prelude_crc",
            ErrorKind::MessageCrc => "message_crc",
            ErrorKind::Length => "length",
            ErrorKind::HeadersLength => "headers_length",
            ErrorKind::HeaderType => "header_type",
            ErrorKind::HeaderName => "header_name",
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::HeaderValue => "header_value",
            ErrorKind::DuplicateHeader => "duplicate_header",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A framing error: what went wrong, and where in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FramingError {
    /// The stable kind.
    pub kind: ErrorKind,
    /// Byte offset in the whole stream (counted from the first byte ever fed)
    /// at which the offending line, event or message starts, or at which the
    /// defect was found when that is more precise.
    pub offset: u64,
    /// A human-readable explanation.
    pub message: String,
}

impl FramingError {
    /// Builds an error.
    pub fn new(kind: ErrorKind, offset: u64, message: impl Into<String>) -> Self {
        FramingError { kind, offset, message: message.into() }
    }
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {}", self.kind, self.offset, self.message)
    }
}

impl std::error::Error for FramingError {}
