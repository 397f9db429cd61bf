//! Hostile input to `analyze`, `--config` and `compare`, as strangers send it (issue 15, the
//! trace side): named pipes and devices where files are expected, standard input, hash floods,
//! gzip bombs of valid events, a million devices, two traces in one file, damaged gzip, times at
//! the ends of the range, one device written three ways, other encodings.
//!
//! Each case makes its input at test time in a tempdir and runs the `launchguard` binary in a
//! child process, under a small wrapper (this test binary, re-run on the ignored test
//! `hostile::wrapper`) that waits for it with `wait4` and reports its peak RSS: the wrapper is a
//! fresh small process, so the figure is launchguard's own (getrusage(RUSAGE_CHILDREN) of this
//! multi-threaded test process would include every child it ever waited for, and the memory of
//! this process that a child is forked from). Each case asserts the exit code, the one-line
//! message (or the result), a time bound, a memory bound, and that the input is unchanged. A
//! regression that hangs is killed at the time bound and fails the case.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{launchguard, repo_root};

/// Generous for two slow cores and a debug build; every case takes a few seconds at most.
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// Peak RSS of launchguard, KiB.
const RSS_LIMIT_KIB: i64 = 1 << 20;
const WRAPPER_ENV: &str = "LAUNCHGUARD_HOSTILE_RUN";

/// The wrapper: runs launchguard as the spec says, waits for it, and prints its exit status and
/// peak RSS (KiB) from `wait4`.
#[test]
#[ignore = "run by the other hostile tests, as a wrapper around launchguard"]
fn wrapper() {
    let Ok(spec) = std::env::var(WRAPPER_ENV) else { return };
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let args: Vec<String> =
        spec["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().into()).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_launchguard"));
    cmd.args(&args)
        .stdout(std::fs::File::create(spec["stdout"].as_str().unwrap()).unwrap())
        .stderr(std::fs::File::create(spec["stderr"].as_str().unwrap()).unwrap());
    // Standard input: nothing, a regular file, or a pipe fed from a file.
    let pipe_from = spec["pipe"].as_str().map(PathBuf::from);
    match (spec["stdin"].as_str(), &pipe_from) {
        (Some(file), _) => cmd.stdin(std::fs::File::open(file).unwrap()),
        (None, Some(_)) => cmd.stdin(Stdio::piped()),
        (None, None) => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().unwrap();
    let feeder = pipe_from.map(|from| {
        let mut to = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            // A reader that stops early closes the pipe: not this test's failure.
            let _ = std::io::copy(&mut std::fs::File::open(from).unwrap(), &mut to);
        })
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain out-parameters; the pid is our child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) };
    println!("RESULT {code} {}", usage.ru_maxrss);
    // The child was reaped by wait4.
    std::mem::forget(child);
}

/// What one run did.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) secs: f64,
    /// Peak RSS of launchguard, KiB.
    pub(crate) rss_kib: i64,
}

impl Run {
    /// The one-line error of an exit 2.
    #[track_caller]
    pub(crate) fn error(&self) -> &str {
        assert_eq!(self.code, 2, "expected an error, got exit {}; stderr: {}", self.code, self.stderr);
        let line = self.stderr.trim_end();
        assert!(!line.contains('\n'), "more than one line: {line:?}");
        assert!(line.starts_with("launchguard: error: "), "{line:?}");
        assert!(!line.contains("panicked"), "{line:?}");
        line
    }

    /// The JSON document of a run that judged the trace (exit 0 or 1).
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        assert!(self.code == 0 || self.code == 1, "exit {}; stderr: {}", self.code, self.stderr);
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {}", self.stderr))
    }
}

