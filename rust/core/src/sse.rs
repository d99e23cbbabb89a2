//! Server-Sent Events: an incremental `text/event-stream` decoder and encoder.
//!
//! Implements the WHATWG HTML standard, "Server-sent events", sections
//! "Parsing an event stream" and "Interpreting an event stream"; the spec
//! lines are quoted above the code that implements them.
//!
//! # Decoding bytes, not text
//!
//! The spec decodes the whole stream with "UTF-8 decode" and then splits the
//! text into lines. This decoder splits the *bytes* first and decodes each
//! piece (field name, value) on its own, lossily. That is equivalent: CR, LF,
//! `:` and SPACE are ASCII bytes, which never occur inside a multi-byte
//! sequence, and an ill-formed sequence's maximal subpart always stops before
//! an ASCII byte. So every line boundary, the first colon and a leading space
//! fall at the same places in bytes as in the decoded text, and decoding the
//! pieces yields the same characters, U+FFFD included, as decoding the whole.
//! For the same reason, comparing a raw field name to `b"data"` is the same as
//! comparing its decoded text to "data", and a value has a U+0000 exactly when
//! its bytes contain 0x00.
//!
//! # Memory and copies
//!
//! Complete lines are parsed in place in the caller's slice; only an
//! incomplete last line is copied, into a tail buffer that later chunks extend
//! (scanning only the new bytes). A value is decoded straight into its field
//! buffer once. An event made of a single `data` line, ended in the same
//! chunk, is handed to the sink straight from the input without any copy.
//! `max_line_bytes` and `max_event_bytes` bound what is held.

use memchr::{memchr, memchr2};

use crate::error::{ErrorKind, FramingError};
use crate::utf8::push_lossy;

mod encode;
#[cfg(test)]
mod tests;

pub use encode::{encode_sse, EncodeError};

/// Default cap on the length of one line, in bytes.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Default cap on the data (plus event type) buffered for one event, in bytes.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched event, borrowing the decoder's buffers (or the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The event type; "message" when unset or set to "".
    pub event_type: &'a str,
    /// The data, trailing LF already stripped.
    pub data: &'a str,
    /// The last event ID at dispatch: `None` if never set, `Some("")` if cleared.
    pub id: Option<&'a str>,
    /// A retry value set in this event's block (since the previous blank
    /// line), else `None`.
    pub retry: Option<u64>,
}

/// An incremental, bounded-memory SSE decoder.
///
/// Feed it chunks with [`SseDecoder::feed`]; every event completed by a chunk
/// is passed to the sink before `feed` returns. Once a cap is exceeded the
/// decoder is failed: every later `feed`/`finish` returns the same error.
#[derive(Debug)]
pub struct SseDecoder {
    max_line_bytes: usize,
    max_event_bytes: usize,
    /// Stream offset of the next byte to be scanned.
    pos: u64,
    /// BOM bytes matched at stream start and not yet known to be a BOM.
    bom_matched: usize,
    /// Whether the start-of-stream BOM question is settled.
    bom_done: bool,
    /// The incomplete last line; never contains CR or LF.
    tail: Vec<u8>,
    /// Stream offset where the tail line starts.
    tail_start: u64,
    /// The last byte scanned was a CR, which already ended its line; a LF
    /// that comes next (maybe in the next chunk) completes that CRLF.
    skip_lf: bool,
    data: String,
    event_type: String,
    /// The last `event` value that was UTF-8 (and at most
    /// [`KEPT_EVENT_TYPE_BYTES`] long), as received: a value of the same
    /// bytes is copied without validating it again (a stream names almost
    /// every event alike).
    last_type: String,
    /// The last event ID buffer, set by `id` fields.
    id_buffer: String,
    id_set: bool,
    /// Whether `id_buffer` changed since it was last committed.
    id_dirty: bool,
    /// The committed last event ID string.
    last_id: String,
    last_id_set: bool,
    /// Stream-wide reconnection time.
    retry: Option<u64>,
    /// A retry set since the last blank line.
    block_retry: Option<u64>,
    peak_buffered: usize,
    bytes_fed: u64,
    events_dispatched: u64,
    comments_seen: u64,
    error: Option<FramingError>,
}

