//! The one error type: an inspection that leaves nothing usable (the CLI exits 2 on it).

use std::io;

/// Why nothing usable could be inspected. `Display` is one line naming the problem.
#[derive(Debug, thiserror::Error)]
pub enum LinkageError {
    /// The target does not exist.
    #[error("{path}: no such file or directory")]
    NotFound {
        /// The path as given (inside the inspected system).
        path: String,
    },
    /// The target exists but cannot be read.
    // The OS error is in the message and deliberately not a `source`: the CLI prints the error
    // chain, which would repeat it ("Permission denied (os error 13): Permission denied …").
    #[error("{path}: {error}")]
    Io {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        error: io::Error,
    },
    /// The target is not an ELF file at all.
    #[error("{path}: not an ELF file")]
    NotElf {
        /// The path as given.
        path: String,
    },
    /// The target is an ELF file the loader would reject (truncated, malformed, not loadable).
    #[error("{path}: {reason}")]
    BadElf {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `--root` is not a directory.
    #[error("--root {path}: not a directory")]
    BadRoot {
        /// The path as given.
        path: String,
    },
    /// The Python interpreter could not be asked where torch is.
    #[error("cannot ask {python} where torch is: {reason}")]
    Python {
        /// The interpreter.
        python: String,
        /// What went wrong.
        reason: String,
    },
    /// There is no torch package to inspect.
    #[error("{place} has no torch package{hint}")]
    NoTorch {
        /// The interpreter asked (with the path it runs from), or the image searched.
        place: String,
        /// What to do about it, with its leading punctuation ("; --python …"), or empty.
        hint: String,
    },
    /// A torch directory without any of the libraries inspected.
    #[error("{dir}: no libtorch_cpu.so, libtorch_cuda.so or libtorch_hip.so (not a torch installation?)")]
    NoTorchLibraries {
        /// The torch package directory.
        dir: String,
    },
    /// The inspection would cost more than a cap of [`ClosureCaps`](crate::ClosureCaps) allows: the
    /// input is hostile or far outside anything real, and a partial answer could be wrong.
    #[error("{what} ({flag} raises the cap)")]
    Limit {
        /// What went over which cap, with the cap's value.
        what: String,
        /// The command-line flag that raises the cap (`--max-libraries N`).
        flag: &'static str,
    },
    /// A `--platform` that no kernel or glibc could set.
    #[error("--platform {platform:?}: a platform is one non-empty path component (haswell, x86_64, power9)")]
    BadPlatform {
        /// The value given.
        platform: String,
    },
    /// A `linkage.forbid` entry that names no backend.
    #[error("linkage.forbid entry {entry:?}: {reason}")]
    BadForbid {
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
}
