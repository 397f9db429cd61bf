//! Integration tests for launchguard-linkage: real ELF files built with the system C compiler,
//! and resolution compared with the system `ldd`.

mod bad_input;
mod common;
mod fixtures;
mod hostile;
mod hwcaps;
mod image;
mod python;
mod regressions;
mod system_ldd;