/// How standard input is given.
pub(crate) enum Stdin<'a> {
    Null,
    /// A regular file.
    File(&'a Path),
    /// A pipe, fed from this file.
    Pipe(&'a Path),
}

/// Runs `launchguard ARGS` under the wrapper, with the bounds asserted and `inputs` (files or
/// directories) checked unchanged.
// The wrapper is reaped by wait4 below, which clippy cannot see.
#[allow(clippy::zombie_processes)]
pub(crate) fn run(case: &str, args: &[&str], stdin: Stdin, inputs: &[&Path]) -> Run {
    run_within(case, args, stdin, inputs, TIME_LIMIT)
}

/// [`run`] with its own time bound, for the cases that must read gigabytes before they stop.
#[allow(clippy::zombie_processes)]
pub(crate) fn run_within(case: &str, args: &[&str], stdin: Stdin, inputs: &[&Path], limit: Duration) -> Run {
    let before: Vec<_> = inputs.iter().map(|p| snapshot(p)).collect();
    let out = tempfile::tempdir().unwrap();
    let (stdout_path, stderr_path) = (out.path().join("stdout"), out.path().join("stderr"));
    let mut spec = json!({
        "args": args,
        "stdout": stdout_path.to_str().unwrap(),
        "stderr": stderr_path.to_str().unwrap(),
    });
    match stdin {
        Stdin::Null => {}
        Stdin::File(p) => spec["stdin"] = json!(p.to_str().unwrap()),
        Stdin::Pipe(p) => spec["pipe"] = json!(p.to_str().unwrap()),
    }
    let wrapper_out = out.path().join("wrapper");
    let mut wrapper = Command::new(std::env::current_exe().unwrap())
        .args(["hostile::wrapper", "--exact", "--ignored", "--nocapture", "--test-threads=1", "-q"])
        .env(WRAPPER_ENV, spec.to_string())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&wrapper_out).unwrap())
        .stderr(Stdio::null())
        // Its own process group, so that a hang kills launchguard too.
        .process_group(0)
        .spawn()
        .unwrap();
    let started = Instant::now();
    let pid = wrapper.id() as libc::pid_t;
    loop {
        match wrapper.try_wait().unwrap() {
            Some(_) => break,
            None if started.elapsed() > limit => {
                // SAFETY: the process group this test made.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = wrapper.wait();
                panic!("{case}: still running after {} s (killed)", limit.as_secs());
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let result = std::fs::read_to_string(&wrapper_out).unwrap();
    let result = result
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("{case}: no result: {result}"));
    let mut fields = result.split(' ').map(|f| f.parse::<i64>().unwrap());
    let (code, rss_kib) = (fields.next().unwrap() as i32, fields.next().unwrap());
    let stdout = std::fs::read_to_string(&stdout_path).unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    eprintln!(
        "hostile {case}: exit {code}, {secs:.2} s, peak RSS {:.1} MiB: {}",
        rss_kib as f64 / 1024.0,
        stderr.lines().last().unwrap_or("(result)")
    );
    assert!(code >= 0, "{case}: killed by signal {}; stderr: {stderr}", -code);
    assert!(rss_kib < RSS_LIMIT_KIB, "{case}: peak RSS {rss_kib} KiB");
    assert!(started.elapsed() <= limit, "{case}: {secs:.1} s");
    let after: Vec<_> = inputs.iter().map(|p| snapshot(p)).collect();
    assert_eq!(after, before, "{case}: an input changed");
    Run { code, stdout, stderr, secs, rss_kib }
}

fn analyze(case: &str, path: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["analyze", path.to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    run(case, &args, Stdin::Null, &[path])
}

/// Every entry at or under `path`, without following links or opening anything but regular
/// files: type, size, mode, mtime, and a hash of the bytes of regular files.
pub(crate) fn snapshot(path: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![path.to_path_buf()];
    while let Some(p) = todo.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let mut what = format!("{:o} {} {} {}", meta.mode(), meta.len(), meta.mtime(), meta.mtime_nsec());
        if meta.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if meta.is_file() {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(&p).unwrap().hash(&mut h);
            what.push_str(&format!(" #{:x}", h.finish()));
        }
        out.insert(p, what);
    }
    out
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{}", std::io::Error::last_os_error());
}

pub(crate) fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A kernel on device `device`, stream 7.
fn kernel(name: &str, device: &str, ts: u64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{device},"tid":7,"ts":{ts},"dur":1,"args":{{"stream":7,"correlation":{ts}}}}}"#
    )
}

fn trace(events: &[String]) -> String {
    format!("{{\"traceEvents\":[\n{}\n]}}\n", events.join(",\n"))
}

/// A small real trace, decompressed.
fn healthy() -> Vec<u8> {
    let gz = std::fs::read(crate::util::repo_root().join("examples/healthy_clean.json.gz")).unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text).unwrap();
    text
}

#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.json");
    mkfifo(&fifo);
    let r = analyze("trace fifo", &fifo, &[]);
    assert_eq!(
        r.error(),
        format!("launchguard: error: {}: is a FIFO, not a regular file (a trace on a pipe is read from standard input: -)", fifo.display())
    );
    for dev in ["/dev/zero", "/dev/urandom"] {
        let r = analyze(dev, Path::new(dev), &[]);
        assert_eq!(r.error(), format!("launchguard: error: {dev}: is a device, not a regular file"));
    }
    // The configuration file and compare's inputs, the same way.
    let good = dir.path().join("good.json");
    std::fs::write(&good, trace(&[kernel("k", "0", 1)])).unwrap();
    for (case, config) in [("config fifo", fifo.to_str().unwrap()), ("config zero", "/dev/zero")] {
        let r = run(case, &["analyze", good.to_str().unwrap(), "--config", config], Stdin::Null, &[&good]);
        let what = if config.starts_with("/dev") { "a device" } else { "a FIFO" };
        assert_eq!(r.error(), format!("launchguard: error: {config}: is {what}, not a regular file"));
    }
    let baseline = crate::util::repo_root().join("tests/data/compare/h200-reference.json");
    for (case, other) in [
        ("compare fifo", fifo.to_str().unwrap()),
        ("compare zero", "/dev/zero"),
        ("compare urandom", "/dev/urandom"),
    ] {
        let r = run(case, &["compare", baseline.to_str().unwrap(), other], Stdin::Null, &[&baseline]);
        assert!(
            r.error().ends_with(&format!(
                "{other}: is {} not a regular file",
                if other.starts_with("/dev") { "a device," } else { "a FIFO," }
            )),
            "{}",
            r.stderr
        );
    }
    // Too large to be a configuration file.
    let big = dir.path().join("big.toml");
    std::fs::write(&big, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
    let r = run(
        "config too large",
        &["analyze", good.to_str().unwrap(), "--config", big.to_str().unwrap()],
        Stdin::Null,
        &[&good, &big],
    );
    assert_eq!(
        r.error(),
        format!(
            "launchguard: error: {}: is {} bytes, over the cap of 1 MiB for a configuration file",
            big.display(),
            (2 << 20) + 3
        )
    );
}

