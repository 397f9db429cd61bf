//! `check` under a launcher that already starts one process per rank (torchrun, Slurm's `srun`, a
//! Kubernetes Job): this process runs its own rank of the workload, in the launcher's rendezvous,
//! and hands its results to rank 0 through a directory every rank can reach.
//!
//! The hand-off, per run (`--out DIR`, a subfolder per run id):
//! - `rankN.status.json`: claimed when the rank starts (a second claim of a live rank is a
//!   duplicate rank: refused), then `running` with a heartbeat every few seconds, `done` or
//!   `failed` with the reason;
//! - `rankN.trace.json.gz`: the rank's trace with its context (what it measured besides the
//!   trace), written atomically before `done` — everything rank 0 needs to judge the rank.
//!
//! Rank 0 waits for every rank's `done`; a rank that failed, whose heartbeat stopped, or that never
//! appeared within the timeout ends the run with an error naming it — never a pass. Then rank 0
//! judges the traces exactly as `check --tp N` does. Writes are atomic (a temp file and a rename),
//! so a reader never sees half a file, on a local disk or on NFS.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::runner::LaunchedRank;

/// A heartbeat older than this means the rank's process is gone (killed, its node lost).
pub const HEARTBEAT_STALE: Duration = Duration::from_secs(20);
/// How often a rank refreshes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);
/// The ranks of one run start within this of one another (a launcher starts them together;
/// pods may take longer to schedule). An older status is a previous run's.
pub const LAUNCH_SKEW: Duration = Duration::from_secs(120);

/// The rank this process is, read from the launcher's environment: torchrun's `RANK`,
/// `WORLD_SIZE`, `LOCAL_RANK`, else Slurm's `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`.
/// `None` when neither is set.
pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<LaunchedRank>, LauncherEnvError> {
    let num = |name: &str| -> Result<Option<u32>, LauncherEnvError> {
        match env(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<u32>()
                .map(Some)
                .map_err(|_| LauncherEnvError(format!("{name}={v:?} is not a rank number"))),
        }
    };
    let (rank, world, local, from) = match (num("RANK")?, num("WORLD_SIZE")?) {
        (Some(r), Some(w)) => (r, w, num("LOCAL_RANK")?, "RANK, WORLD_SIZE"),
        (None, None) => match (num("SLURM_PROCID")?, num("SLURM_NTASKS")?) {
            (Some(r), Some(w)) => (r, w, num("SLURM_LOCALID")?, "SLURM_PROCID, SLURM_NTASKS"),
            (None, None) => return Ok(None),
            _ => return Err(LauncherEnvError("SLURM_PROCID and SLURM_NTASKS must be set together".into())),
        },
        _ => return Err(LauncherEnvError("RANK and WORLD_SIZE must be set together".into())),
    };
    if world == 0 || rank >= world {
        return Err(LauncherEnvError(format!(
            "rank {rank} of world size {world} (from {from}) is not a rank of the run"
        )));
    }
    Ok(Some(LaunchedRank { rank, world, local_rank: local.unwrap_or(0) }))
}

/// A launcher's variables that do not name a rank of a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LauncherEnvError(pub String);

/// The id every rank of one run shares, from the launcher: torchrun's run id, Slurm's job and
/// step, or `LAUNCHGUARD_RUN_ID`; else the rendezvous address.
pub fn run_id(env: &dyn Fn(&str) -> Option<String>) -> String {
    let clean = |s: String| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
    };
    if let Some(id) = env("LAUNCHGUARD_RUN_ID").filter(|v| !v.is_empty()) {
        return clean(id);
    }
    if let Some(id) = env("TORCHELASTIC_RUN_ID").filter(|v| !v.is_empty() && v != "none") {
        return clean(format!("torchrun-{id}"));
    }
    if let Some(job) = env("SLURM_JOB_ID") {
        let step = env("SLURM_STEP_ID").unwrap_or_else(|| "0".into());
        return clean(format!("slurm-{job}.{step}"));
    }
    let addr = env("MASTER_ADDR").unwrap_or_else(|| "local".into());
    let port = env("MASTER_PORT").unwrap_or_else(|| "0".into());
    clean(format!("{addr}-{port}"))
}

