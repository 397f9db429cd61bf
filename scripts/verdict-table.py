#!/usr/bin/env python3
"""Every trace judged, before and after a change: the table in docs/evidence/ that holds the judge
to its labels.

usage: scripts/verdict-table.py --new BIN [--old BIN] [--runs DIR ...] [--shared DIR] > table.md

- Shared traces (../shared/traces): `analyze` with the old and the new binary. The two ranks of
  h200x2 are analyzed alone and together.
- Recorded runs (folders as tests/data/labeled holds them, with labels.toml or named *-healthy-*,
  *-delay-*): `check` replayed through tests/data/labeled/replay-python with the new binary and its
  trace kept; `analyze` of the raw trace (old, new) and of the kept trace (new). The label is read
  from labels.toml when there is one, else worked out from the run's own samples exactly as there
  (host p50 before the profiler vs GPU time per replay).

A cell reads `verdict` or `verdict: the checks that failed`; `error` is exit 2.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(REPO, "tests/data/labeled/replay-python")


def cell(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode == 2:
        return "error (exit 2)"
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        return "error"
    failed = [c["id"] for c in doc["checks"] if c["status"] == "fail"]
    return doc["verdict"] + (": " + ", ".join(failed) if failed else "")


def analyze(binary, paths):
    return cell([binary, "analyze", *paths, "--format", "json"])


def label_of(run_dir):
    labels = os.path.join(os.path.dirname(run_dir), "labels.toml")
    name = os.path.basename(run_dir)
    if os.path.exists(labels):
        try:
            import tomllib
            with open(labels, "rb") as f:
                entry = tomllib.load(f)["runs"].get(name)
            if entry:
                return entry["label"], entry["set"]
        except ModuleNotFoundError:
            pass
    cfg = json.load(open(os.path.join(run_dir, "config.json")))
    if cfg.get("inject_delay_us", 0) == 0:
        return "healthy", "B"
    worst = 0.0
    for r in glob.glob(os.path.join(run_dir, "result.rank*.json")):
        before = json.load(open(r))["phases"]["before"]
        host = sorted(before["host_us"])
        worst = max(worst, host[len(host) // 2] / before["gpu_us_per_replay"])
    return ("starved" if worst >= 1.0 else "hidden"), "B"


def runs_rows(binary, old, run_dirs):
    for d in run_dirs:
        cfg = json.load(open(os.path.join(d, "config.json")))
        tp = len(glob.glob(os.path.join(d, "result.rank*.json")))
        label, group = label_of(d)
        raw = [os.path.join(d, f"trace.rank{r}.json.gz") for r in range(tp)]
        with tempfile.TemporaryDirectory() as tmp:
            keep = os.path.join(tmp, "kept.json.gz")
            cmd = [binary, "check", "--python", REPLAY, "--preset", cfg["preset"], "--tp", str(tp),
                   "--inject-delay-us", str(cfg["inject_delay_us"]), "--keep-trace", keep, "--format", "json"]
            if cfg.get("inject_delay_ranks") is not None:
                cmd += ["--inject-delay-ranks", ",".join(map(str, cfg["inject_delay_ranks"]))]
            check = cell(cmd, env=dict(os.environ, LG_REPLAY_DIR=d))
            kept = [keep] if tp == 1 else [os.path.join(tmp, f"kept.rank{r}.json.gz") for r in range(tp)]
            kept_cell = analyze(binary, kept)
        before = analyze(old, raw) if old else "–"
        yield (os.path.basename(d), f"{label} ({group})", check, before, analyze(binary, raw), kept_cell)


def shared_rows(binary, old, shared):
    traces = sorted(glob.glob(os.path.join(shared, "traces/**/*.json.gz"), recursive=True))
    for t in traces:
        rel = os.path.relpath(t, os.path.join(shared, "traces"))
        name = os.path.basename(t)
        if name.startswith("healthy"):
            label = "healthy"
        elif name.startswith("delay270"):
            label = "starved (270 µs ≥ 256 µs GPU)"
        elif rel.startswith("h200x2"):
            label = "healthy (one rank alone)"
        else:
            label = "public, unlabeled"
        yield (rel, label, "–", analyze(old, [t]) if old else "–", analyze(binary, [t]), "–")
    pair = os.path.join(shared, "traces/h200x2")
    if os.path.isdir(pair):
        yield ("h200x2/ (both ranks)", "healthy", "–", analyze(old, [pair]) if old else "–", analyze(binary, [pair]), "–")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--new", required=True)
    p.add_argument("--old")
    p.add_argument("--runs", nargs="*", default=[])
    p.add_argument("--shared", default=os.path.join(REPO, "../shared"))
    a = p.parse_args()
    print("| trace | label (set) | check (replayed) | analyze before | analyze after | analyze of the kept trace |")
    print("|---|---|---|---|---|---|")
    rows = list(shared_rows(a.new, a.old, a.shared))
    run_dirs = sorted(d for base in a.runs for d in glob.glob(os.path.join(base, "*/")) if os.path.exists(os.path.join(d, "config.json")))
    rows += list(runs_rows(a.new, a.old, [d.rstrip("/") for d in run_dirs]))
    for r in rows:
        print("| " + " | ".join(r) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
