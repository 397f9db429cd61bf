//! The readable report of `launchguard linkage` (`launchguard.linkage/1`): the backend, the
//! profiler libraries with the chain that loads each, a dependency count, every unresolved name,
//! every problem. The full closure is in the JSON. Every name comes from an image a stranger may
//! have built (DT_NEEDED, RUNPATH, SONAME, directory names): each is escaped on its line.

use std::fmt::Write as _;

use launchguard_linkage::{Backend, LinkageReport};

use crate::escape::one_line;

/// Renders the report, then one `FORBIDDEN:` line per backend the policy forbids.
pub fn render(report: &LinkageReport, forbidden: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "linkage {}", one_line(&report.target));
    if let Some(root) = &report.root {
        let _ = writeln!(out, "  root       {} (paths below are inside it)", one_line(root));
    }
    if let Some(dir) = &report.torch_dir {
        let _ = writeln!(out, "  torch      {}", one_line(dir));
    }
    for lib in &report.inspected {
        let _ = writeln!(out, "  inspected  {}", one_line(lib));
    }
    for (i, line) in report.loader.iter().flat_map(|l| l.describe()).enumerate() {
        let _ = writeln!(out, "  {:<10} {}", if i == 0 { "loader" } else { "" }, one_line(&line));
    }
    let listed = if report.profiler_backend == Backend::Mixed {
        let all: Vec<&str> = report.profiler_backends.iter().map(|b| b.as_str()).collect();
        format!(" ({})", all.join(", "))
    } else {
        String::new()
    };
    let _ = writeln!(out, "\nprofiler backend: {}{listed}", report.profiler_backend.as_str());
    for lib in &report.profiler_libraries {
        let version = lib.version.as_deref().map(|v| format!(" {}", one_line(v))).unwrap_or_default();
        let role = if lib.backend.is_some() { "" } else { "  (interception library, not a backend)" };
        let path = lib.path.as_deref().map_or("not found".into(), one_line);
        let _ = writeln!(out, "  {}{version}  {path}{role}", lib.kind.as_str());
        let via: Vec<_> = lib.via.iter().map(|v| one_line(v)).collect();
        let _ = writeln!(out, "      via {}", via.join(" → "));
        if let Some(note) = &lib.note {
            let _ = writeln!(out, "      {}", one_line(note));
        }
    }
    let resolved = report.dependencies.iter().filter(|d| d.path.is_some()).count();
    let missing = report.dependencies.len() - resolved;
    let count = match missing {
        0 => format!("{resolved} resolved"),
        n => format!("{resolved} resolved, {n} not found"),
    };
    let _ = writeln!(out, "\ndependencies: {count} (the JSON format lists them all)");
    for u in &report.unresolved {
        let needed: Vec<_> = u.needed_by.iter().map(|n| one_line(n)).collect();
        let _ = writeln!(
            out,
            "  not found {} (needed by {})\n      {}",
            one_line(&u.name),
            needed.join(", "),
            one_line(&u.reason)
        );
    }
    for (title, lines) in [("problems", &report.problems), ("notes", &report.notes)] {
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{title}:");
            for l in lines.iter() {
                let _ = writeln!(out, "  {}", one_line(l));
            }
        }
    }
    for f in forbidden {
        let _ = writeln!(out, "FORBIDDEN: {}", one_line(f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as `launchguard.linkage/1` writes it: a mixed backend, an interception library
    /// not found, a problem and a note.
    fn sample() -> LinkageReport {
        serde_json::from_value(serde_json::json!({
            "schema": "launchguard.linkage/1",
            "target": "python3",
            "torch_dir": "/site/torch",
            "inspected": ["/site/torch/lib/libtorch_cpu.so"],
            "profiler_backend": "mixed",
            "profiler_backends": ["rocprofiler-sdk", "cupti"],
            "profiler_libraries": [
                {"name": "librocprofiler-sdk.so.1", "path": "/opt/rocm/lib/librocprofiler-sdk.so.1",
                 "via": ["libtorch_cpu.so", "libkineto.so", "librocprofiler-sdk.so.1"],
                 "kind": "rocprofiler-sdk", "backend": "rocprofiler-sdk", "version": "1",
                 "note": "the file name says only version 1: whether it has the launch-overhead fix of 1.3.2 is for measurement to show"},
                {"name": "libroctx64.so.4", "path": null, "via": ["libtorch_cpu.so", "libroctx64.so.4"],
                 "kind": "roctx", "backend": null, "version": "4", "note": null}
            ],
            "dependencies": [],
            "unresolved": [{"name": "libroctx64.so.4", "needed_by": ["/site/torch/lib/libtorch_cpu.so"],
                            "reason": "not found in ld.so.cache"}],
            "problems": ["something unreadable"],
            "notes": ["dependency cycle: a → b → a"]
        }))
        .unwrap()
    }

    #[test]
    fn terminal_says_everything_that_matters() {
        let plain = render(&sample(), &["rocprofiler-sdk is linked".into()]);
        assert!(!plain.contains('\x1b'));
        for needle in [
            "profiler backend: mixed (rocprofiler-sdk, cupti)",
            "via libtorch_cpu.so → libkineto.so → librocprofiler-sdk.so.1",
            "whether it has the launch-overhead fix of 1.3.2 is for measurement to show",
            "roctx 4  not found  (interception library, not a backend)",
            "not found libroctx64.so.4 (needed by /site/torch/lib/libtorch_cpu.so)",
            "something unreadable",
            "dependency cycle",
            "FORBIDDEN: rocprofiler-sdk is linked",
        ] {
            assert!(plain.contains(needle), "{needle:?} missing from:\n{plain}");
        }
        insta::assert_snapshot!("linkage_terminal", plain);
        let json =
            crate::render(&crate::Doc::Linkage(&sample(), &[]), crate::Kind::Json).unwrap().into_bytes();
        insta::assert_snapshot!("linkage_json", String::from_utf8(json).unwrap());
    }

    #[test]
    fn names_from_the_image_cannot_drive_the_terminal() {
        let mut r = sample();
        r.unresolved[0].name = "lib\x1b]0;pwned\x07.so\u{202e}".into();
        r.notes[0] = "line\nverdict: PASS".into();
        let text = render(&r, &[]);
        assert!(
            !text.contains('\x1b') && !text.contains('\u{202e}') && !text.contains("\nverdict: PASS"),
            "{text}"
        );
        assert!(text.contains("lib\\x1b]0;pwned\\x07.so\\u{202e}"), "{text}");
    }
}
