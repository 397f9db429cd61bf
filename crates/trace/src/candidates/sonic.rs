//! sonic-rs as the reader of the events: its serde deserializer over each part (SIMD skipping of
//! the members not read), numbers taken as their raw text through `LazyValue`, so `ts` and `dur`
//! stay exact.

use std::marker::PhantomData;

use serde::de::MapAccess;
use sonic_rs::LazyValue;

use super::visit::{Events, Flavor};
use crate::event::{Scalar, TimelineBuilder};

pub(crate) struct Sonic;

impl Flavor for Sonic {
    #[inline]
    fn scalar<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Scalar<'de>, A::Error> {
        let lv: LazyValue<'de> = map.next_value()?;
        Ok(super::raw_scalar(lv.as_raw_cow()))
    }
}

/// Reads `doc`, an array of events, into `builder`; false when it is not one (the caller then
/// reads the text with the reference parser).
pub(crate) fn parse_part(doc: &[u8], builder: &mut TimelineBuilder, context: &mut bool) -> bool {
    let mut de = sonic_rs::Deserializer::from_slice(doc);
    let events = Events::<Sonic> { builder, context, flavor: PhantomData };
    serde::Deserializer::deserialize_seq(&mut de, events).is_ok() && de.end().is_ok()
}
