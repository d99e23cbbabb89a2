//! Taking a run of matched text-and-usage chunks in one call: `streamwire._core.TextUsageTaker`.
//!
//! Gemini sends every chunk of a long answer as one candidate's text part
//! plus a usage snapshot that changed (its output count grows). Matched in
//! Rust (`ShapeMatcher`), such a chunk still cost the adapter about 1.5 us
//! of Python: the text's event, then decoding the snapshot, checking its
//! figures and building the `Usage` and its event. A `TextUsageTaker` does
//! those steps for a run of match tuples `(template, text, index,
//! usage_text, response_id, ticket)` from the list `feed_matched` returned,
//! while the adapter's state lets every one of them take its fast path (the
//! adapter says so per call: which choice, its text list, whether the
//! response id is known, the last snapshot's text and mapping), and stops at
//! the first it cannot take, which the adapter then handles itself.
//!
//! What the figures mean is the adapter's: `figures` lists, for each of the
//! usage builder's first fields, the snapshot keys whose integer values it
//! sums (None when none is an integer); a snapshot without any integer among
//! `required` is no report. The snapshot's text is decoded by
//! `json_value::decode_object` (a strict subset of JSON, declined otherwise:
//! the chunk is then the adapter's), its outer object built as `mapping`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple, PyType};

use crate::json_value::{decode_object, plain_mapping, KeyCache};
use crate::objects::Builder;

/// The most keys one figure sums (nine 18-digit integers fit `i64`).
const MAX_SUMMED: usize = 9;

/// Takes runs of text-and-usage match tuples (see the module docs).
#[pyclass(module = "streamwire._core", name = "TextUsageTaker")]
pub struct TextUsageTaker {
    template: usize,
    text: Py<Builder>,
    usage: Py<Builder>,
    reported: Py<Builder>,
    mapping: Py<PyType>,
    /// Per usage field: the keys summed.
    figures: Vec<Vec<Py<PyString>>>,
    required: Vec<Py<PyString>>,
    keys: KeyCache,
    /// The last snapshot's outer integer members (see `decode_object`).
    ints: Vec<(usize, i64)>,
    /// The figures of the last report this taker built, and its mapping.
    last_figures: Option<(Vec<Option<i64>>, PyObject)>,
    usage_text: Option<Py<PyString>>,
    usage_raw: PyObject,
    last_usage: PyObject,
    taken: u64,
}

#[pymethods]
impl TextUsageTaker {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (template, *, text, usage, reported, mapping, figures, required))]
    fn new(
        py: Python<'_>,
        template: usize,
        text: Py<Builder>,
        usage: Py<Builder>,
        reported: Py<Builder>,
        mapping: Bound<'_, PyType>,
        figures: Vec<Vec<String>>,
        required: Vec<String>,
    ) -> PyResult<Self> {
        if !plain_mapping(&mapping)? {
            return Err(PyValueError::new_err(
                "mapping must be a dict subclass with dict's own __new__ and __init__",
            ));
        }
        text.get().check_fixed(1)?;
        reported.get().check_fixed(0)?;
        // The usage builder's fields: the figures, `final`, `raw`, and any
        // more (set to None).
        if figures.is_empty() || usage.get().fixed_count() < figures.len() + 1 {
            return Err(PyValueError::new_err("the usage builder needs the figures, final and raw"));
        }
        if figures.iter().any(|keys| keys.len() > MAX_SUMMED) {
            return Err(PyValueError::new_err(format!("a figure sums at most {MAX_SUMMED} keys")));
        }
        let intern = |keys: &[String]| keys.iter().map(|k| PyString::intern(py, k).unbind()).collect();
        Ok(TextUsageTaker {
            template,
            text,
            usage,
            reported,
            mapping: mapping.unbind(),
            figures: figures.iter().map(|keys| intern(keys)).collect(),
            required: intern(&required),
            keys: KeyCache::default(),
            ints: Vec::new(),
            last_figures: None,
            usage_text: None,
            usage_raw: py.None(),
            last_usage: py.None(),
            taken: 0,
        })
    }

    /// Takes `units[start:]` while each is a match of the template with the
    /// given choice `index` (an absent index is 0), a `str` text, a usage
    /// text that is absent, the last one, or one the decoder takes, and no
    /// response id unless `id_known`: appends each one's text to `texts`, its
    /// events to `out`. Returns the index of the first unit not taken;
    /// `usage_text`, `usage_raw` and `usage` then hold the state it ended in.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        py: Python<'_>,
        units: &Bound<'_, PyList>,
        start: usize,
        out: &Bound<'_, PyList>,
        index: i64,
        texts: &Bound<'_, PyList>,
        id_known: bool,
        usage_text: Option<Py<PyString>>,
        usage_raw: PyObject,
    ) -> PyResult<usize> {
        self.usage_text = usage_text;
        self.usage_raw = usage_raw;
        self.last_usage = py.None();
        let choice = PyTuple::new(py, [index])?;
        let mut at = start;
        while at < units.len() {
            let unit = units.get_item(at)?;
            let Ok(unit) = unit.downcast::<PyTuple>() else { break };
            if !self.take_one(py, unit, out, index, &choice, texts, id_known)? {
                break;
            }
            at += 1;
        }
        self.taken += (at - start) as u64;
        Ok(at)
    }

    /// The last usage text seen (given to `take`, or taken since).
    #[getter]
    fn usage_text(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.usage_text.as_ref().map(|t| t.clone_ref(py))
    }

    /// The mapping of the last usage reported (given to `take`, or taken since).
    #[getter]
    fn usage_raw(&self, py: Python<'_>) -> PyObject {
        self.usage_raw.clone_ref(py)
    }

    /// The last `Usage` the last `take` reported, or None.
    #[getter]
    fn usage(&self, py: Python<'_>) -> PyObject {
        self.last_usage.clone_ref(py)
    }

    /// Units taken, in all.
    #[getter]
    fn taken(&self) -> u64 {
        self.taken
    }
}

