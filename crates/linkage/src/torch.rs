//! Finding a PyTorch installation's libraries without importing torch.
//!
//! `import torch` takes seconds and runs CUDA/ROCm initialization; `importlib.util.find_spec`
//! only walks `sys.path` finders and returns where the package is. In an image (`--root`) no
//! interpreter of the image may run, so the usual site-packages locations are searched instead.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::LinkageError;
use crate::rootfs::RootFs;

/// The libraries whose closures decide the profiler backend, in inspection order.
pub const TORCH_LIBRARIES: [&str; 3] = ["libtorch_cpu.so", "libtorch_cuda.so", "libtorch_hip.so"];

/// How long the interpreter may take to say where torch is (it normally takes well under 1 s).
const PYTHON_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the outputs may go on after the interpreter has exited (their writer is then a
/// grandchild holding the pipe; what was written by then is the answer).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// What is kept of each of the interpreter's outputs: the end, where the answer (the last line
/// of stdout) and the reason of a failure (the last line of stderr) are.
const OUTPUT_TAIL: usize = 64 << 10;

/// Prints torch's spec as JSON, or the interpreter's own path when it has no torch (a bare
/// `python3` names no file). find_spec on a top-level name imports nothing.
const FIND_SPEC: &str = "import importlib.util, json, sys
s = importlib.util.find_spec('torch')
print(json.dumps({'no_torch': sys.executable} if s is None else {'origin': s.origin, 'locations': list(s.submodule_search_locations or [])}))";

/// What a reader thread has kept of one output, and a channel that says when it is all in.
struct Tail {
    kept: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Tail {
    /// Reads `from` to its end on a thread, keeping the last `OUTPUT_TAIL` bytes.
    fn spawn(mut from: impl Read + Send + 'static) -> Tail {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&kept);
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut tail = shared.lock().unwrap_or_else(|e| e.into_inner());
                        tail.extend_from_slice(&buf[..n]);
                        // Trimmed at twice the size, so the copying is amortized.
                        if tail.len() > 2 * OUTPUT_TAIL {
                            let cut = tail.len() - OUTPUT_TAIL;
                            tail.drain(..cut);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        Tail { kept, done }
    }

    /// The kept bytes once the output ends, or what is there at `deadline`: a grandchild that
    /// inherited the pipe may hold it open long after the interpreter has exited.
    fn take(self, deadline: Instant) -> Vec<u8> {
        let _ = self.done.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let mut tail = std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()));
        if tail.len() > OUTPUT_TAIL {
            tail.drain(..tail.len() - OUTPUT_TAIL);
        }
        tail
    }
}

/// Asks `python` where the torch package directory is.
pub fn ask_python(python: &str) -> Result<String, LinkageError> {
    let fail = |reason: String| LinkageError::Python { python: python.to_string(), reason };
    let mut child = Command::new(python)
        .args(["-c", FIND_SPEC])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(e.to_string()))?;
    // Both pipes are read while waiting: an interpreter (or a .pth file, or a wrapper) that
    // prints more than a pipe holds would otherwise block until the timeout.
    let out = child.stdout.take().map(Tail::spawn);
    let err = child.stderr.take().map(Tail::spawn);
    // A broken environment (a .pth file that blocks, a wrapper waiting for input) must not hang
    // the guard.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| fail(e.to_string()))? {
            break status;
        }
        if started.elapsed() > PYTHON_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!("it did not answer within {} s", PYTHON_TIMEOUT.as_secs())));
        }
        thread::sleep(Duration::from_millis(10));
    };
    let deadline = Instant::now() + PIPE_GRACE;
    let stdout = out.map(|t| t.take(deadline)).unwrap_or_default();
    let stderr = err.map(|t| t.take(deadline)).unwrap_or_default();
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(fail(format!("it exited with {status}: {}", last.trim())));
    }
    // The last line: a .pth file may print before our code runs.
    let stdout = String::from_utf8_lossy(&stdout);
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let spec: serde_json::Value = serde_json::from_str(line)
        .map_err(|_| fail(format!("unexpected output {:?}", shorten(line.trim()))))?;
    // `null`: an interpreter (a stand-in) that says only that there is none.
    if spec.is_null() || spec.get("no_torch").is_some() {
        let place = match spec["no_torch"].as_str().filter(|e| !e.is_empty() && *e != python) {
            Some(e) => format!("{python} ({e})"),
            None => python.to_string(),
        };
        let hint = "; name an interpreter that has torch with --python".to_string();
        return Err(LinkageError::NoTorch { place, hint });
    }
    let location = spec["locations"][0].as_str().map(String::from).or_else(|| {
        let origin = spec["origin"].as_str()?;
        origin.rsplit_once('/').map(|(dir, _)| dir.to_string())
    });
    location.ok_or_else(|| fail(format!("torch's spec has no location: {}", shorten(&spec.to_string()))))
}

