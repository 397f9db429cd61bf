"""The pytest plugin, run in sub-sessions through pytester (pytest's own plugin-testing fixture).

Each sub-session is a fresh ``python -m pytest`` process, so the plugin is loaded the way users
get it: through the installed wheel's ``pytest11`` entry point.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import binary_json, torch_importable

# pytest's exit codes.
OK, TESTS_FAILED, INTERRUPTED, USAGE_ERROR = 0, 1, 2, 4


def junit_cases(path: Path) -> dict[str, ET.Element]:
    """The testcases of a JUnit XML file, by ``classname::name``."""
    return {f"{c.get('classname')}::{c.get('name')}": c for c in ET.parse(path).getroot().iter("testcase")}


def test_delayed_trace_fails_occupancy_and_replay_idle_and_passes_the_rest(pytester: pytest.Pytester, h200: Path):
    trace = h200 / "delay270_clean.json.gz"
    _, doc = binary_json("analyze", str(trace))
    junit = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(f"--launchguard-trace={trace}", f"--junitxml={junit}", "-v")
    assert result.ret == TESTS_FAILED
    # A 270 µs delay before each launch: the GPU is idle for it (occupancy) and before every replay
    # (replay_idle); the launches themselves stay fast.
    starved = {"occupancy", "replay_idle"}
    result.assert_outcomes(failed=len(starved), passed=len(doc["checks"]) - len(starved))
    result.stdout.fnmatch_lines(
        ["*launchguard::occupancy FAILED*", "*launchguard::gaps PASSED*", "*launchguard::replay_idle FAILED*"]
    )

    cases = junit_cases(junit)
    assert sorted(cases) == sorted(f"launchguard::{c['id']}" for c in doc["checks"])
    for check in doc["checks"]:
        failures = cases[f"launchguard::{check['id']}"].findall("failure")
        if check["id"] in starved:
            # The check's own message, as the binary wrote it, with its hint after it.
            assert [f.get("message") for f in failures] == [f"{check['message']}\nhint: {check['hint']}"]
        else:
            assert failures == []


def test_healthy_trace_fails_nothing(pytester: pytest.Pytester, h200: Path):
    _, doc = binary_json("analyze", str(h200 / "healthy_clean.json.gz"))
    junit = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(
        "--launchguard-trace", str(h200 / "healthy_clean.json.gz"), f"--junitxml={junit}"
    )
    assert result.ret == OK
    warned = [c for c in doc["checks"] if c["status"] == "warn"]
    result.assert_outcomes(passed=len(doc["checks"]), warnings=len(warned))
    for c in warned:  # a warning passes, and says so in pytest's warnings summary
        result.stdout.fnmatch_lines([f"*LaunchguardWarning: {c['id']}: {c['message']}*"])
    root = ET.parse(junit).getroot()
    assert root.findall(".//failure") == [] and root.findall(".//error") == []
    assert len(list(root.iter("testcase"))) == len(doc["checks"])


def test_an_inconclusive_trace_fails_one_more_test_with_the_reason(pytester: pytest.Pytester, damaged: Path):
    _, doc = binary_json("analyze", str(damaged))
    result = pytester.runpytest_subprocess(f"--launchguard-trace={damaged}", "-v")
    assert result.ret == TESTS_FAILED
    failed = [c for c in doc["checks"] if c["status"] == "fail"]
    result.assert_outcomes(failed=len(failed) + 1, passed=len(doc["checks"]) - len(failed))
    result.stdout.fnmatch_lines(["*launchguard::verdict FAILED*", "*inconclusive: the trace lost GPU events*"])


def test_warnings_can_be_made_errors(pytester: pytest.Pytester, h200: Path):
    # The healthy trace passes as judged; a stricter occupancy limit held as written (89.8% busy,
    # warn below 95%) gives it a warning to make an error of.
    strict = ["--adapt-limits=false", "--occupancy-warn=0.95"]
    _, doc = binary_json("analyze", str(h200 / "healthy_clean.json.gz"), *strict)
    warned = [c["id"] for c in doc["checks"] if c["status"] == "warn"]
    result = pytester.runpytest_subprocess(
        f"--launchguard-trace={h200 / 'healthy_clean.json.gz'}",
        *(f"--launchguard-arg={a}" for a in strict),
        "-W",
        "error::launchguard.pytest_plugin.LaunchguardWarning",
    )
    assert result.parseoutcomes().get("failed", 0) == len(warned) > 0


def test_skipped_checks_skip_with_their_message(pytester: pytest.Pytester, shared: Path):
    # An eager trace (no graph replays): the graph-replay checks cannot judge it and skip.
    trace = shared / "public/cuda/b200_eager.json.gz"
    _, doc = binary_json("analyze", str(trace))
    skipped = [c for c in doc["checks"] if c["status"] == "skip"]
    assert skipped, "the eager trace is expected to skip the graph-replay checks"
    junit = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(f"--launchguard-trace={trace}", f"--junitxml={junit}", "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped") == len(skipped)
    cases = junit_cases(junit)
    for c in skipped:
        assert [s.get("message") for s in cases[f"launchguard::{c['id']}"].findall("skipped")] == [c["message"]]


def test_several_traces_are_one_run_s_ranks(pytester: pytest.Pytester, h200x2: Path):
    ranks = [h200x2 / "tp2_rank0.json.gz", h200x2 / "tp2_rank1.json.gz"]
    code, doc = binary_json("analyze", *map(str, ranks))
    junit = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(*(f"--launchguard-trace={r}" for r in ranks), f"--junitxml={junit}")
    assert result.ret == code  # pytest fails exactly when the binary does (1), else passes (0)
    cases = junit_cases(junit)
    assert sorted(cases) == sorted(f"launchguard::{c['id']}" for c in doc["checks"])
    failed = {name for name, case in cases.items() if case.findall("failure")}
    assert failed == {f"launchguard::{c['id']}" for c in doc["checks"] if c["status"] == "fail"}


def test_keyword_selection_applies_to_the_checks(pytester: pytest.Pytester, h200: Path):
    result = pytester.runpytest_subprocess(f"--launchguard-trace={h200 / 'delay270_clean.json.gz'}", "-k", "gaps")
    assert result.ret == OK
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1 and outcomes["deselected"] >= 1 and "failed" not in outcomes


def test_config_file_and_extra_args_are_the_cli_s(pytester: pytest.Pytester, h200: Path):
    trace = h200 / "delay270_clean.json.gz"
    # The delay's idle before each replay is let through too: these limits are about occupancy.
    pytester.makefile(
        ".toml",
        launchguard="[thresholds]\noccupancy_fail = 0.5\noccupancy_warn = 0.6\nreplay_idle_fail_us = 1000\n",
    )
    by_config = pytester.runpytest_subprocess(f"--launchguard-trace={trace}", "--launchguard-config=launchguard.toml")
    assert by_config.ret == OK
    by_arg = pytester.runpytest_subprocess(
        f"--launchguard-trace={trace}",
        "--launchguard-arg=--occupancy-fail=0.5",
        "--launchguard-arg=--occupancy-warn=0.6",
        "--launchguard-arg=--replay-idle-fail-us=1000",
    )
    assert by_arg.ret == OK
    # And a flag wins over the file, as on the command line.
    both = pytester.runpytest_subprocess(
        f"--launchguard-trace={trace}",
        "--launchguard-config=launchguard.toml",
        "--launchguard-arg=--occupancy-fail=0.8",
        "--launchguard-arg=--occupancy-warn=0.9",
    )
    assert both.ret == TESTS_FAILED


def test_ini_options(pytester: pytest.Pytester, h200: Path):
    (pytester.path / "conf").mkdir()
    (pytester.path / "conf" / "lg.toml").write_text("[thresholds]\noccupancy_fail = 0.5\nreplay_idle_fail_us = 1000\n")
    pytester.makeini("[pytest]\nlaunchguard_config = conf/lg.toml\nlaunchguard_args = --occupancy-warn 0.6\n")
    result = pytester.runpytest_subprocess(f"--launchguard-trace={h200 / 'delay270_clean.json.gz'}")
    # Both applied: fail below 0.5 from the file, warn below 0.6 from the args; 0.71 does neither.
    assert result.ret == OK
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and "warnings" not in outcomes


def test_fixture_gives_the_result_to_the_project_s_tests(pytester: pytest.Pytester, h200: Path):
    pytester.makepyfile(
        test_mine="""
        def test_uses_the_result(launchguard_result):
            assert launchguard_result.schema == "launchguard.analysis/1"
            assert [c.id for c in launchguard_result.failed] == ["occupancy", "replay_idle"]
            assert launchguard_result.raw["replay_summary"]["count"] == 100
        """
    )
    result = pytester.runpytest_subprocess(f"--launchguard-trace={h200 / 'delay270_clean.json.gz'}", "-v")
    result.stdout.fnmatch_lines(["*test_mine.py::test_uses_the_result PASSED*"])
    assert result.ret == TESTS_FAILED  # the occupancy and replay-idle checks themselves


def test_fixture_skips_and_plugin_is_inert_without_options(pytester: pytest.Pytester):
    pytester.makepyfile(test_mine="def test_uses_the_result(launchguard_result):\n    pass\n")
    result = pytester.runpytest_subprocess("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*launchguard is not enabled*"])
    assert "launchguard::" not in result.stdout.str()


def test_unusable_trace_is_a_collection_error(pytester: pytest.Pytester):
    missing = pytester.path / "missing.json.gz"
    result = pytester.runpytest_subprocess(f"--launchguard-trace={missing}")
    assert result.ret == INTERRUPTED
    result.stdout.fnmatch_lines([f"launchguard: error: {missing}: no such file", "*1 error*"])


def test_check_and_trace_exclude_each_other(pytester: pytest.Pytester, h200: Path):
    result = pytester.runpytest_subprocess("--launchguard", f"--launchguard-trace={h200 / 'healthy_clean.json.gz'}")
    assert result.ret == USAGE_ERROR
    result.stderr.fnmatch_lines(["*exclude each other*"])


@pytest.mark.skipif(torch_importable(), reason="torch is installed here: check would run a real workload")
def test_check_without_torch_is_one_skipped_test(pytester: pytest.Pytester):
    junit = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess("--launchguard", f"--junitxml={junit}", "-rs")
    assert result.ret == OK
    result.assert_outcomes(skipped=1)
    (case,) = junit_cases(junit).items()
    assert case[0] == "launchguard::check"
    (skip,) = case[1].findall("skipped")
    assert "torch is not installed" in skip.get("message")
