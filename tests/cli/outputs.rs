//! What launchguard writes, and what it shows, when strangers choose the names (issue 32): report
//! files never replace an input, never go through a planted link, never share a path; CSV cells
//! are never formulas; no renderer lets an escape byte from an input reach a terminal; one
//! 500 MB name costs what a label costs; impossible causality is said; messages say what
//! happened.
//!
//! Each case makes its files at test time in a tempdir and runs launchguard under the wrapper of
//! `hostile.rs` (exit code and peak RSS from `wait4`, a time bound), and asserts the exit code,
//! the one-line reason, that every file but the named outputs is unchanged (hashed), and that
//! no raw escape byte reaches standard output or error.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hostile::{gz, run, snapshot, Run, Stdin};
use crate::util::repo_root;

/// Bytes that drive a terminal: ESC (CSI, OSC), BEL, the C1 CSI, a bidirectional override.
fn raw_escapes(text: &str) -> Vec<char> {
    text.chars().filter(|c| matches!(c, '\x1b' | '\x07' | '\u{9b}' | '\u{202e}')).collect()
}

/// `run`, then: nothing raw on standard output or error, and every file under `dir` but
/// `outputs` as it was.
fn run_in(case: &str, dir: &Path, args: &[&str], outputs: &[PathBuf]) -> Run {
    let keep = |mut m: BTreeMap<PathBuf, String>| {
        // A folder that holds an output changes its times when the output is made in it.
        m.retain(|p, _| !outputs.iter().any(|o| p.starts_with(o) || o.starts_with(p)));
        m
    };
    let before = keep(snapshot(dir));
    let r = run(case, args, Stdin::Null, &[]);
    assert_eq!(keep(snapshot(dir)), before, "{case}: a file that is not a named output changed");
    for (what, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert_eq!(raw_escapes(text), [], "{case}: raw escape bytes on {what}: {text:?}");
    }
    r
}

