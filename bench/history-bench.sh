#!/usr/bin/env bash
# The history at 10,000 runs: the file's size, and the wall time of recording one more run and of
# `history show` (text, JSON, HTML) — the figures of docs/benchmarks.md ("History").
#
# usage: bench/history-bench.sh [RUNS] [HISTORY]
# Fills the history with crates/history/examples/fill.rs (a real H200 check result recorded RUNS
# times, its figures drawn from real run-to-run noise, a step every 2,000 runs), then times each
# command 5 times with a fresh copy of the file for each recording.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10000}
H=${2:-$(mktemp -d)/history.db}
RESULT=tests/data/h200-check/reference/run01-delay0.json
cargo build -q --release
cargo build -q --release -p launchguard-history --example fill
LG=$PWD/target/release/launchguard
[ -e "$H" ] || target/release/examples/fill "$H" "$RUNS" "$RESULT"
echo "history: $RUNS runs, $(stat -c %s "$H") bytes ($(du -h "$H" | cut -f1))"
ms() { local t0=$(date +%s%N); "$@" > /dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
best() { sort -n | head -1; }
for i in 1 2 3 4 5; do cp "$H" "$H.copy"; ms "$LG" history --history "$H.copy" record "$RESULT" --series bench 2>/dev/null; done | best | sed 's/^/record one more run (ms, best of 5): /'
for f in text json html; do
  for i in 1 2 3 4 5; do ms "$LG" history --history "$H" show --format $f; done | best | sed "s/^/show --format $f (ms, best of 5): /"
done
for i in 1 2 3 4 5; do ms "$LG" history --history "$H" gate 2>/dev/null || true; done | best | sed 's/^/gate (ms, best of 5): /'
"$LG" history --history "$H" show --runs 3 | head -30
rm -f "$H.copy"
