//! Header types, decoded messages, and parsing of a header block.

use std::collections::HashSet;

use super::Validation;
use crate::error::{ErrorKind, FramingError};

/// The type of a header value, with its wire id.
///
/// Format: after the name, one byte gives the type id; the value follows:
///
/// | id | type          | value bytes                              |
/// |----|---------------|------------------------------------------|
/// | 0  | boolean true  | none                                     |
/// | 1  | boolean false | none                                     |
/// | 2  | byte          | 1 (i8)                                   |
/// | 3  | short         | 2 (i16, big-endian)                      |
/// | 4  | integer       | 4 (i32, big-endian)                      |
/// | 5  | long          | 8 (i64, big-endian)                      |
/// | 6  | byte array    | u16 big-endian length, then that many    |
/// | 7  | string        | u16 big-endian length, then UTF-8 bytes  |
/// | 8  | timestamp     | 8 (i64 milliseconds since the Unix epoch)|
/// | 9  | uuid          | 16                                       |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderType {
    /// Id 0: boolean `true`, no value bytes.
    BoolTrue,
    /// Id 1: boolean `false`, no value bytes.
    BoolFalse,
    /// Id 2: signed 8-bit integer.
    Byte,
    /// Id 3: signed 16-bit integer.
    Short,
    /// Id 4: signed 32-bit integer.
    Integer,
    /// Id 5: signed 64-bit integer.
    Long,
    /// Id 6: bytes with a u16 length prefix.
    ByteArray,
    /// Id 7: UTF-8 text with a u16 length prefix.
    String,
    /// Id 8: signed 64-bit milliseconds since the Unix epoch.
    Timestamp,
    /// Id 9: 16 raw bytes.
    Uuid,
}

impl HeaderType {
    /// The wire type id, 0..=9.
    pub fn id(self) -> u8 {
        match self {
            HeaderType::BoolTrue => 0,
            HeaderType::BoolFalse => 1,
            HeaderType::Byte => 2,
            HeaderType::Short => 3,
            HeaderType::Integer => 4,
            HeaderType::Long => 5,
            HeaderType::ByteArray => 6,
            HeaderType::String => 7,
            HeaderType::Timestamp => 8,
            HeaderType::Uuid => 9,
        }
    }

    /// The type for a wire id, or `None` outside 0..=9.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => HeaderType::BoolTrue,
            1 => HeaderType::BoolFalse,
            2 => HeaderType::Byte,
            3 => HeaderType::Short,
            4 => HeaderType::Integer,
            5 => HeaderType::Long,
            6 => HeaderType::ByteArray,
            7 => HeaderType::String,
            8 => HeaderType::Timestamp,
            9 => HeaderType::Uuid,
            _ => return None,
        })
    }

    /// The stable name used in Python and in the test vectors:
    /// `"boolean_true"`, `"boolean_false"`, `"byte"`, `"short"`, `"integer"`,
    /// `"long"`, `"byte_array"`, `"string"`, `"timestamp"` or `"uuid"`.
    pub fn as_str(self) -> &'static str {
        match self {
            HeaderType::BoolTrue => "boolean_true",
            HeaderType::BoolFalse => "boolean_false",
            HeaderType::Byte => "byte",
            HeaderType::Short => "short",
            HeaderType::Integer => "integer",
            HeaderType::Long => "long",
            HeaderType::ByteArray => "byte_array",
            HeaderType::String => "string",
            HeaderType::Timestamp => "timestamp",
            HeaderType::Uuid => "uuid",
        }
    }
}

