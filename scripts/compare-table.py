#!/usr/bin/env python3
"""Comparisons of real traces: pairs of healthy runs of each preset (no change: no regression
expected) and each injected delay against a healthy run (the smallest delay detected, per preset).

usage: scripts/compare-table.py --bin BIN --runs DIR [DIR ...] > table.md

Each recorded run (tests/data/labeled layout) is replayed through `check --keep-trace` to get the
trace check keeps (with its context: the host samples); then `launchguard compare` compares kept
traces, and the raw traces alone (what any profiled trace gives, without check's samples).
"""

import argparse
import glob
import json
import os
import re
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(REPO, "tests/data/labeled/replay-python")


def keep(binary, run_dir, out_dir):
    """Replays check on a recorded run; returns the kept trace (or the folder of rank traces)."""
    cfg = json.load(open(os.path.join(run_dir, "config.json")))
    tp = len(glob.glob(os.path.join(run_dir, "result.rank*.json")))
    name = os.path.basename(run_dir)
    target = os.path.join(out_dir, name)
    os.makedirs(target, exist_ok=True)
    cmd = [binary, "check", "--python", REPLAY, "--preset", cfg["preset"], "--tp", str(tp),
           "--inject-delay-us", str(cfg["inject_delay_us"]), "--keep-trace", os.path.join(target, "t.json.gz"),
           "--format", "json"]
    if cfg.get("inject_delay_ranks") is not None:
        cmd += ["--inject-delay-ranks", ",".join(map(str, cfg["inject_delay_ranks"]))]
    subprocess.run(cmd, capture_output=True, env=dict(os.environ, LG_REPLAY_DIR=run_dir), check=False)
    raw = os.path.join(out_dir, name + ".raw")
    os.makedirs(raw, exist_ok=True)
    for r in range(tp):
        src = os.path.abspath(os.path.join(run_dir, f"trace.rank{r}.json.gz"))
        dst = os.path.join(raw, f"t.rank{r}.json.gz")
        if not os.path.exists(dst):
            os.symlink(src, dst)
    return (target if tp > 1 else os.path.join(target, "t.json.gz"),
            raw if tp > 1 else os.path.join(raw, "t.rank0.json.gz"))


def compare(binary, base, cur):
    out = subprocess.run([binary, "compare", base, cur, "--format", "json"], capture_output=True, text=True)
    if out.returncode == 2:
        return "error: " + out.stderr.strip(), []
    doc = json.loads(out.stdout)
    failed = sorted({m["id"] for m in doc["metrics"] if m["status"] == "fail"})
    return doc["verdict"], failed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    a = p.parse_args()
    runs = {}
    for base in a.runs:
        for d in sorted(glob.glob(os.path.join(base, "*/"))):
            d = d.rstrip("/")
            if os.path.exists(os.path.join(d, "config.json")):
                runs[os.path.basename(d)] = d
    with tempfile.TemporaryDirectory() as tmp:
        kept = {n: keep(a.bin, d, tmp) for n, d in runs.items()}
        groups = {}
        for n in kept:
            m = re.match(r"^(.*?)-(healthy|delay|rank1-delay)-(\d+)$", n)
            groups.setdefault(m.group(1), []).append(n)
        print("## Healthy against healthy (no change: no regression expected)\n")
        print("| preset | pair | kept traces (with check's samples) | raw traces |")
        print("|---|---|---|---|")
        totals = {}
        for preset, names in groups.items():
            healthy = sorted((n for n in names if "-healthy-" in n), key=lambda n: int(n.split("-")[-1]))
            # Ten pairs: neighbours first, then runs two apart.
            pairs = (list(zip(healthy, healthy[1:])) + list(zip(healthy, healthy[2:])))[:10]
            for b, c in pairs:
                kv, kf = compare(a.bin, kept[b][0], kept[c][0])
                rv, rf = compare(a.bin, kept[b][1], kept[c][1])
                t = totals.setdefault(preset, [0, 0, 0])
                t[0] += 1
                t[1] += kv == "fail"
                t[2] += rv == "fail"
                cell = lambda v, f: v + (": " + ", ".join(f) if f else "")
                print(f"| {preset} | {b.split('-')[-1]} vs {c.split('-')[-1]} | {cell(kv, kf)} | {cell(rv, rf)} |")
        print("\n| preset | pairs | regressions, kept traces | regressions, raw traces |")
        print("|---|---:|---:|---:|")
        for preset, t in totals.items():
            print(f"| {preset} | {t[0]} | {t[1]} | {t[2]} |")
        print("\n## Injected delays against healthy run 1 (or 01)\n")
        print("| preset | delay | kept traces | raw traces |")
        print("|---|---|---|---|")
        for preset, names in groups.items():
            base = sorted((n for n in names if "-healthy-" in n), key=lambda n: int(n.split("-")[-1]))[0]
            delays = sorted((n for n in names if "delay" in n), key=lambda n: float(n.split("-")[-1]))
            for d in delays:
                kv, kf = compare(a.bin, kept[base][0], kept[d][0])
                rv, rf = compare(a.bin, kept[base][1], kept[d][1])
                cell = lambda v, f: v + (": " + ", ".join(f) if f else "")
                what = d[len(preset) + 1:]
                print(f"| {preset} | {what} µs | {cell(kv, kf)} | {cell(rv, rf)} |")


if __name__ == "__main__":
    main()
