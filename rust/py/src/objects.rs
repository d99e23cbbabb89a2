//! Building many small immutable objects at once: `streamwire._core.Builder`.
//!
//! The adapters emit one event object per upstream delta, and the events are
//! frozen, slotted dataclasses. Python builds one fastest with
//! `object.__new__` and the slots' descriptors (`events.py`, ~125 ns for two
//! fields, each `__set__` a Python-level call). A `Builder` does the same
//! steps from Rust for a whole list of values: the class's allocator, then
//! `object.__setattr__` (`PyObject_GenericSetAttr`, which goes through the
//! same slot descriptors and bypasses the frozen `__setattr__` exactly as the
//! dataclass's own `__init__` does) for the varying field and each fixed one.
//!
//! In the default build, a field whose descriptor is a plain object slot
//! (the `member_descriptor` that `__slots__` makes) is written at the slot's
//! offset, which `PyObject_GenericSetAttr` would reach through a type lookup,
//! the descriptor's `__set__` and `PyMember_SetOne` for the same store:
//! measured with callgrind on a WebSocket text delta's `TextDelta`, 487
//! instructions to build one before, 120 after. The descriptor's layout is
//! not in the limited API: the `abi3` build always calls the generic path.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple, PyType};

/// Builds objects of one class: one field from each value, the others given
/// once per `build` call.
#[pyclass(frozen, module = "streamwire._core", name = "Builder")]
pub struct Builder {
    cls: Py<PyType>,
    field: Py<PyString>,
    fields: Vec<Py<PyString>>,
    /// Each field's slot offset (`field`'s first, then `fields`' in order),
    /// where it is a plain object slot of the class; None: set generically.
    offsets: Vec<Option<isize>>,
}

#[pymethods]
impl Builder {
    #[new]
    #[pyo3(signature = (cls, field, *fields))]
    fn new(cls: &Bound<'_, PyType>, field: &str, fields: Vec<String>) -> PyResult<Self> {
        let py = cls.py();
        let object_new = py.get_type::<PyAny>().getattr("__new__")?;
        if !cls.getattr("__new__")?.is(&object_new) {
            return Err(PyTypeError::new_err("Builder takes classes whose __new__ is object.__new__"));
        }
        if cls.getattr("__abstractmethods__").is_ok_and(|m| m.is_truthy().unwrap_or(true)) {
            return Err(PyTypeError::new_err("Builder cannot build an abstract class"));
        }
        let intern = |name: &str| PyString::intern(py, name).unbind();
        let offsets = std::iter::once(field)
            .chain(fields.iter().map(String::as_str))
            .map(|name| slot_offset(cls, name))
            .collect::<PyResult<_>>()?;
        Ok(Builder {
            cls: cls.clone().unbind(),
            field: intern(field),
            fields: fields.iter().map(|name| intern(name)).collect(),
            offsets,
        })
    }

    /// One new object per value, in order: `field` set to the value, and
    /// each of `fields` to the matching one of `fixed`.
    #[pyo3(signature = (values, *fixed))]
    fn build<'py>(
        &self,
        values: &Bound<'py, PyList>,
        fixed: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_fixed(fixed.len())?;
        let mut out = Vec::with_capacity(values.len());
        for value in values.iter() {
            out.push(self.make(&value, fixed)?);
        }
        PyList::new(values.py(), out)
    }

    /// One new object: `build([value], *fixed)[0]` without the lists.
    #[pyo3(signature = (value, *fixed))]
    fn one<'py>(
        &self,
        value: &Bound<'py, PyAny>,
        fixed: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.check_fixed(fixed.len())?;
        self.make(value, fixed)
    }
}

impl Builder {
    /// How many fixed values `make` takes.
    pub(crate) fn fixed_count(&self) -> usize {
        self.fields.len()
    }

    pub(crate) fn check_fixed(&self, given: usize) -> PyResult<()> {
        if given == self.fields.len() {
            return Ok(());
        }
        Err(PyTypeError::new_err(format!(
            "Builder takes {} fixed values after the varying one, got {given}",
            self.fields.len()
        )))
    }

