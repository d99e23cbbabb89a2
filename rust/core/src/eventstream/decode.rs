//! The incremental decoder.

use super::header::{parse_headers, Message};
use super::{be_u32, Validation, CRC_LEN, MAX_HEADERS_BYTES, MIN_MESSAGE_LEN, PRELUDE_LEN};
use crate::error::{ErrorKind, FramingError};

/// Buffer capacity kept between messages. A buffered frame larger than this
/// gives its memory back once it is decoded, so one rare 16 MiB frame does
/// not pin 16 MiB for the life of the stream.
const RETAINED_CAPACITY: usize = 64 * 1024;

/// The two lengths of a prelude whose CRC and bounds have been checked.
#[derive(Debug, Clone, Copy)]
struct Prelude {
    total_len: usize,
    headers_len: usize,
}

/// An incremental, sans-IO AWS EventStream decoder.
///
/// Feed it byte chunks of any size with [`feed`](Self::feed); each complete
/// message is handed to the sink as a [`Message`] that borrows the bytes.
/// Call [`finish`](Self::finish) at end of stream to detect a cut-off frame.
///
/// # Memory
///
/// A message that lies whole inside the slice given to `feed` is parsed in
/// place: nothing is copied. Only the unfinished message at the end of a
/// chunk is copied into an internal buffer, and when the next chunks complete
/// it, exactly the missing bytes are appended, the message is decoded from
/// the buffer, and the rest of the chunk is again parsed in place. The buffer
/// therefore never holds more than one (partial) message, is emptied in O(1)
/// (no bytes are shifted), and [`peak_buffered_bytes`](Self::peak_buffered_bytes)
/// never exceeds the largest message's `total_length`, which is at most
/// `max_message_bytes`. Room for a message is reserved only after its prelude
/// CRC and lengths have passed.
///
/// # Errors
///
/// Errors carry as `offset` the stream offset of the first byte of the
/// failing message. After an error the decoder is failed for good: every
/// later `feed` or `finish` returns the same error, because once a frame is
/// damaged there is no way to find where the next one starts.
#[derive(Debug)]
pub struct EventStreamDecoder {
    max_message_bytes: usize,
    validation: Validation,
    /// Bytes of the one unfinished message, from its first byte.
    buf: Vec<u8>,
    /// The checked prelude of the message in `buf`, once 12 bytes are in.
    pending: Option<Prelude>,
    /// Stream offset of the first byte of the next (or buffered) message.
    message_start: u64,
    peak_buffered: usize,
    bytes_fed: u64,
    messages_decoded: u64,
    error: Option<FramingError>,
}

impl EventStreamDecoder {
    /// A decoder that rejects frames whose `total_length` exceeds
    /// `max_message_bytes` (see
    /// [`DEFAULT_MAX_MESSAGE_BYTES`](super::DEFAULT_MAX_MESSAGE_BYTES)).
    pub fn new(max_message_bytes: usize, validation: Validation) -> Self {
        EventStreamDecoder {
            max_message_bytes,
            validation,
            buf: Vec::new(),
            pending: None,
            message_start: 0,
            peak_buffered: 0,
            bytes_fed: 0,
            messages_decoded: 0,
            error: None,
        }
    }

    /// Decodes as many messages as `data` completes, handing each to `sink`
    /// in stream order.
    ///
    /// On error, the messages completed before the failing one have already
    /// been given to `sink`; the decoder is then failed for good.
    pub fn feed<F: FnMut(Message<'_>)>(&mut self, data: &[u8], mut sink: F) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.bytes_fed += data.len() as u64;
        let result = self.feed_inner(data, &mut sink);
        if let Err(e) = &result {
            self.fail(e.clone());
        }
        result
    }

