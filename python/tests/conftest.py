"""Helpers of the Python package's tests, which run against the installed wheel.

The real traces live in ``../shared/traces`` beside the repository: under ``CI=true`` their
absence fails the test (CI always has them); elsewhere the test is skipped with a note.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import launchguard

REPO = Path(__file__).resolve().parents[2]


def shared_traces() -> Path:
    """``../shared/traces``, or a skip (a failure under ``CI=true``) when it is missing."""
    traces = REPO.parent / "shared" / "traces"
    if traces.is_dir():
        return traces
    if os.environ.get("CI") == "true":
        pytest.fail("../shared/traces is missing under CI=true: the trace corpus must sit beside the clone")
    pytest.skip("../shared/traces not found; this test needs the trace corpus")


@pytest.fixture
def shared() -> Path:
    """``../shared/traces``."""
    return shared_traces()


@pytest.fixture
def h200() -> Path:
    """The single-H200 traces: delay270_* (a 270 µs delay before each launch) and healthy_*."""
    return shared_traces() / "h200"


@pytest.fixture
def h200x2() -> Path:
    """The two-rank tensor-parallel traces."""
    return shared_traces() / "h200x2"


@pytest.fixture
def damaged(h200: Path, tmp_path: Path) -> Path:
    """The healthy H200 trace with the GPU activities of nine replays in ten dropped, as a
    profiler that records one replay in N leaves it."""
    with gzip.open(h200 / "healthy_clean.json.gz", "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    launches = sorted(
        (e for e in events if e.get("name") == "cudaGraphLaunch" and e.get("ph") == "X"), key=lambda e: float(e["ts"])
    )
    kept = {launch["args"]["correlation"] for i, launch in enumerate(launches) if i % 10 == 0}
    gpu = {"kernel", "gpu_memcpy", "gpu_memset"}
    doc["traceEvents"] = [
        e for e in events if e.get("cat") not in gpu or e.get("args", {}).get("correlation") in kept
    ]
    path = tmp_path / "one_in_ten.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def binary_json(*args: str) -> tuple[int, dict[str, Any]]:
    """Runs the installed binary directly (not through the wrapper) with ``--format json``: the
    route the wrapper's answers are compared with."""
    proc = subprocess.run([launchguard.find_binary(), *args, "--format", "json"], check=False, capture_output=True)
    return proc.returncode, json.loads(proc.stdout)


def naive_occupancy(path: Path) -> float:
    """Occupancy of a one-GPU trace by the definition, computed here independently of the binary:
    the union of the GPU activities' intervals (kernels, copies, fills) over the span from the
    first start to the last end. Exact decimal µs (timestamps near 5e12 µs lose nanoseconds as
    floats); sorted-interval merging."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    gpu = {"kernel", "gpu_memcpy", "gpu_memset"}
    spans = sorted(
        (Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(e["dur"]))
        for e in events
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in gpu
    )
    busy, cur_start, cur_end = Decimal(0), spans[0][0], spans[0][1]
    for start, end in spans[1:]:
        if start > cur_end:
            busy += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    busy += cur_end - cur_start
    window = max(end for _, end in spans) - spans[0][0]
    return float(busy / window)


def torch_importable() -> bool:
    """Whether this interpreter has torch (then ``check`` would really run a GPU workload)."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None
