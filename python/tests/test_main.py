"""``launchguard`` and ``python -m launchguard`` from the installed wheel."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import launchguard


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "launchguard", *args], check=False, capture_output=True, text=True, env=env
    )


def test_the_wheel_puts_the_binary_beside_the_interpreter(monkeypatch: pytest.MonkeyPatch):
    # pip installs a wheel's scripts into the environment's bin/ (Scripts\ on Windows).
    monkeypatch.delenv("LAUNCHGUARD_BIN", raising=False)
    binary = Path(launchguard.find_binary())
    assert binary.parent == Path(sys.executable).parent or binary.parent.name in ("bin", "Scripts")
    assert os.access(binary, os.X_OK)


def test_version_agrees_with_the_distribution():
    # Two sources: the binary's clap version, and the wheel's metadata that maturin took from Cargo.toml.
    direct = subprocess.run([launchguard.find_binary(), "--version"], check=False, capture_output=True, text=True)
    via_module = run("--version")
    assert direct.returncode == 0 and via_module.returncode == 0
    assert direct.stdout.strip() == via_module.stdout.strip() == f"launchguard {launchguard.__version__}"


def test_analyze_exit_codes_are_the_binary_s(h200: Path):
    delayed = run("analyze", str(h200 / "delay270_clean.json.gz"))
    assert delayed.returncode == 1, delayed.stderr
    assert "verdict: FAIL" in delayed.stdout
    healthy = run("analyze", str(h200 / "healthy_clean.json.gz"))
    assert healthy.returncode == 0, healthy.stderr


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path):
    missing = tmp_path / "missing.json"
    proc = run("analyze", str(missing))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"launchguard: error: {missing}: no such file"]


def fake_binary(tmp_path: Path, exit_code: int) -> Path:
    script = tmp_path / "fake-launchguard"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@"\nexit {exit_code}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the binary")
def test_module_passes_arguments_and_exit_code_through(tmp_path: Path):
    env = {**os.environ, "LAUNCHGUARD_BIN": str(fake_binary(tmp_path, 7))}
    proc = run("analyze", "a trace.json", "--within=-x", env=env)
    assert proc.returncode == 7
    assert proc.stdout.splitlines() == ["analyze", "a trace.json", "--within=-x"]


def test_a_wrong_override_is_an_error_not_a_fallback(tmp_path: Path):
    env = {**os.environ, "LAUNCHGUARD_BIN": str(tmp_path / "nothing")}
    proc = run("--version", env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("launchguard: error: $LAUNCHGUARD_BIN=")
