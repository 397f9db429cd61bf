#!/usr/bin/env bash
# The history's change-point detector against a threshold rule (docs/history.md), and against
# the reference implementations of the method (MongoDB's signal-processing-algorithms, Apache
# Otava), on series whose noise is taken from real repeated H200 runs and on real sequences.
#
# usage: bench/history-eval.sh [OUT_DIR]
# The check results of tests/data/labeled are made here by replaying each recorded run through
# `check` with the stand-in interpreter. The cross-check needs Python venvs with the reference
# packages, outside the repository (created on first use, from PyPI):
#   $VENVS/spa   signal-processing-algorithms     $VENVS/otava   apache-otava
# (two venvs: they pin incompatible numpy versions).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-$(mktemp -d)}
VENVS=${VENVS:-$HOME/.cache/launchguard-history-venvs}
mkdir -p "$OUT/labeled"
cargo build -q --release
LG=$PWD/target/release/launchguard
for d in tests/data/labeled/*/; do
  n=$(basename "$d")
  [ -f "$d/result.rank0.json" ] || continue
  read -r preset tp delay ranks < <(python3 -c "import tomllib,sys
r = tomllib.load(open('tests/data/labeled/labels.toml','rb'))['runs'][sys.argv[1]]
print(r['preset'], r['tp'], r['inject_delay_us'], ','.join(map(str, r.get('inject_delay_ranks', []))) or '-')" "$n")
  extra=()
  [ "$ranks" != - ] && extra=(--inject-delay-ranks "$ranks")
  LG_REPLAY_DIR=$d "$LG" check --python tests/data/labeled/replay-python --preset "$preset" --tp "$tp" \
    --inject-delay-us "$delay" "${extra[@]}" --format json > "$OUT/labeled/$n.json" 2>/dev/null || true
done
cargo run -q --release -p launchguard-history --example evaluate -- "$OUT" \
  tests/data/h200-check/reference tests/data/h200-check/tiny "$OUT/labeled" | tee "$OUT/evaluate.md"
for v in spa:signal-processing-algorithms otava:apache-otava; do
  dir=$VENVS/${v%%:*}
  [ -x "$dir/bin/python" ] || { python3 -m venv "$dir" && "$dir/bin/pip" install -q "${v#*:}"; }
done
"$VENVS/spa/bin/python" bench/history_crosscheck.py mongodb "$OUT/series.json" "$OUT/mongodb.json"
"$VENVS/otava/bin/python" bench/history_crosscheck.py otava "$OUT/series.json" "$OUT/otava.json"
python3 bench/history_crosscheck.py table "$OUT/series.json" "$OUT/mongodb.json" "$OUT/otava.json" | tee "$OUT/crosscheck.md"