/// A header value. Byte arrays and strings borrow from the frame.
#[derive(Debug, Clone, PartialEq)]
pub enum HeaderValue<'a> {
    /// Type 0 (`true`) or 1 (`false`).
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Integer(i32),
    /// Type 5.
    Long(i64),
    /// Type 6; at most 65535 bytes.
    ByteArray(&'a [u8]),
    /// Type 7; at most 65535 bytes of UTF-8.
    String(&'a str),
    /// Type 8: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// Type 9: the 16 raw bytes, in wire order.
    Uuid([u8; 16]),
}

impl HeaderValue<'_> {
    /// The wire type of this value (`Bool(true)` is [`HeaderType::BoolTrue`]).
    pub fn header_type(&self) -> HeaderType {
        match self {
            HeaderValue::Bool(true) => HeaderType::BoolTrue,
            HeaderValue::Bool(false) => HeaderType::BoolFalse,
            HeaderValue::Byte(_) => HeaderType::Byte,
            HeaderValue::Short(_) => HeaderType::Short,
            HeaderValue::Integer(_) => HeaderType::Integer,
            HeaderValue::Long(_) => HeaderType::Long,
            HeaderValue::ByteArray(_) => HeaderType::ByteArray,
            HeaderValue::String(_) => HeaderType::String,
            HeaderValue::Timestamp(_) => HeaderType::Timestamp,
            HeaderValue::Uuid(_) => HeaderType::Uuid,
        }
    }

    /// How many bytes the value takes on the wire after the type byte.
    pub fn wire_len(&self) -> usize {
        match self {
            HeaderValue::Bool(_) => 0,
            HeaderValue::Byte(_) => 1,
            HeaderValue::Short(_) => 2,
            HeaderValue::Integer(_) => 4,
            HeaderValue::Long(_) | HeaderValue::Timestamp(_) => 8,
            HeaderValue::ByteArray(b) => 2 + b.len(),
            HeaderValue::String(s) => 2 + s.len(),
            HeaderValue::Uuid(_) => 16,
        }
    }
}

/// One header: a name and a typed value, both borrowed from the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Header<'a> {
    /// The name, 1..=255 bytes of UTF-8 (may be empty in lenient mode).
    pub name: &'a str,
    /// The value.
    pub value: HeaderValue<'a>,
}

/// One decoded message. It borrows from the decoder's input or buffer and is
/// only valid inside the sink call that receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message<'a> {
    /// The headers, in wire order (repeats kept, in lenient mode).
    pub headers: Vec<Header<'a>>,
    /// The payload bytes.
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The value of the header called `name`. If the name repeats (only
    /// possible in lenient mode) the last one wins.
    pub fn header(&self, name: &str) -> Option<&HeaderValue<'a>> {
        self.headers.iter().rev().find(|h| h.name == name).map(|h| &h.value)
    }
}

/// Up to this many headers, duplicates are found by a linear scan, which is
/// cheaper than hashing for the handful of headers real messages carry. A
/// 128 KiB block can hold ~32,000 distinct headers, though, and a quadratic
/// scan over those would be a denial-of-service lever, so past this count a
/// hash set takes over.
const LINEAR_DUPLICATE_SCAN: usize = 16;

/// A cursor over the header block that turns "ran out of bytes" into a
/// `header_value` error.
struct Cursor<'a> {
    block: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Takes the next `n` bytes, or `None` if the block ends first.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let bytes = self.block.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }

    /// Takes exactly `N` bytes as an array.
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N).and_then(|b| b.try_into().ok())
    }
}

