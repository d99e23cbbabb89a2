//! Template specs: an ordered JSON-like value, and its compilation to a pattern.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{CaptureKind, Field, ObjectPattern, Pattern, MAX_FIELDS};

/// A template as written (see the module docs for its grammar): a JSON value
/// whose objects keep their key order, since captures are numbered in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A string literal or a `$` directive.
    Str(String),
    /// A fixed-length array.
    Array(Vec<Spec>),
    /// A closed object, keys in template order.
    Object(Vec<(String, Spec)>),
}

impl Spec {
    /// Parses a spec from JSON text (floats and integers beyond `i64` are errors).
    pub fn parse(text: &str) -> Result<Spec, SpecError> {
        serde_json::from_str(text).map_err(|e| SpecError::new(format!("a spec is not valid JSON: {e}")))
    }
}

/// An invalid template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    message: String,
}

impl SpecError {
    pub(super) fn new(message: String) -> Self {
        SpecError { message }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpecError {}

/// Compiles `spec`, numbering its captures from `*captures` on.
pub(super) fn compile(spec: &Spec, captures: &mut usize) -> Result<Pattern, SpecError> {
    Ok(match spec {
        Spec::Null => Pattern::Null,
        Spec::Bool(b) => Pattern::Bool(*b),
        Spec::Int(i) => Pattern::Int(*i),
        Spec::Str(s) => match s.strip_prefix('$') {
            None => Pattern::Str(s.as_str().into()),
            Some(rest) if rest.starts_with('$') => Pattern::Str(rest.into()),
            Some("any") => Pattern::Any,
            Some("falsy") => Pattern::Falsy,
            Some(directive) => {
                let kind = match directive {
                    "str" => CaptureKind::Str,
                    "int" => CaptureKind::Int,
                    "raw" => CaptureKind::Raw,
                    _ => {
                        return Err(SpecError::new(format!(
                            "unknown directive {s:?} (expected $any, $falsy, $str, $int or $raw; \
                             write a literal '$' as '$$')"
                        )))
                    }
                };
                let slot = *captures;
                *captures += 1;
                Pattern::Capture(kind, slot)
            }
        },
        Spec::Array(items) => {
            Pattern::Array(items.iter().map(|item| compile(item, captures)).collect::<Result<_, _>>()?)
        }
        Spec::Object(entries) => {
            if entries.len() > MAX_FIELDS {
                return Err(SpecError::new(format!(
                    "an object lists {} keys; at most {MAX_FIELDS} are allowed",
                    entries.len()
                )));
            }
            let mut fields: Vec<Field> = Vec::with_capacity(entries.len());
            let mut required = 0u64;
            for (i, (name, value)) in entries.iter().enumerate() {
                let (key, optional) = match name.strip_suffix('?') {
                    Some(key) => (key, true),
                    None => (name.as_str(), false),
                };
                if fields.iter().any(|f| &*f.key == key) {
                    return Err(SpecError::new(format!("the key {key:?} is listed twice")));
                }
                if !optional {
                    required |= 1u64 << i;
                }
                fields.push(Field { key: key.into(), pattern: compile(value, captures)? });
            }
            Pattern::Object(ObjectPattern { fields: fields.into_boxed_slice(), required })
        }
    })
}

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SpecVisitor)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = Spec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a template: null, a boolean, an integer, a string, an array or an object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Spec, E> {
        Ok(Spec::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Spec, E> {
        Ok(Spec::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Spec, E> {
        Ok(Spec::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Spec, E> {
        i64::try_from(v).map(Spec::Int).map_err(|_| E::custom("an integer literal beyond i64"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Spec, E> {
        Ok(Spec::Str(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Spec, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Spec::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Spec, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Spec>()? {
            entries.push((key, value));
        }
        Ok(Spec::Object(entries))
    }
}
