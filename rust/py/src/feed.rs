//! The `feed` call of the framing decoders' classes (`SseDecoder`,
//! `EventStreamDecoder`), written once: the checks at its head, the chunk
//! borrowed, a large immutable chunk framed with the GIL released, the units
//! made Python objects as they complete, and a framing error that carries
//! what came before it as `.partial`.

use pyo3::prelude::*;
use pyo3::types::PyList;
use streamwire_core::FramingError;

use crate::buffer::Bytes;
use crate::errors::{framing_error, usage_error};

/// A chunk framed: its units as Python objects, and how the framing ended.
pub(crate) type Framed<T> = (Vec<Py<T>>, Result<(), FramingError>);

/// A decoder class as [`feed`] drives it.
pub(crate) trait Framing {
    /// The Python class of a decoded unit (`SseEvent`, `EventStreamMessage`).
    type Unit;
    /// The class's Python name, as a `UsageError` names the call.
    const NAME: &'static str;
    /// The error the decoder failed with: every later call raises it again.
    fn failed(&self) -> Option<&FramingError>;
    /// Whether `finish()` was called.
    fn finished(&self) -> bool;
    /// Ends the last call's tickets (they last until the decoder's next call).
    fn clear_matched(&mut self);
    /// Frames `data` with the GIL held, each unit given to `out` as it completes.
    fn frame(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        out: &mut Converted<Self::Unit>,
    ) -> Result<(), FramingError>;
    /// Frames `data` with the GIL released, then makes its units Python
    /// objects, in the same order, with the GIL back.
    fn frame_released(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<Framed<Self::Unit>>;
}

/// The units of a call framed with the GIL held, made Python objects as they
/// complete; after a conversion fails no other is tried (framing goes on,
/// and the call raises that error once it ends).
pub(crate) struct Converted<T> {
    units: Vec<Py<T>>,
    failed: PyResult<()>,
}

impl<T> Converted<T> {
    /// Adds the unit `convert` makes, unless a conversion failed before.
    pub(crate) fn push(&mut self, convert: impl FnOnce() -> PyResult<Py<T>>) {
        if self.failed.is_ok() {
            match convert() {
                Ok(unit) => self.units.push(unit),
                Err(e) => self.failed = Err(e),
            }
        }
    }
}

/// The head of a `feed` or `feed_matched` call: a decoder that failed raises
/// its error again (nothing partial), one that finished raises `UsageError`;
/// then the last call's tickets end.
pub(crate) fn start<D: Framing>(decoder: &mut D, py: Python<'_>, method: &str) -> PyResult<()> {
    if let Some(err) = decoder.failed() {
        return Err(framing_error::<D::Unit>(py, err, Vec::new()));
    }
    if decoder.finished() {
        return Err(usage_error(py, &format!("{}.{method}() called after finish()", D::NAME)));
    }
    decoder.clear_matched();
    Ok(())
}

/// `feed(data)`: the units the chunk completed. A `bytes` chunk of at least
/// `release_gil_bytes()` is framed with the GIL released; any other buffer
/// with the GIL held (another thread could write it meanwhile).
pub(crate) fn feed<'py, D: Framing>(
    decoder: &mut D,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = data.py();
    start(decoder, py, "feed")?;
    let bytes = Bytes::borrow(data)?;
    if let Some(slice) = bytes.releasable() {
        let (out, fed) = decoder.frame_released(py, slice)?;
        return listed(py, fed, out);
    }
    let mut out = Converted { units: Vec::new(), failed: Ok(()) };
    let fed = decoder.frame(py, bytes.as_slice(), &mut out);
    out.failed?;
    listed(py, fed, out.units)
}

/// What a call returns: the list of what it decoded, or the framing error
/// that ended it, carrying that list as `.partial`.
pub(crate) fn listed<'py, T>(
    py: Python<'py>,
    fed: Result<(), FramingError>,
    out: Vec<Py<T>>,
) -> PyResult<Bound<'py, PyList>> {
    match fed {
        Ok(()) => PyList::new(py, out),
        Err(err) => Err(framing_error(py, &err, out)),
    }
}
