//! AWS EventStream (`application/vnd.amazon.eventstream`): incremental decode
//! and encode of binary frames, as used by Amazon Bedrock streaming APIs.
//!
//! # Wire format
//!
//! Every message is one self-delimiting frame; all integers are big-endian:
//!
//! ```text
//! +----------------+-----------------+----------------+---------+---------+----------------+
//! | total_length   | headers_length  | prelude_crc    | headers | payload | message_crc    |
//! | u32            | u32             | u32            | ...     | ...     | u32            |
//! +----------------+-----------------+----------------+---------+---------+----------------+
//!   <------------- prelude (12 bytes) -------------->
//! ```
//!
//! * `total_length` counts the whole frame, prelude and trailing CRC included,
//!   so it is at least 16.
//! * `prelude_crc` is CRC-32 (IEEE 802.3, the zlib/`crc32fast` polynomial) of
//!   bytes `0..8`; `message_crc` is CRC-32 of every byte before it.
//! * The header block is a sequence of headers, each: `u8` name length, that
//!   many name bytes (UTF-8), `u8` type id, then a value whose shape depends
//!   on the type (see [`HeaderType`]).
//!
//! # Order of trust
//!
//! A length field is only believed once the CRC that covers it has passed.
//! The decoder therefore checks, in this order: the prelude CRC (as soon as
//! 12 bytes are in), the two lengths against the frame and against the caps
//! ([`DEFAULT_MAX_MESSAGE_BYTES`] or the caller's, and [`MAX_HEADERS_BYTES`]),
//! and only then waits for, or reserves memory for, the rest of the frame;
//! then the message CRC; and only then the structure of the header block.
//! A corrupted frame thus always reports a CRC error, never a misleading
//! structural one, and a corrupted length can never make the decoder allocate
//! or wait for gigabytes.
//!
//! # Errors
//!
//! Every [`FramingError`](crate::FramingError) from the decoder carries as
//! `offset` the stream offset (counted from the first byte ever fed) of the
//! first byte of the message that failed. Framing cannot be recovered after
//! an error (there is no sync marker in the format), so a decoder that failed
//! keeps returning the same error.

mod decode;
mod encode;
mod header;

pub use decode::EventStreamDecoder;
pub use encode::encode_message;
pub use header::{Header, HeaderType, HeaderValue, Message};

/// The default cap on one frame's `total_length`: 16 MiB.
///
/// 16 MiB is the message size limit AWS documents for EventStream and the
/// one its C runtime (aws-c-event-stream) enforces; Bedrock's frames are far
/// smaller. botocore allows a payload of up to 24 MiB, so a frame between
/// 16 MiB and that is rejected here but accepted by botocore. The vectors
/// agree with this default: `oversized_payload_declared` declares 24 MiB + 1
/// byte of payload and must fail with `length`, which holds for any cap up
/// to 24 MiB, and the largest valid vector is under 100 KiB. Callers that
/// need more pass their own cap to [`EventStreamDecoder::new`].
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The cap on one frame's `headers_length`: 128 KiB.
///
/// The EventStream specification limits the header block to 128 KiB, and
/// botocore and aws-c-event-stream enforce that number. Not configurable: no
/// conforming peer sends more.
pub const MAX_HEADERS_BYTES: usize = 128 * 1024;

/// Size of the prelude: `total_length`, `headers_length`, `prelude_crc`.
const PRELUDE_LEN: usize = 12;

/// Size of the trailing `message_crc`.
const CRC_LEN: usize = 4;

/// The smallest legal frame: a prelude and a message CRC, nothing between.
const MIN_MESSAGE_LEN: usize = PRELUDE_LEN + CRC_LEN;

/// How strictly the header block is checked.
///
/// Both modes verify every CRC and length, reject unknown header types,
/// headers that overrun the block, and invalid UTF-8. They differ only on
/// rules of the specification that AWS's own decoders do not enforce.
///
/// Both modes accept empty string and byte-array values, and values of up to
/// 65535 bytes: the u16 length prefix allows them, and although the spec's
/// grammar says 1..=32767, botocore and smithy-rs accept them, so rejecting
/// them would only break streams those clients read fine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Validation {
    /// Also enforce the specification's MUSTs on names: a header name is
    /// 1..=255 bytes (an empty name fails with `header_name`), and a name
    /// appears at most once per message (a repeat fails with
    /// `duplicate_header`). The default.
    #[default]
    Strict,
    /// Accept what AWS's own decoders accept: empty header names, and
    /// repeated names. Repeated headers are all kept, in wire order, in
    /// [`Message::headers`]; [`Message::header`] returns the last one (the
    /// last value wins, as in decoders that build a map).
    Lenient,
}

/// Reads a big-endian `u32` at `at`. Callers have already checked that
/// `at + 4 <= bytes.len()`; a short slice yields 0 rather than a panic so
/// that a logic slip can never crash the process.
fn be_u32(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 0,
    }
}
