#!/usr/bin/env python3
"""Makes a large rocprofv3 JSON file from a real one: its kernel dispatches repeated N times, each
copy shifted in time (after the previous copy ends) and in the ids that tie records together
(correlation ids, dispatch ids), everything else (agents, strings, symbols) kept once.

    bench/gen_rocprofv3.py ../shared/formats/rocprofv3/gfx950_908_results.json.gz OUT.json --copies 4 [--gzip]
"""

import argparse
import gzip
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    with open(a.src, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    tool = doc["rocprofiler-sdk-tool"][0]
    records = tool["buffer_records"]
    kinds = [k for k, v in records.items() if isinstance(v, list) and v]
    starts = [r["start_timestamp"] for k in kinds for r in records[k] if "start_timestamp" in r]
    ends = [r["end_timestamp"] for k in kinds for r in records[k] if "end_timestamp" in r]
    span = max(ends) - min(starts) + 1_000_000
    ids = [r["correlation_id"]["internal"] for k in kinds for r in records[k] if "correlation_id" in r]
    id_step = max(ids) + 1 if ids else 0
    for k in kinds:
        original = records[k]
        out = []
        for c in range(a.copies):
            for r in original:
                r = json.loads(json.dumps(r)) if c else r
                for key in ("start_timestamp", "end_timestamp"):
                    if key in r:
                        r[key] += c * span
                if "correlation_id" in r:
                    r["correlation_id"]["internal"] += c * id_step
                info = r.get("dispatch_info")
                if info and "dispatch_id" in info:
                    info["dispatch_id"] += c * id_step
                out.append(r)
        records[k] = out
    text = json.dumps(doc).encode()
    opener = gzip.open if a.gzip else open
    with opener(a.out, "wb") as f:
        f.write(text)


if __name__ == "__main__":
    main()
