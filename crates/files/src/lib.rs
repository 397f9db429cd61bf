//! launchguard's files: those it reads from strangers ([`input`]: regular files only, the size
//! known before reading) and those it writes ([`output`]: replaced atomically, or streamed into a
//! pipe or a terminal, never a device replaced).

pub mod input;
pub mod output;

pub use input::*;
pub use output::{write_atomic, write_atomic_with};