#[test]
fn standard_input_is_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("t.json");
    std::fs::write(&plain, healthy()).unwrap();
    let gzip = dir.path().join("t.json.gz");
    std::fs::write(&gzip, gz(&healthy())).unwrap();
    let want = analyze("file", &plain, &[]).json();
    for (case, stdin) in
        [("pipe", Stdin::Pipe(&plain)), ("pipe gzip", Stdin::Pipe(&gzip)), ("redirect", Stdin::File(&plain))]
    {
        let r = run(case, &["analyze", "-", "--format", "json"], stdin, &[&plain, &gzip]);
        let got = r.json();
        assert_eq!(got["devices"], want["devices"], "{case}");
        assert_eq!((&got["checks"], &got["verdict"]), (&want["checks"], &want["verdict"]), "{case}");
        assert_eq!(got["source"]["path"], "<stdin>");
        let bytes = std::fs::metadata(if case == "pipe gzip" { &gzip } else { &plain }).unwrap().len();
        assert_eq!(got["source"]["bytes"], bytes, "{case}");
    }
    let r = run(
        "stdin annotate",
        &["analyze", "-", "--annotate-trace", dir.path().join("a.json").to_str().unwrap()],
        Stdin::Pipe(&plain),
        &[&plain],
    );
    assert!(r.error().contains("--annotate-trace copies the trace, and standard input cannot be read again"));
    // A pipe named as a path (it said "No such device" before): refused, pointing at `-`.
    let r = run("/dev/stdin on a pipe", &["analyze", "/dev/stdin"], Stdin::Pipe(&plain), &[&plain]);
    assert!(
        r.error()
            .ends_with("is a FIFO, not a regular file (a trace on a pipe is read from standard input: -)"),
        "{}",
        r.stderr
    );
    let r = run("stdin empty", &["analyze", "-"], Stdin::Null, &[]);
    assert_eq!(r.error(), "launchguard: error: <stdin>: empty file");
}

/// `n` distinct kernel names of one length that agree on the bytes the name hash samples
/// (the first, middle and last 16).
fn flood(n: usize) -> String {
    let events: Vec<String> = (0..n)
        .map(|k| {
            let name = format!("{}{k:024}{}{:024}{}", "k".repeat(16), "m".repeat(16), n - k, "e".repeat(16));
            kernel(&name, "0", 2 * k as u64)
        })
        .collect();
    trace(&events)
}

#[test]
fn a_hash_flood_is_read_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flood.json");
    // 2·10^4 names took 5.4 s (10^5 over two minutes) before.
    std::fs::write(&path, flood(20_000)).unwrap();
    for parser in ["fast", "simple"] {
        let r = analyze(&format!("hash flood, {parser}"), &path, &["--parser", parser]);
        let got = r.json();
        assert_eq!(got["devices"][0]["activities"], 20_000);
        assert!(r.secs < 10.0, "{parser}: {:.1} s", r.secs);
    }
}

/// A gzip file of `members` members holding one events array: 40000 valid kernel events of
/// about 190 bytes each per member (their `ts` cycle through 100 values, so that the text
/// compresses some 130×, under the ratio that marks a whitespace bomb).
fn valid_bomb(members: usize) -> Vec<u8> {
    let events: Vec<String> = (0..40_000u64)
        .map(|k| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"void gemm_kernel<128,128,32>(float const*, float*)","pid":0,"tid":7,"ts":{}.000,"dur":1.5,"args":{{"device":0,"stream":7,"correlation":7}}}}"#,
                5118046481399 + k % 100
            )
        })
        .collect();
    let body = events.join(",");
    let first = gz(format!("{{\"traceEvents\":[{body}").as_bytes());
    let middle = gz(format!(",{body}").as_bytes());
    let mut out = first;
    for _ in 1..members {
        out.extend(&middle);
    }
    out.extend(gz(b"]}"));
    out
}

#[test]
fn a_gzip_bomb_of_valid_events_stops_at_a_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.json.gz");
    // 100 members: ~6 MB on disk, 728 MB (694 MiB) of text, 4·10^6 events.
    std::fs::write(&path, valid_bomb(100)).unwrap();
    let r = analyze("valid-event bomb, --max-events", &path, &["--max-events", "1000000"]);
    assert_eq!(
        r.error(),
        format!("launchguard: error: {}: more than 1000000 events (--max-events N or [input] max_events raises the cap)", path.display())
    );
    let r = analyze("valid-event bomb, --max-inflated-mib", &path, &["--max-inflated-mib", "64"]);
    assert_eq!(
        r.error(),
        format!("launchguard: error: {}: more than 64 MiB of JSON text (--max-inflated-mib N or [input] max_inflated_mib raises the cap)", path.display())
    );
    // The same cap from the configuration file; a flag overrides it.
    let config = dir.path().join("caps.toml");
    std::fs::write(&config, "[input]\nmax_events = 500000\n").unwrap();
    let c = config.to_str().unwrap();
    let r = analyze("valid-event bomb, [input] max_events", &path, &["--config", c]);
    assert!(r.error().contains("more than 500000 events"), "{}", r.stderr);
    let r = analyze("valid-event bomb, flag over key", &path, &["--config", c, "--max-events", "700000"]);
    assert!(r.error().contains("more than 700000 events"), "{}", r.stderr);
    // The simple parser stops at the same cap.
    let r = analyze("valid-event bomb, simple", &path, &["--max-events", "300000", "--parser", "simple"]);
    assert!(r.error().contains("more than 300000 events"), "{}", r.stderr);
}

