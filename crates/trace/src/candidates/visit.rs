//! One serde visitor over an array of trace events, for any serde deserializer (sonic-rs,
//! simd-json): each element's keys are matched as they come, the values the analysis reads are
//! taken, everything else is skipped with the crate's own skipping (`IgnoredAny`), and the same
//! [`RawEvent`] as the reference parser's is handed to the same [`TimelineBuilder`]. Semantics are
//! the reference's (`serde_json::Value` of each element): a later duplicate key replaces an
//! earlier one, `ph`/`cat`/`name` count only as strings, a non-object `args` has no fields.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::event::{RawEvent, Scalar, TimelineBuilder};
use crate::fast::members::{Object, Slot};

/// The visitor methods of values passed over: each named method (with the type of the value it
/// is handed, none for unit and none) returns `Ok($value)`, `$value` evaluated with `$self`.
macro_rules! pass_over {
    ($self:ident => $value:expr; $($visit:ident $(($t:ty))?),* $(,)?) => {
        $(fn $visit<E>($self $(, _: $t)?) -> Result<Self::Value, E> {
            Ok($value)
        })*
    };
}

/// `visit_map` and `visit_seq` of a visitor that skips an object or an array and gives `$value`.
macro_rules! pass_over_compound {
    ($value:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($value)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($value)
        }
    };
}

/// A visitor of any value used as its own seed, giving `$value`.
macro_rules! seed_of_any {
    ($ty:ty => $value:ty) => {
        impl<'de> DeserializeSeed<'de> for $ty {
            type Value = $value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}

/// How a crate gives a scalar field: numbers as their text where it can.
pub(crate) trait Flavor {
    /// The value of the current member as a [`Scalar`].
    fn scalar<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Scalar<'de>, A::Error>;

    /// `ts` or `dur`.
    fn time<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Scalar<'de>, A::Error> {
        Self::scalar(map)
    }
}

/// The elements of an array of events, pushed one by one. `context` is set when a launchguard
/// context event was met: the caller reads that part again with the reference parser, which keeps
/// its `args` whole.
pub(crate) struct Events<'b, F> {
    pub builder: &'b mut TimelineBuilder,
    pub context: &'b mut bool,
    pub flavor: PhantomData<F>,
}

impl<'de, F: Flavor> Visitor<'de> for Events<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Element::<F> {
                builder: self.builder,
                context: self.context,
                flavor: PhantomData,
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct Element<'b, F> {
    builder: &'b mut TimelineBuilder,
    context: &'b mut bool,
    flavor: PhantomData<F>,
}

impl<'de, F: Flavor> DeserializeSeed<'de> for Element<'_, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A key read as the slot it fills in an object of kind `0`, by the byte scanner's own table.
struct SlotIn(Object);

impl<'de> DeserializeSeed<'de> for SlotIn {
    type Value = Slot;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Slot, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for SlotIn {
    type Value = Slot;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, k: &str) -> Result<Slot, E> {
        Ok(Slot::of(self.0, k.as_bytes()))
    }
}

impl<'de, F: Flavor> Visitor<'de> for Element<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut ev = RawEvent::default();
        while let Some(key) = map.next_key_seed(SlotIn(Object::Event))? {
            match key {
                Slot::Ph => ev.ph = map.next_value_seed(Text)?,
                Slot::Cat => ev.cat = map.next_value_seed(Text)?,
                Slot::Name => ev.name = map.next_value_seed(Text)?,
                Slot::Pid => ev.pid = F::scalar(&mut map)?,
                Slot::Tid => ev.tid = F::scalar(&mut map)?,
                Slot::Ts => ev.ts = F::time(&mut map)?,
                Slot::Dur => ev.dur = F::time(&mut map)?,
                Slot::Args => map.next_value_seed(Args::<F> { ev: &mut ev, flavor: PhantomData })?,
                _ => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        if ev.ph.as_deref() == Some("M") && ev.name.as_deref() == Some(crate::CONTEXT_EVENT) {
            *self.context = true;
        }
        self.builder.push(&ev);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.builder.push_non_object();
        Ok(())
    }

    pass_over!(self => self.builder.push_non_object();
        visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit, visit_none);
}

/// `args`: a later `args` replaces an earlier one, as in a JSON map.
struct Args<'b, 'de, F> {
    ev: &'b mut RawEvent<'de>,
    flavor: PhantomData<F>,
}

impl<'de, F: Flavor> DeserializeSeed<'de> for Args<'_, 'de, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.ev.device = Scalar::Missing;
        self.ev.stream = Scalar::Missing;
        self.ev.correlation = Scalar::Missing;
        d.deserialize_any(self)
    }
}

impl<'de, F: Flavor> Visitor<'de> for Args<'_, 'de, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("args")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(SlotIn(Object::Args))? {
            match key {
                Slot::Device => self.ev.device = F::scalar(&mut map)?,
                Slot::Stream => self.ev.stream = F::scalar(&mut map)?,
                Slot::Correlation => self.ev.correlation = F::scalar(&mut map)?,
                _ => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    pass_over!(self => ();
        visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str), visit_unit, visit_none);
}

/// `ph`, `cat`, `name`: kept when a string, `None` otherwise.
struct Text;

seed_of_any!(Text => Option<Cow<'de, str>>);

impl<'de> Visitor<'de> for Text {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(s.to_string())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(s)))
    }
    pass_over_compound!(None);
    pass_over!(self => None; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_unit, visit_none);
}

/// `ts` or `dur` from any value, a number through the deserializer's `f64` (or integer) turned
/// into nanoseconds directly (no text: formatting floats was a tenth of simd-json's run); exact
/// only where the `f64` is.
pub(crate) struct AnyTime;

seed_of_any!(AnyTime => Scalar<'de>);

impl<'de> Visitor<'de> for AnyTime {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(match i64::try_from(n).ok().and_then(|n| n.checked_mul(1000)) {
            Some(ns) => Scalar::Micros(Cow::Borrowed(""), ns),
            None => Scalar::Num(Cow::Owned(n.to_string())),
        })
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(match n.checked_mul(1000) {
            Some(ns) => Scalar::Micros(Cow::Borrowed(""), ns),
            None => Scalar::Num(Cow::Owned(n.to_string())),
        })
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        let ns = (n * 1000.0).round();
        Ok(if ns.is_finite() && ns.abs() < 9.2e18 {
            Scalar::Micros(Cow::Borrowed(""), ns as i64)
        } else {
            Scalar::Num(Cow::Owned(n.to_string()))
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        AnyScalar.visit_borrowed_str(s)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        AnyScalar.visit_str(s)
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        AnyScalar.visit_string(s)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        AnyScalar.visit_map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        AnyScalar.visit_seq(seq)
    }
    pass_over!(self => Scalar::Other; visit_bool(bool), visit_unit, visit_none);
}

/// A scalar from any value, numbers through the deserializer's own `u64`/`i64`/`f64` (for crates
/// without raw numbers: a float's shortest text, which is not always the text of the file).
pub(crate) struct AnyScalar;

seed_of_any!(AnyScalar => Scalar<'de>);

impl<'de> Visitor<'de> for AnyScalar {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(s.to_string())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(s)))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(Cow::Owned(n.to_string())))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(Cow::Owned(n.to_string())))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Num(Cow::Owned(n.to_string())))
    }
    pass_over_compound!(Scalar::Other);
    pass_over!(self => Scalar::Other; visit_bool(bool), visit_unit, visit_none);
}
