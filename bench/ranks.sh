#!/usr/bin/env bash
# The ranks of a large run analyzed at once (issue 18): a folder of N rank traces of MB each
# (bench/gen_ranks.py, from the two real TP=2 H200 ranks), against one rank's analyze.
#
#   bench/ranks.sh                 # 16 ranks × 250 MB; results appended to $OUT/results.md
#   RANKS=8 MB=100 bench/ranks.sh
#
# Goals: peak RSS ≤ 25% of the folder; wall time ≤ 2 × (N sequential one-rank reads / cores).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/lg-bench}
RANKS=${RANKS:-16}
MB=${MB:-250}
RUNS=${RUNS:-3}
LG=${LG:-$PWD/target/release/launchguard}
PYTHON=${PYTHON:-python3}
dir=$OUT/ranks$RANKS-$MB
[ -x "$LG" ] || cargo build --release -p launchguard --quiet
[ -s "$dir/rank$((RANKS - 1)).json" ] || "$PYTHON" bench/gen_ranks.py ../shared/traces/h200x2 "$dir" --ranks "$RANKS" --mb "$MB"
cores=$(nproc)
folder=$(du -cb "$dir"/rank*.json | tail -1 | cut -f1)
# Page cache warm: every file read once.
cat "$dir"/rank*.json > /dev/null
one=$(hyperfine --runs "$RUNS" --warmup 1 -i --export-json "$OUT/one.json" "$LG analyze $dir/rank0.json --format json" >/dev/null && "$PYTHON" -c "import json;print(json.load(open('$OUT/one.json'))['results'][0]['mean'])")
all=$(hyperfine --runs "$RUNS" --warmup 1 -i --export-json "$OUT/all.json" "$LG analyze $dir --format json" >/dev/null && "$PYTHON" -c "import json;print(json.load(open('$OUT/all.json'))['results'][0]['mean'])")
peak_kb=$( { /usr/bin/time -f "%M" "$LG" analyze "$dir" --format json > /dev/null; } 2>&1 | tail -1 )
"$PYTHON" - "$RANKS" "$MB" "$cores" "$folder" "$one" "$all" "$peak_kb" <<'PY' | tee -a "$OUT/results.md"
import sys
ranks, mb, cores, folder, one, allr, peak = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
goal = 2 * ranks * one / cores
print(f"\n### {ranks} ranks × {mb} MB ({folder / 1e9:.2f} GB), {cores} cores\n")
print("| measure | value | goal |\n|---|---:|---:|")
print(f"| one rank's analyze | {one:.3f} s | |")
print(f"| all {ranks} ranks analyzed together | {allr:.3f} s | ≤ {goal:.3f} s (2 × {ranks} × one rank / {cores} cores) |")
print(f"| peak RSS, all ranks | {peak * 1024 / 1e6:.0f} MB ({100 * peak * 1024 / folder:.1f}% of the folder) | ≤ 25% |")
PY
