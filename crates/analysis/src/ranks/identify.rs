//! Which rank a trace is: `distributedInfo`, else its file name; duplicates refused.

use std::path::Path;
use std::sync::OnceLock;

use launchguard_trace::Trace;
use regex::Regex;

/// Where a trace's rank came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankSource {
    /// `distributedInfo.rank`.
    DistributedInfo,
    /// The file name.
    FileName,
}

impl RankSource {
    /// As in JSON: `distributedInfo` or `file name`.
    pub fn as_str(self) -> &'static str {
        match self {
            RankSource::DistributedInfo => "distributedInfo",
            RankSource::FileName => "file name",
        }
    }
}

/// Why several traces cannot be analyzed as ranks.
#[derive(Debug, thiserror::Error)]
pub enum RanksError {
    /// No `distributedInfo.rank` and no rank in the file name.
    #[error("cannot tell the rank of {0}: it has no distributedInfo and its file name has no rank number (rank0, rank_1, ...)")]
    UnknownRank(String),
    /// Two traces claim one rank.
    #[error("{first} and {second} are both rank {rank}")]
    DuplicateRank {
        /// The rank.
        rank: u64,
        /// One trace.
        first: String,
        /// The other.
        second: String,
    },
}

/// A trace's rank and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankId {
    /// The rank.
    pub rank: u64,
    /// Its source.
    pub from: RankSource,
    /// A disagreement worth a warning (the file name says another rank).
    pub note: Option<String>,
}

/// A trace with its rank.
#[derive(Debug, Clone, Copy)]
pub struct RankTrace<'a> {
    /// Rank of the trace.
    pub id: &'a RankId,
    /// The trace.
    pub trace: &'a Trace,
}

/// The rank in a file name: the number after `rank` (any case, optionally followed by `_`, `-` or
/// `.`), when the name holds exactly one such number (`tp2_rank1.json.gz` → 1).
pub fn rank_from_file_name(path: &Path) -> Option<u64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"(?i)rank[_.-]?(\d+)").expect("valid regex"));
    let name = path.file_name()?.to_str()?;
    let mut found: Vec<u64> = re.captures_iter(name).filter_map(|c| c[1].parse().ok()).collect();
    found.dedup();
    match found.as_slice() {
        [r] => Some(*r),
        _ => None,
    }
}

/// The rank of a trace: `distributedInfo.rank`, else the file name.
pub fn rank_of(trace: &Trace) -> Result<RankId, RanksError> {
    let path = &trace.source.path;
    let from_name = rank_from_file_name(path);
    match trace.timeline.meta.distributed.as_ref().and_then(|d| d.rank) {
        Some(rank) => Ok(RankId {
            rank,
            from: RankSource::DistributedInfo,
            note: from_name.filter(|&n| n != rank).map(|n| {
                format!(
                    "{}: distributedInfo says rank {rank}, the file name rank {n}; using distributedInfo",
                    path.display()
                )
            }),
        }),
        None => from_name
            .map(|rank| RankId { rank, from: RankSource::FileName, note: None })
            .ok_or_else(|| RanksError::UnknownRank(path.display().to_string())),
    }
}

/// The ranks of several traces, in rank order; two traces of one rank are an error.
pub fn identify(traces: &[Trace]) -> Result<Vec<(RankId, usize)>, RanksError> {
    let mut ids = Vec::with_capacity(traces.len());
    for (i, t) in traces.iter().enumerate() {
        ids.push((rank_of(t)?, i));
    }
    ids.sort_by_key(|(id, i)| (id.rank, *i));
    for pair in ids.windows(2) {
        if pair[0].0.rank == pair[1].0.rank {
            return Err(RanksError::DuplicateRank {
                rank: pair[0].0.rank,
                first: traces[pair[0].1].source.path.display().to_string(),
                second: traces[pair[1].1].source.path.display().to_string(),
            });
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_from_names() {
        for (name, want) in [
            ("rank0.json", Some(0)),
            ("rank_1.json.gz", Some(1)),
            ("tp2_rank1.json.gz", Some(1)),
            ("host.RANK-12.pt.trace.json", Some(12)),
            ("trace.json", None),
            ("rank0_rank1.json", None),
            ("rank3_again_rank3.json", Some(3)),
        ] {
            assert_eq!(rank_from_file_name(Path::new(name)), want, "{name}");
        }
        // The folder does not count.
        assert_eq!(rank_from_file_name(Path::new("rank4/trace.json")), None);
    }
}
