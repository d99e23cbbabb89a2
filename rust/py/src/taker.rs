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
//! It can also take matches before they become tuples: armed by the adapter
//! (`arm`, the same state `take` is given) and passed to a decoder's
//! `feed_matched` as its sink, it takes each match straight from the shape
//! matcher while nothing else has been decoded in that call, so a chunk it
//! takes costs no match tuple, no Python string for its usage text or
//! response id and no kept copy of its payload. The first match it cannot
//! take (and everything after it) is returned as before.
//!
//! What the figures mean is the adapter's: `figures` lists, for each of the
//! usage builder's first fields, the snapshot keys whose integer values it
//! sums (None when none is an integer); a snapshot without any integer among
//! `required` is no report. The snapshot's text is decoded by
//! `json_value::decode_object` (a strict subset of JSON, declined otherwise:
//! the chunk is then the adapter's), its outer object built as `mapping`;
//! a snapshot that is the last one with other counts is decoded by patching
//! a copy of the last one (`snapshot.rs`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple, PyType};

use streamwire_core::shape::{Capture, Match};

use crate::json_value::{plain_mapping, ValueCache};
use crate::objects::Builder;
use crate::snapshot::Snapshots;
use crate::text::new_str;

/// The most keys one figure sums (nine 18-digit integers fit `i64`).
const MAX_SUMMED: usize = 9;
/// The most figures (the usage builder's first fields) a taker reports.
const MAX_FIGURES: usize = 8;

/// One report's figures, in the usage builder's field order (the first `len`).
#[derive(Clone, Copy, PartialEq)]
struct Figures {
    values: [Option<i64>; MAX_FIGURES],
    len: usize,
}

impl Figures {
    fn values(&self) -> &[Option<i64>] {
        &self.values[..self.len]
    }
}

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
    keys: ValueCache,
    /// The last snapshot decoded, patched for the next (see `snapshot.rs`).
    snapshots: Snapshots,
    /// The figures of the last report this taker built, and its mapping.
    last_figures: Option<(Figures, PyObject)>,
    /// The last usage text seen, and its `str` once one exists.
    usage_text: Option<String>,
    usage_text_py: Option<Py<PyString>>,
    usage_raw: PyObject,
    last_usage: PyObject,
    taken: u64,
    /// The state `arm` gave, until the `feed_matched` call it is for ends.
    armed: Option<Armed>,
    /// Matches taken as a sink since the last `arm`.
    sunk: u64,
    /// The last choice index armed for, as the tuple its events carry.
    choice: Option<(i64, Py<PyTuple>)>,
}

/// What one `take` (or one armed `feed_matched` call) takes matches for.
struct Armed {
    index: i64,
    /// The fixed values of each taken text's event: `(index,)` unless given.
    choice: Py<PyTuple>,
    texts: Py<PyList>,
    /// A second list each taken text is appended to (a content block's own).
    also: Option<Py<PyList>>,
    id_known: bool,
}

impl Armed {
    /// The state for `index`'s matches, its events' `(index,)` tuple taken
    /// from `last` (the tuple of the last index armed for) when it is the
    /// same index, else built and kept there.
    fn new(
        py: Python<'_>,
        last: &mut Option<(i64, Py<PyTuple>)>,
        index: i64,
        texts: &Bound<'_, PyList>,
        id_known: bool,
    ) -> PyResult<Armed> {
        let choice = match last {
            Some((at, choice)) if *at == index => choice.clone_ref(py),
            _ => {
                let choice = PyTuple::new(py, [index])?.unbind();
                *last = Some((index, choice.clone_ref(py)));
                choice
            }
        };
        Ok(Armed { index, choice, texts: texts.clone().unbind(), also: None, id_known })
    }

    /// A taken text: appended to the choice's texts, its event (`text`'s
    /// `one(text, *choice)`) to `out`.
    fn push_text(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        builder: &Builder,
        out: &Bound<'_, PyList>,
    ) -> PyResult<()> {
        self.texts.bind(py).append(text)?;
        if let Some(also) = &self.also {
            also.bind(py).append(text)?;
        }
        out.append(builder.make(text.as_any(), self.choice.bind(py))?)
    }
}

