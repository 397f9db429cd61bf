//! The rocprofv3 JSON reader (`launchguard_trace::fuzzing::formats_rocprofv3`): arbitrary bytes
//! as a `*_results.json(.gz)` file, read with small caps: a timeline or a one-line error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_trace::fuzzing::formats_rocprofv3(data);
});
