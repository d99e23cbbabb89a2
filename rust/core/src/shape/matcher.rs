//! Matching one JSON text against one compiled pattern, in a single parse.
//!
//! The pattern drives a `serde_json` deserializer through `DeserializeSeed`s:
//! each pattern node asks for exactly the JSON type it allows, ignored values
//! are parsed and dropped ([`Skip`]), and a deviation stops the parse at once
//! with a custom error whose [`Decline`] reason is kept on the side.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::{Capture, CaptureKind, Decline, ObjectPattern, Pattern, MAX_CAPTURES};

type Captures<'a> = [Capture<'a>; MAX_CAPTURES];

/// What one match attempt has found so far.
struct State<'a> {
    captures: Captures<'a>,
    /// Set with every error the matcher raises itself; serde's own errors
    /// (syntax, a type the deserializer was not asked for) leave it unset.
    reason: Option<Decline>,
}

impl<'a> State<'a> {
    fn decline<E: de::Error>(&mut self, reason: Decline) -> E {
        self.reason = Some(reason);
        E::custom(reason.as_str())
    }
}

/// Matches the whole of `data` against `root`.
pub(super) fn match_template<'a>(root: &Pattern, data: &'a str) -> Result<Captures<'a>, Decline> {
    let mut state = State { captures: std::array::from_fn(|_| Capture::Absent), reason: None };
    let mut de = serde_json::Deserializer::from_str(data);
    let parsed =
        PatternSeed { pattern: root, state: &mut state }.deserialize(&mut de).and_then(|()| de.end());
    match parsed {
        Ok(()) => Ok(state.captures),
        Err(err) => Err(state.reason.unwrap_or(match err.classify() {
            // A value of another type than the pattern asked for.
            serde_json::error::Category::Data => Decline::Mismatch,
            _ => Decline::Syntax,
        })),
    }
}

struct PatternSeed<'p, 's, 'a> {
    pattern: &'p Pattern,
    state: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for PatternSeed<'_, '_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let state = self.state;
        match self.pattern {
            Pattern::Any => d.deserialize_any(Skip),
            Pattern::Falsy => d.deserialize_any(FalsyVisitor { state }),
            Pattern::Object(object) => d.deserialize_map(ObjectVisitor { object, state }),
            Pattern::Array(items) => d.deserialize_seq(ArrayVisitor { items, state }),
            Pattern::Capture(CaptureKind::Str, slot) => {
                let text = d.deserialize_str(StrVisitor)?;
                state.captures[*slot] = Capture::Str(text);
                Ok(())
            }
            Pattern::Capture(CaptureKind::Int, slot) => {
                let value = d.deserialize_any(IntVisitor { state: &mut *state })?;
                state.captures[*slot] = Capture::Int(value);
                Ok(())
            }
            Pattern::Capture(CaptureKind::Raw, slot) => {
                let raw: &'de RawValue = de::Deserialize::deserialize(d)?;
                // serde_json skips a raw value without its nesting limit and
                // without pairing surrogate escapes: parse it again as any
                // other value, so that it declines what they decline.
                let text = raw.get();
                let mut inner = serde_json::Deserializer::from_str(text);
                if de::Deserializer::deserialize_any(&mut inner, Skip).is_err() {
                    return Err(state.decline(Decline::Syntax));
                }
                state.captures[*slot] = Capture::Raw(text);
                Ok(())
            }
            literal => d.deserialize_any(LiteralVisitor { literal, state }),
        }
    }
}

/// A closed object: every key listed, none twice, every required one present.
struct ObjectVisitor<'p, 's, 'a> {
    object: &'p ObjectPattern,
    state: &'s mut State<'a>,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let fields = &self.object.fields;
        let state = self.state;
        let mut seen = 0u64;
        while let Some(index) = map.next_key_seed(KeySeed { fields, state: &mut *state })? {
            let bit = 1u64 << index;
            if seen & bit != 0 {
                return Err(state.decline(Decline::DuplicateKey));
            }
            seen |= bit;
            map.next_value_seed(PatternSeed { pattern: &fields[index].pattern, state: &mut *state })?;
        }
        if self.object.required & !seen != 0 {
            return Err(state.decline(Decline::MissingKey));
        }
        Ok(())
    }
}

