#!/usr/bin/env python3
"""The Python reference for the benchmark: json.load of the whole trace, then the analysis loop of
ROCm/ATOM's profiler regression test (PR #432, tests/test_profiler_regression.py, `_analyze_trace`).

This is a re-implementation written for this benchmark, not a copy: it follows the same steps so
that its time and memory are those of the approach ATOM (and most Python tooling) takes:

  - load the trace with the standard json module (or orjson with --orjson), gzip or plain;
  - over `traceEvents`, keep complete ("X") events only;
  - GPU activity: a category containing "kernel" or "gpu_memcpy" (case-insensitive) -> (ts, ts+dur);
  - graph launches: a name containing "hipGraphLaunch" (and, so that CUDA traces are not empty,
    "cudaGraphLaunch") -> their durations;
  - busy = sum of activity durations; occupancy = busy / (last end - first start) after sorting by
    start; gaps = start minus previous end where positive, between consecutive sorted activities;
    count of gaps over 100 us, longest gap, mean launch duration.

It prints one JSON line with the figures and the time spent loading and looping.

    bench/atom_reference.py TRACE [--orjson]
"""

import argparse
import gzip
import json
import sys
import time


def load(path, use_orjson):
    with open(path, "rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    if use_orjson:
        import orjson

        with (gzip.open if compressed else open)(path, "rb") as f:
            return orjson.loads(f.read())
    # As ATOM does: json.load on the file opened as text.
    with (gzip.open(path, "rt") if compressed else open(path)) as f:
        return json.load(f)


def analyze(trace):
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    activities = []
    launches = []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = ev.get("cat", "") or ""
        name = ev.get("name", "") or ""
        ts = ev.get("ts", 0)
        dur = ev.get("dur", 0)
        low = cat.lower()
        if "kernel" in low or "gpu_memcpy" in low:
            activities.append((ts, ts + dur))
        if "hipGraphLaunch" in name or "cudaGraphLaunch" in name:
            launches.append(dur)
    if not activities:
        return {"occupancy": 0.0, "gaps_over_100us": 0, "max_gap_us": 0.0, "launch_mean_us": 0.0, "activities": 0}
    activities.sort()
    busy = sum(end - start for start, end in activities)
    span = activities[-1][1] - activities[0][0]
    gaps = sorted(
        activities[i][0] - activities[i - 1][1]
        for i in range(1, len(activities))
        if activities[i][0] > activities[i - 1][1]
    )
    return {
        "occupancy": busy / span if span > 0 else 0.0,
        "gaps_over_100us": sum(1 for g in gaps if g > 100),
        "max_gap_us": gaps[-1] if gaps else 0.0,
        "launch_mean_us": sum(launches) / len(launches) if launches else 0.0,
        "activities": len(activities),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--orjson", action="store_true", help="load with orjson instead of json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    trace = load(args.trace, args.orjson)
    t1 = time.perf_counter()
    result = analyze(trace)
    t2 = time.perf_counter()
    result.update(load_s=round(t1 - t0, 3), loop_s=round(t2 - t1, 3))
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
