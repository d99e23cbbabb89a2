//! The one place where core errors become Python exceptions.
//!
//! `streamwire.errors.FramingError` is a Python class (it subclasses both
//! `StreamwireError` and `ValueError`, which an extension-defined exception
//! cannot do simply); it is imported once and instantiated here.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyType};
use streamwire_core::FramingError;

static FRAMING_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();
static USAGE_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// Converts a core framing error into `streamwire.errors.FramingError`,
/// carrying what the failing call decoded before the error as `.partial`.
pub fn framing_error<T>(py: Python<'_>, err: &FramingError, partial: Vec<Py<T>>) -> PyErr {
    match build_framing_error(py, err, partial) {
        Ok(e) => e,
        Err(e) => e,
    }
}

fn build_framing_error<T>(py: Python<'_>, err: &FramingError, partial: Vec<Py<T>>) -> PyResult<PyErr> {
    let cls = FRAMING_ERROR.import(py, "streamwire.errors", "FramingError")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", err.kind.as_str())?;
    kwargs.set_item("offset", err.offset)?;
    kwargs.set_item("partial", PyList::new(py, partial)?)?;
    let message = format!("{} (at stream byte {})", err.message, err.offset);
    let instance = cls.call((message,), Some(&kwargs))?;
    Ok(PyErr::from_value(instance))
}

/// `streamwire.errors.UsageError`: the caller used a decoder wrongly.
pub fn usage_error(py: Python<'_>, message: &str) -> PyErr {
    match USAGE_ERROR.import(py, "streamwire.errors", "UsageError") {
        Ok(cls) => match cls.call1((message,)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        },
        Err(e) => e,
    }
}
