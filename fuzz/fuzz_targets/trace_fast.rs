//! The fast trace parser against the reference parser on the same bytes, whole and in parallel
//! parts, with the default caps and with small ones: the same timeline (`canonical_text`) or the
//! same error; never a panic, an abort, a hang or a memory blow-up.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_trace::fuzzing::trace_fast(data);
});
