//! The traces a command line names: files, standard input (`-`), or folders standing for the
//! traces directly in them.

use std::path::{Path, PathBuf};

use crate::PipelineError;

/// Whether the path stands for standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == launchguard_trace::input::STDIN
}

/// Whether a file name in a folder looks like a trace: `*.json` or `*.json.gz` (so
/// `*.pt.trace.json(.gz)` and rocprofv3's `*_results.json(.gz)`), or an SQLite database (rocpd's
/// `*.db`, an Nsight Systems `*.sqlite` export); not the status files `check` under a launcher
/// leaves beside its traces. What a file holds is decided by its content when it is read.
pub fn is_trace_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let json = (name.ends_with(".json") || name.ends_with(".json.gz")) && !name.ends_with(".status.json");
    json || name.ends_with(".db") || name.ends_with(".sqlite")
}

/// The traces named, a folder standing for every trace file directly in it (sorted by name).
/// File names found in a folder are kept as they are (not made text), so that a name that is not
/// UTF-8 opens the file it names.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, PipelineError> {
    let mut out = Vec::new();
    for arg in args {
        if !arg.is_dir() {
            out.push(arg.clone());
            continue;
        }
        let unlisted = |e: std::io::Error| PipelineError::Folder {
            path: arg.display().to_string(),
            why: format!("cannot list the folder: {e}"),
        };
        let mut found = Vec::new();
        for entry in std::fs::read_dir(arg).map_err(unlisted)? {
            let path = entry.map_err(unlisted)?.path();
            if path.is_file() && is_trace_name(&path) {
                found.push(path);
            }
        }
        if found.is_empty() {
            return Err(PipelineError::Folder {
                path: arg.display().to_string(),
                why: "no trace (*.json, *.json.gz, *.db, *.sqlite) in this folder".into(),
            });
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names_and_not_status_files() {
        for (name, want) in [
            ("host_1.1.pt.trace.json", true),
            ("r.JSON.GZ", true),
            ("rank0.status.json", false),
            ("908_results.json.gz", true),
            ("host/4242_results.db", true),
            ("run.sqlite", true),
            ("trace.txt", false),
        ] {
            assert_eq!(is_trace_name(Path::new(name)), want, "{name}");
        }
    }

    #[test]
    fn a_folder_stands_for_its_traces_sorted() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.json", "a.json.gz", "x.status.json", "notes.txt"] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        let got = expand(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<_> = got.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["a.json.gz", "b.json"]);
        let empty = tempfile::tempdir().unwrap();
        assert!(expand(&[empty.path().to_path_buf()]).unwrap_err().to_string().contains("no trace"));
    }
}
