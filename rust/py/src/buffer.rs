//! Borrowing the bytes of any buffer-protocol object without copying them.
//!
//! The `abi3` build targets the stable ABI of Python 3.10, whose limited API
//! does not declare the buffer protocol (it joined the limited API in 3.11,
//! with the same `Py_buffer` layout it always had), so both builds use the
//! declarations below. `bytes` is read through its own
//! limited-API accessors; every other exporter (bytearray, memoryview, NumPy
//! arrays, mmap) goes through `PyObject_GetBuffer`, which every CPython 3
//! exports, declared here with the documented `Py_buffer` layout.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The C `Py_buffer` struct (CPython `Include/pybuffer.h`), unchanged since 3.3.
#[repr(C)]
pub(crate) struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// `PyBUF_SIMPLE`: a contiguous, unformatted run of bytes.
const PYBUF_SIMPLE: c_int = 0;

/// The default of [`RELEASE_GIL_BYTES`]: the smallest `feed` the decoders
/// frame with the GIL released, so that other Python threads run meanwhile
/// (`benches/bench_gil.py` measures all of this). Releasing costs ~0.1 us per
/// call, and the units decoded meanwhile are kept in Rust until their Python
/// objects can be built (about as much work as building them at once). It
/// buys nothing below ~64 KiB: a release that short (~30 us of framing) ends
/// before a thread waiting for the GIL has woken to take it (a CPU-bound
/// Python thread beside ran 0 steps during feeds of 32 KiB, thousands during
/// feeds of 64 KiB and up). `feed_matched` keeps the GIL: releasing it there
/// too was measured (the matches kept by their captures' positions) and two
/// threads ran no faster (0.7-1.0x) while one ran 1.2-2.2x slower, because
/// building the matched events' Python objects is most of its work.
pub(crate) const DEFAULT_RELEASE_GIL_BYTES: usize = 64 * 1024;
/// The threshold in force (`release_gil_bytes` reads and sets it).
static RELEASE_GIL_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_RELEASE_GIL_BYTES);

/// The smallest feed decoded with the GIL released; sets it first when
/// `bytes` is given (0: every feed of a `bytes` object; a huge value: none).
/// Returns the threshold in force before the call.
#[pyfunction]
#[pyo3(signature = (bytes = None))]
pub(crate) fn release_gil_bytes(bytes: Option<usize>) -> usize {
    match bytes {
        Some(value) => RELEASE_GIL_BYTES.swap(value, Ordering::Relaxed),
        None => RELEASE_GIL_BYTES.load(Ordering::Relaxed),
    }
}

/// A read-only view of a Python object's bytes, valid while it is alive.
pub(crate) enum Bytes<'py> {
    /// An immutable `bytes` object, borrowed directly.
    Immutable(Bound<'py, PyBytes>),
    /// A buffer export; the exporter cannot resize or free it until release.
    Exported(Box<RawBuffer>),
}

impl<'py> Bytes<'py> {
    /// Borrows `obj`'s bytes; a non-contiguous or non-buffer object raises
    /// `TypeError`.
    pub fn borrow(obj: &Bound<'py, PyAny>) -> PyResult<Bytes<'py>> {
        if let Ok(b) = obj.downcast::<PyBytes>() {
            return Ok(Bytes::Immutable(b.clone()));
        }
        let mut view = Box::new(RawBuffer {
            buf: ptr::null_mut(),
            obj: ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: ptr::null_mut(),
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            suboffsets: ptr::null_mut(),
            internal: ptr::null_mut(),
        });
        // SAFETY: `obj` is a live object (we hold a reference and the GIL);
        // `view` points to writable memory of the documented layout. On
        // success the view must be released exactly once, done in `Drop`.
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *view, PYBUF_SIMPLE) };
        if rc != 0 {
            let cause = PyErr::take(obj.py());
            let err = PyTypeError::new_err(format!(
                "expected bytes or a contiguous buffer of bytes, got {}",
                obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ));
            if let Some(cause) = cause {
                err.set_cause(obj.py(), Some(cause));
            }
            return Err(err);
        }
        Ok(Bytes::Exported(view))
    }

    /// The bytes of an immutable `bytes` object of at least
    /// [`RELEASE_GIL_BYTES`]: a feed large enough to decode with the GIL
    /// released. Other buffers are never read without the GIL: another
    /// thread could write a `bytearray` while Rust reads it.
    pub fn releasable(&self) -> Option<&[u8]> {
        match self {
            Bytes::Immutable(b) if b.as_bytes().len() >= RELEASE_GIL_BYTES.load(Ordering::Relaxed) => {
                Some(b.as_bytes())
            }
            _ => None,
        }
    }

    /// The borrowed bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Immutable(b) => b.as_bytes(),
            Bytes::Exported(view) => {
                if view.len <= 0 || view.buf.is_null() {
                    return &[];
                }
                // SAFETY: a PyBUF_SIMPLE export is `len` contiguous bytes at
                // `buf`, kept alive and unresized by the exporter until
                // `PyBuffer_Release`, which only `Drop` calls, after every
                // borrow of `self` has ended. The decoders only read bytes, so
                // a mutable exporter (bytearray) written by other Python code
                // mid-call would at worst be read as new byte values.
                unsafe { std::slice::from_raw_parts(view.buf as *const u8, view.len as usize) }
            }
        }
    }
}

impl Drop for Bytes<'_> {
    fn drop(&mut self) {
        if let Bytes::Exported(view) = self {
            // SAFETY: the view was filled by a successful PyObject_GetBuffer
            // and is released once; the GIL is held wherever a `Bytes` lives
            // because it is only created and dropped inside `#[pymethods]`.
            unsafe { PyBuffer_Release(&mut **view) };
        }
    }
}
