//! The compact records the analysis needs, and nothing else.

use std::hash::{BuildHasher, Hasher};

/// Interned strings: kernel and annotation names, device and stream labels.
///
/// Strings are found by a hash of samples of them (cheap on kernel names of kilobytes) and
/// compared whole.
/// Strings from a stranger's trace can be made to agree on every sampled byte while differing
/// elsewhere: all of them would share one hash, and each new one would be compared with all the
/// others (10^5 such names took minutes). So a string that meets a different string of the same
/// samples (its *class*) is kept in a second table, found by the keyed hash of all its bytes; the
/// first string of the class stays in the first table, marked, and sends later lookups of its
/// class on to the second. A flood then costs one comparison and one full hash per name; real
/// traces, whose names differ in their samples, never reach the second table.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    names: Vec<Box<str>>,
    /// Ids ([`CLASH`] marks a string whose class has other members in `clashes`), found by
    /// [`sampled_hash`] of their string.
    index: hashbrown::HashTable<u32>,
    /// Ids of the strings that share their class with an earlier one, found by [`full_hash`].
    clashes: hashbrown::HashTable<u32>,
    // foldhash, not SipHash: every GPU activity interns its kernel name (often hundreds of bytes),
    // and SipHash was 9% of reading a trace; foldhash keeps a per-process random seed, so what
    // collides under it cannot be worked out from outside.
    hasher: foldhash::fast::RandomState,
}

/// The mark on an entry of [`Interner::index`] whose class has more members in the second table.
const CLASH: u32 = 1 << 31;

/// Strings up to this long are hashed whole, so only longer ones can share a class.
const SAMPLED_ABOVE: usize = 48;

/// A string's hash from its length and three 16-byte samples (start, middle, end) when it is
/// long: kernel names run to kilobytes and every GPU activity interns one, so hashing every byte
/// cost as much as the comparison that confirms a match. Strings are still compared whole.
fn sampled_hash(hasher: &foldhash::fast::RandomState, s: &str) -> u64 {
    let b = s.as_bytes();
    let mut h = hasher.build_hasher();
    if b.len() <= SAMPLED_ABOVE {
        h.write(b);
    } else {
        let mid = b.len() / 2;
        h.write_usize(b.len());
        h.write(&b[..16]);
        h.write(&b[mid - 8..mid + 8]);
        h.write(&b[b.len() - 16..]);
    }
    h.finish()
}

/// Every byte of a string, hashed: for the strings whose samples are shared.
fn full_hash(hasher: &foldhash::fast::RandomState, s: &str) -> u64 {
    hasher.hash_one(s)
}

/// Whether two different strings have the same samples (and so the same [`sampled_hash`]).
#[inline]
fn same_class(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() || a.len() <= SAMPLED_ABOVE {
        return false;
    }
    let (n, mid) = (a.len(), a.len() / 2);
    a[..16] == b[..16] && a[mid - 8..mid + 8] == b[mid - 8..mid + 8] && a[n - 16..] == b[n - 16..]
}

/// Grows a table or list before it is full, failing instead of aborting when memory runs out.
pub(crate) fn room<T>(v: &mut Vec<T>) -> Option<()> {
    if v.len() == v.capacity() {
        v.try_reserve(v.len().max(64)).ok()?;
    }
    Some(())
}

