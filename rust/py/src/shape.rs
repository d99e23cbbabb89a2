//! The Python class for JSON shape matching: `streamwire._core.ShapeMatcher`.
//!
//! Templates arrive as Python values (dict, list, str, int, bool, None) and
//! become the core's `Spec`; a match becomes a tuple
//! `(template, *captures)`: strings as `str`, integers as `int`, an absent
//! optional capture as `None`, a `$raw` capture as the value's JSON text.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use streamwire_core::shape::{Capture, Decline, Match, ShapeSet, Spec};

use crate::buffer::Bytes;

/// Templates nest no deeper than this (a guard against cyclic containers).
const MAX_SPEC_DEPTH: usize = 64;

/// An ordered set of JSON shape templates; the first that matches wins.
#[pyclass(frozen, module = "streamwire._core", name = "ShapeMatcher")]
pub struct ShapeMatcher {
    pub(crate) shapes: ShapeSet,
}

#[pymethods]
impl ShapeMatcher {
    #[new]
    fn new(templates: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut shapes = ShapeSet::new();
        for item in templates.try_iter()? {
            let item = item?;
            let (event, spec): (String, Bound<'_, PyAny>) = item
                .extract()
                .map_err(|_| PyTypeError::new_err("a template is an (sse event type, shape) pair"))?;
            let spec = spec_of(&spec, 0)?;
            shapes.add(&event, &spec).map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        Ok(ShapeMatcher { shapes })
    }

    /// Matches one payload (str, or UTF-8 bytes) of an SSE event of type
    /// `event`: `(template, *captures)`, or None when no template matches.
    #[pyo3(signature = (data, event = "message"))]
    fn r#match<'py>(&self, data: &Bound<'py, PyAny>, event: &str) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = data.py();
        with_text(data, |text| {
            let Ok(text) = text else { return Ok(None) };
            match self.shapes.match_payload(event, text) {
                Ok(m) => Ok(Some(match_tuple(py, &m, None)?)),
                Err(_) => Ok(None),
            }
        })
    }

    /// Why `match` returns None for this payload (a short stable name such as
    /// "unknown_key"), or None when it matches.
    #[pyo3(signature = (data, event = "message"))]
    fn decline_reason(&self, data: &Bound<'_, PyAny>, event: &str) -> PyResult<Option<&'static str>> {
        with_text(data, |text| match text {
            Ok(text) => Ok(self.shapes.match_payload(event, text).err().map(Decline::as_str)),
            Err(reason) => Ok(Some(reason.as_str())),
        })
    }

    /// The number of captures of template `index`.
    fn captures(&self, index: usize) -> PyResult<usize> {
        self.shapes.captures_of(index).ok_or_else(|| PyValueError::new_err("no such template"))
    }

    fn __len__(&self) -> usize {
        self.shapes.len()
    }

    fn __repr__(&self) -> String {
        format!("ShapeMatcher(<{} templates>)", self.shapes.len())
    }
}

/// Runs `f` on `data`'s text: a str, or bytes that must be UTF-8 (else
/// `Err(Decline::Syntax)` is passed: Python's json would decode them the same).
fn with_text<T>(
    data: &Bound<'_, PyAny>,
    f: impl FnOnce(Result<&str, Decline>) -> PyResult<T>,
) -> PyResult<T> {
    if let Ok(s) = data.downcast::<PyString>() {
        return match s.to_str() {
            Ok(text) => f(Ok(text)),
            // A str with lone surrogates has no UTF-8 form.
            Err(_) => f(Err(Decline::Syntax)),
        };
    }
    let bytes = Bytes::borrow(data)?;
    match std::str::from_utf8(bytes.as_slice()) {
        Ok(text) => f(Ok(text)),
        Err(_) => f(Err(Decline::Syntax)),
    }
}

/// `(template, *captures)`, with `ticket` appended when given.
pub(crate) fn match_tuple<'py>(
    py: Python<'py>,
    m: &Match<'_>,
    ticket: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let captures = m.captures();
    let len = captures.len() + 1 + usize::from(ticket.is_some());
    PyTuple::new(
        py,
        (0..len).map(|i| {
            if i == 0 {
                m.template.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {})
            } else if let Some(capture) = captures.get(i - 1) {
                capture_to_py(py, capture)
            } else {
                ticket.unwrap_or(0).into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {})
            }
        }),
    )
}

fn capture_to_py<'py>(py: Python<'py>, capture: &Capture<'_>) -> Bound<'py, PyAny> {
    match capture {
        Capture::Absent => py.None().into_bound(py),
        Capture::Str(text) => PyString::new(py, text).into_any(),
        Capture::Int(value) => value.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {}),
        Capture::Raw(text) => PyString::new(py, text).into_any(),
    }
}

/// Converts a Python template value to the core's `Spec`.
fn spec_of(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Spec> {
    if depth > MAX_SPEC_DEPTH {
        return Err(PyValueError::new_err(format!("a shape nests deeper than {MAX_SPEC_DEPTH} levels")));
    }
    if obj.is_none() {
        Ok(Spec::Null)
    } else if let Ok(b) = obj.downcast::<PyBool>() {
        Ok(Spec::Bool(b.is_true()))
    } else if obj.is_instance_of::<PyInt>() {
        obj.extract::<i64>()
            .map(Spec::Int)
            .map_err(|_| PyValueError::new_err("an integer literal in a shape must fit in 64 bits"))
    } else if let Ok(s) = obj.downcast::<PyString>() {
        Ok(Spec::Str(s.to_str()?.to_owned()))
    } else if let Ok(dict) = obj.downcast::<PyDict>() {
        let mut entries = Vec::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key: String =
                key.extract().map_err(|_| PyTypeError::new_err("the keys of a shape must be str"))?;
            entries.push((key, spec_of(&value, depth + 1)?));
        }
        Ok(Spec::Object(entries))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj.try_iter()?.map(|item| spec_of(&item?, depth + 1)).collect::<PyResult<_>>()?;
        Ok(Spec::Array(items))
    } else if obj.is_instance_of::<PyFloat>() {
        Err(PyValueError::new_err("a shape cannot hold a float literal"))
    } else {
        Err(PyTypeError::new_err(format!(
            "a shape holds dict, list, str, int, bool or None, not {}",
            obj.get_type().name()?
        )))
    }
}

/// Adds this module's class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ShapeMatcher>()?;
    Ok(())
}