/// The issue-35 bomb: 3.2 GB of small valid kernel events (25.6 million) in 42 MB of gzip, each
/// member a block of events that differ from one another (it inflates ~77x, under the 200x
/// guard), so it must be read event by event. With the default settings it is stopped by the
/// memory budget (1 GiB, the records taking half) with a one-line error, never analyzed at GBs of
/// memory or aborted; with a smaller budget, sooner; on standard input the same.
#[test]
fn a_gzip_bomb_of_valid_events_stops_within_the_default_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.json.gz");
    let event = |k: usize, r: usize| {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{}","pid":0,"tid":7,"ts":{}.{:03},"dur":1.5,"args":{{"stream":7,"correlation":{}}}}}"#,
            k % 7,
            5118046481399 + k * 3,
            (k * 37 + r) % 1000,
            k + r
        )
    };
    // 64,000 events (8 MB) per member; the first member opens the array.
    let block: Vec<String> = (0..64_000).map(|k| event(k, k / 200)).collect();
    let body = block.join(",");
    let members = 400;
    let mut bytes = gz(format!("{{\"traceEvents\":[{body}").as_bytes());
    let middle = gz(format!(",{body}").as_bytes());
    for _ in 1..members {
        bytes.extend(&middle);
    }
    bytes.extend(gz(b"]}"));
    std::fs::write(&path, &bytes).unwrap();
    let text = (body.len() as u64 + 1) * members as u64;
    assert!(text > 3_200_000_000 && (bytes.len() as u64) * 200 > text, "{text} from {}", bytes.len());
    let said = |r: &Run, name: &str, mib: u64| {
        assert_eq!(
            r.error(),
            format!("launchguard: error: {name}: records and analysis needing more than {mib} MiB of memory (--max-memory-mib N or [input] max_memory_mib raises the cap)")
        );
    };
    let long = Duration::from_secs(180);
    let args = ["analyze", path.to_str().unwrap(), "--format", "json"];
    let r = run_within("issue-35 bomb, default settings", &args, Stdin::Null, &[&path], long);
    said(&r, &path.display().to_string(), 1024);
    // The records' share is half the budget: stopped near 512 MiB, well within 1 GiB.
    assert!(r.rss_kib < 800 << 10, "peak RSS {} KiB", r.rss_kib);
    let small = ["analyze", "-", "--format", "json", "--max-memory-mib", "128"];
    let r = run_within("issue-35 bomb, standard input, 128 MiB", &small, Stdin::File(&path), &[&path], long);
    said(&r, "<stdin>", 128);
    assert!(r.rss_kib < 200 << 10, "peak RSS {} KiB", r.rss_kib);
}

/// A gzip file is read on all cores (`crates/trace/src/fast/gzip_par.rs`), standard input by the
/// sequential reader alone; whatever the parallel reader is unsure of, it leaves to that reader.
/// A bomb, a cap met in a late part, damaged gzip: the same one-line error for the file as for
/// the same bytes on standard input, and memory bounded alike.
#[test]
fn a_gzip_file_read_on_all_cores_is_refused_as_standard_input_is() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.json.gz");
    // 4·10^6 events in 728 MB (694 MiB) of text.
    std::fs::write(&bomb, valid_bomb(100)).unwrap();
    // A whitespace bomb after valid events: 1 GiB of spaces in 1024 members of ~1 KB.
    let spaces = dir.path().join("spaces.json.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&vec![b' '; 1 << 20]).unwrap();
    let member = e.finish().unwrap();
    let mut bytes = gz(format!("{{\"traceEvents\":[{},", kernel("k", "0", 1)).as_bytes());
    for _ in 0..1024 {
        bytes.extend(&member);
    }
    bytes.extend(gz(format!("{}]}}", kernel("k", "0", 2)).as_bytes()));
    std::fs::write(&spaces, bytes).unwrap();
    // Damaged: the CRC32 of a trace of a few parts.
    let crc = dir.path().join("crc.json.gz");
    let events: Vec<String> = (0..40_000).map(|k| kernel("k", "0", k)).collect();
    let mut good = gz(trace(&events).as_bytes());
    let n = good.len();
    good[n - 8] ^= 0x55;
    std::fs::write(&crc, good).unwrap();
    let cases: [(&Path, &[&str], &str); 6] = [
        (&bomb, &["--max-events", "1000000"], "more than 1000000 events"),
        // Met in one of the last parts.
        (&bomb, &["--max-events", "3990000"], "more than 3990000 events"),
        (&bomb, &["--max-inflated-mib", "600"], "more than 600 MiB of JSON text"),
        (&bomb, &["--max-event-mib", "8", "--max-events", "2000000"], "more than 2000000 events"),
        (&spaces, &[], "refusing a gzip bomb"),
        (&crc, &[], "a gzip member's CRC32 or length check fails"),
    ];
    for (path, extra, want) in cases {
        let case = format!("{} {}", path.file_name().unwrap().to_string_lossy(), extra.join(" "));
        let file = analyze(&format!("{case}, file"), path, extra);
        let mut args = vec!["analyze", "-", "--format", "json"];
        args.extend(extra);
        let stdin = run(&format!("{case}, standard input"), &args, Stdin::File(path), &[path]);
        let said = file.error().replace(&path.display().to_string(), "<stdin>");
        assert_eq!(said, stdin.error(), "{case}");
        assert!(said.contains(want), "{case}: {said}");
        // The parts in flight and what is joined: no more than the sequential reader's own
        // figure and some 200 MiB (a bomb refused after it was inflated whole would hold GBs).
        assert!(
            file.rss_kib < stdin.rss_kib + (200 << 10),
            "{case}: peak RSS {} KiB against {} KiB on standard input",
            file.rss_kib,
            stdin.rss_kib
        );
    }
}

