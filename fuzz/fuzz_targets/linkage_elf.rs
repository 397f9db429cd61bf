//! The ELF reader of `launchguard linkage` on arbitrary bytes: any outcome but a panic, an
//! abort, a hang or a memory blow-up (scripts/fuzz.sh sets libFuzzer's time and RSS limits).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = launchguard_linkage::fuzzing::elf(data);
});