/// An object key: the index of the field it names, or a decline.
struct KeySeed<'p, 's, 'a> {
    fields: &'p [super::Field],
    state: &'s mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_, '_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_, '_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        match self.fields.iter().position(|field| &*field.key == key) {
            Some(index) => Ok(index),
            None => Err(self.state.decline(Decline::UnknownKey)),
        }
    }
}

/// A fixed-length array, element by element.
struct ArrayVisitor<'p, 's, 'a> {
    items: &'p [Pattern],
    state: &'s mut State<'a>,
}

impl<'de> Visitor<'de> for ArrayVisitor<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let state = self.state;
        for pattern in self.items {
            if seq.next_element_seed(PatternSeed { pattern, state: &mut *state })?.is_none() {
                return Err(state.decline(Decline::Length));
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(state.decline(Decline::Length));
        }
        Ok(())
    }
}

/// Any valid JSON value, validated and dropped.
///
/// Not `IgnoredAny`: `serde_json` skips ignored values without its nesting
/// limit, while CPython's decoder fails on deep nesting (`RecursionError`),
/// so a deeply nested payload must decline as it does under a pattern. Going
/// through `deserialize_any` keeps `serde_json`'s limit of 128 levels.
#[derive(Clone, Copy)]
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Skip)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }
}

/// A value Python treats as false once decoded: `null`, `false`, the integer
/// `0`, `""`, `[]` or `{}` (a zero written as a float declines).
struct FalsyVisitor<'s, 'a> {
    state: &'s mut State<'a>,
}

impl FalsyVisitor<'_, '_> {
    fn check<E: de::Error>(self, falsy: bool) -> Result<(), E> {
        if falsy {
            Ok(())
        } else {
            Err(self.state.decline(Decline::Mismatch))
        }
    }
}

impl<'de> Visitor<'de> for FalsyVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a falsy value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.check(true)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.check(!v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.check(v == 0)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.check(v == 0)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        // Declined, even 0.0: whether a tiny float is zero depends on rounding
        // that serde_json (without float_roundtrip) need not do as Python does.
        self.check(false)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.check(v.is_empty())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let empty = seq.next_element::<IgnoredAny>()?.is_none();
        self.check(empty)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let empty = map.next_key::<IgnoredAny>()?.is_none();
        self.check(empty)
    }
}

/// A string, borrowed from the payload when it has no escapes.
struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// An integer without fraction or exponent that fits `i64`.
struct IntVisitor<'s, 'a> {
    state: &'s mut State<'a>,
}

impl Visitor<'_> for IntVisitor<'_, '_> {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| self.state.decline(Decline::IntRange))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<i64, E> {
        // serde_json parses integers beyond u64 as floats too.
        Err(self.state.decline(Decline::IntRange))
    }
}

/// A literal: null, a boolean, an integer or a string, equal to the template's.
struct LiteralVisitor<'p, 's, 'a> {
    literal: &'p Pattern,
    state: &'s mut State<'a>,
}

impl LiteralVisitor<'_, '_, '_> {
    fn check<E: de::Error>(self, equal: bool) -> Result<(), E> {
        if equal {
            Ok(())
        } else {
            Err(self.state.decline(Decline::Mismatch))
        }
    }
}

impl<'de> Visitor<'de> for LiteralVisitor<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a literal")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        let equal = matches!(self.literal, Pattern::Null);
        self.check(equal)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        let equal = matches!(self.literal, Pattern::Bool(b) if *b == v);
        self.check(equal)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        let equal = matches!(self.literal, Pattern::Int(i) if *i == v);
        self.check(equal)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        let equal = matches!(self.literal, Pattern::Int(i) if u64::try_from(*i) == Ok(v));
        self.check(equal)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.check(false)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let equal = matches!(self.literal, Pattern::Str(s) if &**s == v);
        self.check(equal)
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.check(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.check(false)
    }
}