#[test]
fn a_million_devices_stop_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.json");
    // 2·10^5 devices (~20 MB): 10^6 (98 MB) took 3.5 GB before.
    let events: Vec<String> = (0..200_000).map(|k| kernel("k", &k.to_string(), k)).collect();
    std::fs::write(&path, trace(&events)).unwrap();
    let r = analyze("devices", &path, &[]);
    assert_eq!(
        r.error(),
        format!("launchguard: error: {}: GPU activity on more than 4096 devices (--max-devices N or [input] max_devices raises the cap)", path.display())
    );
    let r = analyze("streams", &path, &["--max-devices", "1000000", "--max-streams", "100"]);
    assert!(r.error().contains("GPU activity on more than 100 streams (--max-streams N"), "{}", r.stderr);
    let r = analyze("names", &path, &["--max-names", "1000"]);
    assert!(r.error().contains("more than 1000 distinct names and labels (--max-names N"), "{}", r.stderr);
}

#[test]
fn two_traces_in_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = trace(&[kernel("k", "0", 1)]);
    let n = one.len();
    let bare = format!("[{}]", kernel("k", "0", 1));
    let cases = [
        (
            "two.json",
            format!("{one}{one}").into_bytes(),
            format!("a second JSON document at byte {n}: two traces in one file?"),
        ),
        (
            "bare.json",
            format!("{bare}\n{bare}").into_bytes(),
            format!("a second JSON document at byte {}: two traces in one file?", bare.len() + 1),
        ),
        (
            "members.json.gz",
            [gz(one.as_bytes()), gz(one.as_bytes())].concat(),
            format!("a second JSON document at byte {n} of the decompressed text: two traces in one file?"),
        ),
        (
            "garbage.json",
            format!("{}garbage", one.trim_end()).into_bytes(),
            format!("unexpected text after the JSON document at byte {}: \"garbage\"", n - 1),
        ),
    ];
    for (name, bytes, want) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let r = analyze(name, &path, &[]);
        assert!(r.error().contains(&want), "{name}: {}", r.stderr);
    }
    // One trace split across members is one trace.
    let path = dir.path().join("split.json.gz");
    std::fs::write(&path, [gz(&one.as_bytes()[..n / 2]), gz(&one.as_bytes()[n / 2..])].concat()).unwrap();
    assert_eq!(analyze("split", &path, &[]).json()["devices"][0]["activities"], 1);
}

#[test]
fn damaged_gzip_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = gz(trace(&[kernel("k", "0", 1)]).as_bytes());
    let n = good.len();
    let mut crc = good.clone();
    crc[n - 8] ^= 0x55;
    let mut isize = good.clone();
    isize[n - 4] ^= 1;
    let garbage = [&good[..], b"not gzip at all, but long enough"].concat();
    for (name, bytes, want) in [
        ("crc.json.gz", crc, "a gzip member's CRC32 or length check fails: the file is damaged"),
        ("isize.json.gz", isize, "a gzip member's CRC32 or length check fails: the file is damaged"),
        ("garbage.json.gz", garbage, "bytes after the last gzip member are not gzip (trailing garbage)"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let r = analyze(name, &path, &[]);
        assert_eq!(r.error(), format!("launchguard: error: {}: corrupt gzip data: {want}", path.display()));
    }
}

#[test]
fn times_out_of_range_are_skipped_not_a_negative_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("far.json");
    let mut events: Vec<String> = (0..10).map(|k| kernel("k", "0", 1000 + 10 * k)).collect();
    events.push(kernel("k", "0", 9_000_000_000_000_000));
    events.push(kernel("k", "0", 1000).replace("\"ts\":1000", "\"ts\":-9000000000000000"));
    std::fs::write(&path, trace(&events)).unwrap();
    let got = analyze("far times", &path, &[]).json();
    assert_eq!(got["source"]["skipped"]["missing_ts"], 2);
    let d = &got["devices"][0];
    // Ten kernels of 1 µs, 10 µs apart: a window of 91 µs.
    assert_eq!((d["activities"].as_u64(), d["window_us"].as_f64()), (Some(10), Some(91.0)));
}

