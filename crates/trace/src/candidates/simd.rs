//! simd-json as the reader of the events: its serde deserializer (stage 1 finds every structural
//! position 64 bytes at a time, stage 2 builds a tape that serde then walks) over each part.
//! simd-json has no raw numbers: `ts` and `dur` come as `f64` and are written back as their
//! shortest text, which is not the file's text past 15–17 significant digits.

use std::marker::PhantomData;

use serde::de::MapAccess;

use super::visit::{AnyScalar, AnyTime, Events, Flavor};
use crate::event::{Scalar, TimelineBuilder};

pub(crate) struct Simd;

impl Flavor for Simd {
    #[inline]
    fn scalar<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Scalar<'de>, A::Error> {
        map.next_value_seed(AnyScalar)
    }

    #[inline]
    fn time<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Scalar<'de>, A::Error> {
        map.next_value_seed(AnyTime)
    }
}

/// Reads `doc`, an array of events, into `builder` (simd-json rewrites `doc` in place); false when
/// it is not one (the caller then reads the text with the reference parser).
pub(crate) fn parse_part(
    doc: &mut [u8],
    buffers: &mut simd_json::Buffers,
    builder: &mut TimelineBuilder,
    context: &mut bool,
) -> bool {
    let Ok(mut de) = simd_json::Deserializer::from_slice_with_buffers(doc, buffers) else {
        return false;
    };
    let events = Events::<Simd> { builder, context, flavor: PhantomData };
    serde::Deserializer::deserialize_seq(&mut de, events).is_ok()
}
