//! Snapshots of every format — terminal, JSON, JUnit, Markdown, HTML — on two real traces: the
//! H200 example (one rank, one graph) and the two ranks of a TP=2 H200 run. Volatile or bulky
//! parts are normalized so that a snapshot reads as a report: the temporary folder, the version,
//! long per-replay arrays cut to their first entries, and in the HTML the inline CSS, script and
//! data, with each SVG reduced to its texts (axis labels, legends, row labels).

use std::path::Path;

use crate::util::*;

/// The five renderings of `analyze ARGS`, read from one run per output.
struct Formats {
    terminal: String,
    json: String,
    junit: String,
    markdown: String,
    html: String,
}

fn render(trace: &str) -> Formats {
    let dir = tempfile::tempdir().unwrap();
    let (junit, md, html) = (dir.path().join("j.xml"), dir.path().join("s.md"), dir.path().join("r.html"));
    let run = |extra: &[&str]| {
        let out = launchguard()
            .current_dir(repo_root())
            .args(["analyze", trace])
            .args(extra)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let terminal = run(&[]);
    let json = run(&[
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap().replace(dir.path().to_str().unwrap(), "[tmp]");
    Formats {
        terminal,
        json: json_outline(&json),
        junit: read(&junit),
        markdown: read(&md),
        html: html_outline(&read(&html)),
    }
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
    let f = render("examples/healthy_clean.json.gz");
    insta::assert_snapshot!("healthy_terminal", f.terminal);
    insta::assert_snapshot!("healthy_json", f.json);
    insta::assert_snapshot!("healthy_junit", f.junit);
    insta::assert_snapshot!("healthy_markdown", f.markdown);
    insta::assert_snapshot!("healthy_html", f.html);
}

#[test]
fn two_ranks_in_every_format() {
    let Some(_) = shared_dir() else { return };
    let f = render("../shared/traces/h200x2");
    insta::assert_snapshot!("tp2_terminal", f.terminal);
    insta::assert_snapshot!("tp2_json", f.json);
    insta::assert_snapshot!("tp2_junit", f.junit);
    insta::assert_snapshot!("tp2_markdown", f.markdown);
    insta::assert_snapshot!("tp2_html", f.html);
}
