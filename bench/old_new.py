#!/usr/bin/env python3
"""Two builds of `launchguard analyze --format json`, side by side in one run: for each trace and
each core count, the builds alternate round after round (so that a machine's drift touches both
alike), and the table gives medians: wall time, GB/s of JSON text, peak resident set, and peak
bytes per event read. Standard library only (rusage through wait4).

    bench/old_new.py --old /path/launchguard-b4fbb88 --new target/release/launchguard \\
        --cores 2 all --rounds 9 /work/lgt/t300.json /work/lgt/t300.json.gz

The traces: bench/gen_trace.py (a real H200 trace repeated, Kineto's formatting) and gzip -6 of
it. GB/s is of the JSON text (for gzip, of the text inflated).
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import run_once  # noqa: E402


def text_bytes(path):
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return os.path.getsize(path)
    n = 0
    with gzip.open(path, "rb") as z:
        while chunk := z.read(1 << 24):
            n += len(chunk)
    return n


def once(cmd, cpus):
    """Wall seconds and peak RSS (bytes) of one run: bench/measure.py's measurement."""
    wall, _, rss_kib = run_once(cmd, cpus)
    return wall, rss_kib * 1024


def events(lg, path):
    p = subprocess.run([lg, "analyze", path, "--format", "json"], capture_output=True)
    return json.loads(p.stdout)["source"]["events"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--old-label", default="old")
    ap.add_argument("--new-label", default="new")
    ap.add_argument("--cores", nargs="+", default=["2", "all"])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    every = sorted(os.sched_getaffinity(0))
    builds = [(a.old_label, a.old), (a.new_label, a.new)]
    print(f"machine: {os.cpu_count()} CPUs; {a.rounds} rounds, builds alternating; medians")
    print()
    print("| trace | cores | build | time s | GB/s | peak RSS MB | bytes / event | time new/old |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for path in a.traces:
        text = text_bytes(path)
        n = events(a.new, path)
        for cores in a.cores:
            cpus = None if cores == "all" else set(every[: int(cores)])
            label = f"{len(every)} (all)" if cores == "all" else cores
            for _, lg in builds:  # warm-up: page cache, binaries
                once([lg, "analyze", path, "--format", "json"], cpus)
            walls = {b: [] for b, _ in builds}
            rss = {b: [] for b, _ in builds}
            for r in range(a.rounds):
                order = builds if r % 2 == 0 else builds[::-1]
                for b, lg in order:
                    w, m = once([lg, "analyze", path, "--format", "json"], cpus)
                    walls[b].append(w)
                    rss[b].append(m)
            med = {b: statistics.median(walls[b]) for b, _ in builds}
            for b, _ in builds:
                peak = max(rss[b])
                ratio = f"{med[b] / med[a.old_label]:.2f}" if b == a.new_label else ""
                print(f"| {os.path.basename(path)} | {label} | {b} | {med[b]:.3f} | {text / 1e9 / med[b]:.2f} | "
                      f"{peak / 1e6:.0f} | {peak / n:.0f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