#[test]
fn one_device_written_three_ways_is_one_device() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pids.json");
    let events: Vec<String> = ["0", "\"0\"", "0.0", "-0"]
        .iter()
        .enumerate()
        .map(|(k, pid)| kernel("k", pid, 10 * k as u64))
        .collect();
    std::fs::write(&path, trace(&events)).unwrap();
    for parser in ["fast", "simple"] {
        let got = analyze(&format!("pids, {parser}"), &path, &["--parser", parser]).json();
        let devices = got["devices"].as_array().unwrap();
        assert_eq!(
            (devices.len(), &devices[0]["device"], &devices[0]["activities"]),
            (1, &json!("0"), &json!(4)),
            "{parser}"
        );
    }
}

#[test]
fn encodings_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = healthy();
    let plain = dir.path().join("t.json");
    std::fs::write(&plain, &text).unwrap();
    let want = analyze("plain", &plain, &[]).json();
    // A UTF-8 byte order mark is read past.
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, [&b"\xef\xbb\xbf"[..], &text].concat()).unwrap();
    assert_eq!(analyze("bom", &bom, &[]).json()["devices"], want["devices"]);
    let utf16 = dir.path().join("utf16.json");
    let wide: Vec<u8> =
        String::from_utf8(text[..4096].to_vec()).unwrap().encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(&utf16, [&[0xff, 0xfe][..], &wide].concat()).unwrap();
    assert!(analyze("utf16", &utf16, &[]).error().ends_with("UTF-16 text (little-endian, with a byte order mark): launchguard reads JSON in UTF-8; convert it first (iconv -f UTF-16 -t UTF-8)"));
    // A zstd frame's magic number (RFC 8878) before the text.
    let zstd = dir.path().join("t.json.zst");
    std::fs::write(&zstd, [&[0x28, 0xb5, 0x2f, 0xfd][..], &text[..100]].concat()).unwrap();
    assert!(analyze("zstd", &zstd, &[]).error().ends_with(
        "zstd-compressed data: launchguard reads JSON, plain or gzip; decompress it first (zstd -d)"
    ));
}

#[test]
fn the_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    std::fs::write(&file, "[]").unwrap();
    // A file used as a directory: ENOTDIR, which even root gets.
    let inside = file.join("x.json");
    let r = run("os error", &["analyze", inside.to_str().unwrap()], Stdin::Null, &[&file]);
    assert_eq!(r.error(), format!("launchguard: error: {}: Not a directory (os error 20)", inside.display()));
    let r = run(
        "config os error",
        &["analyze", file.to_str().unwrap(), "--config", inside.to_str().unwrap()],
        Stdin::Null,
        &[&file],
    );
    assert_eq!(r.error(), format!("launchguard: error: {}: Not a directory (os error 20)", inside.display()));
}

#[test]
fn reports_go_into_dev_stdout_and_dev_null_without_replacing_them() {
    // Renaming a temporary file over /dev/stdout (a link) or /dev/null (a device) would replace
    // them for every process on the machine, as root: reports are written into them instead.
    let trace = repo_root().join("examples/healthy_clean.json.gz");
    let before = std::fs::symlink_metadata("/dev/stdout").unwrap().file_type();
    let out = launchguard()
        .args(["analyze", "--format", "json", "--junit", "/dev/stdout", "--html", "/dev/null"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("<?xml") && text.contains("<testsuites"), "the JUnit first: {text:.200}");
    assert!(text.contains("\"schema\": \"launchguard.analysis/1\""), "then the JSON");
    assert_eq!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type(), before);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // A folder is refused, naming what it is.
    let dir = tempfile::tempdir().unwrap();
    let out = launchguard().arg("analyze").arg(&trace).arg("--markdown").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a folder") && err.lines().count() == 1, "{err}");
}

