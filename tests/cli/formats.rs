//! Snapshots of every document in every format it has — terminal, JSON, JUnit, Markdown, HTML,
//! CSV — from real data: `analyze` of the H200 example (one rank, one graph) and of the two ranks
//! of a TP=2 H200 run, `check` replaying a labeled H200 run, `compare` of two traces and of two
//! check results (the linkage and selftest reports are snapshot beside their renderers). Volatile
//! or bulky parts are normalized so that a snapshot reads as a report: the temporary folder, the
//! version, timings, long per-replay arrays cut to their first entries, CSV tables to their first
//! rows, and in the HTML the inline CSS, script and data, with each SVG reduced to its texts.

use std::path::Path;

use crate::util::*;

/// The six renderings of one command, read from one run per output.
struct Formats {
    terminal: String,
    json: String,
    junit: String,
    markdown: String,
    html: String,
    csv: String,
}

impl Formats {
    /// Every rendering with `re`'s matches replaced by `with`.
    fn replace(self, re: &str, with: &str) -> Formats {
        let re = regex::Regex::new(re).unwrap();
        let f = |s: String| re.replace_all(&s, with).into_owned();
        Formats {
            terminal: f(self.terminal),
            json: f(self.json),
            junit: f(self.junit),
            markdown: f(self.markdown),
            html: f(self.html),
            csv: f(self.csv),
        }
    }

    /// Every rendering, each as the snapshot `{name}_{format}`.
    fn snapshot(&self, name: &str) {
        for (format, text) in [
            ("terminal", &self.terminal),
            ("json", &self.json),
            ("junit", &self.junit),
            ("markdown", &self.markdown),
            ("html", &self.html),
            ("csv", &self.csv),
        ] {
            insta::assert_snapshot!(format!("{name}_{format}"), text);
        }
    }
}