impl Default for SseDecoder {
    /// A decoder with the default caps.
    fn default() -> Self {
        SseDecoder::new(DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_EVENT_BYTES)
    }
}

/// The longest `event` value a decoder keeps to compare the next one with
/// (provider event names are short).
const KEPT_EVENT_TYPE_BYTES: usize = 64;

/// Parses a `retry` value: "If the field value consists of only ASCII digits,
/// then interpret the field value as an integer in base ten". An empty value
/// is not an integer and is ignored. A value too big for `u64` milliseconds
/// (over 584 million years) is ignored as well, rather than clamped.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

impl SseDecoder {
    /// Creates a decoder with the given caps on one line and on one event.
    pub fn new(max_line_bytes: usize, max_event_bytes: usize) -> Self {
        SseDecoder {
            max_line_bytes,
            max_event_bytes,
            pos: 0,
            bom_matched: 0,
            bom_done: false,
            tail: Vec::new(),
            tail_start: 0,
            skip_lf: false,
            data: String::new(),
            event_type: String::new(),
            last_type: String::new(),
            id_buffer: String::new(),
            id_set: false,
            id_dirty: false,
            last_id: String::new(),
            last_id_set: false,
            retry: None,
            block_retry: None,
            peak_buffered: 0,
            bytes_fed: 0,
            events_dispatched: 0,
            comments_seen: 0,
            error: None,
        }
    }

    /// Decodes one chunk, passing each completed event to `sink`.
    ///
    /// On error, events completed earlier in this chunk have already been
    /// passed to `sink`; the error's offset is the stream offset where the
    /// offending line starts. The decoder then stays failed.
    pub fn feed<F: FnMut(Event<'_>)>(&mut self, data: &[u8], mut sink: F) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.bytes_fed += data.len() as u64;
        let result = self.feed_inner(data, &mut sink);
        if let Err(e) = &result {
            self.error = Some(e.clone());
        }
        result
    }

    fn feed_inner<F: FnMut(Event<'_>)>(&mut self, mut data: &[u8], sink: &mut F) -> Result<(), FramingError> {
        // "Streams must be decoded using the UTF-8 decode algorithm." / "The
        // UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark".
        // Only the first three bytes of the stream can be that BOM; they may
        // arrive one per chunk, so a matching prefix is held back until the
        // question is settled.
        if !self.bom_done {
            let mut i = 0;
            while self.bom_matched < 3 && i < data.len() && data[i] == BOM[self.bom_matched] {
                self.bom_matched += 1;
                i += 1;
            }
            if self.bom_matched == 3 {
                self.bom_done = true;
                self.pos += 3;
            } else if i == data.len() {
                return Ok(()); // a BOM prefix so far, or an empty chunk
            } else {
                // Not a BOM: the held prefix is ordinary content.
                self.bom_done = true;
                self.scan(&BOM[..self.bom_matched], sink)?;
            }
            data = &data[i..];
        }
        self.scan(data, sink)
    }

