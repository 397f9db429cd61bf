//! The rocpd and Nsight Systems readers (`launchguard_trace::fuzzing::formats_sqlite`): arbitrary
//! bytes as an SQLite database, read with small caps: a timeline or a one-line error, the file
//! unchanged and nothing written beside it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_trace::fuzzing::formats_sqlite(data);
});
