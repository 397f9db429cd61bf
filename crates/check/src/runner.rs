//! Runs the workload: one process, or one per rank for tensor parallelism, in a process group of
//! their own so that a timeout or a dead rank ends all of them and leaves nothing behind.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::progress::PhaseProgress;
use crate::protocol::{Progress, WorkloadConfig, WorkloadResult, RESULT_SCHEMA, SCRIPT};

/// How much of each rank's stderr is kept for error messages.
const STDERR_KEEP: usize = 16 * 1024;

/// Why the workload produced no usable result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The interpreter could not be started.
    #[error("cannot run Python interpreter '{python}': {cause}")]
    Python {
        /// The interpreter.
        python: String,
        /// Why (not a `source`: the message already says it, once).
        cause: std::io::Error,
    },
    /// A rank exited with an error or was killed.
    #[error("the workload {who} {how}; its stderr ends with: {tail}")]
    Crashed {
        /// "process" or "rank N".
        who: String,
        /// "exited with code 1" / "was killed by signal 9".
        how: String,
        /// Last lines of stderr, joined with " | ".
        tail: String,
    },
    /// The run took too long.
    #[error(
        "the workload did not finish within {seconds} s ({who}); it was killed; its stderr ends with: {tail}"
    )]
    TimedOut {
        /// Seconds allowed.
        seconds: u64,
        /// Which ranks were still running.
        who: String,
        /// Last lines of stderr.
        tail: String,
    },
    /// The result file is missing or not the protocol.
    #[error("the workload's result for {who} is unusable: {detail}")]
    BadResult {
        /// "process" or "rank N".
        who: String,
        /// What is wrong.
        detail: String,
    },
    /// Setting up the run failed.
    #[error("cannot set up the workload: {0}")]
    Setup(#[from] std::io::Error),
    /// Told to stop while it ran (another rank failed, the launcher ended the run).
    #[error("the workload was stopped: {0}")]
    Stopped(String),
}

/// A workload run to make.
pub struct Request<'a> {
    /// Interpreter.
    pub python: &'a str,
    /// The config; its paths are filled in by [`run`] when empty.
    pub config: WorkloadConfig,
    /// Ranks (1 = no torch.distributed).
    pub tp: u32,
    /// This process is one rank of a run started by a launcher (torchrun, srun): only that rank
    /// runs here, in the launcher's process group rendezvous; `None`: every rank runs here.
    pub launched: Option<LaunchedRank>,
    /// Seconds before everything is killed.
    pub timeout: Duration,
    /// Show phase progress on stderr.
    pub progress: bool,
    /// Directory for the trace, result and script (a private temp dir).
    pub workdir: &'a Path,
    /// Asked every few milliseconds while the workload runs: a reason to stop it (another rank
    /// failed, the launcher ended the run), or `None` to go on.
    pub stop: Option<&'a dyn Fn() -> Option<String>>,
}

/// One rank of a run started by a launcher, as its environment names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchedRank {
    /// The rank.
    pub rank: u32,
    /// Ranks in all.
    pub world: u32,
    /// The rank on its node: its GPU.
    pub local_rank: u32,
}

/// Results of every rank run here, in rank order.
pub struct Finished {
    /// One result per rank.
    pub results: Vec<WorkloadResult>,
    /// Trace path per rank (profiled phase), where the run got that far.
    pub traces: Vec<PathBuf>,
}

/// Kills the whole process group when dropped, so no rank outlives the guard.
struct GroupGuard {
    pgid: Option<i32>,
    children: Vec<Child>,
}

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals the group we created; no memory involved.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        self.pgid = None;
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

