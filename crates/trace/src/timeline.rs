//! The compact records the analysis needs, and nothing else.

use std::hash::{BuildHasher, Hasher};

/// Interned strings: kernel and annotation names, device and stream labels.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    names: Vec<Box<str>>,
    /// Ids, found by [`sampled_hash`] of their string and compared whole.
    index: hashbrown::HashTable<u32>,
    // foldhash, not SipHash: every GPU activity interns its kernel name (often hundreds of bytes),
    // and SipHash was 9% of reading a trace; foldhash keeps a per-process random seed.
    hasher: foldhash::fast::RandomState,
}

/// A string's hash from its length and three 16-byte samples (start, middle, end) when it is
/// long: kernel names run to kilobytes and every GPU activity interns one, so hashing every byte
/// cost as much as the comparison that confirms a match. Strings are still compared whole.
fn sampled_hash(hasher: &foldhash::fast::RandomState, s: &str) -> u64 {
    let b = s.as_bytes();
    let mut h = hasher.build_hasher();
    if b.len() <= 48 {
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

impl Interner {
    /// Returns the id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> u32 {
        let Interner { names, index, hasher } = self;
        let hash = sampled_hash(hasher, s);
        if let Some(&id) = index.find(hash, |&id| &*names[id as usize] == s) {
            return id;
        }
        let id = names.len() as u32;
        names.push(s.into());
        index.insert_unique(hash, id, |&id| sampled_hash(hasher, &names[id as usize]));
        id
    }

    /// The string behind an id.
    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<u32> {
        self.index.find(sampled_hash(&self.hasher, s), |&id| &*self.names[id as usize] == s).copied()
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuActivity {
    /// Device label id (`args.device`, else `pid`) in [`Timeline::strings`].
    pub device: u32,
    /// Stream label id (`args.stream`, else `tid`) in [`Timeline::strings`].
    pub stream: u32,
    /// Kernel or copy name id in [`Timeline::strings`].
    pub name: u32,
    /// Start, absolute trace nanoseconds.
    pub start: i64,
    /// End (start + dur), nanoseconds.
    pub end: i64,
    /// The runtime call that started it (`args.correlation`).
    pub correlation: Option<u64>,
    /// Kernel, copy or fill.
    pub kind: ActivityKind,
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
}

/// Why events were skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkipCounts {
    /// No `ts`, or a `ts` that is not a number.
    pub missing_ts: u64,
    /// A complete event with a missing, negative or unreadable `dur`.
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
}

/// Name of the metadata event in which `check` leaves its workload context in a trace.
pub const CONTEXT_EVENT: &str = "launchguard_context";

/// Context events larger than this are counted but not kept: `check` writes a few tens of KB.
pub const MAX_CONTEXT_BYTES: usize = 4 << 20;

impl Timeline {
    /// Every record, count and header fact, with string ids resolved, one line each: two
    /// timelines hold the same thing exactly when their texts are equal. What the parsers'
    /// agreement tests compare, and a readable dump when they disagree.
    pub fn canonical_text(&self) -> String {
        use std::fmt::Write;
        let s = |id: u32| self.strings.get(id);
        let mut out = format!("events {} skipped {:?}\nmeta {:?}\n", self.events, self.skipped, self.meta);
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
                a.correlation,
                a.kind
            );
        }
        for l in &self.launches {
            let _ = writeln!(out, "L {:?} {} {} {} {:?}", l.api, s(l.thread), l.start, l.end, l.correlation);
        }
        for a in &self.annotations {
            let _ = writeln!(out, "N {} {:?} {} {}", s(a.name), a.device.map(s), a.start, a.end);
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
    }
}
