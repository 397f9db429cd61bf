//! The readable report of `launchguard selftest` (`launchguard.selftest/1`): the ladder of
//! injected delays, what each rung's check said, the smallest delay detected and the false
//! alarms.

use launchguard_check::selftest::SelftestReport;
use launchguard_judge::CheckId;

use crate::escape::one_line;

/// The detection table for a terminal.
pub fn render(r: &SelftestReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "selftest  preset {}{}{}",
        one_line(&r.preset),
        if r.tp > 1 { format!(", tp {}", r.tp) } else { String::new() },
        r.machine.as_ref().map_or(String::new(), |m| format!(", {}", one_line(m)))
    );
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "skipped: {}", one_line(reason));
        return out;
    }
    let _ = writeln!(
        out,
        "\n{:>11}  {:<7} {:>11} {:>12} {:>10}  {:<24} checks that fired",
        "delay µs", "verdict", "host p50 µs", "GPU µs/rep", "occupancy", "vs first healthy run"
    );
    let num = |v: Option<f64>, p: usize| v.map_or("–".to_string(), |x| format!("{x:.p$}"));
    for g in &r.rungs {
        let fired = if let Some(e) = &g.error {
            format!("error: {}", one_line(e))
        } else if g.failed.is_empty() && g.warned.is_empty() {
            "–".to_string()
        } else {
            let mut parts: Vec<String> = g.failed.iter().map(CheckId::to_string).collect();
            parts.extend(g.warned.iter().map(|w| format!("({w})")));
            parts.join(" ")
        };
        let vs = match &g.baseline_failed {
            None => "baseline".to_string(),
            Some(f) if f.is_empty() => "no regression".to_string(),
            Some(f) => format!("REGRESSED: {}", f.join(" ")),
        };
        let _ = writeln!(
            out,
            "{:>11}  {:<7} {:>11} {:>12} {:>10}  {vs:<24} {fired}",
            if g.delay_us == 0.0 { "0 (healthy)".to_string() } else { format!("{}", g.delay_us) },
            g.verdict,
            num(g.host_p50_us, 1),
            num(g.gpu_us_per_replay, 1),
            num(g.occupancy.map(|o| o * 100.0), 1),
        );
    }
    let _ = writeln!(out, "\n(checks in parentheses warned)");
    match r.smallest_detected_us {
        Some(d) => {
            let _ = writeln!(
                out,
                "smallest delay detected: {d} µs per launch{}",
                if r.monotone != Some(false) {
                    ", and every larger one"
                } else {
                    " (but not every larger one: see the table)"
                }
            );
        }
        None => {
            let _ = writeln!(out, "no injected delay was detected");
        }
    }
    let _ =
        writeln!(out, "false alarms at zero delay: {} of {} healthy runs", r.false_alarms, r.healthy_runs);
    if r.rungs.iter().any(|g| g.baseline_failed.is_some()) {
        let _ = writeln!(
            out,
            "against the first healthy run as a baseline: smallest delay detected {}; false alarms {} of {} healthy runs",
            r.baseline_smallest_detected_us.map_or("none".to_string(), |d| format!("{d} µs")),
            r.baseline_false_alarms,
            r.healthy_runs.saturating_sub(1)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use launchguard_check::selftest::Rung;

    fn rung(delay: f64, verdict: &str, failed: &[CheckId]) -> Rung {
        Rung {
            delay_us: delay,
            verdict: verdict.into(),
            failed: failed.to_vec(),
            warned: Vec::new(),
            host_p50_us: Some(3.0 + delay),
            gpu_us_per_replay: Some(35.0),
            occupancy: Some(0.6),
            wall_s: 10.0,
            error: None,
            baseline_failed: None,
        }
    }

    #[test]
    fn the_table_says_what_was_caught() {
        let mut r: SelftestReport = serde_json::from_value(serde_json::json!({
            "schema": "launchguard.selftest/1", "preset": "tiny", "tp": 1, "machine": "NVIDIA H200",
            "rungs": [], "healthy_runs": 1, "false_alarms": 0, "smallest_detected_us": 25.0,
            "monotone": true, "verdict": "pass", "baseline_false_alarms": 0, "baseline_smallest_detected_us": null
        }))
        .unwrap();
        r.rungs = vec![
            rung(0.0, "pass", &[]),
            rung(10.0, "warn", &[]),
            rung(25.0, "fail", &[CheckId::LaunchHeadroom]),
        ];
        let text = render(&r);
        assert!(text.contains("selftest  preset tiny, NVIDIA H200"), "{text}");
        assert!(text.contains("smallest delay detected: 25 µs per launch, and every larger one"), "{text}");
        assert!(text.contains("launch_headroom"), "{text}");
        assert!(text.contains("false alarms at zero delay: 0 of 1 healthy runs"), "{text}");
        insta::assert_snapshot!("selftest_terminal", text);
        let json = crate::render(&crate::Doc::Selftest(&r), crate::Kind::Json).unwrap().into_bytes();
        insta::assert_snapshot!("selftest_json", String::from_utf8(json).unwrap());
        // Only the text and the JSON: the other formats are for a run's checks.
        let html = crate::render(&crate::Doc::Selftest(&r), crate::Kind::Html).unwrap_err();
        assert_eq!(html.to_string(), "selftest has no HTML report");
    }
}