/// Where a rank stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankStatus {
    /// The rank.
    pub rank: u32,
    /// Ranks in all.
    pub world: u32,
    /// `running`, `done` or `failed`.
    pub state: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The host it runs on.
    pub host: String,
    /// Its process id there.
    pub pid: u32,
    /// When it started, seconds since the epoch.
    pub started: f64,
    /// Its last sign of life, seconds since the epoch.
    pub heartbeat: f64,
    /// The run's session: a token rank 0's workload broadcast to every rank once they met, so
    /// that a previous run's result in the same folder is never taken for this run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// This machine's host name (`/proc/sys/kernel/hostname`, else `HOSTNAME`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Why the ranks' results could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum RendezvousError {
    /// Another live process holds this rank.
    #[error("rank {rank} is run twice: {other} holds it already (one process per rank)")]
    Duplicate {
        /// The rank.
        rank: u32,
        /// Who holds it: host and pid.
        other: String,
    },
    /// A rank failed, stopped answering, or never came.
    #[error("{0}")]
    Ranks(String),
    /// The directory could not be used.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The results directory of one run, seen by one rank.
#[derive(Debug, Clone)]
pub struct Rendezvous {
    dir: PathBuf,
    me: LaunchedRank,
    host: String,
    started: f64,
}

impl Rendezvous {
    /// The folder of run `run_id` in `out`, for rank `me`.
    pub fn new(out: &Path, run_id: &str, me: LaunchedRank) -> Result<Self, RendezvousError> {
        let dir = out.join(format!("run-{run_id}"));
        std::fs::create_dir_all(&dir).map_err(|source| RendezvousError::Io { path: dir.clone(), source })?;
        Ok(Rendezvous { dir, me, host: host_name(), started: now() })
    }

