//! JUnit XML: one testcase per check, so CI systems (GitHub test reporters, GitLab, Jenkins) show
//! each check as a test. Failed checks are failures carrying their message, value and limit;
//! skipped checks are skipped; a warning passes but keeps its message in `system-out`; an
//! `inconclusive` verdict is one more testcase, in error.

use launchguard_judge::{Check, Status, Verdict};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::error::Result;
use crate::escape::one_line;
use crate::{value_text, View};

/// The JUnit XML of a run's checks.
pub(crate) fn run(view: &View<'_>) -> Result<Vec<u8>> {
    let mut properties = vec![("verdict", view.verdict.as_str().to_string())];
    if let Some(a) = view.analysis {
        properties.push(("trace", a.source.path.clone()));
    }
    if let Some(r) = view.reason {
        properties.push(("reason", r.to_string()));
    }
    let inconclusive = (view.verdict == Verdict::Inconclusive).then_some(view.reason.unwrap_or_default());
    xml(view.command, &properties, view.checks, inconclusive)
}

/// The JUnit XML of `command`'s checks: one suite with `properties`, one testcase per check.
/// An `inconclusive` verdict adds a testcase `verdict` in error with its reason: the checks may
/// all pass on what is left of a damaged trace, and CI must not read that as green.
pub fn xml(
    command: &str,
    properties: &[(&str, String)],
    checks: &[Check],
    inconclusive: Option<&str>,
) -> Result<Vec<u8>> {
    let classname = format!("launchguard.{command}");
    let mut suite = TestSuite::new(format!("launchguard {command}"));
    for (name, value) in properties {
        suite.add_property(Property::new(*name, one_line(value).as_ref()));
    }
    for c in checks {
        let figures = format!("value: {}; limit: {}", value_text(&c.value), value_text(&c.limit));
        let mut status = match c.status {
            Status::Pass | Status::Warn => TestCaseStatus::success(),
            Status::Fail => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_type("fail");
                s
            }
            Status::Skip => TestCaseStatus::skipped(),
        };
        if c.status >= Status::Fail || c.status == Status::Skip {
            status.set_message(one_line(&c.message).as_ref());
            let mut body = figures.clone();
            if let Some(h) = &c.hint {
                body.push_str(&format!("\nhint: {}", one_line(h)));
            }
            status.set_description(body);
        }
        let mut case = TestCase::new(c.id.as_str(), status);
        case.set_classname(classname.as_str());
        case.add_property(Property::new("status", c.status.as_str()));
        for (name, v) in [("value", &c.value), ("limit", &c.limit)] {
            if !v.is_null() {
                case.add_property(Property::new(name, value_text(v)));
            }
        }
        if c.status == Status::Warn {
            let hint = c.hint.as_ref().map_or(String::new(), |h| format!("\nhint: {}", one_line(h)));
            case.set_system_out(format!("warn: {} ({figures}){hint}", one_line(&c.message)));
        }
        suite.add_test_case(case);
    }
    if let Some(reason) = inconclusive {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("inconclusive");
        status.set_message(reason);
        let mut case = TestCase::new("verdict", status);
        case.set_classname(classname.as_str());
        case.add_property(Property::new("status", "inconclusive"));
        suite.add_test_case(case);
    }
    // No check ran (skipped: no GPU, no torch): one skipped testcase with the reason, as pytest
    // writes, since CI tools (Jenkins' junit step) reject a file without tests.
    if checks.is_empty() {
        let reason =
            properties.iter().find(|(k, _)| *k == "reason").map_or("nothing was run", |(_, v)| v.as_str());
        let mut status = TestCaseStatus::skipped();
        status.set_message(reason);
        let mut case = TestCase::new(command, status);
        case.set_classname(classname.as_str());
        suite.add_test_case(case);
    }
    let mut report = Report::new("launchguard");
    report.add_test_suite(suite);
    let mut out = Vec::new();
    report.serialize(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::view_with_checks;
    use launchguard_judge::CheckId;

    #[test]
    fn one_testcase_per_check_with_failures_and_skips() {
        let checks = vec![
            Check::new(CheckId::Occupancy, Status::Fail, Some(0.706), Some(0.8), "busy 70.6% <b>&"),
            Check::new(CheckId::Gaps, Status::Warn, Some(7.0), Some(5.0), "7 gaps").with_hint("look"),
            Check::new(CheckId::GraphLaunch, Status::Skip, None, None, "no graph launch"),
            Check::new(CheckId::TraceComplete, Status::Pass, Some(9466.0), None, "9466 events read"),
        ];
        let doc = crate::Document::of(&serde_json::json!({})).unwrap();
        let xml = run(&view_with_checks(&checks, &doc)).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        assert_eq!(root.attribute("tests"), Some("4"));
        assert_eq!(root.attribute("failures"), Some("1"));
        let cases: Vec<_> = root.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        let names: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
        assert_eq!(names, ["occupancy", "gaps", "graph_launch", "trace_complete"]);
        let child = |i: usize, tag: &str| cases[i].children().find(|n| n.has_tag_name(tag));
        let failure = child(0, "failure").expect("failed check is a failure");
        assert_eq!(failure.attribute("message"), Some("busy 70.6% <b>&"));
        assert!(failure.text().unwrap().contains("value: 0.706; limit: 0.8"));
        assert!(
            child(1, "failure").is_none()
                && child(1, "system-out").unwrap().text().unwrap().contains("warn: 7 gaps")
        );
        assert_eq!(child(2, "skipped").unwrap().attribute("message"), Some("no graph launch"));
        assert!(child(3, "failure").is_none() && child(3, "skipped").is_none());
    }

    #[test]
    fn a_skipped_run_is_one_skipped_testcase_with_its_reason() {
        let xml =
            xml("check", &[("verdict", "skip".into()), ("reason", "no GPU here".into())], &[], None).unwrap();
        let xml = String::from_utf8(xml).unwrap();
        assert!(xml.contains("tests=\"1\"") && xml.contains("skipped=\"1\""), "{xml}");
        assert!(
            xml.contains("<testcase name=\"check\"") && xml.contains("<skipped message=\"no GPU here\""),
            "{xml}"
        );
    }
}
