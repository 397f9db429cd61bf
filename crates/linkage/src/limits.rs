//! Caps on what one inspection may cost.
//!
//! Images come from strangers (CI caches, registries): a library chain thousands deep, an RPATH
//! of a hundred thousand directories or a 4 GB ld.so.cache must end in a one-line error, not in
//! minutes of work or an out-of-memory abort. Each default is far above anything real (a torch
//! wheel's closure is 50–100 libraries, 5–10 deep, and costs a few tens of thousands of lookups),
//! and each cap that can change the answer has a flag: hitting it is an error, since a partial
//! closure could miss the very profiler library asked about.

use std::cell::Cell;
use std::io;

/// The caps; [`ClosureCaps::DEFAULT`] suits every real system seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClosureCaps {
    /// Objects in one closure (the library, the dynamic loader and everything loaded).
    pub max_libraries: usize,
    /// Length of a chain of libraries each loading the next (the main object is depth 0).
    pub max_depth: usize,
    /// DT_NEEDED entries processed in one closure.
    pub max_needed: usize,
    /// File-system lookups (one per path component walked) and search-path elements examined,
    /// over the whole inspection.
    pub max_lookups: u64,
    /// Size of `/etc/ld.so.cache`, in MiB.
    pub max_cache_mib: u64,
    /// Entries read from one directory listing.
    pub max_dir_entries: usize,
}

impl ClosureCaps {
    /// The defaults.
    pub const DEFAULT: ClosureCaps = ClosureCaps {
        max_libraries: 1000,
        max_depth: 64,
        max_needed: 10_000,
        max_lookups: 500_000,
        max_cache_mib: 64,
        max_dir_entries: 100_000,
    };

    /// `max_cache_mib` in bytes.
    pub fn max_cache_bytes(&self) -> u64 {
        self.max_cache_mib.saturating_mul(1 << 20)
    }
}

impl Default for ClosureCaps {
    fn default() -> Self {
        ClosureCaps::DEFAULT
    }
}

/// A countdown of lookups. Once spent it stays spent, and every later lookup fails at once, so
/// callers deep in the search need not pass the condition up: the closure checks
/// [`Budget::spent`] between searches and turns it into the error.
#[derive(Debug)]
pub struct Budget {
    left: Cell<u64>,
    limit: u64,
    spent: Cell<bool>,
}

impl Budget {
    /// A budget of `limit` lookups.
    pub fn new(limit: u64) -> Budget {
        Budget { left: Cell::new(limit), limit, spent: Cell::new(false) }
    }

    /// Takes `n` lookups, or fails (and stays failed) when fewer are left.
    pub fn take(&self, n: u64) -> io::Result<()> {
        match self.left.get().checked_sub(n) {
            Some(rest) if !self.spent.get() => {
                self.left.set(rest);
                Ok(())
            }
            _ => {
                self.spent.set(true);
                self.left.set(0);
                Err(io::Error::other(format!("more than {} file-system lookups", self.limit)))
            }
        }
    }

    /// Whether a `take` has failed.
    pub fn spent(&self) -> bool {
        self.spent.get()
    }

    /// The budget's size.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_stays_spent() {
        let b = Budget::new(10);
        assert!(b.take(4).is_ok() && b.take(6).is_ok());
        assert!(!b.spent());
        assert!(b.take(1).is_err());
        assert!(b.spent());
        assert!(b.take(0).is_err());
    }
}