/// The H200 example with every GPU activity renamed `name` and the GPU named `gpu`.
fn renamed_trace(dir: &Path, name: &str, gpu: &str) -> PathBuf {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(repo_root().join("examples/delay270_clean.json.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    for e in doc["traceEvents"].as_array_mut().unwrap() {
        if e["cat"] == "kernel" {
            e["name"] = json!(name);
        }
    }
    if let Some(props) = doc["deviceProperties"].as_array_mut() {
        for p in props {
            p["name"] = json!(gpu);
        }
    }
    let path = dir.join("renamed.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn names_from_a_trace_cannot_drive_the_terminal_or_forge_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "gemm\x1b]0;owned\x07\x1b[2J\nverdict: PASS\u{202e}";
    let trace = renamed_trace(dir.path(), evil, "H200\x1b[31m\r\nverdict: PASS");
    let junit = dir.path().join("r.xml");
    let out = launchguard()
        // Wide enough that the kernel table shows the name whole, to see it escaped.
        .args(["analyze", "--color", "never", "--width", "400", "--junit"])
        .arg(&junit)
        .arg(&trace)
        .output()
        .unwrap();
    // The delay starves the GPU: the real verdict is FAIL, whatever the names say.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'), "{text:?}");
    assert!(!text.contains('\u{202e}'), "bidirectional overrides are escaped");
    let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("verdict:")).collect();
    assert_eq!(verdicts, ["verdict: FAIL"], "{text}");
    assert!(
        text.contains("gemm\\x1b]0;owned\\x07\\x1b[2J\\nverdict: PASS\\u{202e}"),
        "shown escaped: {text}"
    );
    assert!(text.contains("GPU 0 (H200\\x1b[31m\\r\\nverdict: PASS)"), "{text}");
    // The JSON keeps the names exact; the JUnit XML stays well-formed.
    let (_, doc) = crate::util::analyze_json(&trace, &[]);
    assert_eq!(doc["kernels"]["kernels"][0]["name"], evil);
    let xml = std::fs::read_to_string(&junit).unwrap();
    roxmltree::Document::parse(&xml).expect("well-formed XML");
}

#[test]
fn a_sparse_file_of_gigabytes_is_refused_at_once() {
    // 8 GiB of which only the opening is written: the rest reads as NUL bytes. The first part
    // refused it at once, but the text was searched whole for element starts, the run of NULs
    // walked to its end, and all of it copied for the reference parser to word the failure
    // (an 8 GiB allocation).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.json");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(b"{\"traceEvents\":[  ").unwrap();
    f.set_len(8 << 30).unwrap();
    drop(f);
    let on_disk = std::fs::metadata(&path).unwrap().blocks() * 512;
    if on_disk > 1 << 20 {
        eprintln!(
            "note: {} does not keep holes in files ({on_disk} bytes on disk); not run",
            dir.path().display()
        );
        return;
    }
    // Unchanged is checked by its metadata and opening: a snapshot would read 8 GiB.
    let meta = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.len(), m.blocks(), m.mtime(), m.mtime_nsec(), m.mode())
    };
    let before = meta(&path);
    let r = run("sparse", &["analyze", path.to_str().unwrap(), "--format", "json"], Stdin::Null, &[]);
    assert_eq!(
        r.error(),
        format!(
            "launchguard: error: {}: not a JSON trace: expected value at line 1 column 19",
            path.display()
        )
    );
    assert_eq!(meta(&path), before);
    let mut opening = [0u8; 18];
    std::io::Read::read_exact(&mut std::fs::File::open(&path).unwrap(), &mut opening).unwrap();
    assert_eq!(&opening, b"{\"traceEvents\":[  ");
}

#[test]
fn a_truncated_trace_s_hostile_name_is_escaped_in_the_warning() {
    // A folder's file names are whoever filled it's: an escape sequence or a line break in one
    // reached the terminal raw in the truncation warning (errors were already escaped).
    let dir = tempfile::tempdir().unwrap();
    let name = "rank0\u{1b}[2J\u{1b}[31mEVIL\nverdict: PASS.json";
    let text = trace(&[kernel("k", "0", 1000), kernel("k", "0", 2000)]);
    std::fs::write(dir.path().join(name), &text.as_bytes()[..text.len() - 20]).unwrap();
    let r = run("hostile name", &["analyze", dir.path().to_str().unwrap()], Stdin::Null, &[dir.path()]);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    let warning = r.stderr.trim_end();
    assert!(warning.starts_with("launchguard: warning: "), "{warning:?}");
    assert!(!warning.contains('\u{1b}') && !warning.contains('\n'), "{warning:?}");
    assert!(warning.contains("rank0\\x1b[2J\\x1b[31mEVIL\\nverdict: PASS.json is truncated"), "{warning:?}");
}

#[test]
fn a_trace_that_shrinks_while_it_is_read_is_an_error_not_a_crash() {
    // A plain trace is read mapped; cut short by another process while it is read, the pages
    // past the new end raise SIGBUS, which killed the process without a word.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinks.json");
    let one = healthy();
    let body =
        &one[one.iter().position(|&b| b == b'[').unwrap() + 1..one.iter().rposition(|&b| b == b']').unwrap()];
    let mut text = b"{\"traceEvents\":[".to_vec();
    for k in 0..40 {
        if k > 0 {
            text.push(b',');
        }
        text.extend_from_slice(body);
    }
    text.extend_from_slice(b"]}\n");
    let mut outcomes = Vec::new();
    for delay_ms in [0, 5, 20, 50, 100, 200] {
        std::fs::write(&path, &text).unwrap();
        let cut = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(delay_ms));
                std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(4096).unwrap();
            })
        };
        // `run` asserts that launchguard was not killed by a signal.
        let r = run("shrinks", &["analyze", path.to_str().unwrap(), "--format", "json"], Stdin::Null, &[]);
        cut.join().unwrap();
        // Cut before it was read, it is a truncated trace (a warning, then a verdict or an
        // error); cut while it was read, the error of SIGBUS.
        let last = r.stderr.trim_end().lines().last().unwrap_or("");
        if r.code == 2 {
            assert!(last.starts_with("launchguard: error: "), "{}", r.stderr);
            assert!(last.ends_with("(SIGBUS)") || last.contains("shrinks.json"), "{}", r.stderr);
        }
        outcomes.push((delay_ms, r.code));
    }
    eprintln!("delay (ms), exit: {outcomes:?}");
}