    /// The run's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn status_path(&self, rank: u32) -> PathBuf {
        self.dir.join(format!("rank{rank}.status.json"))
    }

    /// Where rank `rank`'s trace (with its context) goes.
    pub fn trace_path(&self, rank: u32) -> PathBuf {
        self.dir.join(format!("rank{rank}.trace.json.gz"))
    }

    /// Rank `rank`'s status, if it wrote one that can be read.
    pub fn status(&self, rank: u32) -> Option<RankStatus> {
        let bytes = std::fs::read(self.status_path(rank)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn write_status(&self, state: &str, reason: Option<String>) -> Result<(), RendezvousError> {
        self.write_status_of(state, reason, None)
    }

    fn write_status_of(
        &self,
        state: &str,
        reason: Option<String>,
        session: Option<String>,
    ) -> Result<(), RendezvousError> {
        let s = RankStatus {
            rank: self.me.rank,
            world: self.me.world,
            state: state.into(),
            reason,
            host: self.host.clone(),
            pid: std::process::id(),
            started: self.started,
            heartbeat: now(),
            session,
        };
        let path = self.status_path(self.me.rank);
        let bytes = serde_json::to_vec(&s).expect("a status serializes");
        write_atomic(&path, &bytes).map_err(|source| RendezvousError::Io { path, source })
    }

    /// Claims this rank: refused while another live process (a heartbeat less than
    /// [`HEARTBEAT_STALE`] old, not finished) holds it. A finished or stale claim is a previous
    /// run's and is replaced.
    pub fn claim(&self) -> Result<(), RendezvousError> {
        if let Some(other) = self.status(self.me.rank) {
            let alive = other.state == "running" && now() - other.heartbeat < HEARTBEAT_STALE.as_secs_f64();
            let me = other.host == self.host && other.pid == std::process::id();
            if alive && !me {
                return Err(RendezvousError::Duplicate {
                    rank: self.me.rank,
                    other: format!("host {} pid {}", other.host, other.pid),
                });
            }
        }
        // A previous run's trace of this rank must not pass for this run's.
        let _ = std::fs::remove_file(self.trace_path(self.me.rank));
        self.write_status("running", None)
    }

    /// Refreshes this rank's heartbeat.
    pub fn heartbeat(&self) -> Result<(), RendezvousError> {
        self.write_status("running", None)
    }

    /// Marks this rank done: its trace is in place; `session` is the run's (see
    /// [`RankStatus::session`]).
    pub fn done(&self, session: Option<String>) -> Result<(), RendezvousError> {
        self.write_status_of("done", None, session)
    }

    /// A status of this run: started within [`LAUNCH_SKEW`] of this rank.
    fn this_run(&self, s: &RankStatus) -> bool {
        s.started >= self.started - LAUNCH_SKEW.as_secs_f64()
    }

    /// Marks this rank failed, with the reason (best effort: the reason is also printed).
    pub fn failed(&self, reason: &str) {
        let _ = self.write_status("failed", Some(reason.to_string()));
    }

    /// Why the run cannot succeed any more, if it cannot: a rank that failed, or one whose
    /// heartbeat stopped (its process is gone), in rank order. Ranks not heard from yet are not
    /// a failure here (they may still be importing torch); the caller's timeout covers them.
    pub fn broken(&self) -> Option<String> {
        let mut why = Vec::new();
        for rank in (0..self.me.world).filter(|&r| r != self.me.rank) {
            let Some(s) = self.status(rank).filter(|s| self.this_run(s)) else {
                continue;
            };
            match s.state.as_str() {
                "failed" => why.push(format!(
                    "rank {rank} failed on host {}: {}",
                    s.host,
                    s.reason.as_deref().unwrap_or("no reason given")
                )),
                "running" if now() - s.heartbeat > HEARTBEAT_STALE.as_secs_f64() => why.push(format!(
                    "rank {rank} stopped answering (host {} pid {}, last heard {:.0} s ago)",
                    s.host,
                    s.pid,
                    now() - s.heartbeat
                )),
                _ => {}
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Where the other ranks stand, one clause each (for a message when this run must end).
    pub fn others(&self) -> String {
        (0..self.me.world)
            .filter(|&r| r != self.me.rank)
            .map(|r| match self.status(r).filter(|s| self.this_run(s)) {
                None => format!("rank {r} not heard from"),
                Some(s) => format!(
                    "rank {r} {} on host {} pid {} (last heard {:.0} s ago{})",
                    s.state,
                    s.host,
                    s.pid,
                    (now() - s.heartbeat).max(0.0),
                    s.reason.as_deref().map_or(String::new(), |r| format!(": {r}"))
                ),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Waits until every rank is done with this run's `session`, then returns their traces in rank
    /// order. Fails as soon as a rank fails or stops answering, and after `timeout` naming the
    /// ranks without a result and where each was last seen.
    pub fn wait_all(
        &self,
        session: Option<&str>,
        timeout: Duration,
        poll: Duration,
    ) -> Result<Vec<PathBuf>, RendezvousError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(why) = self.broken() {
                return Err(RendezvousError::Ranks(why));
            }
            let states: BTreeMap<u32, Option<RankStatus>> =
                (0..self.me.world).map(|r| (r, self.status(r).filter(|s| self.this_run(s)))).collect();
            let done = |r: u32, s: &Option<RankStatus>| {
                s.as_ref().is_some_and(|s| s.state == "done" && s.session.as_deref() == session)
                    && self.trace_path(r).is_file()
            };
            let missing: Vec<u32> = states.iter().filter(|(r, s)| !done(**r, s)).map(|(r, _)| *r).collect();
            if missing.is_empty() {
                return Ok((0..self.me.world).map(|r| self.trace_path(r)).collect());
            }
            if std::time::Instant::now() >= deadline {
                let said: Vec<String> = missing
                    .iter()
                    .map(|r| match &states[r] {
                        None => format!("rank {r} never wrote to {}", self.dir.display()),
                        Some(s) if s.state == "done" => format!(
                            "rank {r} (host {} pid {}) finished another run (session {} vs {})",
                            s.host,
                            s.pid,
                            s.session.as_deref().unwrap_or("none"),
                            session.unwrap_or("none")
                        ),
                        Some(s) => format!("rank {r} still {} on host {} pid {}", s.state, s.host, s.pid),
                    })
                    .collect();
                return Err(RendezvousError::Ranks(format!(
                    "no result from every rank within {} s: {}",
                    timeout.as_secs(),
                    said.join("; ")
                )));
            }
            std::thread::sleep(poll);
        }
    }
}

pub use launchguard_files::write_atomic;

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_rank_comes_from_torchrun_or_slurm() {
        let l = |vars: &[(&str, &str)]| detect(&env_of(vars));
        assert_eq!(l(&[]), Ok(None));
        assert_eq!(
            l(&[("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0")]),
            Ok(Some(LaunchedRank { rank: 1, world: 2, local_rank: 0 }))
        );
        assert_eq!(
            l(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "16"), ("SLURM_LOCALID", "3")]),
            Ok(Some(LaunchedRank { rank: 3, world: 16, local_rank: 3 }))
        );
        assert!(l(&[("RANK", "2"), ("WORLD_SIZE", "2")]).unwrap_err().0.contains("not a rank of the run"));
        assert!(l(&[("RANK", "x"), ("WORLD_SIZE", "2")]).unwrap_err().0.contains("RANK=\"x\""));
        assert!(l(&[("RANK", "0")]).unwrap_err().0.contains("together"));
    }

    #[test]
    fn the_run_id_comes_from_the_launcher() {
        assert_eq!(run_id(&env_of(&[("TORCHELASTIC_RUN_ID", "abc/1")])), "torchrun-abc_1");
        assert_eq!(
            run_id(&env_of(&[
                ("TORCHELASTIC_RUN_ID", "none"),
                ("MASTER_ADDR", "10.0.0.1"),
                ("MASTER_PORT", "29500")
            ])),
            "10.0.0.1-29500"
        );
        assert_eq!(run_id(&env_of(&[("SLURM_JOB_ID", "77"), ("SLURM_STEP_ID", "2")])), "slurm-77.2");
        assert_eq!(run_id(&env_of(&[("LAUNCHGUARD_RUN_ID", "x"), ("SLURM_JOB_ID", "77")])), "x");
    }

    fn rank(r: u32, world: u32) -> LaunchedRank {
        LaunchedRank { rank: r, world, local_rank: r }
    }

    #[test]
    fn every_rank_done_gives_the_traces_in_rank_order() {
        let dir = tempfile::tempdir().unwrap();
        let ranks: Vec<Rendezvous> =
            (0..3).map(|r| Rendezvous::new(dir.path(), "t", rank(r, 3)).unwrap()).collect();
        for r in &ranks {
            r.claim().unwrap();
        }
        for (i, r) in ranks.iter().enumerate().rev() {
            write_atomic(&r.trace_path(i as u32), b"trace").unwrap();
            r.done(Some("s1".into())).unwrap();
        }
        let got = ranks[0].wait_all(Some("s1"), Duration::from_secs(5), Duration::from_millis(10)).unwrap();
        assert_eq!(got, (0..3).map(|r| ranks[0].trace_path(r)).collect::<Vec<_>>());
    }

    #[test]
    fn a_missing_rank_is_named_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let r0 = Rendezvous::new(dir.path(), "t", rank(0, 3)).unwrap();
        let r1 = Rendezvous::new(dir.path(), "t", rank(1, 3)).unwrap();
        r0.claim().unwrap();
        r1.claim().unwrap();
        write_atomic(&r0.trace_path(0), b"trace").unwrap();
        r0.done(Some("s1".into())).unwrap();
        let t0 = std::time::Instant::now();
        let err = r0
            .wait_all(Some("s1"), Duration::from_millis(300), Duration::from_millis(10))
            .unwrap_err()
            .to_string();
        assert!(t0.elapsed() < Duration::from_secs(3));
        assert!(err.contains("rank 1 still running on host") && err.contains("rank 2 never wrote"), "{err}");
        assert!(!err.contains("rank 0"), "{err}");
    }

    #[test]
    fn a_failed_rank_ends_the_wait_at_once_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let r0 = Rendezvous::new(dir.path(), "t", rank(0, 2)).unwrap();
        let r1 = Rendezvous::new(dir.path(), "t", rank(1, 2)).unwrap();
        r0.claim().unwrap();
        r1.claim().unwrap();
        r1.failed("the workload rank 1 was killed by signal 9");
        assert_eq!(
            r0.broken().as_deref(),
            Some(
                format!("rank 1 failed on host {}: the workload rank 1 was killed by signal 9", host_name())
                    .as_str()
            )
        );
        let t0 = std::time::Instant::now();
        let err =
            r0.wait_all(None, Duration::from_secs(30), Duration::from_millis(10)).unwrap_err().to_string();
        assert!(t0.elapsed() < Duration::from_secs(1), "{err}");
        assert!(err.contains("rank 1 failed"), "{err}");
    }

    #[test]
    fn a_rank_whose_heartbeat_stopped_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let r0 = Rendezvous::new(dir.path(), "t", rank(0, 2)).unwrap();
        // Rank 1 claimed, then its process died: its heartbeat is old (written by hand).
        let stale = RankStatus {
            rank: 1,
            world: 2,
            state: "running".into(),
            reason: None,
            host: "node-b".into(),
            pid: 4242,
            started: now() - 5.0,
            heartbeat: now() - HEARTBEAT_STALE.as_secs_f64() - 1.0,
            session: None,
        };
        write_atomic(&r0.status_path(1), &serde_json::to_vec(&stale).unwrap()).unwrap();
        let why = r0.broken().unwrap();
        assert!(why.starts_with("rank 1 stopped answering (host node-b pid 4242, last heard 2"), "{why}");
    }

    #[test]
    fn a_previous_runs_result_is_never_taken_for_this_runs() {
        let dir = tempfile::tempdir().unwrap();
        let r0 = Rendezvous::new(dir.path(), "t", rank(0, 2)).unwrap();
        let r1 = Rendezvous::new(dir.path(), "t", rank(1, 2)).unwrap();
        for (i, r) in [&r0, &r1].into_iter().enumerate() {
            write_atomic(&r.trace_path(i as u32), b"trace").unwrap();
        }
        r0.done(Some("new".into())).unwrap();
        // Rank 1's files are a previous run's, done with its own session.
        r1.done(Some("old".into())).unwrap();
        let err = r0
            .wait_all(Some("new"), Duration::from_millis(200), Duration::from_millis(10))
            .unwrap_err()
            .to_string();
        assert!(err.contains("rank 1") && err.contains("finished another run (session old vs new)"), "{err}");
    }

    #[test]
    fn a_live_rank_cannot_be_claimed_twice_but_a_finished_one_can() {
        let dir = tempfile::tempdir().unwrap();
        let first = Rendezvous::new(dir.path(), "t", rank(1, 2)).unwrap();
        first.claim().unwrap();
        // Another process (another pid on this host) claiming rank 1 while the first runs.
        let other = RankStatus { pid: std::process::id() + 1, ..first.status(1).unwrap() };
        write_atomic(&first.status_path(1), &serde_json::to_vec(&other).unwrap()).unwrap();
        let err = first.claim().unwrap_err().to_string();
        assert!(
            err.starts_with("rank 1 is run twice:") && err.contains(&format!("pid {}", other.pid)),
            "{err}"
        );
        // Once it is done (a previous run), the rank is free again and its old trace is gone.
        let done = RankStatus { state: "done".into(), ..other };
        write_atomic(&first.status_path(1), &serde_json::to_vec(&done).unwrap()).unwrap();
        write_atomic(&first.trace_path(1), b"old").unwrap();
        first.claim().unwrap();
        assert!(!first.trace_path(1).exists());
    }
}
