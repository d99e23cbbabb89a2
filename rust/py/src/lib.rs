//! The PyO3 binding of `streamwire-core`, built as `streamwire._core`.
//!
//! Framing semantics live in `streamwire-core` and protocol semantics in the
//! Python package. This crate binds the core's decoders (SSE, EventStream,
//! JSON arrays) and adds the per-event hot paths the adapters hand their
//! rules to as data: shape matching of JSON events and WebSocket messages
//! (`ShapeMatcher`, `MessageMatcher`), building event objects in bulk
//! (`Builder`), taking runs of text-and-usage chunks (`TextUsageTaker`) and
//! usage snapshots (`snapshot`, `json_value`), and `str` building at each
//! text's storage width (`text`, `units`). None of it decides what a protocol
//! means: every rule it applies comes from the Python side.
#![deny(missing_docs)]

use pyo3::prelude::*;

mod buffer;
mod errors;
mod eventstream;
mod feed;
mod json_array;
mod json_value;
mod message;
mod objects;
mod shape;
mod snapshot;
mod sse;
mod taker;
mod text;
#[cfg(not(feature = "abi3"))]
mod units;

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    sse::register(m)?;
    shape::register(m)?;
    message::register(m)?;
    json_array::register(m)?;
    eventstream::register(m)?;
    objects::register(m)?;
    taker::register(m)?;
    m.add_function(wrap_pyfunction!(text::utf8_length, m)?)?;
    m.add_function(wrap_pyfunction!(buffer::release_gil_bytes, m)?)?;
    m.add("DEFAULT_RELEASE_GIL_BYTES", buffer::DEFAULT_RELEASE_GIL_BYTES)?;
    Ok(())
}
