//! Caps on what one trace may cost.
//!
//! Traces come from strangers: a gzip bomb of valid events, a million devices or ten million
//! distinct names must end in a one-line error naming the cap and how to raise it, not in an
//! out-of-memory abort or an hour of work. Each default sits well above the largest real trace
//! known (serving traces of a few GB per rank: ~10^7 events, a handful of devices, tens of
//! streams, 10^3–10^5 distinct names), and every cap has a flag and a key of the `[input]`
//! section of the configuration file.

/// The caps of one read; [`Limits::DEFAULT`] reads every real trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of JSON text read from a stream (gzip, standard input).
    pub max_inflated_bytes: u64,
    /// Bytes of one event (or one value around the events) that a stream must hold at once.
    pub max_event_bytes: u64,
    /// Elements of the events array.
    pub max_events: u64,
    /// Distinct device labels of GPU activities.
    pub max_devices: u64,
    /// Distinct (device, stream) pairs of GPU activities.
    pub max_streams: u64,
    /// Distinct strings kept: kernel and annotation names, device, stream and thread labels.
    pub max_names: u64,
    /// Bytes of the `args` of launchguard's context event (compact JSON).
    pub max_context_bytes: u64,
    /// Bytes of one name or label kept (kernels, spans, devices, streams, threads): a longer one
    /// is cut to its first bytes, on a character's boundary, and counted.
    pub max_name_bytes: u64,
    /// Bytes of memory for the records and the analysis of one trace: the records may take half
    /// ([`crate::memory`]), counted as heap in use where the program counts it.
    pub max_memory_bytes: u64,
}

impl Limits {
    /// The defaults.
    ///
    /// - 64 GiB of JSON text from a stream: at ~2 GB/s half a minute of reading; real per-rank
    ///   serving traces are a few GB. Plain files are mapped, and need no cap: their size is known.
    /// - 1 GiB for one event: real events are under 100 KB, check's context a few tens of KB.
    /// - 10^8 events: Kineto writes ~250 bytes per event, so 25 GB of text, several times the
    ///   largest per-rank serving traces known. The records of a trace at this cap take at most
    ///   4.8 GB (48 bytes per GPU activity kept); a bomb of small valid events meets it after a
    ///   few GB of text, long before the cap on text.
    /// - 4096 devices: the largest nodes have 8–16 GPUs, and a trace is one process's.
    /// - 65536 streams: tens per device in practice; the analysis keeps figures per stream.
    /// - 10^7 distinct strings: real traces have 10^3–10^5 (names of record_function spans
    ///   with request ids reach that); each costs ~60 bytes besides its text.
    /// - 4 MiB of context: check writes a few tens of KB.
    /// - 64 KiB of one name: a name is a label; the longest real kernel names (templated GEMMs)
    ///   are a few KB. Every copy the analysis and the reports make of a name then costs at most
    ///   this, whatever the trace holds.
    /// - 1 GiB of memory: the records take 40 bytes per GPU activity, so half of it holds 13
    ///   million, a Kineto trace of about 12 GB; a gzip bomb of small valid events is stopped
    ///   within it, whatever the machine. Larger traces need the flag.
    pub const DEFAULT: Limits = Limits {
        max_inflated_bytes: 64 << 30,
        max_event_bytes: 1 << 30,
        max_events: 100_000_000,
        max_devices: 4096,
        max_streams: 65536,
        max_names: 10_000_000,
        max_context_bytes: 4 << 20,
        max_name_bytes: 64 << 10,
        max_memory_bytes: 1 << 30,
    };

    /// String ids are 31 bits (the interner marks entries with the 32nd): no cap can allow more.
    pub const MOST_NAMES: u64 = (1 << 31) - 1;
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// One of the caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// [`Limits::max_inflated_bytes`].
    Inflated,
    /// [`Limits::max_event_bytes`].
    Event,
    /// [`Limits::max_events`].
    Events,
    /// [`Limits::max_devices`].
    Devices,
    /// [`Limits::max_streams`].
    Streams,
    /// [`Limits::max_names`].
    Names,
    /// [`Limits::max_context_bytes`].
    Context,
    /// [`Limits::max_memory_bytes`].
    Memory,
}

impl Cap {
    /// The command-line flag that raises it, with its argument.
    pub fn flag(self) -> &'static str {
        match self {
            Cap::Inflated => "--max-inflated-mib N",
            Cap::Event => "--max-event-mib N",
            Cap::Events => "--max-events N",
            Cap::Devices => "--max-devices N",
            Cap::Streams => "--max-streams N",
            Cap::Names => "--max-names N",
            Cap::Context => "--max-context-mib N",
            Cap::Memory => "--max-memory-mib N",
        }
    }

    /// Its key in the `[input]` section of the configuration file.
    pub fn key(self) -> &'static str {
        match self {
            Cap::Inflated => "max_inflated_mib",
            Cap::Event => "max_event_mib",
            Cap::Events => "max_events",
            Cap::Devices => "max_devices",
            Cap::Streams => "max_streams",
            Cap::Names => "max_names",
            Cap::Context => "max_context_mib",
            Cap::Memory => "max_memory_mib",
        }
    }

    /// What went past it, in words: `more than 4096 devices`.
    pub fn what(self, limits: &Limits) -> String {
        let mib = |b: u64| launchguard_files::human_bytes(b);
        match self {
            Cap::Inflated => format!("more than {} of JSON text", mib(limits.max_inflated_bytes)),
            Cap::Event => format!("an event larger than {}", mib(limits.max_event_bytes)),
            Cap::Events => format!("more than {} events", limits.max_events),
            Cap::Devices => format!("GPU activity on more than {} devices", limits.max_devices),
            Cap::Streams => format!("GPU activity on more than {} streams", limits.max_streams),
            Cap::Names => format!("more than {} distinct names and labels", limits.max_names),
            Cap::Context => {
                format!("a launchguard context event larger than {}", mib(limits.max_context_bytes))
            }
            Cap::Memory => {
                format!("records and analysis needing more than {} of memory", mib(limits.max_memory_bytes))
            }
        }
    }
}