    /// Splits `buf` into lines and processes them.
    fn scan<F: FnMut(Event<'_>)>(&mut self, buf: &[u8], sink: &mut F) -> Result<(), FramingError> {
        let base = self.pos;
        self.pos += buf.len() as u64;
        let mut start = 0;
        // "a single U+000A LINE FEED (LF) character not preceded by a U+000D
        // CARRIAGE RETURN (CR) character, and a single U+000D CARRIAGE RETURN
        // (CR) character not followed by a U+000A LINE FEED (LF) character".
        // A CR ends its line at once; a LF right after it is only skipped.
        if self.skip_lf {
            let Some(&first) = buf.first() else { return Ok(()) };
            self.skip_lf = false;
            start = usize::from(first == b'\n');
        }
        // A line begun in an earlier chunk. Its bytes were already scanned,
        // so only the new bytes are searched for its end. Once complete it is
        // moved out of `self.tail` so that it can be processed (and a single
        // data value deferred) alongside the lines of `buf`.
        let mut held: Option<Vec<u8>> = None;
        let mut deferred: Option<&str> = None;
        if !self.tail.is_empty() {
            let Some(k) = memchr2(b'\r', b'\n', &buf[start..]) else {
                return self.grow_tail(&buf[start..]);
            };
            let end = start + k;
            self.grow_tail(&buf[start..end])?;
            start = self.after_terminator(buf, end);
            held = Some(std::mem::take(&mut self.tail));
        }
        if let Some(line) = &held {
            self.line(line, self.tail_start, &mut deferred, sink)?;
        }
        // "The stream must then be parsed by reading everything line by line"
        while let Some(k) = memchr2(b'\r', b'\n', &buf[start..]) {
            if k > self.max_line_bytes {
                return Err(self.line_too_large(base + start as u64));
            }
            let end = start + k;
            self.line(&buf[start..end], base + start as u64, &mut deferred, sink)?;
            start = self.after_terminator(buf, end);
        }
        self.flush_deferred(&mut deferred);
        if let Some(mut line) = held {
            line.clear(); // keep the capacity for the next long line
            self.tail = line;
        }
        if start < buf.len() {
            self.tail_start = base + start as u64;
            self.grow_tail(&buf[start..])?;
        }
        Ok(())
    }

    /// Returns where the next line starts after the terminator at `end`.
    fn after_terminator(&mut self, buf: &[u8], end: usize) -> usize {
        if buf[end] == b'\n' {
            return end + 1;
        }
        match buf.get(end + 1) {
            Some(b'\n') => end + 2,
            Some(_) => end + 1,
            None => {
                self.skip_lf = true;
                end + 1
            }
        }
    }

    fn grow_tail(&mut self, bytes: &[u8]) -> Result<(), FramingError> {
        if self.tail.len() + bytes.len() > self.max_line_bytes {
            return Err(self.line_too_large(self.tail_start));
        }
        self.tail.extend_from_slice(bytes);
        self.note_buffered();
        Ok(())
    }

    fn line_too_large(&self, offset: u64) -> FramingError {
        let msg = format!("SSE line longer than max_line_bytes ({})", self.max_line_bytes);
        FramingError::new(ErrorKind::LineTooLarge, offset, msg)
    }

    /// Fails when an event would hold more than `max_event_bytes`.
    fn check_event_size(&self, size: usize, offset: u64) -> Result<(), FramingError> {
        if size <= self.max_event_bytes {
            return Ok(());
        }
        let msg = format!("SSE event larger than max_event_bytes ({})", self.max_event_bytes);
        Err(FramingError::new(ErrorKind::EventTooLarge, offset, msg))
    }

