#!/usr/bin/env python3
"""Times one command (mean of N runs after warm-ups) and takes its peak resident set size, with
nothing but Python's standard library, so that bench/run.sh runs wherever python3 does (no
hyperfine, no GNU time). Appends one JSON line to a results file; `--table` turns such a file
into the Markdown table of docs/benchmarks.md.

    bench/measure.py --out R.jsonl --file F --text-bytes N --label L --cores 2 --runs 10 -- CMD ARG...
    bench/measure.py --table R.jsonl > results.md
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def run_once(cmd, cpus):
    """Wall seconds, CPU seconds (user + system) and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    # launchguard exits 1 on a failing verdict: not a failure of the measurement.
    if code not in (0, 1):
        sys.exit(f"measure: {cmd} exited {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure(args):
    cpus = None
    if args.cores != "all":
        cpus = set(sorted(os.sched_getaffinity(0))[: int(args.cores)])
    load = os.getloadavg()
    for _ in range(args.warmup):
        run_once(args.cmd, cpus)
    walls, cpu, rss = [], [], 0
    for _ in range(args.runs):
        w, c, r = run_once(args.cmd, cpus)
        walls.append(w)
        cpu.append(c)
        rss = max(rss, r)
    row = {
        "file": os.path.basename(args.file),
        "file_bytes": os.path.getsize(args.file),
        "text_bytes": args.text_bytes or os.path.getsize(args.file),
        "label": args.label,
        "cores": args.cores if args.cores != "all" else str(len(os.sched_getaffinity(0))),
        "runs": args.runs,
        "mean": statistics.mean(walls),
        "stddev": statistics.stdev(walls) if len(walls) > 1 else 0.0,
        "min": min(walls),
        "cpu": statistics.mean(cpu),
        "rss_kib": rss,
        "load": load[0],
        # A child forked from this Python starts with its pages: below this, the child's own peak
        # is not known (only that it is no larger).
        "floor_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    with open(args.out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(f"{row['file']:>18} {row['cores']:>3} cores  {args.label:<34} {row['mean']:.3f} s "
          f"± {row['stddev']:.3f}  {row['text_bytes'] / row['mean'] / 1e9:5.2f} GB/s  "
          f"{rss / 1024:6.0f} MiB  load {load[0]:.2f}", file=sys.stderr)


def table(path):
    rows = [json.loads(line) for line in open(path)]
    print("| file | text MB | cores | command | mean s | ± s | CPU s | GB/s of text | peak RSS MB | RSS / file | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rss = r["rss_kib"] * 1024
        floor = r.get("floor_kib", 0) * 1024
        if rss <= floor * 1.05:
            mb, share = f"≤ {rss / 1e6:.0f}", f"≤ {rss / r['file_bytes']:.0%}"
        else:
            mb, share = f"{rss / 1e6:.0f}", f"{rss / r['file_bytes']:.0%}"
        print(f"| {r['file']} | {r['text_bytes'] / 1e6:.0f} | {r['cores']} | {r['label']} | {r['mean']:.3f} | "
              f"{r['stddev']:.3f} | {r['cpu']:.3f} | {r['text_bytes'] / r['mean'] / 1e9:.2f} | {mb} | {share} | "
              f"{r['load']:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", help="print the Markdown table of a results file")
    ap.add_argument("--out")
    ap.add_argument("--file")
    ap.add_argument("--text-bytes", type=int, default=0, help="bytes of JSON text (of a gzip file: decompressed)")
    ap.add_argument("--label")
    ap.add_argument("--cores", default="all", help="run on the first N allowed cores, or 'all'")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("cmd", nargs="*")
    args = ap.parse_args()
    if args.table:
        table(args.table)
    else:
        measure(args)


if __name__ == "__main__":
    main()
