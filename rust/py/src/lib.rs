//! The PyO3 binding of `streamwire-core`, built as `streamwire._core`.
//!
//! This crate converts types and errors and nothing else: framing semantics
//! live in `streamwire-core`, protocol semantics in the Python package, which
//! hands the objects this crate builds for it their rules as data (`Builder`,
//! `TextUsageTaker`).
#![deny(missing_docs)]

use pyo3::prelude::*;

mod buffer;
mod errors;
mod eventstream;
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