    /// Reports the end of the stream: fails with `truncated` if an unfinished
    /// message is buffered (even a partial prelude). A decoder that finished
    /// cleanly holds no state and may be fed again.
    pub fn finish(&mut self) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        let have = self.buf.len();
        let message = match self.pending {
            Some(p) => format!("stream ended {have} bytes into a {}-byte message", p.total_len),
            None => format!("stream ended {have} bytes into a 12-byte message prelude"),
        };
        let e = FramingError::new(ErrorKind::Truncated, self.message_start, message);
        self.fail(e.clone());
        Err(e)
    }

    /// Bytes currently held for an unfinished message.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    /// The most bytes ever held at once; at most one message's `total_length`.
    pub fn peak_buffered_bytes(&self) -> usize {
        self.peak_buffered
    }

    /// Total bytes passed to [`feed`](Self::feed) while the decoder was not
    /// failed.
    pub fn bytes_fed(&self) -> u64 {
        self.bytes_fed
    }

    /// Messages handed to the sink so far.
    pub fn messages_decoded(&self) -> u64 {
        self.messages_decoded
    }

    /// The error the decoder failed with, if it has.
    pub fn error(&self) -> Option<&FramingError> {
        self.error.as_ref()
    }

    /// Records a fatal error and releases the buffer, which can never be
    /// decoded now.
    fn fail(&mut self, e: FramingError) {
        self.error = Some(e);
        self.buf = Vec::new();
        self.pending = None;
    }

    fn feed_inner(&mut self, mut data: &[u8], sink: &mut dyn FnMut(Message<'_>)) -> Result<(), FramingError> {
        // 1. Finish the buffered message, if any, with exactly the bytes it
        //    lacks, so the buffer never holds a second message.
        if !self.buf.is_empty() {
            data = self.fill_buffer(data)?;
            let Some(prelude) = self.buffered_message_complete() else {
                // `fill_buffer` consumed all of `data` and the message still
                // lacks bytes.
                return Ok(());
            };
            let message = decode_frame(&self.buf, prelude.headers_len, self.validation, self.message_start)?;
            sink(message);
            self.messages_decoded += 1;
            self.message_start += prelude.total_len as u64;
            self.pending = None;
            // O(1): bytes are not shifted, only the length is reset.
            self.buf.clear();
            if self.buf.capacity() > RETAINED_CAPACITY {
                self.buf.shrink_to(RETAINED_CAPACITY);
            }
        }
        // 2. Decode whole messages in place from the caller's slice.
        while data.len() >= PRELUDE_LEN {
            let prelude = check_prelude(data, self.max_message_bytes, self.message_start)?;
            if data.len() < prelude.total_len {
                // 3a. The rest of this message arrives later: keep what is
                //     here, and reserve for the rest now that the lengths are
                //     trusted.
                self.pending = Some(prelude);
                self.buf.reserve_exact(prelude.total_len);
                self.buffer(data);
                return Ok(());
            }
            let (frame, rest) = data.split_at(prelude.total_len);
            let message = decode_frame(frame, prelude.headers_len, self.validation, self.message_start)?;
            sink(message);
            self.messages_decoded += 1;
            self.message_start += frame.len() as u64;
            data = rest;
        }
        // 3b. Fewer than 12 bytes: a partial prelude, nothing to trust yet.
        self.buffer(data);
        Ok(())
    }

    /// Appends to the buffer whatever the buffered message still lacks from
    /// `data`, checking the prelude as soon as it is complete. Returns the
    /// unconsumed rest of `data`.
    fn fill_buffer<'d>(&mut self, mut data: &'d [u8]) -> Result<&'d [u8], FramingError> {
        if self.pending.is_none() {
            let want = PRELUDE_LEN - self.buf.len();
            let (head, rest) = data.split_at(want.min(data.len()));
            self.buffer(head);
            data = rest;
            if self.buf.len() < PRELUDE_LEN {
                return Ok(data);
            }
            let prelude = check_prelude(&self.buf, self.max_message_bytes, self.message_start)?;
            self.pending = Some(prelude);
            self.buf.reserve_exact(prelude.total_len - PRELUDE_LEN);
        }
        if let Some(p) = self.pending {
            let want = p.total_len - self.buf.len();
            let (head, rest) = data.split_at(want.min(data.len()));
            self.buffer(head);
            data = rest;
        }
        Ok(data)
    }

    /// The prelude of the buffered message if all its bytes are in.
    fn buffered_message_complete(&self) -> Option<Prelude> {
        self.pending.filter(|p| self.buf.len() == p.total_len)
    }

    fn buffer(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.peak_buffered = self.peak_buffered.max(self.buf.len());
    }
}

/// Checks a prelude (the first 12 bytes of `bytes`) in the order of trust:
/// its CRC first, then the lengths it declares.
fn check_prelude(bytes: &[u8], max_message_bytes: usize, offset: u64) -> Result<Prelude, FramingError> {
    // Format: u32 total_length, u32 headers_length, u32 prelude_crc =
    // CRC-32 of bytes 0..8. Nothing in the prelude is believed before this.
    let expected = be_u32(bytes, 8);
    let actual = crc32fast::hash(&bytes[..8]);
    if actual != expected {
        return Err(FramingError::new(
            ErrorKind::PreludeCrc,
            offset,
            format!("prelude CRC is {expected:#010x}, computed {actual:#010x}"),
        ));
    }
    let total = be_u32(bytes, 0);
    let headers = be_u32(bytes, 4);
    // Rule: 16 <= total_length <= cap. A u32 that does not fit usize (on a
    // 16-bit target) is over any cap.
    let total_len = usize::try_from(total).unwrap_or(usize::MAX);
    if total_len < MIN_MESSAGE_LEN || total_len > max_message_bytes {
        return Err(FramingError::new(
            ErrorKind::Length,
            offset,
            format!("total_length {total} is outside 16..={max_message_bytes}"),
        ));
    }
    // Rule: headers_length <= total_length - 16 and <= 128 KiB.
    let headers_len = usize::try_from(headers).unwrap_or(usize::MAX);
    let room = total_len - MIN_MESSAGE_LEN;
    if headers_len > room || headers_len > MAX_HEADERS_BYTES {
        return Err(FramingError::new(
            ErrorKind::HeadersLength,
            offset,
            format!(
                "headers_length {headers} exceeds the frame's room ({room}) or the cap ({MAX_HEADERS_BYTES})"
            ),
        ));
    }
    Ok(Prelude { total_len, headers_len })
}

/// Decodes one whole frame (exactly `total_length` bytes) whose prelude has
/// passed [`check_prelude`] (which produced `headers_len`): the message CRC
/// first, then the headers.
fn decode_frame(
    frame: &[u8],
    headers_len: usize,
    validation: Validation,
    offset: u64,
) -> Result<Message<'_>, FramingError> {
    let total_len = frame.len();
    // Format: u32 message_crc = CRC-32 of every byte before it.
    let crc_at = total_len - CRC_LEN;
    let expected = be_u32(frame, crc_at);
    let actual = crc32fast::hash(&frame[..crc_at]);
    if actual != expected {
        return Err(FramingError::new(
            ErrorKind::MessageCrc,
            offset,
            format!("message CRC is {expected:#010x}, computed {actual:#010x}"),
        ));
    }
    let headers_end = PRELUDE_LEN + headers_len;
    let headers = parse_headers(&frame[PRELUDE_LEN..headers_end], validation, offset)?;
    Ok(Message { headers, payload: &frame[headers_end..crc_at] })
}