impl TextUsageTaker {
    /// Takes one unit, or returns false having changed nothing.
    #[allow(clippy::too_many_arguments)]
    fn take_one(
        &mut self,
        py: Python<'_>,
        unit: &Bound<'_, PyTuple>,
        out: &Bound<'_, PyList>,
        index: i64,
        choice: &Bound<'_, PyTuple>,
        texts: &Bound<'_, PyList>,
        id_known: bool,
    ) -> PyResult<bool> {
        if unit.len() != 6 || unit.get_item(0)?.extract::<usize>().ok() != Some(self.template) {
            return Ok(false);
        }
        let unit_index = unit.get_item(2)?;
        let same_choice =
            if unit_index.is_none() { index == 0 } else { unit_index.extract::<i64>().ok() == Some(index) };
        if !same_choice || (!id_known && !unit.get_item(4)?.is_none()) {
            return Ok(false);
        }
        let text = unit.get_item(1)?;
        let Ok(text) = text.downcast::<PyString>() else { return Ok(false) };
        // The usage first: a snapshot the decoder declines leaves the unit untouched.
        let usage = unit.get_item(3)?;
        let mut report = None;
        let mut new_text = None;
        if !usage.is_none() {
            let Ok(usage) = usage.downcast_into::<PyString>() else { return Ok(false) };
            let same = match &self.usage_text {
                Some(last) => last.bind(py).as_any().eq(&usage)?,
                None => false,
            };
            if !same {
                let Ok(source) = usage.to_str() else { return Ok(false) };
                let mapping = self.mapping.bind(py);
                let Some(raw) = decode_object(py, source, mapping, &mut self.keys, &mut self.ints)? else {
                    return Ok(false);
                };
                let figures = self.figures();
                if figures.is_some() && !self.same_as_last(py, &figures, &raw)? {
                    report = figures.map(|figures| (raw, figures));
                }
                new_text = Some(usage.unbind());
            }
        }
        if !text.is_empty()? {
            texts.append(text)?;
            out.append(self.text.get().make(text.as_any(), choice)?)?;
        }
        if let Some(text) = new_text {
            self.usage_text = Some(text);
        }
        if let Some((raw, figures)) = report {
            let builder = self.usage.get();
            let value = |figure: &Option<i64>| match figure {
                Some(v) => v.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {}),
                None => py.None().into_bound(py),
            };
            let first = value(&figures[0]);
            let mut fixed: Vec<Bound<'_, PyAny>> = figures[1..].iter().map(value).collect();
            fixed.push(PyBool::new(py, false).to_owned().into_any());
            fixed.push(raw.clone().into_any());
            while fixed.len() < builder.fixed_count() {
                fixed.push(py.None().into_bound(py));
            }
            let usage = builder.make(&first, &PyTuple::new(py, fixed)?)?;
            let event = self.reported.get().make(&usage, &PyTuple::empty(py))?;
            out.append(event)?;
            let raw = raw.into_any().unbind();
            self.last_figures = Some((figures, raw.clone_ref(py)));
            self.usage_raw = raw;
            self.last_usage = usage.unbind();
        }
        Ok(true)
    }

    /// Each usage field's figure from the decoded snapshot's integers
    /// (`self.ints`), or None when no `required` key holds one (no report).
    fn figures(&self) -> Option<Vec<Option<i64>>> {
        let get =
            |key: &Py<PyString>| self.ints.iter().find(|(k, _)| *k == key.as_ptr() as usize).map(|(_, v)| *v);
        if !self.required.iter().any(|key| get(key).is_some()) {
            return None;
        }
        let sum = |keys: &Vec<Py<PyString>>| {
            // Integers of at most 18 digits, at most MAX_SUMMED of them: no overflow.
            keys.iter().filter_map(get).fold(None, |total: Option<i64>, v| Some(total.unwrap_or(0) + v))
        };
        Some(self.figures.iter().map(sum).collect())
    }

    /// Whether `raw` equals the last mapping reported (`usage_raw`), as
    /// `==` says; other figures than this taker's last report's settle it at once.
    fn same_as_last(
        &self,
        py: Python<'_>,
        figures: &Option<Vec<Option<i64>>>,
        raw: &Bound<'_, PyDict>,
    ) -> PyResult<bool> {
        let last = self.usage_raw.bind(py);
        if let (Some((kept, kept_raw)), Some(figures)) = (&self.last_figures, figures) {
            if kept_raw.is(last) && kept != figures {
                return Ok(false);
            }
        }
        raw.as_any().eq(last)
    }
}

/// Adds this module's class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TextUsageTaker>()?;
    Ok(())
}
