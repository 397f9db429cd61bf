//! Opening the files of an inspected system, which may be a stranger's image: the shared reader
//! of strangers' files (`launchguard-files`), which traces, configurations and baselines use too.

pub use launchguard_files::{human_bytes, open_regular, read_capped, InputError};
