#!/usr/bin/env bash
# What comparing two large traces costs (issue 17): `compare A B` against one `analyze A`, both
# 300 MB traces made from real H200 traces (bench/gen_trace.py). Goal: at most 2.5 × analyze.
#
#   bench/compare.sh               # results appended to $OUT/results.md
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/lg-bench}
MB=${MB:-300}
RUNS=${RUNS:-5}
LG=${LG:-$PWD/target/release/launchguard}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
[ -x "$LG" ] || cargo build --release -p launchguard --quiet
a=$OUT/t$MB.json
b=$OUT/t$MB-clean.json
[ -s "$a" ] || "$PYTHON" bench/gen_trace.py ../shared/traces/h200/healthy_refresh.json.gz "$a" --mb "$MB"
[ -s "$b" ] || "$PYTHON" bench/gen_trace.py ../shared/traces/h200/healthy_clean.json.gz "$b" --mb "$MB"
cat "$a" "$b" > /dev/null
hyperfine --runs "$RUNS" --warmup 1 -i --export-json "$OUT/compare.json" \
  -n "analyze A" "$LG analyze $a --format json" \
  -n "compare A B" "$LG compare $a $b --format json" > /dev/null
"$PYTHON" - "$OUT/compare.json" "$MB" "$(nproc)" <<'PY' | tee -a "$OUT/results.md"
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
a, c = r["analyze A"], r["compare A B"]
print(f"\n### compare of two {sys.argv[2]} MB traces, {sys.argv[3]} cores\n")
print("| command | mean | ratio |\n|---|---:|---:|")
print(f"| analyze A | {a:.3f} s | 1.00 |")
print(f"| compare A B | {c:.3f} s | {c / a:.2f} (goal ≤ 2.5) |")
PY
