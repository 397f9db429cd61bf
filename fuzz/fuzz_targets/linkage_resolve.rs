//! Resolution over a small image built from the input (ld.so.cache bytes, ld.so.conf text,
//! ELF files, links and FIFOs; the format is in `launchguard_linkage::fuzzing`): a report or
//! an error, never a panic, an abort, a hang or a memory blow-up (scripts/fuzz.sh sets
//! libFuzzer's time and RSS limits).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_linkage::fuzzing::resolve(data);
});