    /// A new object with `field` set to `value` and `fields` to `fixed`
    /// (as many: checked by the caller).
    pub(crate) fn make<'py>(
        &self,
        value: &Bound<'py, PyAny>,
        fixed: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.make_with(value, fixed.iter())
    }

    /// [`Builder::make`] with the fixed values given from Rust, as many as
    /// [`Builder::fixed_count`] (fewer leave the rest unset, like a short tuple).
    pub(crate) fn make_with<'py>(
        &self,
        value: &Bound<'py, PyAny>,
        fixed: impl Iterator<Item = Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = value.py();
        let obj = self.alloc(py)?;
        let mut offsets = self.offsets.iter().copied();
        store(&obj, offsets.next().flatten(), self.field.bind(py), value)?;
        for (name, fixed) in self.fields.iter().zip(fixed) {
            store(&obj, offsets.next().flatten(), name.bind(py), &fixed)?;
        }
        Ok(obj)
    }

    /// A new, empty instance, as `object.__new__(cls)` makes it.
    fn alloc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tp = self.cls.bind(py).as_type_ptr();
        // SAFETY: `tp` is a live type object (held by `self.cls`); its
        // `tp_alloc` slot is always set for a class (inherited from object
        // otherwise), and `object.__new__` does exactly this call for a
        // non-abstract class given no arguments. The result is a new
        // reference or NULL with an exception set.
        unsafe {
            let slot = ffi::PyType_GetSlot(tp, ffi::Py_tp_alloc);
            if slot.is_null() {
                return Err(PyTypeError::new_err("the class has no allocator"));
            }
            let alloc: ffi::allocfunc = std::mem::transmute(slot);
            Bound::from_owned_ptr_or_err(py, alloc(tp, 0))
        }
    }
}

/// `object.__setattr__(obj, name, value)`, at the slot's `offset` when given
/// (by [`slot_offset`] for `obj`'s class).
fn store(
    obj: &Bound<'_, PyAny>,
    offset: Option<isize>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    match offset {
        #[cfg(not(feature = "abi3"))]
        Some(offset) => {
            // SAFETY: `offset` is that of a writable object slot (`T_OBJECT_EX`)
            // of `obj`'s class or a base (`slot_offset`), so `obj` holds a
            // `PyObject *` there, NULL until set. What `PyMember_SetOne` does
            // for such a slot: the new value's reference is stored, the old
            // one's released.
            unsafe {
                let slot = obj.as_ptr().cast::<u8>().offset(offset).cast::<*mut ffi::PyObject>();
                let old = slot.read();
                slot.write(value.clone().into_ptr());
                ffi::Py_XDECREF(old);
            }
            Ok(())
        }
        _ => set(obj, name, value),
    }
}

/// The offset of the plain object slot that `type(obj).__setattr__`'s generic
/// path would set for `name` on an instance of `cls`: the descriptor found on
/// the MRO (as `_PyType_Lookup` finds it) is a `member_descriptor` of type
/// `T_OBJECT_EX`, not read-only. None for anything else, and in the `abi3` build.
fn slot_offset(cls: &Bound<'_, PyType>, name: &str) -> PyResult<Option<isize>> {
    #[cfg(not(feature = "abi3"))]
    for base in cls.mro().iter() {
        let Some(found) = base.getattr("__dict__")?.get_item(name).ok() else { continue };
        // SAFETY: `found` is a live object; only a `member_descriptor` (its
        // type checked first) of a base of `cls` (checked next) is read as
        // `PyMemberDescrObject`, whose
        // `d_member` is the `PyMemberDef` it was made from (CPython's
        // descrobject.h: `PyDescr_COMMON; PyMemberDef *d_member;`, kept by the
        // type, which `cls` holds alive). pyo3-ffi types the field as a
        // `PyGetSetDef` pointer: it is read as the pointer it is.
        unsafe {
            let member_type = std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type);
            if ffi::Py_TYPE(found.as_ptr()) != member_type {
                return Ok(None);
            }
            let descr = found.as_ptr().cast::<ffi::PyMemberDescrObject>();
            // A slot of another class's layout (a descriptor assigned
            // across classes) is not ours to write: the generic path refuses it.
            if ffi::PyType_IsSubtype(cls.as_type_ptr(), (*descr).d_common.d_type) == 0 {
                return Ok(None);
            }
            let def = (*descr).d_member.cast::<ffi::PyMemberDef>();
            if def.is_null()
                || (*def).type_code != ffi::Py_T_OBJECT_EX
                || (*def).flags & ffi::Py_READONLY != 0
            {
                return Ok(None);
            }
            return Ok(Some((*def).offset));
        }
    }
    let _ = (cls, name);
    Ok(None)
}

/// `object.__setattr__(obj, name, value)`.
fn set(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: three live objects, the GIL held; returns -1 with an exception set on failure.
    let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if rc < 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}

/// Adds this module's class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Builder>()?;
    Ok(())
}