    /// Processes one line (without its terminator) starting at `offset`.
    fn line<'b, F: FnMut(Event<'_>)>(
        &mut self,
        line: &'b [u8],
        offset: u64,
        deferred: &mut Option<&'b str>,
        sink: &mut F,
    ) -> Result<(), FramingError> {
        // "If the line is empty (a blank line): Dispatch the event"
        let Some(&first) = line.first() else {
            let single = deferred.take();
            self.dispatch(single, sink);
            return Ok(());
        };
        // "If the line starts with a U+003A COLON character (:): Ignore the line."
        if first == b':' {
            self.comments_seen += 1;
            return Ok(());
        }
        // "If the line contains a U+003A COLON character (:): Collect the
        // characters on the line before the first U+003A COLON character (:),
        // and let field be that string. Collect the characters on the line
        // after the first U+003A COLON character (:), and let value be that
        // string. If value starts with a U+0020 SPACE character, remove it
        // from value." / "Otherwise, the string is not empty but does not
        // contain a U+003A COLON character (:): ... using the whole line as
        // the field name, and the empty string as the field value."
        //
        // The two fields nearly every line holds are told at once (neither
        // name holds a colon, so theirs is the line's first); any other line
        // is searched for its first colon.
        let colon = if line.starts_with(b"data:") {
            Some(4)
        } else if line.starts_with(b"event:") {
            Some(5)
        } else {
            memchr(b':', line)
        };
        let (name, value) = match colon {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &line[line.len()..]),
        };
        // "Field names must be compared literally, with no case folding performed."
        match name {
            b"data" => self.data_field(value, offset, deferred)?,
            // "If the field name is "event": Set the event type buffer to field value."
            b"event" => {
                let data_len = self.data.len() + deferred.map_or(0, |s| s.len() + 1);
                self.check_event_size(data_len + value.len(), offset)?;
                self.event_type.clear();
                if value == self.last_type.as_bytes() {
                    self.event_type.push_str(&self.last_type);
                } else {
                    push_lossy(&mut self.event_type, value);
                    // Unchanged by the lossy decoding: the value was UTF-8.
                    if value.len() <= KEPT_EVENT_TYPE_BYTES && self.event_type.as_bytes() == value {
                        self.last_type.clear();
                        self.last_type.push_str(&self.event_type);
                    }
                }
                // Lossy decoding can grow invalid bytes (1 byte -> 3).
                if let Err(e) = self.check_event_size(data_len + self.event_type.len(), offset) {
                    self.event_type.clear();
                    return Err(e);
                }
                self.note_buffered();
            }
            // "If the field name is "id": If the field value does not contain
            // U+0000 NULL, then set the last event ID buffer to the field
            // value. Otherwise, ignore the field."
            b"id" if memchr(0, value).is_none() => {
                self.id_buffer.clear();
                push_lossy(&mut self.id_buffer, value);
                self.id_set = true;
                self.id_dirty = true;
            }
            // "If the field name is "retry": If the field value consists of
            // only ASCII digits, then interpret the field value as an integer
            // in base ten, and set the event stream's reconnection time to
            // that integer. Otherwise, ignore the field."
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                    self.block_retry = Some(ms);
                }
            }
            // "Otherwise: The field is ignored."
            _ => {}
        }
        Ok(())
    }

    /// "If the field name is "data": Append the field value to the data
    /// buffer, then append a single U+000A LINE FEED (LF) character to the
    /// data buffer."
    ///
    /// The first data value of an event, when valid UTF-8, is only remembered
    /// as a slice of the input (`deferred`); it is copied into the data buffer
    /// when a second data line comes or the input ends first, and a blank
    /// line dispatches it with no copy at all.
    fn data_field<'b>(
        &mut self,
        value: &'b [u8],
        offset: u64,
        deferred: &mut Option<&'b str>,
    ) -> Result<(), FramingError> {
        if self.data.is_empty() && deferred.is_none() {
            if let Some(s) = crate::utf8::str_of(value) {
                self.check_event_size(s.len() + 1 + self.event_type.len(), offset)?;
                *deferred = Some(s);
                return Ok(());
            }
        }
        self.flush_deferred(deferred);
        let before = self.data.len();
        self.check_event_size(before + value.len() + 1 + self.event_type.len(), offset)?;
        push_lossy(&mut self.data, value);
        self.data.push('\n');
        if let Err(e) = self.check_event_size(self.data.len() + self.event_type.len(), offset) {
            self.data.truncate(before);
            return Err(e);
        }
        self.note_buffered();
        Ok(())
    }

    /// Moves a deferred data value into the data buffer.
    fn flush_deferred(&mut self, deferred: &mut Option<&str>) {
        if let Some(s) = deferred.take() {
            self.data.push_str(s);
            self.data.push('\n');
            self.note_buffered();
        }
    }

    /// Dispatches the event; `single` is a deferred sole data value.
    fn dispatch<F: FnMut(Event<'_>)>(&mut self, single: Option<&str>, sink: &mut F) {
        // "1. Set the last event ID string of the event source to the value of
        // the last event ID buffer. The buffer does not get reset, so the last
        // event ID string of the event source remains set to this value until
        // the next time it is set by the server."
        if self.id_dirty {
            self.last_id.clear();
            self.last_id.push_str(&self.id_buffer);
            self.last_id_set = self.id_set;
            self.id_dirty = false;
        }
        let retry = self.block_retry.take();
        let data = match single {
            Some(s) => s,
            // "2. If the data buffer is an empty string, set the data buffer
            // and the event type buffer to the empty string and return."
            None if self.data.is_empty() => {
                self.event_type.clear();
                return;
            }
            // "3. If the data buffer's last character is a U+000A LINE FEED
            // (LF) character, then remove the last character from the data
            // buffer." (Every data field ends with LF, so it always is.)
            None => self.data.strip_suffix('\n').unwrap_or(&self.data),
        };
        // "5. Initialize event's type attribute to "message" ..." / "6. If the
        // event type buffer has a value other than the empty string, change
        // the type of the newly created event to equal the value of the event
        // type buffer."
        let event_type = if self.event_type.is_empty() { "message" } else { &self.event_type };
        let id = self.last_id_set.then_some(self.last_id.as_str());
        sink(Event { event_type, data, id, retry });
        self.events_dispatched += 1;
        // "7. Set the data buffer and the event type buffer to the empty string."
        self.data.clear();
        self.event_type.clear();
    }

    fn note_buffered(&mut self) {
        self.peak_buffered = self.peak_buffered.max(self.buffered_bytes());
    }

    /// Ends the stream: "Once the end of the file is reached, any pending data
    /// must be discarded. (If the file ends in the middle of an event, before
    /// the final empty line, the incomplete event is not dispatched.)"
    ///
    /// Clears the incomplete line and the event buffers; an `id` seen since
    /// the last blank line is not committed. `feed` after `finish` is not an
    /// error: it parses on as if a new line started (no BOM is stripped), so
    /// callers that want to forbid it must do so themselves.
    pub fn finish(&mut self) -> Result<(), FramingError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if !self.bom_done {
            self.bom_done = true;
            self.pos += self.bom_matched as u64;
        }
        self.tail.clear();
        self.skip_lf = false;
        self.data.clear();
        self.event_type.clear();
        self.block_retry = None;
        if self.id_dirty {
            self.id_buffer.clear();
            self.id_buffer.push_str(&self.last_id);
            self.id_set = self.last_id_set;
            self.id_dirty = false;
        }
        Ok(())
    }

    /// The committed last event ID: `None` if never set.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id_set.then_some(self.last_id.as_str())
    }

    /// The reconnection time in milliseconds, the stream-wide latest.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Bytes currently held: the incomplete line plus the data and event-type
    /// buffers.
    pub fn buffered_bytes(&self) -> usize {
        self.tail.len() + self.data.len() + self.event_type.len()
    }

    /// The largest [`SseDecoder::buffered_bytes`] seen so far.
    pub fn peak_buffered_bytes(&self) -> usize {
        self.peak_buffered
    }

    /// Bytes passed to `feed` (not counting calls refused after a failure).
    pub fn bytes_fed(&self) -> u64 {
        self.bytes_fed
    }

    /// Events passed to the sink.
    pub fn events_dispatched(&self) -> u64 {
        self.events_dispatched
    }

    /// Comment lines seen.
    pub fn comments_seen(&self) -> u64 {
        self.comments_seen
    }

    /// The error that failed the decoder, once it has failed.
    pub fn error(&self) -> Option<&FramingError> {
        self.error.as_ref()
    }
}
