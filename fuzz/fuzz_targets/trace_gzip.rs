//! The gzip path of the trace reader (`launchguard_trace::fuzzing::trace_gzip`): arbitrary gzip
//! bytes read by both parsers, which must agree; and JSON text cut into gzip members and
//! streamed in small blocks, which must read as the same text does in memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_trace::fuzzing::trace_gzip(data);
});
