//! The heap a read holds, against its memory budget ([`crate::Limits::max_memory_bytes`]).
//!
//! The program installs [`Counting`] as its global allocator; every allocation then adds to one
//! counter of bytes in use. Each read ([`Side`]) compares what it added to that counter with its
//! budget each time a list of records must grow (the text a streaming reader holds aside,
//! bounded by `--max-event-mib`), and stops with a one-line error naming `--max-memory-mib`
//! before the records pass their share, rather than growing until the machine aborts the process. Where
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

/// Bytes of the heap that hold text being parsed ([`TextHeld`]).
static TEXT: AtomicUsize = AtomicUsize::new(0);

/// The buffer of text a streaming reader holds: bounded by the cap on one event
/// (`--max-event-mib`), not by the memory budget, which is the records' and the analysis's.
#[derive(Debug, Default)]
pub(crate) struct TextHeld(usize);

impl TextHeld {
    /// The buffer now holds `bytes` (its capacity).
    pub(crate) fn set(&mut self, bytes: usize) {
        if bytes >= self.0 {
            TEXT.fetch_add(bytes - self.0, Relaxed);
        } else {
            TEXT.fetch_sub(self.0 - bytes, Relaxed);
        }
        self.0 = bytes;
    }
}

impl Drop for TextHeld {
    fn drop(&mut self) {
        TEXT.fetch_sub(self.0, Relaxed);
    }
}

/// Heap in use less the text held: what counts against the budget.
fn counted() -> Option<usize> {
    heap_in_use().map(|n| n.saturating_sub(TEXT.load(Relaxed)))
}

/// The heap counted when each read in flight began ([`Side`]).
static READS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// One read in flight. Its budget is for what it adds to the heap: what the process held when it
/// began (the results of ranks already measured, another command's data) is not its own. Reads
/// side by side (the ranks of a run, on all cores) each have a budget; the heap added since the
/// oldest of them began is held to their shares together.
#[derive(Debug)]
pub struct Side(usize);

impl Side {
    /// Counts a read in flight until dropped.
    pub fn start() -> Self {
        let base = counted().unwrap_or(0);
        READS.lock().unwrap_or_else(|e| e.into_inner()).push(base);
        Side(base)
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        let mut reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = reads.iter().position(|&b| b == self.0) {
            reads.swap_remove(k);
        }
    }
}

/// The records' share of `budget` for the reads in flight, and the heap counted when the oldest
/// began: the analysis that follows a read needs lists of its own (per device, per kernel name,
/// the busy time), up to about as much again as the records, so these get half.
fn share(budget: u64) -> (u64, usize) {
    let reads = READS.lock().unwrap_or_else(|e| e.into_inner());
    let base = reads.iter().copied().min().unwrap_or(0);
    ((budget / 2).saturating_mul(reads.len().max(1) as u64), base)
}

/// Whether `more` bytes on top of the heap in use would pass the records' share of `budget`.
#[inline]
pub(crate) fn would_pass(budget: u64, more: usize) -> bool {
    let Some(n) = counted() else { return false };
    let (share, base) = share(budget);
    (n.saturating_sub(base) as u64).saturating_add(more as u64) > share
}

/// Bytes the records may still grow by within their share of `budget`; `None` where the heap is
/// not counted.
#[inline]
pub(crate) fn room_left(budget: u64) -> Option<u64> {
    let n = counted()?;
    let (share, base) = share(budget);
    Some(share.saturating_sub(n.saturating_sub(base) as u64))
}
