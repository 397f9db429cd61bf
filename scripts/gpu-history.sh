#!/usr/bin/env bash
# The history on a GPU, in one go: 10 healthy `check` runs, then 10 with 25 µs busy-waited before
# each graph launch (--inject-delay-us 25), each recorded into one history as it runs
# (`check --history`, with its build id); then `history show` (text, JSON, Markdown, HTML) and
# `history explain` of the first change point of the host cost per replay. It checks what the
# issue asks: the change is found at run 11, the gate fails from then on naming run 11, and
# explain names the delay. tests/cli/history.rs runs the same flow on recorded H200 runs.
#
# usage: [BIN=path/to/launchguard] [PYTHON=python3] [PRESET=reference] [OUT=dir] scripts/gpu-history.sh
# Exit 0 when every expectation held; the files in $OUT are the evidence.
set -u
BIN=${BIN:-$PWD/target/release/launchguard}
PYTHON=${PYTHON:-python3}
PRESET=${PRESET:-reference}
OUT=${OUT:-gpu-history}
mkdir -p "$OUT"
H=$OUT/history.db
rm -f "$H"
export LAUNCHGUARD_HISTORY=
fail=0

"$BIN" --version
for i in $(seq 1 20); do
  delay=0
  [ "$i" -gt 10 ] && delay=25
  "$BIN" check --python "$PYTHON" --preset "$PRESET" --inject-delay-us "$delay" --require-gpu \
    --history "$H" --series gpu-history --build-id "build-$i" --format json \
    > "$OUT/check-$i.json" 2> "$OUT/check-$i.err"
  rc=$?
  verdict=$(grep -o '"verdict": *"[a-z]*"' "$OUT/check-$i.json" | head -1)
  echo "--- run $i: delay $delay µs, exit $rc, $verdict"
  grep 'launchguard: history' "$OUT/check-$i.err"
  [ "$rc" -eq 2 ] && { echo "error:"; tail -3 "$OUT/check-$i.err"; fail=1; }
done

"$BIN" history --history "$H" show --runs 20 --json "$OUT/show.json" --markdown "$OUT/show.md" \
  --html "$OUT/history.html" | tee "$OUT/show.txt"
first=$(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
m = [m for m in v["series"][0]["metrics"] if m["metric"]["name"] == "host_before_us"][0]
print(m["changes"][0]["run_id"] if m["changes"] else "none")' "$OUT/show.json")
echo "first change point of host_before_us: run $first"
[ "$first" = 11 ] || { echo "expected the change at run 11"; fail=1; }
if [ "$first" != none ]; then
  "$BIN" history --history "$H" explain "$first" | tee "$OUT/explain.txt"
  "$BIN" history --history "$H" explain "$first" --format json > "$OUT/explain.json"
  grep -q '1. run/inject_delay_us: 0 → 25' "$OUT/explain.txt" || { echo "expected explain to name the delay first"; fail=1; }
fi
grep -q 'since #11 (build build-11)' "$OUT/check-20.err" || { echo "expected the gate of run 20 to name run 11"; fail=1; }
ls -l "$H"
echo "gpu-history: $([ $fail -eq 0 ] && echo 'every expectation held' || echo 'FAILED')"
exit $fail