impl Interner {
    /// Returns the id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> u32 {
        match self.try_intern(s) {
            Some(id) => id,
            // As `Vec::push` does when memory runs out.
            None => std::alloc::handle_alloc_error(std::alloc::Layout::new::<Box<str>>()),
        }
    }

    /// [`Interner::intern`], or `None` when memory for a new string cannot be had.
    #[inline]
    pub fn try_intern(&mut self, s: &str) -> Option<u32> {
        let Interner { names, index, clashes, hasher } = self;
        let hash = sampled_hash(hasher, s);
        // Set when the lookup met another string of `s`'s class: its entry's mark.
        let mut class: Option<bool> = None;
        let found = index.find(hash, |&e| {
            let t = &*names[(e & !CLASH) as usize];
            if t == s {
                return true;
            }
            if same_class(t, s) {
                class = Some(e & CLASH != 0);
            }
            false
        });
        if let Some(&e) = found {
            return Some(e & !CLASH);
        }
        let id = names.len() as u32;
        room(names)?;
        match class {
            None => {
                index.try_reserve(1, |&e| sampled_hash(hasher, &names[(e & !CLASH) as usize])).ok()?;
                names.push(s.into());
                index.insert_unique(hash, id, |&e| sampled_hash(hasher, &names[(e & !CLASH) as usize]));
            }
            Some(marked) => {
                let full = full_hash(hasher, s);
                if marked {
                    if let Some(&id) = clashes.find(full, |&id| &*names[id as usize] == s) {
                        return Some(id);
                    }
                } else {
                    // The first clash of this class: mark the entry that holds it.
                    let first = index.find_mut(hash, |&e| same_class(&names[(e & !CLASH) as usize], s));
                    if let Some(e) = first {
                        *e |= CLASH;
                    }
                }
                clashes.try_reserve(1, |&id| full_hash(hasher, &names[id as usize])).ok()?;
                names.push(s.into());
                clashes.insert_unique(full, id, |&id| full_hash(hasher, &names[id as usize]));
            }
        }
        Some(id)
    }

    /// The string behind an id.
    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<u32> {
        let names = &self.names;
        let mut marked = false;
        let found = self.index.find(sampled_hash(&self.hasher, s), |&e| {
            let t = &*names[(e & !CLASH) as usize];
            if t == s {
                return true;
            }
            marked |= e & CLASH != 0 && same_class(t, s);
            false
        });
        match found {
            Some(&e) => Some(e & !CLASH),
            None if marked => {
                self.clashes.find(full_hash(&self.hasher, s), |&id| &*names[id as usize] == s).copied()
            }
            None => None,
        }
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Strings kept in the second table (those that share their samples with another): a
    /// measure of how hard a trace tried to flood the first.
    pub fn clashes(&self) -> usize {
        self.clashes.len()
    }
}

/// What kind of GPU activity a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActivityKind {
    /// A kernel (`cat` = `kernel`).
    Kernel,
    /// A copy (`gpu_memcpy`, older `Memcpy`).
    Memcpy,
    /// A fill (`gpu_memset`, older `Memset`).
    Memset,
}

/// One GPU activity: a complete event whose category is a kernel, copy or fill.
///
/// 40 bytes: serving traces hold tens of millions of these, and the records are most of what a
/// read keeps. The correlation id is stored with its presence beside it rather than as an
/// `Option<u64>` (16 bytes): read it with [`GpuActivity::correlation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuActivity {
    /// Start, absolute trace nanoseconds.
    pub start: i64,
    /// End (start + dur), nanoseconds.
    pub end: i64,
    /// `args.correlation`, when `has_correlation` (0 otherwise, so that equal records compare equal).
    pub(crate) correlation: u64,
    /// Device label id (`args.device`, else `pid`) in [`Timeline::strings`].
    pub device: u32,
    /// Stream label id (`args.stream`, else `tid`) in [`Timeline::strings`].
    pub stream: u32,
    /// Kernel or copy name id in [`Timeline::strings`].
    pub name: u32,
    /// Kernel, copy or fill.
    pub kind: ActivityKind,
    pub(crate) has_correlation: bool,
}

const _: () = assert!(std::mem::size_of::<GpuActivity>() <= 40);

impl GpuActivity {
    /// A record of these fields.
    pub fn new(
        device: u32,
        stream: u32,
        name: u32,
        start: i64,
        end: i64,
        correlation: Option<u64>,
        kind: ActivityKind,
    ) -> Self {
        GpuActivity {
            start,
            end,
            correlation: correlation.unwrap_or(0),
            device,
            stream,
            name,
            kind,
            has_correlation: correlation.is_some(),
        }
    }

    /// The runtime call that started it (`args.correlation`).
    #[inline]
    pub fn correlation(&self) -> Option<u64> {
        self.has_correlation.then_some(self.correlation)
    }
}

/// The graph-launch API a runtime call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphApi {
    /// `cudaGraphLaunch` (runtime API).
    CudaRuntime,
    /// `cuGraphLaunch` (driver API).
    CudaDriver,
    /// `hipGraphLaunch`.
    Hip,
}

/// One graph-launch call on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphLaunch {
    /// Which vendor's call.
    pub api: GraphApi,
    /// Host thread id in [`Timeline::strings`].
    pub thread: u32,
    /// Start, nanoseconds.
    pub start: i64,
    /// End, nanoseconds.
    pub end: i64,
    /// Shared with every kernel the launch started.
    pub correlation: Option<u64>,
}