/// A small Nsight Systems export (the real exports' tables, few columns): `kernels` rows of
/// (start, end, name).
fn small_nsys(path: &Path, kernels: &[(i64, i64, &str)]) {
    let db = rusqlite::Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, demangledName INTEGER NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);",
    )
    .unwrap();
    for (i, (s, e, name)) in kernels.iter().enumerate() {
        db.execute("INSERT OR IGNORE INTO StringIds VALUES (?1, ?2)", rusqlite::params![i as i64 + 1, name])
            .unwrap();
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 7, ?3, ?3)",
            rusqlite::params![s, e, i as i64 + 1],
        )
        .unwrap();
    }
}

/// Runs `analyze` on a database, holding its whole folder unchanged (no journal, WAL or lock
/// file made beside it).
fn analyze_db(case: &str, dir: &Path, db: &Path) -> Run {
    run(case, &["analyze", db.to_str().unwrap(), "--format", "json"], Stdin::Null, &[dir])
}

#[test]
fn corrupt_and_cut_databases_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.sqlite");
    let kernels: Vec<(i64, i64, &str)> = (0..2000).map(|i| (i * 10, i * 10 + 5, "k")).collect();
    small_nsys(&good, &kernels);
    assert_eq!(analyze_db("good", dir.path(), &good).json()["devices"][0]["activities"], 2000);
    let bytes = std::fs::read(&good).unwrap();
    assert!(bytes.len() > 3 * 4096, "{} bytes: several pages", bytes.len());
    // Garbage over the pages after the first (the header and the schema stay readable).
    let mut corrupt = bytes.clone();
    for (i, b) in corrupt[4096..].iter_mut().enumerate() {
        *b = (i * 7 + 13) as u8;
    }
    let path = dir.path().join("corrupt.sqlite");
    std::fs::write(&path, &corrupt).unwrap();
    let e = analyze_db("corrupt", dir.path(), &path).error().to_string();
    assert!(e.contains("corrupt.sqlite"), "{e}");
    // Cut in the middle of a page, and after the header alone.
    for (name, len) in [("cut.sqlite", bytes.len() / 2 + 100), ("header.sqlite", 100)] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes[..len]).unwrap();
        let e = analyze_db(name, dir.path(), &path).error().to_string();
        assert!(e.contains(name), "{e}");
    }
}

#[test]
fn a_huge_string_in_a_database_stops_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.sqlite");
    let name = "k".repeat(8 << 20);
    small_nsys(&path, &[(0, 5, &name)]);
    let r = analyze_db("huge", dir.path(), &path);
    assert!(r.error().contains("a string or blob longer than 1048576 bytes"), "{}", r.stderr);
    assert!(r.rss_kib < 256 << 10, "{} KiB", r.rss_kib);
}

#[test]
fn views_and_triggers_named_like_the_tables_are_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("views.sqlite");
    small_nsys(&path, &[(0, 5, "real"), (10, 15, "real")]);
    let db = rusqlite::Connection::open(&path).unwrap();
    // Where a reader might look: a view that never ends, named as the tables it would read; a
    // trigger; a view over the real table that renames every kernel.
    db.execute_batch(
        "CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS start, i + 1 AS end, 0 AS deviceId, 7 AS streamId, NULL AS correlationId FROM n;
         CREATE VIEW NVTX_EVENTS AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS start, i AS end, 59 AS eventType, 'x' AS text, 1 AS globalTid, NULL AS textId FROM n;
         CREATE VIEW ENUM_NSYS_EVENT_TYPE AS SELECT 59 AS id, 'NvtxPushPopRange' AS name;
         CREATE TRIGGER t AFTER INSERT ON StringIds BEGIN DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; END;
         CREATE VIEW TARGET_INFO_GPU AS SELECT 0 AS id, 'forged' AS name;",
    )
    .unwrap();
    drop(db);
    let v = analyze_db("views", dir.path(), &path).json();
    assert_eq!(v["devices"][0]["activities"], 2, "only the table's rows");
    assert_eq!(v["kernels"]["kernels"][0]["name"], "real");
    assert!(v["devices"][0].get("name").is_none_or(|n| n != "forged"), "{}", v["devices"][0]);
}

#[test]
fn a_text_file_named_like_a_database_is_read_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("notes.db", &b"not a database\n"[..]), ("run.sqlite", b"SQLite format 3")] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = analyze_db(name, dir.path(), &path).error().to_string();
        assert!(e.contains(name), "{e}");
    }
    // And an SQLite database of something else altogether.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let e = analyze_db("other", dir.path(), &other).error().to_string();
    assert!(e.contains("neither a rocpd database") && e.contains("nor an Nsight Systems export"), "{e}");
}

#[test]
fn a_rocprofv3_file_of_the_wrong_shape_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "types_results.json",
            r#"{"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": "soon"}]}}]}"#,
        ),
        (
            "cut_results.json",
            r#"{"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_tim"#,
        ),
        ("empty_results.json", r#"{"rocprofiler-sdk-tool": []}"#),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = analyze(name, &path, &[]).error().to_string();
        assert!(e.contains(name), "{e}");
    }
}
