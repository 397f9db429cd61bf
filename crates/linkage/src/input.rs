//! Opening the files of an inspected system, which may be a stranger's image: the shared reader
//! of strangers' files (`launchguard-input`), which traces, configurations and baselines use too.

pub use launchguard_input::{human_bytes, open_regular, read_capped, InputError};