/// A host call that launched GPU work: a runtime or driver call (`cudaLaunchKernel`,
/// `cudaMemcpyAsync`, `hipGraphLaunch`, …) whose `args.correlation` its GPU activities share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCall {
    /// Start, nanoseconds.
    pub start: i64,
    /// End, nanoseconds.
    pub end: i64,
    /// Shared with the GPU work it launched.
    pub correlation: u64,
}

/// A `record_function` span: `user_annotation` on the host, `gpu_user_annotation` on a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotation {
    /// Name id in [`Timeline::strings`].
    pub name: u32,
    /// Device label id for GPU spans; `None` for host spans.
    pub device: Option<u32>,
    /// Start, nanoseconds.
    pub start: i64,
    /// End, nanoseconds.
    pub end: i64,
}

/// `distributedInfo` of a multi-rank trace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DistributedInfo {
    /// This trace's rank.
    pub rank: Option<u64>,
    /// Number of ranks.
    pub world_size: Option<u64>,
    /// Collective backend (`nccl`, `gloo`).
    pub backend: Option<String>,
}

/// Most profiler lines about lost records kept from one trace.
pub const MAX_PROFILER_MESSAGES: usize = 8;

/// Longest profiler line kept, in characters.
pub const MAX_PROFILER_MESSAGE_CHARS: usize = 300;

/// Trace-level facts from the keys around `traceEvents`.
#[derive(Debug, Clone, Default)]
pub struct TraceMeta {
    /// `baseTimeNanoseconds`, kept for display (absolute ns = base + ts).
    pub base_time_ns: Option<i64>,
    /// `distributedInfo`, when the trace has one.
    pub distributed: Option<DistributedInfo>,
    /// `deviceProperties[].name` by id.
    pub device_names: Vec<(String, String)>,
    /// Which profiler backend wrote it, from its version keys (`cupti_version`,
    /// `roctracer_version`, `rocprofiler-sdk_version`).
    pub profiler: Option<String>,
    /// What the reader of another format noticed and the user should know (a recording that
    /// cannot show something), one line each.
    pub notes: Vec<String>,
    /// What the profiler said of records it lost: the lines of Kineto's `WARNING` and `ERROR`
    /// metadata that speak of dropped records or tracing cut short (at most
    /// [`MAX_PROFILER_MESSAGES`], each cut to [`MAX_PROFILER_MESSAGE_CHARS`]).
    pub lost_records: Vec<String>,
}

/// Why events were skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkipCounts {
    /// No `ts`, or a `ts` that is not a number or is out of range (beyond ±2^61 ns).
    pub missing_ts: u64,
    /// A complete event with a missing, negative or unreadable `dur`, or one that ends out of
    /// range.
    pub bad_dur: u64,
    /// Array elements that are not objects.
    pub not_an_object: u64,
}

impl SkipCounts {
    /// All skipped events.
    pub fn total(&self) -> u64 {
        self.missing_ts + self.bad_dur + self.not_an_object
    }
}

/// Everything the analysis reads from a trace.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// GPU activities in file order.
    pub activities: Vec<GpuActivity>,
    /// Graph launches in file order.
    pub launches: Vec<GraphLaunch>,
    /// Host calls with a correlation id (graph launches among them), in file order: what
    /// `--within` a host span measures the GPU work of.
    pub host_calls: Vec<HostCall>,
    /// `record_function` spans in file order.
    pub annotations: Vec<Annotation>,
    /// Names and labels behind the ids in the records.
    pub strings: Interner,
    /// Header and footer facts.
    pub meta: TraceMeta,
    /// Elements of the events array that were read.
    pub events: u64,
    /// Events skipped, by reason.
    pub skipped: SkipCounts,
    /// The `args` of the first launchguard context event (`"ph": "M"`, name
    /// [`CONTEXT_EVENT`]), as JSON text: what `check` measured besides the trace.
    pub context: Option<String>,
    /// Context events seen (more than one: traces joined, or a copy of a copy).
    pub context_events: u64,
    /// Names and labels longer than [`crate::Limits::max_name_bytes`], kept cut to their first
    /// bytes (each occurrence counted).
    pub names_cut: u64,
    /// The cap they were cut to ([`crate::Limits::max_name_bytes`] of the read).
    pub name_cap: u64,
}

/// Name of the metadata event in which `check` leaves its workload context in a trace.
pub const CONTEXT_EVENT: &str = "launchguard_context";

/// The default cap on a context event's `args` ([`crate::Limits::max_context_bytes`]): `check`
/// writes a few tens of KB.
pub const MAX_CONTEXT_BYTES: usize = crate::Limits::DEFAULT.max_context_bytes as usize;