/// Parses a header block whose bytes are already covered by a passing
/// message CRC. `offset` is the stream offset of the message, used in errors.
///
/// Checks, for each header in wire order: the name length (zero fails with
/// `header_name` in strict mode), that the name fits in the block
/// (`header_value`), that it is UTF-8 (`utf8`), the type id (`header_type`),
/// that the value fits in the block (`header_value`), that a string value is
/// UTF-8 (`utf8`); and, in strict mode, that the name is new
/// (`duplicate_header`).
pub(crate) fn parse_headers<'a>(
    block: &'a [u8],
    validation: Validation,
    offset: u64,
) -> Result<Vec<Header<'a>>, FramingError> {
    let err = |kind, message: String| FramingError::new(kind, offset, message);
    let mut headers = Vec::new();
    let mut seen: Option<HashSet<&'a str>> = None;
    let mut cur = Cursor { block, pos: 0 };
    while cur.pos < block.len() {
        let at = cur.pos;
        // Format: u8 name length, then the name bytes.
        let name_len = usize::from(block[at]);
        cur.pos += 1;
        if name_len == 0 && validation == Validation::Strict {
            return Err(err(ErrorKind::HeaderName, format!("header at block byte {at} has an empty name")));
        }
        let name_bytes = cur.take(name_len).ok_or_else(|| {
            err(
                ErrorKind::HeaderValue,
                format!("header name at block byte {at} ({name_len} bytes) runs past the header block"),
            )
        })?;
        let name = std::str::from_utf8(name_bytes).map_err(|_| {
            err(ErrorKind::Utf8, format!("header name at block byte {at} is not valid UTF-8"))
        })?;
        // Format: u8 type id, then a value shaped by the type.
        let type_id = cur.take(1).ok_or_else(|| {
            err(ErrorKind::HeaderValue, format!("header block ends before the type byte of header {name:?}"))
        })?[0];
        let ty = HeaderType::from_id(type_id).ok_or_else(|| {
            err(ErrorKind::HeaderType, format!("header {name:?} has unknown value type {type_id}"))
        })?;
        let overrun = || {
            err(
                ErrorKind::HeaderValue,
                format!("{} value of header {name:?} runs past the header block", ty.as_str()),
            )
        };
        let value = match ty {
            HeaderType::BoolTrue => HeaderValue::Bool(true),
            HeaderType::BoolFalse => HeaderValue::Bool(false),
            HeaderType::Byte => HeaderValue::Byte(i8::from_be_bytes(cur.array().ok_or_else(overrun)?)),
            HeaderType::Short => HeaderValue::Short(i16::from_be_bytes(cur.array().ok_or_else(overrun)?)),
            HeaderType::Integer => HeaderValue::Integer(i32::from_be_bytes(cur.array().ok_or_else(overrun)?)),
            HeaderType::Long => HeaderValue::Long(i64::from_be_bytes(cur.array().ok_or_else(overrun)?)),
            HeaderType::Timestamp => {
                HeaderValue::Timestamp(i64::from_be_bytes(cur.array().ok_or_else(overrun)?))
            }
            HeaderType::Uuid => HeaderValue::Uuid(cur.array().ok_or_else(overrun)?),
            HeaderType::ByteArray | HeaderType::String => {
                // Format: u16 big-endian length, then that many bytes.
                let len = usize::from(u16::from_be_bytes(cur.array().ok_or_else(overrun)?));
                let bytes = cur.take(len).ok_or_else(overrun)?;
                if ty == HeaderType::ByteArray {
                    HeaderValue::ByteArray(bytes)
                } else {
                    HeaderValue::String(std::str::from_utf8(bytes).map_err(|_| {
                        err(ErrorKind::Utf8, format!("string value of header {name:?} is not valid UTF-8"))
                    })?)
                }
            }
        };
        if validation == Validation::Strict {
            // Spec: a header name MUST NOT repeat within one message.
            let duplicate = match seen.as_mut() {
                Some(set) => !set.insert(name),
                None => {
                    let dup = headers.iter().any(|h: &Header<'a>| h.name == name);
                    if !dup && headers.len() >= LINEAR_DUPLICATE_SCAN {
                        let mut set: HashSet<&'a str> = headers.iter().map(|h| h.name).collect();
                        set.insert(name);
                        seen = Some(set);
                    }
                    dup
                }
            };
            if duplicate {
                return Err(err(
                    ErrorKind::DuplicateHeader,
                    format!("header {name:?} appears more than once"),
                ));
            }
        }
        headers.push(Header { name, value });
    }
    Ok(headers)
}
