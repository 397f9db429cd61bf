"""``launchguard.analyze()`` and ``launchguard.check()``: the binary's JSON as typed results."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import launchguard
from launchguard import Check, LaunchguardError, Result
from launchguard._run import option_args

from conftest import binary_json, naive_occupancy, torch_importable


def test_analyze_returns_the_binary_s_verdict_and_checks(h200: Path):
    trace = h200 / "delay270_clean.json.gz"
    result = launchguard.analyze(trace)
    code, doc = binary_json("analyze", str(trace))
    assert isinstance(result, Result)
    assert result.schema == "launchguard.analysis/1"
    assert (result.exit_code, result.verdict) == (code, doc["verdict"]) == (1, "fail")
    assert [(c.id, c.status, c.message, c.value, c.limit, c.hint) for c in result.checks] == [
        (c["id"], c["status"], c["message"], c["value"], c["limit"], c.get("hint")) for c in doc["checks"]
    ]
    assert result.raw == doc


def test_the_delayed_trace_fails_on_occupancy_by_the_definition(h200: Path):
    trace = h200 / "delay270_clean.json.gz"
    result = launchguard.analyze(str(trace))
    occupancy = result.get("occupancy")
    assert occupancy is not None and occupancy.status == "fail"
    assert occupancy.value == pytest.approx(naive_occupancy(trace), abs=1e-12)
    assert occupancy.limit == 0.8  # the documented default
    assert occupancy.value < 0.8
    # The 270 µs delay before each launch also leaves the GPU idle before every replay: the
    # replay-idle check fails with it. Nothing else does: the launches themselves are not slow.
    assert [c.id for c in result.failed] == ["occupancy", "replay_idle"]


def test_healthy_trace_does_not_fail(h200: Path):
    result = launchguard.analyze(h200 / "healthy_clean.json.gz")
    assert result.exit_code == 0
    assert result.failed == ()
    assert result.verdict in ("pass", "warn")


def test_a_trace_that_lost_gpu_events_is_inconclusive_not_an_error(damaged: Path):
    result = launchguard.analyze(damaged)
    code, doc = binary_json("analyze", str(damaged))
    assert (result.exit_code, result.verdict) == (code, doc["verdict"]) == (2, "inconclusive")
    # 90 of the 100 launches have no GPU work left, counted by the damage itself.
    assert result.reason is not None and "90 of 100 graph launches ran no GPU activity" in result.reason
    damage = result.get("trace_damage")
    assert damage is not None and damage.status == "warn"


def test_threshold_keywords_become_flags(h200: Path):
    trace = h200 / "delay270_clean.json.gz"
    occupancy = naive_occupancy(trace)
    # A fail limit just under the measured occupancy: no longer a failure, still under warn (0.9);
    # the replay-idle limit raised past the 270 µs delay, so that check passes too.
    result = launchguard.analyze(trace, occupancy_fail=round(occupancy - 0.01, 2), replay_idle_fail_us=1000)
    assert result.get("occupancy").status == "warn"
    assert result.get("occupancy").limit == round(occupancy - 0.01, 2)
    assert result.get("replay_idle").limit == 1000
    assert result.exit_code == 0


def test_config_file_is_the_cli_s(h200: Path, tmp_path: Path):
    config = tmp_path / "launchguard.toml"
    config.write_text("[thresholds]\noccupancy_fail = 0.5\noccupancy_warn = 0.6\nreplay_idle_fail_us = 1000\n")
    result = launchguard.analyze(h200 / "delay270_clean.json.gz", config=config)
    assert result.get("occupancy").status == "pass"
    assert result.verdict == "pass"


def test_within_and_report_flags_pass_through(h200: Path, tmp_path: Path):
    junit = tmp_path / "out.xml"
    result = launchguard.analyze(h200 / "healthy_clean.json.gz", within="probe::replay", junit=junit)
    assert result.raw["within"] == "probe::replay"
    cases = ET.parse(junit).getroot().iter("testcase")
    assert sorted(c.get("name") for c in cases) == sorted(c.id for c in result.checks)


def test_several_traces_are_the_ranks_of_one_run(h200x2: Path):
    ranks = [h200x2 / "tp2_rank0.json.gz", h200x2 / "tp2_rank1.json.gz"]
    result = launchguard.analyze(ranks)
    code, doc = binary_json("analyze", *map(str, ranks))
    assert result.schema == "launchguard.analysis-ranks/1"
    assert (result.exit_code, result.verdict) == (code, doc["verdict"])
    assert [c.id for c in result.checks] == [c["id"] for c in doc["checks"]]
    assert result.raw == doc


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the binary")
def test_an_unknown_schema_is_an_error_not_a_guess(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fake = tmp_path / "fake-launchguard"
    fake.write_text('#!/bin/sh\necho \'{"schema": "launchguard.analysis/2", "verdict": "pass", "checks": []}\'\n')
    fake.chmod(0o755)
    monkeypatch.setenv("LAUNCHGUARD_BIN", str(fake))
    with pytest.raises(LaunchguardError, match="answered with 'launchguard.analysis/2'"):
        launchguard.analyze(tmp_path / "any.json")


def test_missing_trace_raises_with_the_binary_s_line(tmp_path: Path):
    missing = tmp_path / "missing.json.gz"
    with pytest.raises(LaunchguardError) as err:
        launchguard.analyze(missing)
    assert err.value.exit_code == 2
    assert str(err.value) == f"launchguard: error: {missing}: no such file"


def test_unknown_option_raises(h200: Path):
    with pytest.raises(LaunchguardError) as err:
        launchguard.analyze(h200 / "healthy_clean.json.gz", no_such_option=1)
    assert err.value.exit_code == 2
    assert "--no-such-option" in err.value.stderr


def test_format_is_not_an_option(h200: Path):
    with pytest.raises(TypeError):
        launchguard.analyze(h200 / "healthy_clean.json.gz", format="text")


@pytest.mark.skipif(torch_importable(), reason="torch is installed here: check would run a real workload")
def test_check_skips_without_torch_using_this_interpreter():
    result = launchguard.check()
    assert result.schema == "launchguard.check/1"
    assert (result.verdict, result.exit_code) == ("skip", 0)
    assert "torch" in result.reason and sys.executable in result.reason


def test_check_keeps_the_interpreter_the_config_names(tmp_path: Path):
    config = tmp_path / "launchguard.toml"
    nowhere = tmp_path / "no-python"
    config.write_text(f'[check]\npython = "{nowhere}"\n')
    with pytest.raises(LaunchguardError) as err:
        launchguard.check(config=config)
    assert err.value.exit_code == 2
    assert str(nowhere) in str(err.value)


def test_check_keeps_an_interpreter_given_as_an_argument(tmp_path: Path):
    nowhere = tmp_path / "no-python"
    with pytest.raises(LaunchguardError) as err:
        launchguard.check(args=[f"--python={nowhere}"])
    assert str(nowhere) in str(err.value)


def test_option_mapping():
    assert option_args(
        {"occupancy_fail": 0.7, "within": "-decode", "require_gpu": True, "html": None, "force": False, "tp": 2}
    ) == ["--occupancy-fail=0.7", "--within=-decode", "--require-gpu", "--tp=2"]
    assert option_args({"forbid": ["cupti", "roctracer"], "config": Path("a b.toml")}) == [
        "--forbid=cupti",
        "--forbid=roctracer",
        "--config=a b.toml",
    ]


def test_result_reads_a_document():
    doc = {
        "schema": "launchguard.check/1",
        "verdict": "warn",
        "checks": [
            {"id": "a", "status": "pass", "value": 1, "limit": None, "message": "m"},
            {"id": "b", "status": "warn", "value": "x", "limit": 2.5, "message": "n", "hint": "h"},
        ],
        "extra": {"kept": True},
    }
    result = Result.from_json(doc, 0)
    assert result.checks == (Check("a", "pass", "m", 1, None), Check("b", "warn", "n", "x", 2.5, "h"))
    assert result.get("b").hint == "h" and result.get("c") is None
    assert result.failed == () and result.reason is None and result.raw["extra"] == {"kept": True}