/// `launchguard ARGS` in every format; `env` for the stand-in interpreter of `check`.
fn render_command(args: &[&str], env: &[(&str, &Path)]) -> Formats {
    let dir = tempfile::tempdir().unwrap();
    let (junit, md, html, csv) = (
        dir.path().join("j.xml"),
        dir.path().join("s.md"),
        dir.path().join("r.html"),
        dir.path().join("csv"),
    );
    let run = |extra: &[&str]| {
        let mut cmd = launchguard();
        cmd.current_dir(repo_root()).args(args).args(extra).env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let tmp = dir.path().to_str().unwrap().to_string();
    let terminal = normalized(&run(&[]), &tmp);
    let json = run(&[
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let read = |p: &Path| normalized(&std::fs::read_to_string(p).unwrap(), &tmp);
    let mut tables: Vec<_> = std::fs::read_dir(&csv).unwrap().map(|e| e.unwrap().path()).collect();
    tables.sort();
    let csv = tables
        .iter()
        .map(|t| {
            let text = read(t);
            let lines: Vec<&str> = text.lines().collect();
            let name = t.file_name().unwrap().to_string_lossy();
            let more = lines.len().saturating_sub(6);
            format!("== {name} ({more} more rows)\n{}\n", lines[..lines.len().min(6)].join("\n"))
        })
        .collect();
    Formats {
        terminal,
        json: json_outline(&normalized(&json, &tmp)),
        junit: read(&junit),
        markdown: read(&md),
        html: html_outline(&read(&html)),
        csv,
    }
}

/// `text` with what changes from run to run or machine to machine replaced: the temporary
/// folders, the checkout's path, wall times, the version.
fn normalized(text: &str, tmp: &str) -> String {
    let wall = regex::Regex::new(r#"("[a-z_]+_s": )[0-9.e-]+"#).unwrap();
    let workdir = regex::Regex::new(r#"/[^ \n"]*/launchguard-check-[A-Za-z0-9]+"#).unwrap();
    let text = text
        .replace(tmp, "[tmp]")
        .replace(repo_root().to_str().unwrap(), "[repo]")
        .replace(concat!("\"", env!("CARGO_PKG_VERSION"), "\""), "\"[version]\"");
    let text = workdir.replace_all(&text, "[workdir]");
    wall.replace_all(&text, "${1}\"[seconds]\"").into_owned()
}

fn render(trace: &str) -> Formats {
    render_command(&["analyze", trace], &[])
}

/// The JSON with every array of more than 3 objects cut to its first 3 and a count: the keys
/// and the first entries are the interface; the rest is the same shape again.
fn json_outline(text: &str) -> String {
    fn cut(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Array(a) => {
                if a.len() > 3 && a.iter().all(serde_json::Value::is_object) {
                    let more = a.len() - 3;
                    a.truncate(3);
                    a.push(serde_json::Value::String(format!("… {more} more")));
                }
                a.iter_mut().for_each(cut);
            }
            serde_json::Value::Object(o) => o.values_mut().for_each(cut),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(text).expect("JSON");
    cut(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// The HTML, one element per line where a block starts; the CSS, the scripts and the timeline
/// data left out; each SVG as its texts.
fn html_outline(html: &str) -> String {
    let strip = |s: &str, open: &str, close: &str, with: &str| -> String {
        let re = regex::Regex::new(&format!("(?s)({open}).*?({close})")).unwrap();
        re.replace_all(s, format!("${{1}}{with}${{2}}").as_str()).into_owned()
    };
    let mut s = strip(html, "<style>", "</style>", "[css]");
    s = strip(&s, "<script[^>]*>", "</script>", "[script]");
    s = s.replace(concat!("launchguard ", env!("CARGO_PKG_VERSION")), "launchguard [version]");
    let svg = regex::Regex::new(r"(?s)<svg([^>]*)>(.*?)</svg>").unwrap();
    let text = regex::Regex::new(r"(?s)<text[^>]*>(.*?)</text>").unwrap();
    let label = regex::Regex::new(r#"aria-label="([^"]*)""#).unwrap();
    s = svg
        .replace_all(&s, |c: &regex::Captures| {
            let texts: Vec<&str> = text
                .captures_iter(&c[2])
                .map(|t| t.get(1).unwrap().as_str())
                .filter(|t| !t.is_empty())
                .collect();
            let name = label.captures(&c[1]).map_or("", |l| l.get(1).unwrap().as_str()).to_string();
            format!("<svg «{name}»: {}>", texts.join(" | "))
        })
        .into_owned();
    let block = regex::Regex::new(r"<(section|h1|h2|p|table|thead|tbody|tr|div|details|summary|ul|li|footer|header|svg|script|style)[ >]").unwrap();
    block.replace_all(&s, "\n$0").into_owned()
}

#[test]
fn one_rank_in_every_format() {
    render("examples/healthy_clean.json.gz").snapshot("healthy");
}

#[test]
fn two_ranks_in_every_format() {
    let Some(_) = shared_dir() else { return };
    render("../shared/traces/h200x2").snapshot("tp2");
}

#[test]
fn a_check_in_every_format() {
    // A real H200 run of the reference preset, replayed by the stand-in interpreter.
    let labeled = repo_root().join("tests/data/labeled");
    let run = labeled.join("reference-healthy-01");
    let python = labeled.join("replay-python");
    render_command(
        // Wide: a message names the interpreter's path, whose length follows the checkout's.
        &["check", "--python", python.to_str().unwrap(), "--preset", "reference", "--width", "1000"],
        &[("LG_REPLAY_DIR", run.as_path())],
    )
    // The kept trace holds the interpreter's path, so its size follows the checkout's path.
    .replace(r#""bytes": [0-9]+"#, r#""bytes": "[bytes]""#)
    .replace(r"[0-9.]+ MB", "[size]")
    .snapshot("check");
}

#[test]
fn a_comparison_of_traces_in_every_format() {
    render_command(&["compare", "examples/healthy_clean.json.gz", "examples/delay270_clean.json.gz"], &[])
        .snapshot("compare_traces");
}

#[test]
fn a_comparison_of_check_results_in_every_format() {
    render_command(
        &[
            "compare",
            "tests/data/compare/h200-reference.json",
            "tests/data/compare/h200-reference-inject300.json",
        ],
        &[],
    )
    .snapshot("compare_checks");
}