/// The H200 example (healthy, or with a delay before each launch) as JSON text, each event
/// passed through `edit`.
fn example(delay: bool, mut edit: impl FnMut(&mut Value)) -> Value {
    use std::io::Read;
    let name = if delay { "examples/delay270_clean.json.gz" } else { "examples/healthy_clean.json.gz" };
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(repo_root().join(name)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["traceEvents"].as_array_mut().unwrap().iter_mut().for_each(&mut edit);
    doc
}

fn write_json(path: &Path, doc: &Value) -> PathBuf {
    std::fs::write(path, serde_json::to_vec(doc).unwrap()).unwrap();
    path.to_path_buf()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn csv_dir_never_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let input = write_json(&d.join("kernels.csv"), &example(false, |_| {}));
    let r = run_in("csv over input", dir.path(), &["analyze", s(&input), "--csv", s(&d)], &[]);
    assert_eq!(
        r.error(),
        format!(
            "launchguard: error: --csv {0} writes {0}/kernels.csv, which is the input {0}/kernels.csv; refusing to overwrite it",
            d.display()
        )
    );
    assert!(r.rss_kib < 1 << 20);
}

#[test]
fn a_link_planted_where_an_output_goes_is_refused_and_its_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_json(&dir.path().join("t.json"), &example(false, |_| {}));
    let victim = dir.path().join("authorized_keys");
    std::fs::write(&victim, "ssh-ed25519 AAAA me\n").unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // In a --csv folder, and at each named output of analyze and compare.
    let cases: Vec<(&str, Vec<String>, PathBuf)> = vec![
        (
            "csv",
            vec!["analyze".into(), s(&trace).into(), "--csv".into(), s(&out).into()],
            out.join("kernels.csv"),
        ),
        ("html", vec!["analyze".into(), s(&trace).into(), "--html".into()], out.join("r.html")),
        ("junit", vec!["analyze".into(), s(&trace).into(), "--junit".into()], out.join("r.xml")),
        ("markdown", vec!["analyze".into(), s(&trace).into(), "--markdown".into()], out.join("r.md")),
        ("annotate", vec!["analyze".into(), s(&trace).into(), "--annotate-trace".into()], out.join("a.json")),
        (
            "compare csv",
            vec!["compare".into(), s(&trace).into(), s(&trace).into(), "--csv".into(), s(&out).into()],
            out.join("metrics.csv"),
        ),
        (
            "compare html",
            vec!["compare".into(), s(&trace).into(), s(&trace).into(), "--html".into()],
            out.join("c.html"),
        ),
    ];
    for (case, mut args, link) in cases {
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        if !args.iter().any(|a| a == s(&out)) {
            args.push(s(&link).into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_in(case, dir.path(), &args, &[]);
        let line = r.error();
        assert!(
            line.contains(&format!("{} is a symbolic link to the file {}", link.display(), victim.display()))
                && line.ends_with(
                    "launchguard does not write through links: remove the link, or name the file itself"
                ),
            "{case}: {line}"
        );
        std::fs::remove_file(&link).unwrap();
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ssh-ed25519 AAAA me\n");
}

#[test]
fn two_outputs_on_one_path_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_json(&dir.path().join("t.json"), &example(false, |_| {}));
    let d = dir.path().join("d");
    for (case, csv, html) in [
        ("same text", s(&d).to_string(), format!("{}/kernels.csv", d.display())),
        ("./ before", format!("{}/./d", dir.path().display()), format!("{}/kernels.csv", d.display())),
    ] {
        let r = run_in(case, dir.path(), &["analyze", s(&trace), "--csv", &csv, "--html", &html], &[]);
        assert_eq!(
            r.error(),
            format!(
                "launchguard: error: --html and --csv {csv} both write {csv}/kernels.csv: two outputs on one path"
            ),
            "{case}"
        );
        assert!(!d.exists(), "{case}: the folder was made though nothing was written");
    }
    // compare's outputs too.
    let json = dir.path().join("r.json");
    let r = run_in(
        "compare",
        dir.path(),
        &["compare", s(&trace), s(&trace), "--junit", s(&json), "--markdown", s(&json)],
        &[],
    );
    assert_eq!(
        r.error(),
        format!(
            "launchguard: error: --junit and --markdown both write {}: two outputs on one path",
            json.display()
        )
    );
}

#[test]
fn csv_cells_are_never_formulas_and_numbers_stay_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let formulas =
        ["=HYPERLINK(\"http://evil/\",\"x\")", "+cmd", "-1+cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "\rx"];
    // Kernels renamed by their position in each replay; launches moved 1 s late, after every
    // kernel, so that the launch-to-first-kernel figures are negative numbers.
    let mut k = 0;
    let doc = example(false, |e| {
        if e["cat"] == "kernel" {
            e["name"] = json!(formulas[k % formulas.len()]);
            k += 1;
        }
        if e["name"] == "cudaGraphLaunch" {
            e["ts"] = json!(e["ts"].as_f64().unwrap() + 1_000_000.0);
        }
    });
    let trace = write_json(&dir.path().join("t.json"), &doc);
    let out = dir.path().join("csv");
    let r =
        run_in("formulas", dir.path(), &["analyze", s(&trace), "--csv", s(&out)], std::slice::from_ref(&out));
    // Kernels before their launches: inconclusive, its tables written all the same.
    assert_eq!(r.code, 2, "{}", r.stderr);
    let mut names = std::collections::BTreeSet::new();
    let mut rows = csv::Reader::from_path(out.join("kernels.csv")).unwrap();
    for row in rows.records() {
        let row = row.unwrap();
        names.insert(row[5].to_string());
        assert!(!row[5].starts_with(['=', '+', '-', '@', '\t', '\r']), "{row:?}");
    }
    let want: std::collections::BTreeSet<String> =
        formulas.iter().map(|f| format!("'{}", f.replace('\t', "\\t").replace('\r', "\\r"))).collect();
    assert_eq!(names, want);
    // The replays' negative figures are numbers: -1000 µs plus the real latency, each.
    let mut replays = csv::Reader::from_path(out.join("replays.csv")).unwrap();
    let mut negative = 0;
    for row in replays.records() {
        let latency: f64 = row.unwrap()[7].parse().expect("a number, not a quoted formula");
        assert!(latency < 0.0 && latency > -1e6, "{latency}");
        negative += 1;
    }
    assert_eq!(negative, 100);
}

/// A name with a CSI, an OSC title ended by BEL, a bidirectional override and a line that
/// forges a verdict.
const EVIL: &str = "gemm\x1b[2J\x1b]0;owned\x07\u{202e}lmth.exe\nverdict: FORGED";

/// Every format of every document fed the same hostile names: raw escape bytes reach no output,
/// the forged line no line start; JSON keeps the names exact.
#[test]
fn no_renderer_lets_a_hostile_name_through() {
    let dir = tempfile::tempdir().unwrap();
    let doc = example(true, |e| {
        if e["cat"] == "kernel" {
            e["name"] = json!(EVIL);
        }
    });
    let trace = write_json(&dir.path().join(format!("t{}.json", "\u{202e}x")), &doc);
    let o = dir.path().join("o");
    std::fs::create_dir(&o).unwrap();
    let files: Vec<PathBuf> =
        ["r.xml", "r.md", "r.html", "c.xml", "c.md", "c.html"].iter().map(|f| o.join(f)).collect();
    let mut outputs = files.clone();
    outputs.push(o.join("csv"));
    outputs.push(o.join("ccsv"));
    outputs.push(o.join("a.json"));
    let mut texts: Vec<(String, String)> = Vec::new();
    for format in ["text", "json"] {
        let r = run_in(
            "analyze",
            dir.path(),
            &[
                "analyze",
                s(&trace),
                "--format",
                format,
                "--color",
                "never",
                "--junit",
                s(&files[0]),
                "--markdown",
                s(&files[1]),
                "--html",
                s(&files[2]),
                "--csv",
                s(&o.join("csv")),
                "--annotate-trace",
                s(&o.join("a.json")),
            ],
            &outputs,
        );
        assert_eq!(r.code, 1, "the delay fails the trace, whatever the names say: {}", r.stderr);
        texts.push((format!("analyze --format {format}"), r.stdout));
        let r = run_in(
            "compare",
            dir.path(),
            &[
                "compare",
                s(&trace),
                s(&trace),
                "--format",
                format,
                "--junit",
                s(&files[3]),
                "--markdown",
                s(&files[4]),
                "--html",
                s(&files[5]),
                "--csv",
                s(&o.join("ccsv")),
            ],
            &outputs,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        texts.push((format!("compare --format {format}"), r.stdout));
    }
    for f in files.iter().chain([o.join("csv/kernels.csv"), o.join("ccsv/kernel_diff.csv")].iter()) {
        texts.push((f.display().to_string(), std::fs::read_to_string(f).unwrap()));
    }
    // linkage: a library whose needed names, RUNPATH and SONAME carry the same bytes (one line
    // each: the ELF spec is line-based).
    let lib = dir.path().join("libevil.so");
    let one = EVIL.replace('\n', " ");
    let spec = format!("needed lib{one}.so\nrunpath /opt/{one}\nsoname {one}\n");
    std::fs::write(&lib, launchguard_linkage::fuzzing::elf_from_spec(&spec)).unwrap();
    for format in ["text", "json"] {
        let r = run_in("linkage", dir.path(), &["linkage", s(&lib), "--format", format], &outputs);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains(if format == "text" { "lib" } else { "needed" }), "{}", r.stdout);
        texts.push((format!("linkage --format {format}"), r.stdout));
    }
    // linkage --root: an image whose /etc/ld.so.preload and a folder name on the inspected path
    // carry the same bytes (the folder's line break too).
    let root = dir.path().join("root");
    let folder = root.join("opt").join(format!("d{EVIL}"));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::create_dir_all(root.join("etc")).unwrap();
    let preloaded = EVIL.split(['\n', ' ']).next().unwrap();
    std::fs::write(root.join("etc/ld.so.preload"), format!("/usr/lib/lib{preloaded}.so\n")).unwrap();
    let target = folder.join("libtorch_cpu.so");
    std::fs::write(&target, launchguard_linkage::fuzzing::elf_from_spec("needed libc.so.6\n")).unwrap();
    for format in ["text", "json"] {
        let r = run_in(
            "linkage root",
            dir.path(),
            &["linkage", "--root", s(&root), s(&target), "--format", format, "--color", "never"],
            &outputs,
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let preload = if format == "text" {
            "/etc/ld.so.preload preloads /usr/lib/libgemm\\x1b[2J\\x1b]0;owned\\x07\\u{202e}lmth.exe.so"
        } else {
            "/etc/ld.so.preload preloads /usr/lib/libgemm\\u001b[2J\\u001b]0;owned\\u0007\\u202elmth.exe.so"
        };
        assert!(r.stdout.contains(preload), "{}", r.stdout);
        texts.push((format!("linkage --root --format {format}"), r.stdout));
    }
    for (what, text) in &texts {
        assert_eq!(raw_escapes(text), [], "{what}: raw escape bytes");
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("verdict: FORGED")),
            "{what}: a forged line"
        );
    }
    // The JSON documents keep the name exact; the JUnit XML is well-formed.
    let analyzed: Value = serde_json::from_str(&texts[2].1).unwrap();
    assert_eq!(analyzed["kernels"]["kernels"][0]["name"], EVIL);
    for xml in [&files[0], &files[3]] {
        roxmltree::Document::parse(&std::fs::read_to_string(xml).unwrap()).expect("well-formed XML");
    }
    // The annotated copy is the input's own JSON, its names as the input wrote them.
    let copy: Value = serde_json::from_slice(&std::fs::read(o.join("a.json")).unwrap()).unwrap();
    assert!(copy["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == EVIL));
}

/// One name of 500 MB (plain and gzip, made here): cut to the cap, said, peak memory within
/// 1 GiB (the run's bound).
#[test]
fn a_500_mb_name_costs_what_a_label_costs() {
    let dir = tempfile::tempdir().unwrap();
    let mut marked = false;
    let doc = example(false, |e| {
        if e["cat"] == "kernel" && !marked {
            e["name"] = json!("@@NAME@@");
            marked = true;
        }
    });
    let text = serde_json::to_string(&doc).unwrap();
    let (head, tail) = text.split_once("@@NAME@@").unwrap();
    let block = vec![b'x'; 1 << 20];
    let plain = dir.path().join("big.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&plain).unwrap());
    f.write_all(head.as_bytes()).unwrap();
    (0..500).for_each(|_| f.write_all(&block).unwrap());
    f.write_all(tail.as_bytes()).unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    // Stored, not deflated: as large as the text, so that it is no gzip bomb, and made fast.
    let gzip = dir.path().join("big.json.gz");
    let mut e =
        flate2::write::GzEncoder::new(std::fs::File::create(&gzip).unwrap(), flate2::Compression::none());
    e.write_all(head.as_bytes()).unwrap();
    (0..500).for_each(|_| e.write_all(&block).unwrap());
    e.write_all(tail.as_bytes()).unwrap();
    e.finish().unwrap();
    for path in [&plain, &gzip] {
        let before = std::fs::metadata(path).unwrap();
        let r = run("500 MB name", &["analyze", s(path), "--format", "json"], Stdin::Null, &[]);
        assert!(r.rss_kib < 1 << 20, "{}: peak RSS {} KiB", path.display(), r.rss_kib);
        let doc = r.json();
        assert_eq!(doc["source"]["names_cut"], 1);
        let name = doc["kernels"]["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["name"].as_str().unwrap())
            .find(|n| n.starts_with("xxx"))
            .unwrap();
        assert_eq!(name, "x".repeat(64 << 10));
        let warnings = doc["warnings"].to_string();
        assert!(
            warnings
                .contains("1 names or labels longer than 65536 bytes were cut to their first 65536 bytes"),
            "{warnings}"
        );
        let after = std::fs::metadata(path).unwrap();
        assert_eq!((after.len(), after.modified().unwrap()), (before.len(), before.modified().unwrap()));
        assert_eq!(raw_escapes(&r.stderr), []);
    }
    // With the page and the annotated copy (3.1 GB at the peak once): the copy keeps the name
    // whole, as the input wrote it, copied from the mapped file rather than held.
    let (html, copy) = (dir.path().join("r.html"), dir.path().join("a.json"));
    let r = run(
        "500 MB name, page and copy",
        &["analyze", s(&plain), "--format", "json", "--html", s(&html), "--annotate-trace", s(&copy)],
        Stdin::Null,
        &[&plain],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.rss_kib < 1 << 20, "peak RSS {} KiB", r.rss_kib);
    assert_eq!(raw_escapes(&r.stderr), []);
    assert!(std::fs::metadata(&html).unwrap().len() < 8 << 20);
    assert!(std::fs::metadata(&copy).unwrap().len() > std::fs::metadata(&plain).unwrap().len());
}

#[test]
fn messages_say_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_json(&dir.path().join("t.json"), &example(false, |_| {}));
    // /dev/full as a folder, and as a file.
    let r = run_in("csv full", dir.path(), &["analyze", s(&trace), "--csv", "/dev/full"], &[]);
    assert_eq!(
        r.error(),
        "launchguard: error: --csv /dev/full is a device, not a folder: --csv names the folder the tables are written into"
    );
    let r = run_in("junit full", dir.path(), &["analyze", s(&trace), "--junit", "/dev/full"], &[]);
    assert_eq!(
        r.error(),
        "launchguard: error: cannot write /dev/full: No space left on device (os error 28)"
    );
    // A reserved gzip header flag bit, in the first member and in a later one.
    let text = std::fs::read(&trace).unwrap();
    let (a, b) = text.split_at(text.len() / 2);
    let (one, two) = (gz(a), gz(b));
    for (member, mut bytes, at) in [(1, gz(&text), 0), (2, [one.clone(), two].concat(), one.len())] {
        bytes[at + 3] |= 0x40;
        let path = dir.path().join(format!("reserved{member}.json.gz"));
        std::fs::write(&path, bytes).unwrap();
        let r = run_in("reserved flag", dir.path(), &["analyze", s(&path)], &[]);
        assert_eq!(
            r.error(),
            format!(
                "launchguard: error: {}: corrupt gzip data: gzip member {member} sets a reserved header flag bit (FLG 0x40; RFC 1952 reserves 0xe0): the file is damaged",
                path.display()
            )
        );
    }
    // A line break in a file name is shown escaped, as in the reports.
    let named = dir.path().join("t\nverdict: PASS.json");
    std::fs::write(&named, "not json").unwrap();
    let r = run_in("newline name", dir.path(), &["analyze", s(&named)], &[]);
    let line = r.error();
    assert!(line.contains(&format!("{}/t\\nverdict: PASS.json", dir.path().display())), "{line}");
}

/// Kernels before their launch, and one correlation id for two launches: the analysis counts
/// them, says what and where, every format states it, and the verdict is `inconclusive` (exit 2,
/// the report still printed) in `analyze` and in `compare` of either side.
#[test]
fn impossible_causality_is_said_with_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    // Every launch 1 s late, after every kernel: each replay's kernels start before it.
    let early = write_json(
        &dir.path().join("early.json"),
        &example(false, |e| {
            if e["name"] == "cudaGraphLaunch" {
                e["ts"] = json!(e["ts"].as_f64().unwrap() + 1_000_000.0);
            }
        }),
    );
    // Each odd launch (and its kernels) takes the even launch's correlation id before it.
    let mut ids: Vec<u64> = Vec::new();
    example(false, |e| {
        if e["name"] == "cudaGraphLaunch" {
            ids.push(e["args"]["correlation"].as_u64().unwrap());
        }
    });
    ids.sort();
    let pair: BTreeMap<u64, u64> = ids.chunks(2).filter(|c| c.len() == 2).map(|c| (c[1], c[0])).collect();
    let reused = write_json(
        &dir.path().join("reused.json"),
        &example(false, |e| {
            if let Some(&to) = e["args"]["correlation"].as_u64().and_then(|c| pair.get(&c)) {
                e["args"]["correlation"] = json!(to);
            }
        }),
    );
    let whole = write_json(&dir.path().join("whole.json"), &example(false, |_| {}));
    for (path, kind, count, what) in [
        (&early, "kernel_before_launch", 100, "in 100 replays the first GPU activity starts more than 20 µs before its launch (first: launch 0 at "),
        (&reused, "correlation_reused", 50, "50 correlation ids are each shared by several graph launches (first: correlation "),
    ] {
        let sentence = format!("impossible causality: {what}");
        let md = dir.path().join("r.md");
        let r = run_in(kind, dir.path(), &["analyze", s(path), "--format", "json", "--markdown", s(&md)], std::slice::from_ref(&md));
        // Inconclusive: exit 2 with the report still printed.
        let doc: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {}", r.stderr));
        assert_eq!((r.code, doc["verdict"].as_str()), (2, Some("inconclusive")), "{kind}");
        let reason = doc["reason"].as_str().unwrap();
        let head = "the trace's causality is impossible, so it cannot say whether the GPU starved: ";
        assert!(reason.starts_with(head) && reason.contains(what), "{reason}");
        let anomaly = doc["anomalies"].as_array().unwrap().iter().find(|a| a["kind"] == kind).unwrap();
        assert_eq!(anomaly["count"], count);
        assert!(doc["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().starts_with(&sentence)), "{}", doc["warnings"]);
        let markdown = std::fs::read_to_string(&md).unwrap();
        assert!(markdown.contains(&sentence) && markdown.contains("INCONCLUSIVE"), "Markdown");
        let r = run_in(kind, dir.path(), &["analyze", s(path), "--color", "never"], &[]);
        assert_eq!(r.code, 2);
        // The terminal report fits its lines to the width: the words, whatever the breaks.
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat(&r.stdout).contains(&format!("warning: {sentence}")), "{}", r.stdout);
        let verdict = &flat(&r.stdout)[flat(&r.stdout).find("verdict: ").unwrap()..];
        assert!(verdict.starts_with(&format!("verdict: INCONCLUSIVE ({head}")) && verdict.contains(what), "{}", r.stdout);
        // compare says it too, of either side, and cannot be used.
        for (baseline, current, side) in [(&whole, path, "current"), (path, &whole, "baseline")] {
            let r = run_in(kind, dir.path(), &["compare", s(baseline), s(current), "--color", "never"], &[]);
            assert_eq!(r.code, 2, "{kind} as the {side}");
            assert!(flat(&r.stdout).contains(&format!("warning ({side}): {sentence}")), "{}", r.stdout);
            let which = if side == "current" { "current run" } else { side };
            assert!(flat(&r.stdout).contains(&format!("the {which}'s own verdict is inconclusive (the trace's causality is impossible")), "{}", r.stdout);
        }
    }
}

#[test]
fn compare_of_a_cut_trace_says_what_the_reader_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let whole = write_json(&dir.path().join("whole.json"), &example(false, |_| {}));
    let text = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() * 2 / 3]).unwrap();
    let r = run_in("compare cut", dir.path(), &["compare", s(&whole), s(&cut), "--format", "json"], &[]);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!("launchguard: warning: {} is truncated (", cut.display())),
        "{}",
        r.stderr
    );
    let doc = r.json();
    assert_eq!(doc["baseline"].get("warnings"), None);
    let said = doc["current"]["warnings"][0].as_str().unwrap();
    assert!(said.starts_with("the trace was truncated: "), "{said}");
}
