//! Sans-IO framing for LLM provider streams.
//!
//! Three wire formats are decoded here, incrementally and with bounded memory:
//!
//! * Server-Sent Events ([`sse`]), per the WHATWG HTML standard's
//!   "event stream interpretation", with incremental UTF-8 decoding ([`utf8`]);
//! * AWS EventStream binary frames ([`eventstream`]), used by Amazon Bedrock;
//! * a JSON array streamed element by element ([`json_array`]), Gemini's
//!   `streamGenerateContent` without `alt=sse`.
//!
//! Beside the framing, [`shape`] matches a payload's JSON against the few
//! shapes a protocol adapter handles on its fast path, capturing only the
//! values it needs.
//!
//! Nothing here knows about Python, sockets or clocks: decoders are fed byte
//! slices and hand decoded items to a caller-supplied sink. Errors are values
//! of [`FramingError`] with a stable [`ErrorKind`] and a byte offset.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod error;
pub mod eventstream;
pub mod json_array;
pub mod shape;
pub mod sse;
pub mod utf8;

pub use error::{ErrorKind, FramingError};