impl Timeline {
    /// Every record, count and header fact, with string ids resolved, one line each: two
    /// timelines hold the same thing exactly when their texts are equal. What the parsers'
    /// agreement tests compare, and a readable dump when they disagree.
    pub fn canonical_text(&self) -> String {
        use std::fmt::Write;
        let s = |id: u32| self.strings.get(id);
        let mut out = format!(
            "events {} skipped {:?} names_cut {}\nmeta {:?}\n",
            self.events, self.skipped, self.names_cut, self.meta
        );
        let strings: Vec<&str> = (0..self.strings.len() as u32).map(s).collect();
        let _ = writeln!(out, "strings {strings:?}");
        for a in &self.activities {
            let _ = writeln!(
                out,
                "A {} {} {} {} {} {:?} {:?}",
                s(a.device),
                s(a.stream),
                s(a.name),
                a.start,
                a.end,
                a.correlation(),
                a.kind
            );
        }
        for l in &self.launches {
            let _ = writeln!(out, "L {:?} {} {} {} {:?}", l.api, s(l.thread), l.start, l.end, l.correlation);
        }
        for a in &self.annotations {
            let _ = writeln!(out, "N {} {:?} {} {}", s(a.name), a.device.map(s), a.start, a.end);
        }
        for h in &self.host_calls {
            let _ = writeln!(out, "H {} {} {}", h.start, h.end, h.correlation);
        }
        let _ = writeln!(out, "C {} {:?}", self.context_events, self.context);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

    #[test]
    fn strings_alike_where_sampled_are_still_told_apart() {
        // Same length, same first, middle and last 16 bytes; different in between.
        let a = format!(
            "{}{}{}{}{}",
            "s".repeat(16),
            "a".repeat(20),
            "m".repeat(16),
            "b".repeat(20),
            "e".repeat(16)
        );
        let b = a.replace("aaaa", "aaab");
        assert_eq!(a.len(), b.len());
        let mut i = Interner::default();
        let (ia, ib) = (i.intern(&a), i.intern(&b));
        assert_ne!(ia, ib);
        assert_eq!((i.intern(&a), i.intern(&b)), (ia, ib));
        assert_eq!((i.get(ia), i.get(ib)), (a.as_str(), b.as_str()));
        assert_eq!(i.lookup(&b), Some(ib));
        assert_eq!(i.lookup("short"), None);
        // Many of them: the table grows and every id is found again.
        let many: Vec<String> = (0..2000).map(|k| a.replacen('a', &format!("{k:04}"), 1)).collect();
        let ids: Vec<u32> = many.iter().map(|s| i.intern(s)).collect();
        assert!(many.iter().zip(&ids).all(|(s, &id)| i.lookup(s) == Some(id) && i.get(id) == s));
        assert_eq!(i.len(), 2002);
        // `b` shares its samples with `a`, and the 2000 with one another (four digits make them
        // longer than `a`): all but the first of each class are in the second table.
        assert_eq!(i.clashes(), 1 + 1999);
    }

    /// 10^5 names of one length that agree on every sampled byte: each costs one comparison and
    /// one full hash, not a comparison with every earlier one (minutes before).
    #[test]
    fn a_flood_of_names_alike_where_sampled_stays_linear() {
        let name =
            |k: usize| format!("{}{k:024}{}{:024}{}", "k".repeat(16), "m".repeat(16), k * 7, "e".repeat(16));
        assert!(super::same_class(&name(1), &name(2)));
        let started = std::time::Instant::now();
        let mut i = Interner::default();
        let n = 100_000;
        let ids: Vec<u32> = (0..n).map(|k| i.intern(&name(k))).collect();
        assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
        assert!((0..n).all(|k| i.intern(&name(k)) == k as u32 && i.lookup(&name(k)) == Some(k as u32)));
        assert_eq!(i.lookup(&name(n)), None);
        assert_eq!(i.clashes(), n - 1);
        // Under a second even unoptimized; the quadratic table took minutes at this size.
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    #[test]
    fn names_of_different_samples_never_reach_the_second_table() {
        let mut i = Interner::default();
        for k in 0..10_000 {
            i.intern(&format!("void kernel_{k}<float, 128>(float const*, float*, int) [clone .kd]{k}"));
            i.intern(&format!("{k}"));
        }
        assert_eq!((i.len(), i.clashes()), (20_000, 0));
    }
}