/// A unit's parts, from a match tuple or straight from a match.
struct Unit<'a, 'py> {
    /// The choice index, None when absent.
    index: Option<i64>,
    text: UnitText<'a, 'py>,
    usage: Option<&'a str>,
    has_id: bool,
}

enum UnitText<'a, 'py> {
    Py(Bound<'py, PyString>),
    Rust(&'a str),
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
        if figures.len() > MAX_FIGURES {
            return Err(PyValueError::new_err(format!("at most {MAX_FIGURES} figures")));
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
            keys: ValueCache::default(),
            snapshots: Snapshots::default(),
            last_figures: None,
            usage_text: None,
            usage_text_py: None,
            usage_raw: py.None(),
            last_usage: py.None(),
            taken: 0,
            armed: None,
            sunk: 0,
            choice: None,
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
        usage_text: Option<Bound<'_, PyString>>,
        usage_raw: PyObject,
    ) -> PyResult<usize> {
        self.arm(py, index, texts, id_known, usage_text, usage_raw)?;
        let mut at = start;
        while at < units.len() {
            let unit = units.get_item(at)?;
            let Ok(unit) = unit.downcast::<PyTuple>() else { break };
            if !self.take_tuple(py, unit, out)? {
                break;
            }
            at += 1;
        }
        self.armed = None;
        self.taken += (at - start) as u64;
        Ok(at)
    }

    /// Sets the state `take` is given, for the next `feed_matched` call this
    /// taker is the sink of; `sunk` then says how many matches it took.
    fn arm(
        &mut self,
        py: Python<'_>,
        index: i64,
        texts: &Bound<'_, PyList>,
        id_known: bool,
        usage_text: Option<Bound<'_, PyString>>,
        usage_raw: PyObject,
    ) -> PyResult<()> {
        // The text this taker gave back (the adapter keeps it) is the one it
        // holds; any other is copied. A str without a UTF-8 form (lone
        // surrogates) equals no usage text a match carries: kept as unknown,
        // the next snapshot is decoded.
        let held = match (&usage_text, &self.usage_text_py) {
            (Some(given), Some(held)) => given.is(held),
            _ => false,
        };
        if !held {
            self.usage_text = usage_text.as_ref().and_then(|t| t.to_str().ok()).map(str::to_owned);
            self.usage_text_py = usage_text.map(Bound::unbind);
        }
        self.usage_raw = usage_raw;
        self.last_usage = py.None();
        self.sunk = 0;
        self.armed = Some(Armed::new(py, &mut self.choice, index, texts, id_known)?);
        Ok(())
    }

    /// Matches taken as a sink since the last `arm`.
    #[getter]
    fn sunk(&self) -> u64 {
        self.sunk
    }

    /// The last usage text seen (given to `take` or `arm`, or taken since).
    #[getter]
    fn usage_text(&mut self, py: Python<'_>) -> Option<Py<PyString>> {
        if self.usage_text_py.is_none() {
            self.usage_text_py = self.usage_text.as_deref().map(|t| PyString::new(py, t).unbind());
        }
        self.usage_text_py.as_ref().map(|t| t.clone_ref(py))
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

    /// Usage snapshots decoded by patching the last one (`snapshot.rs`).
    #[getter]
    fn patched(&self) -> u64 {
        self.snapshots.patched()
    }
}

impl TextUsageTaker {
    /// Takes a match straight from a decoder (this taker being its sink and
    /// armed), or returns false having changed nothing; a taker not armed
    /// takes nothing.
    fn take_match(&mut self, py: Python<'_>, m: &Match<'_>, out: &Bound<'_, PyList>) -> PyResult<bool> {
        if self.armed.is_none() || m.template != self.template {
            return Ok(false);
        }
        let [text, index, usage, id] = m.captures() else { return Ok(false) };
        let index = match index {
            Capture::Absent => None,
            Capture::Int(value) => Some(*value),
            _ => return Ok(false),
        };
        let text = match text {
            Capture::Str(text) => UnitText::Rust(text),
            _ => return Ok(false),
        };
        let usage = match usage {
            Capture::Absent => None,
            Capture::Raw(text) => Some(*text),
            _ => return Ok(false),
        };
        let unit = Unit { index, text, usage, has_id: !matches!(id, Capture::Absent) };
        let taken = self.take_unit(py, unit, out)?;
        if taken {
            self.sunk += 1;
            self.taken += 1;
        }
        Ok(taken)
    }

    /// Takes one match tuple, or returns false having changed nothing.
    fn take_tuple(
        &mut self,
        py: Python<'_>,
        unit: &Bound<'_, PyTuple>,
        out: &Bound<'_, PyList>,
    ) -> PyResult<bool> {
        if unit.len() != 6 || unit.get_item(0)?.extract::<usize>().ok() != Some(self.template) {
            return Ok(false);
        }
        let index = unit.get_item(2)?;
        let index = if index.is_none() {
            None
        } else {
            match index.extract::<i64>() {
                Ok(value) => Some(value),
                Err(_) => return Ok(false),
            }
        };
        let Ok(text) = unit.get_item(1)?.downcast_into::<PyString>() else { return Ok(false) };
        let usage = unit.get_item(3)?;
        let usage = if usage.is_none() {
            None
        } else {
            let Ok(usage) = usage.downcast_into::<PyString>() else { return Ok(false) };
            Some(usage)
        };
        let usage = match &usage {
            None => None,
            Some(usage) => match usage.to_str() {
                Ok(text) => Some(text),
                // No UTF-8 form: not a text the decoder takes.
                Err(_) => return Ok(false),
            },
        };
        let unit = Unit { index, text: UnitText::Py(text), usage, has_id: !unit.get_item(4)?.is_none() };
        self.take_unit(py, unit, out)
    }

    /// Takes one unit, or returns false having changed nothing.
    fn take_unit(&mut self, py: Python<'_>, unit: Unit<'_, '_>, out: &Bound<'_, PyList>) -> PyResult<bool> {
        let Some(armed) = &self.armed else { return Ok(false) };
        if unit.index.unwrap_or(0) != armed.index || (unit.has_id && !armed.id_known) {
            return Ok(false);
        }
        // The usage first: a snapshot the decoder declines leaves the unit untouched.
        let mut report = None;
        let mut changed = false;
        if let Some(source) = unit.usage {
            if self.usage_text.as_deref() != Some(source) {
                let mapping = self.mapping.bind(py);
                let Some(raw) = self.snapshots.decode(py, source, mapping, &mut self.keys)? else {
                    return Ok(false);
                };
                let figures = self.figures();
                if figures.is_some() && !self.same_as_last(py, &figures, &raw)? {
                    report = figures.map(|figures| (raw, figures));
                }
                changed = true;
            }
        }
        let text = match unit.text {
            UnitText::Py(text) => (!text.is_empty()?).then_some(text),
            UnitText::Rust(text) => match text.is_empty() {
                true => None,
                false => Some(new_str(py, text)?),
            },
        };
        if let Some(text) = text {
            armed.push_text(py, &text, self.text.get(), out)?;
        }
        if changed {
            let text = self.usage_text.get_or_insert_with(String::new);
            text.clear();
            text.push_str(unit.usage.unwrap_or_default());
            self.usage_text_py = None;
        }
        if let Some((raw, figures)) = report {
            let builder = self.usage.get();
            let outer = self.snapshots.outer();
            // A figure of one member is that member's `int`, the object the
            // mapping holds; a sum is a new one.
            let value = |(figure, summed): (&Option<i64>, &Vec<Py<PyString>>)| {
                let mut members = summed.iter().filter_map(|key| outer.and_then(|o| o.member(key)));
                match (figure, members.next(), members.next()) {
                    (Some(_), Some(only), None) => only.object.bind(py).clone(),
                    (Some(v), _, _) => {
                        v.into_pyobject(py).map(Bound::into_any).unwrap_or_else(|e| match e {})
                    }
                    (None, _, _) => py.None().into_bound(py),
                }
            };
            let mut figured = figures.values().iter().zip(&self.figures);
            let Some(first) = figured.next() else { return Ok(true) };
            let first = value(first);
            let rest = figured.len();
            let figures_after = figured.map(value);
            let given = [PyBool::new(py, false).to_owned().into_any(), raw.clone().into_any()];
            let padding = builder.fixed_count().saturating_sub(rest + given.len());
            let fixed =
                figures_after.chain(given).chain(std::iter::repeat(py.None().into_bound(py)).take(padding));
            let usage = builder.make_with(&first, fixed)?;
            let event = self.reported.get().make_with(&usage, std::iter::empty())?;
            out.append(event)?;
            let raw = raw.into_any().unbind();
            self.last_figures = Some((figures, raw.clone_ref(py)));
            self.usage_raw = raw;
            self.last_usage = usage.unbind();
        }
        Ok(true)
    }

    /// Each usage field's figure from the decoded snapshot's integers, or
    /// None when no `required` key holds one (no report).
    fn figures(&self) -> Option<Figures> {
        let outer = self.snapshots.outer()?;
        let get = |key: &Py<PyString>| outer.member(key).map(|m| m.value);
        if !self.required.iter().any(|key| get(key).is_some()) {
            return None;
        }
        let sum = |keys: &Vec<Py<PyString>>| {
            // Integers of at most 18 digits, at most MAX_SUMMED of them: no overflow.
            keys.iter().filter_map(get).fold(None, |total: Option<i64>, v| Some(total.unwrap_or(0) + v))
        };
        let mut figures = Figures { values: [None; MAX_FIGURES], len: self.figures.len() };
        for (value, keys) in figures.values.iter_mut().zip(&self.figures) {
            *value = sum(keys);
        }
        Some(figures)
    }

    /// Whether `raw` equals the last mapping reported (`usage_raw`), as
    /// `==` says; other figures than this taker's last report's settle it at once.
    fn same_as_last(
        &self,
        py: Python<'_>,
        figures: &Option<Figures>,
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

/// What a decoder's `feed_matched` hands matches to before they become
/// tuples (see [`crate::shape::Collector`]): a taker armed for the call.
pub(crate) trait MatchSink {
    /// Takes one match (its events appended to `out`), or returns false
    /// having changed nothing; a sink not armed takes nothing.
    fn sink(&mut self, py: Python<'_>, m: &Match<'_>, out: &Bound<'_, PyList>) -> PyResult<bool>;

    /// Ends the armed call: the sink takes nothing more until armed again.
    fn disarm(&mut self);
}

impl MatchSink for TextUsageTaker {
    fn sink(&mut self, py: Python<'_>, m: &Match<'_>, out: &Bound<'_, PyList>) -> PyResult<bool> {
        self.take_match(py, m, out)
    }

    /// The state stays (`usage_text`, `usage_raw`, `usage`): only the arming ends.
    fn disarm(&mut self) {
        self.armed = None;
    }
}

/// Takes the text matches of one choice (or one content block) as a
/// decoder's sink: the Chat Completions fast path's text chunks, Anthropic's
/// text and thinking deltas (`streamwire._core.TextTaker`).
///
/// Armed (`arm(index, texts, fixed=None, also=None)`), it takes each match
/// of `template` whose captures are `(index, text)` with that index: a
/// non-empty text is appended to `texts` (and to `also`, when given: a
/// content block's own list beside its choice's) and its
/// `text.one(text, *fixed)` to the call's events (`fixed` is `(index,)`
/// unless given); an empty one
/// is taken with no event, as the adapters' runs of such chunks do.
/// Anything else it leaves, and the decoder returns it (and what follows)
/// as usual.
#[pyclass(module = "streamwire._core", name = "TextTaker")]
pub struct TextTaker {
    template: usize,
    text: Py<Builder>,
    armed: Option<Armed>,
    choice: Option<(i64, Py<PyTuple>)>,
    sunk: u64,
    taken: u64,
}

#[pymethods]
impl TextTaker {
    #[new]
    #[pyo3(signature = (template, *, text))]
    fn new(template: usize, text: Py<Builder>) -> PyResult<Self> {
        Ok(TextTaker { template, text, armed: None, choice: None, sunk: 0, taken: 0 })
    }

    /// Arms the taker for the next `feed_matched` call it is the sink of.
    #[pyo3(signature = (index, texts, fixed=None, also=None))]
    fn arm(
        &mut self,
        py: Python<'_>,
        index: i64,
        texts: &Bound<'_, PyList>,
        fixed: Option<&Bound<'_, PyTuple>>,
        also: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        self.sunk = 0;
        self.armed = None;
        let mut armed = match fixed {
            None => {
                self.text.get().check_fixed(1)?;
                Armed::new(py, &mut self.choice, index, texts, false)?
            }
            Some(fixed) => {
                self.text.get().check_fixed(fixed.len())?;
                let texts = texts.clone().unbind();
                Armed { index, choice: fixed.clone().unbind(), texts, also: None, id_known: false }
            }
        };
        armed.also = also.map(|list| list.clone().unbind());
        self.armed = Some(armed);
        Ok(())
    }

    /// Matches taken since the last `arm`.
    #[getter]
    fn sunk(&self) -> u64 {
        self.sunk
    }

    /// Matches taken, in all.
    #[getter]
    fn taken(&self) -> u64 {
        self.taken
    }
}

impl MatchSink for TextTaker {
    fn sink(&mut self, py: Python<'_>, m: &Match<'_>, out: &Bound<'_, PyList>) -> PyResult<bool> {
        let Some(armed) = &self.armed else { return Ok(false) };
        if m.template != self.template {
            return Ok(false);
        }
        let [Capture::Int(index), Capture::Str(text)] = m.captures() else { return Ok(false) };
        if *index != armed.index {
            return Ok(false);
        }
        if !text.is_empty() {
            armed.push_text(py, &new_str(py, text)?, self.text.get(), out)?;
        }
        self.sunk += 1;
        self.taken += 1;
        Ok(true)
    }

    fn disarm(&mut self) {
        self.armed = None;
    }
}

/// A decoder's sink, borrowed for one `feed_matched` call.
pub(crate) enum SinkRef<'py> {
    TextUsage(PyRefMut<'py, TextUsageTaker>),
    Text(PyRefMut<'py, TextTaker>),
}

impl<'py> SinkRef<'py> {
    /// `sink` (a `TextUsageTaker` or `TextTaker`) borrowed, for a call that
    /// appends its events to `out`; TypeError for anything else, or for a
    /// sink without a list or a list without a sink.
    pub(crate) fn borrow(
        sink: Option<&Bound<'py, PyAny>>,
        out: Option<&Bound<'py, PyList>>,
    ) -> PyResult<Option<Self>> {
        if sink.is_some() != out.is_some() {
            return Err(pyo3::exceptions::PyTypeError::new_err("a sink and its out list go together"));
        }
        let Some(sink) = sink else { return Ok(None) };
        if let Ok(taker) = sink.downcast::<TextUsageTaker>() {
            return Ok(Some(SinkRef::TextUsage(taker.try_borrow_mut()?)));
        }
        if let Ok(taker) = sink.downcast::<TextTaker>() {
            return Ok(Some(SinkRef::Text(taker.try_borrow_mut()?)));
        }
        Err(pyo3::exceptions::PyTypeError::new_err("a sink is a TextUsageTaker or a TextTaker"))
    }

    pub(crate) fn as_sink(&mut self) -> &mut dyn MatchSink {
        match self {
            SinkRef::TextUsage(taker) => &mut **taker,
            SinkRef::Text(taker) => &mut **taker,
        }
    }
}

/// Adds this module's classes to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TextUsageTaker>()?;
    m.add_class::<TextTaker>()?;
    Ok(())
}