/// The first 200 characters of `s`, for a one-line message.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// The torch libraries present for `dir`, which may be the torch package, its `lib` directory
/// or the site-packages directory holding it. Returns the lib directory and the libraries.
pub fn libraries(fs: &RootFs, dir: &str) -> Result<(String, Vec<String>), LinkageError> {
    let dir = dir.trim_end_matches('/');
    for lib_dir in [format!("{dir}/lib"), dir.to_string(), format!("{dir}/torch/lib")] {
        let found: Vec<String> = TORCH_LIBRARIES
            .iter()
            .map(|l| format!("{lib_dir}/{l}"))
            .filter(|p| fs.resolve(p).is_ok_and(|h| h.is_file()))
            .collect();
        if !found.is_empty() {
            return Ok((lib_dir, found));
        }
    }
    Err(LinkageError::NoTorchLibraries { dir: dir.to_string() })
}

/// Torch package directories inside an image, in a fixed search order (system Python, then
/// /usr/local, conda, virtual environments under /opt and /). A directory of more than
/// `max_dir_entries` entries is an error: a torch installation could hide past the cap.
pub fn find_in_root(fs: &RootFs, max_dir_entries: usize) -> Result<Vec<String>, LinkageError> {
    let mut bases: Vec<String> = [
        "/usr/lib",
        "/usr/lib64",
        "/usr/local/lib",
        "/usr/local/lib64",
        "/opt/conda/lib",
        "/root/.local/lib",
        "/venv/lib",
        "/.venv/lib",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for parent in ["/opt", "/opt/conda/envs"] {
        for d in list_dir(fs, parent, max_dir_entries)? {
            bases.push(format!("{parent}/{d}/lib"));
        }
    }
    let mut found = Vec::new();
    for base in bases {
        for py in list_dir(fs, &base, max_dir_entries)?.into_iter().filter(|n| n.starts_with("python3")) {
            for packages in ["site-packages", "dist-packages"] {
                let torch = format!("{base}/{py}/{packages}/torch");
                if libraries(fs, &torch).is_ok() && !found.contains(&torch) {
                    found.push(torch);
                }
            }
        }
    }
    Ok(found)
}

fn list_dir(fs: &RootFs, dir: &str, max_entries: usize) -> Result<Vec<String>, LinkageError> {
    let Ok(host) = fs.resolve(dir) else {
        return Ok(Vec::new());
    };
    let Ok(entries) = std::fs::read_dir(host) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for (i, entry) in entries.enumerate() {
        if i >= max_entries {
            return Err(LinkageError::Limit {
                what: format!("{dir} has more than {max_entries} entries"),
                flag: "--max-dir-entries N",
            });
        }
        if let Some(name) = entry.ok().and_then(|e| e.file_name().into_string().ok()) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_torch_in_an_image() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("usr/local/lib/python3.12/dist-packages/torch/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("libtorch_cpu.so"), b"").unwrap();
        let fs = RootFs::new(Some(dir.path().to_path_buf()), 1000);
        let found = find_in_root(&fs, 100).unwrap();
        assert_eq!(found, ["/usr/local/lib/python3.12/dist-packages/torch"]);
        let (lib_dir, libs) = libraries(&fs, &found[0]).unwrap();
        assert_eq!(lib_dir, "/usr/local/lib/python3.12/dist-packages/torch/lib");
        assert_eq!(libs, [format!("{lib_dir}/libtorch_cpu.so")]);
        // The site-packages directory and the lib directory work too.
        assert!(libraries(&fs, "/usr/local/lib/python3.12/dist-packages").is_ok());
        assert!(libraries(&fs, &lib_dir).is_ok());
        assert!(matches!(libraries(&fs, "/usr"), Err(LinkageError::NoTorchLibraries { .. })));
        // A listing past the cap is an error naming the flag.
        for d in ["opt/a", "opt/b"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let e = find_in_root(&fs, 1).unwrap_err();
        assert!(e.to_string().contains("--max-dir-entries"), "{e}");
    }

    #[test]
    fn python_without_torch_or_python() {
        // A Python that cannot exist, and one that has no torch (the system python3 here, if
        // any, is checked to have none before relying on that).
        assert!(matches!(ask_python("/nonexistent/python3"), Err(LinkageError::Python { .. })));
        let has_torch = Command::new("python3")
            .args(["-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"])
            .status();
        if let Ok(status) = has_torch {
            if status.code() == Some(1) {
                assert!(matches!(ask_python("python3"), Err(LinkageError::NoTorch { .. })));
            }
        }
    }
}