fn who(rank: usize, tp: u32) -> String {
    if tp > 1 {
        format!("rank {rank}")
    } else {
        "process".to_string()
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn tail_of(buf: &Mutex<Vec<u8>>) -> String {
    let b = buf.lock().expect("stderr buffer");
    let text = String::from_utf8_lossy(&b);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(6);
    let tail = lines[start..].join(" | ");
    if tail.is_empty() {
        "(nothing)".into()
    } else {
        tail
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs the workload and waits for it, within the timeout.
pub fn run(mut req: Request<'_>) -> Result<Finished, RunError> {
    let script = req.workdir.join("launchguard_workload.py");
    std::fs::write(&script, SCRIPT)?;
    if req.config.trace_path.is_empty() {
        req.config.trace_path = req.workdir.join("trace.rank{rank}.json").display().to_string();
    }
    req.config.result_path = req.workdir.join("result.rank{rank}.json").display().to_string();
    let config_path = req.workdir.join("config.json");
    std::fs::write(&config_path, serde_json::to_vec_pretty(&req.config).map_err(std::io::Error::other)?)?;

    // Every rank here, on loopback; or the one rank a launcher started, in its rendezvous.
    let (world, ranks): (u32, Vec<usize>) = match req.launched {
        Some(l) => (l.world, vec![l.rank as usize]),
        None => (req.tp, (0..req.tp as usize).collect()),
    };
    let port = if req.tp > 1 && req.launched.is_none() { free_port()? } else { 0 };
    let mut guard = GroupGuard { pgid: None, children: Vec::new() };
    let mut stderr_bufs = Vec::new();
    let (tx, rx) = mpsc::channel::<Progress>();
    for &rank in &ranks {
        let mut cmd = Command::new(req.python);
        cmd.arg("-u").arg(&script).arg(&config_path);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // One group for all ranks: the first rank leads it.
        cmd.process_group(guard.pgid.unwrap_or(0));
        // A rank must not outlive launchguard killed with SIGKILL (a launcher ending a run, a
        // user): it would go on holding its GPU and its peers' collectives.
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        if let Some(l) = req.launched {
            // The launcher's rendezvous (MASTER_ADDR, MASTER_PORT, torchrun's own variables) is
            // inherited; the rank is said in torchrun's words, whatever launched us.
            cmd.env("RANK", l.rank.to_string())
                .env("LOCAL_RANK", l.local_rank.to_string())
                .env("WORLD_SIZE", l.world.to_string());
        } else if req.tp > 1 {
            // torchrun's environment, on loopback. The rest of the environment (NCCL_NVLS_ENABLE
            // and friends) passes to every rank unchanged.
            cmd.env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", req.tp.to_string())
                .env("LOCAL_WORLD_SIZE", req.tp.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string());
        }
        let mut child =
            cmd.spawn().map_err(|cause| RunError::Python { python: req.python.to_string(), cause })?;
        if guard.pgid.is_none() {
            guard.pgid = Some(child.id() as i32);
        }
        let stdout = child.stdout.take().expect("piped stdout");
        let tx = tx.clone();
        let child_index = guard.children.len();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(mut p) = serde_json::from_str::<Progress>(&line) {
                    // Which child: an index into the children, not necessarily the rank.
                    p.rank = child_index as u32;
                    let _ = tx.send(p);
                }
            }
        });
        let buf = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = child.stderr.take().expect("piped stderr");
        let keep = Arc::clone(&buf);
        thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut b = keep.lock().expect("stderr buffer");
                b.extend_from_slice(&chunk[..n]);
                if b.len() > STDERR_KEEP {
                    let cut = b.len() - STDERR_KEEP;
                    b.drain(..cut);
                }
            }
        });
        stderr_bufs.push(buf);
        guard.children.push(child);
    }
    drop(tx);

    let label = if world > 1 { format!("rank {} ", ranks[0]) } else { String::new() };
    let mut progress = PhaseProgress::new(req.progress, &label);
    let deadline = Instant::now() + req.timeout;
    let mut exited = vec![false; guard.children.len()];
    // Where each rank is, for a timeout message that names the phase a rank hangs in.
    let mut at: Vec<(String, Instant)> = vec![("start-up".to_string(), Instant::now()); guard.children.len()];
    loop {
        while let Ok(p) = rx.try_recv() {
            if let Some(slot) = at.get_mut(p.rank as usize) {
                *slot = match p.state.as_str() {
                    "start" => (p.phase.clone(), Instant::now()),
                    "done" => (format!("after {}", p.phase), Instant::now()),
                    _ => (p.event.clone(), Instant::now()),
                };
            }
            if p.rank != 0 {
                continue;
            }
            match p.state.as_str() {
                "start" => progress.start(&p.phase),
                "done" => progress.done(&p.phase, p.seconds.unwrap_or(0.0)),
                _ => {}
            }
        }
        if let Some(why) = req.stop.as_ref().and_then(|stop| stop()) {
            progress.abandon();
            guard.kill();
            return Err(RunError::Stopped(why));
        }
        for (i, child) in guard.children.iter_mut().enumerate() {
            if exited[i] {
                continue;
            }
            if let Some(status) = child.try_wait()? {
                exited[i] = true;
                if !status.success() {
                    progress.abandon();
                    let how = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                        (Some(c), _) => format!("exited with code {c}"),
                        (None, Some(s)) => format!("was killed by signal {s}"),
                        _ => "ended abnormally".to_string(),
                    };
                    // Give the stderr reader a moment to drain the last lines.
                    thread::sleep(Duration::from_millis(50));
                    let tail = tail_of(&stderr_bufs[i]);
                    guard.kill();
                    return Err(RunError::Crashed { who: who(ranks[i], world), how, tail });
                }
            }
        }
        if exited.iter().all(|e| *e) {
            break;
        }
        if Instant::now() >= deadline {
            progress.abandon();
            let running: Vec<usize> = (0..exited.len()).filter(|r| !exited[*r]).collect();
            // Ask every process for its Python stacks (faulthandler on SIGUSR1), then kill.
            if let Some(pgid) = guard.pgid {
                // SAFETY: signals the group we created.
                unsafe {
                    libc::kill(-pgid, libc::SIGUSR1);
                }
                thread::sleep(Duration::from_millis(1500));
            }
            let mut who_where = Vec::new();
            for &i in &running {
                let (phase, since) = &at[i];
                who_where.push(format!(
                    "{} in {phase} for {:.0} s",
                    who(ranks[i], world),
                    since.elapsed().as_secs_f64()
                ));
                let stacks =
                    String::from_utf8_lossy(&stderr_bufs[i].lock().expect("stderr buffer")).to_string();
                eprintln!(
                    "launchguard: {} stderr before it was killed:\n{}",
                    who(ranks[i], world),
                    last_lines(&stacks, 40)
                );
            }
            let tail = tail_of(&stderr_bufs[running.first().copied().unwrap_or(0)]);
            guard.kill();
            return Err(RunError::TimedOut {
                seconds: req.timeout.as_secs(),
                who: who_where.join(", "),
                tail,
            });
        }
        thread::sleep(Duration::from_millis(20));
    }
    while let Ok(p) = rx.try_recv() {
        if p.state == "done" {
            progress.done(&p.phase, p.seconds.unwrap_or(0.0));
        }
    }
    guard.pgid = None;
    guard.children.clear();

    let mut results = Vec::new();
    let mut traces = Vec::new();
    for &rank in &ranks {
        let path = PathBuf::from(req.config.result_path.replace("{rank}", &rank.to_string()));
        let bad = |detail: String| RunError::BadResult { who: who(rank, world), detail };
        let bytes = std::fs::read(&path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let result: WorkloadResult = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        if result.schema != RESULT_SCHEMA {
            return Err(bad(format!("schema {:?}, expected {RESULT_SCHEMA}", result.schema)));
        }
        traces.push(PathBuf::from(req.config.trace_path.replace("{rank}", &rank.to_string())));
        results.push(result);
    }
    Ok(Finished { results, traces })
}
