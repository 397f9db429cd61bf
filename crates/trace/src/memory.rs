//! The heap a read holds, against its memory budget ([`crate::Limits::max_memory_bytes`]).
//!
//! The program installs [`Counting`] as its global allocator; every allocation then adds to one
//! counter of bytes in use. The reader compares that counter with the budget each time a list of
//! records must grow, and stops with a one-line error naming `--max-memory-mib` before the
//! records pass their share, rather than growing until the machine aborts the process. Where
//! [`Counting`] is not installed (a library user's program) the counter stays at zero and only
//! the other caps apply.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Bytes allocated and not freed, through [`Counting`].
static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes in use. An atomic add per allocation: the reader
/// allocates when a list doubles or a new name appears, a few thousand times on a large trace.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counting;

// SAFETY: every call is passed to `System` unchanged; only a counter is updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                IN_USE.fetch_add(new_size - layout.size(), Relaxed);
            } else {
                IN_USE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

/// Bytes of heap in use, when [`Counting`] is the global allocator.
pub fn heap_in_use() -> Option<usize> {
    let n = IN_USE.load(Relaxed);
    (n > 0).then_some(n)
}

/// The share of the budget the records of a read may take: the analysis that follows needs
/// lists of its own (per device, per kernel name, the busy time), up to about as much again.
pub(crate) fn records_share(budget: u64) -> u64 {
    budget / 2
}

/// Whether `more` bytes on top of the heap in use would pass the records' share of `budget`.
#[inline]
pub(crate) fn would_pass(budget: u64, more: usize) -> bool {
    heap_in_use().is_some_and(|n| (n as u64).saturating_add(more as u64) > records_share(budget))
}
