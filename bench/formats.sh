#!/usr/bin/env bash
# Reading speed of each input format (docs/benchmarks.md, "Other formats"): records per second of
# `launchguard analyze --format json`, end to end, pinned to 2 cores, timed by hyperfine.
#
#   bench/formats.sh                     # builds what it needs; results in $OUT/formats.md
#   LG=/path/launchguard COPIES=20 RUNS=10 bench/formats.sh
#
# Inputs: the real rocprofv3 sample (../shared/formats/rocprofv3, gzip and plain), the real nsys
# export h100_2gpu_1s.sqlite, and a rocpd database and an nsys export made from the H200 trace
# healthy_refresh.json.gz repeated COPIES times (tests/cli/convert.rs, its ignored test
# write_bench_fixtures), beside that Kineto trace repeated alike for comparison (bench/gen_trace.py
# is not needed: the Kineto side is the original trace, whose records per second are the reader's).
# A record is what the reader counts as an event: a JSON event, a database row.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-/tmp/lg-formats-bench}
COPIES=${COPIES:-20}
RUNS=${RUNS:-10}
SHARED=${SHARED:-$root/../shared}
mkdir -p "$OUT"
if [ -z "${LG:-}" ]; then
    cargo build --release -p launchguard >&2
    LG=$root/target/release/launchguard
fi
command -v hyperfine >/dev/null || { echo "bench/formats.sh needs hyperfine" >&2; exit 2; }
LG_FIXTURES_OUT=$OUT LG_FIXTURES_COPIES=$COPIES cargo test --test cli convert::write_bench_fixtures -- --ignored --exact >&2
gzip -dc "$SHARED/formats/rocprofv3/gfx950_908_results.json.gz" >"$OUT/gfx950_908_results.json"
inputs=(
    "Kineto (gzip), the H200 trace|$SHARED/traces/h200/healthy_refresh.json.gz"
    "rocprofv3 JSON (gzip), real|$SHARED/formats/rocprofv3/gfx950_908_results.json.gz"
    "rocprofv3 JSON (plain), real|$OUT/gfx950_908_results.json"
    "rocpd, the H200 trace ×$COPIES|$OUT/rocpd.db"
    "Nsight Systems SQLite, real|$SHARED/formats/nsys/h100_2gpu_1s.sqlite"
    "Nsight Systems SQLite, the H200 trace ×$COPIES|$OUT/nsys.sqlite"
)
{
    echo "| input | size | records | mean time (2 cores) | records per second |"
    echo "|---|---|---|---|---|"
    for entry in "${inputs[@]}"; do
        what=${entry%%|*}
        file=${entry#*|}
        records=$("$LG" analyze "$file" --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["source"]["events"])')
        hyperfine --style none --runs "$RUNS" --warmup 1 --export-json "$OUT/h.json" \
            "taskset -c 0,1 $LG analyze $file --format json > /dev/null" >&2 || true
        python3 - "$what" "$file" "$records" "$OUT/h.json" <<'PY'
import json, os, sys
what, path, records, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.load(open(sys.argv[4]))
r = h["results"][0]
mean, sd = r["mean"], r["stddev"] or 0.0
size = os.path.getsize(path) / 1e6
print(f"| {what} | {size:.1f} MB | {records:,} | {mean * 1000:.0f} ± {sd * 1000:.0f} ms | {records / mean:,.0f} |")
PY
    done
} | tee "$OUT/formats.md"
