#!/usr/bin/env bash
# Reading speed of each input format (docs/benchmarks.md, "Input formats"): records per second of
# `launchguard analyze --format json`, end to end, pinned to 2 cores, timed by hyperfine.
#
#   bench/formats.sh                     # builds what it needs; results in $OUT/formats.md
#   LG=/path/launchguard FIXTURES=DIR COPIES=100 RCOPIES=4 RUNS=10 bench/formats.sh
#
# Inputs, each a real file or a real file repeated so that a run takes long enough to time:
# - Kineto: the H200 trace healthy_refresh.json.gz repeated COPIES times (bench/gen_trace.py),
#   plain and gzip;
# - rocprofv3 JSON: the real sample (../shared/formats/rocprofv3) as it is (gzip), and its
#   dispatches repeated RCOPIES times (bench/gen_rocprofv3.py), plain and gzip;
# - rocpd and Nsight Systems SQLite: the same H200 trace repeated COPIES times, converted by the
#   tests' writers (tests/cli/convert.rs, the ignored test write_bench_fixtures; FIXTURES=DIR
#   takes rocpd.db and nsys.sqlite made beforehand, for a machine without cargo), and the real
#   nsys export h100_2gpu_1s.sqlite.
# A record is what the reader counts as an event (`source.events`): a JSON event, a database row.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-/tmp/lg-formats-bench}
COPIES=${COPIES:-100}
RCOPIES=${RCOPIES:-4}
RUNS=${RUNS:-10}
CORES=${CORES:-0,1}
SHARED=${SHARED:-$root/../shared}
HYPERFINE=${HYPERFINE:-hyperfine}
mkdir -p "$OUT"
if [ -z "${LG:-}" ]; then
    cargo build --release -p launchguard >&2
    LG=$root/target/release/launchguard
fi
command -v "$HYPERFINE" >/dev/null || { echo "bench/formats.sh needs hyperfine (or HYPERFINE=PATH)" >&2; exit 2; }
if [ -z "${FIXTURES:-}" ]; then
    LG_FIXTURES_OUT=$OUT LG_FIXTURES_COPIES=$COPIES cargo test --test cli convert::write_bench_fixtures -- --ignored --exact >&2
    FIXTURES=$OUT
fi
python3 bench/gen_trace.py "$SHARED/traces/h200/healthy_refresh.json.gz" "$OUT/kineto.json" --copies "$COPIES" >&2
gzip -c "$OUT/kineto.json" >"$OUT/kineto.json.gz"
python3 bench/gen_rocprofv3.py "$SHARED/formats/rocprofv3/gfx950_908_results.json.gz" "$OUT/rocprofv3_results.json" --copies "$RCOPIES"
gzip -c "$OUT/rocprofv3_results.json" >"$OUT/rocprofv3_results.json.gz"
inputs=(
    "Kineto JSON (plain), the H200 trace ×$COPIES|$OUT/kineto.json"
    "Kineto JSON (gzip), the H200 trace ×$COPIES|$OUT/kineto.json.gz"
    "rocprofv3 JSON (gzip), real|$SHARED/formats/rocprofv3/gfx950_908_results.json.gz"
    "rocprofv3 JSON (plain), real ×$RCOPIES|$OUT/rocprofv3_results.json"
    "rocprofv3 JSON (gzip), real ×$RCOPIES|$OUT/rocprofv3_results.json.gz"
    "rocpd, the H200 trace ×$COPIES|$FIXTURES/rocpd.db"
    "Nsight Systems SQLite, real|$SHARED/formats/nsys/h100_2gpu_1s.sqlite"
    "Nsight Systems SQLite, the H200 trace ×$COPIES|$FIXTURES/nsys.sqlite"
)
{
    echo "| input | size | records | mean time (2 cores) | records per second |"
    echo "|---|---|---|---|---|"
    for entry in "${inputs[@]}"; do
        what=${entry%%|*}
        file=${entry#*|}
        # The verdict's exit code (1 for a failing trace) is not the benchmark's business.
        records=$({ "$LG" analyze "$file" --format json 2>/dev/null || true; } | python3 -c 'import json,sys; print(json.load(sys.stdin)["source"]["events"])')
        "$HYPERFINE" --style none --runs "$RUNS" --warmup 1 -i --export-json "$OUT/h.json" \
            "taskset -c $CORES $LG analyze $file --format json > /dev/null" >&2
        python3 - "$what" "$file" "$records" "$OUT/h.json" <<'PY'
import json, os, sys
what, path, records, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.load(open(sys.argv[4]))
r = h["results"][0]
mean, sd = r["mean"], r["stddev"] or 0.0
size = os.path.getsize(path) / 1e6
print(f"| {what} | {size:.1f} MB | {records:,} | {mean * 1000:.0f} ± {sd * 1000:.0f} ms | {records / mean / 1e6:.2f} M |")
PY
    done
} | tee "$OUT/formats.md"
