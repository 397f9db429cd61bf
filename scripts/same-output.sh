#!/usr/bin/env bash
# Runs two builds of launchguard on every shared trace and every compare pair, and says where
# their JSON (and, for information, their text) differs. For refactors that must not change what
# users get: `scripts/same-output.sh OLD_BINARY NEW_BINARY`.
#
#   scripts/same-output.sh /tmp/launchguard-before target/release/launchguard
#   SHARED=../shared OUT=/tmp/same scripts/same-output.sh A B
#
# Exit 0 when every JSON output is byte-identical, 1 otherwise (the differing cases listed).
set -uo pipefail
cd "$(dirname "$0")/.."
A=${1:?usage: same-output.sh OLD NEW}
B=${2:?usage: same-output.sh OLD NEW}
SHARED=${SHARED:-../shared}
OUT=${OUT:-$(mktemp -d)}
T=$SHARED/traces
mkdir -p "$OUT/a" "$OUT/b"

cases=()
while IFS= read -r f; do cases+=("analyze|$f"); done < <(find "$T" "$SHARED/formats" examples -type f \( -name '*.json' -o -name '*.json.gz' \) 2>/dev/null | sort)
cases+=("analyze|$T/h200x2")
for f in "$T"/h200/*.json.gz; do cases+=("analyze --within probe::replay|$f"); done
cases+=("compare|$T/h200/healthy_clean.json.gz $T/h200/delay270_clean.json.gz")
cases+=("compare|$T/h200/healthy_refresh.json.gz $T/h200/delay270_refresh.json.gz")
cases+=("compare|$T/h200/healthy_clean.json.gz $T/h200/healthy_refresh.json.gz")
cases+=("compare|$T/h200x2 $T/h200x2")
cases+=("compare|tests/data/compare/h200-reference.json tests/data/compare/h200-reference-inject300.json")
cases+=("compare|tests/data/compare/h200-reference.json tests/data/compare/h200-tiny.json")
cases+=("compare --force|tests/data/compare/h200-reference.json tests/data/compare/h200-tiny.json")

fail=0 n=0
for c in "${cases[@]}"; do
  cmd=${c%%|*} args=${c#*|}
  n=$((n + 1))
  for side in a b; do
    bin=$A; [ $side = b ] && bin=$B
    # shellcheck disable=SC2086
    "$bin" $cmd --format json $args >"$OUT/$side/$n.json" 2>"$OUT/$side/$n.err"; echo $? >"$OUT/$side/$n.rc"
    # shellcheck disable=SC2086
    "$bin" --color never $cmd $args >"$OUT/$side/$n.txt" 2>/dev/null
  done
  # The report files too: every format each command writes.
  for side in a b; do
    bin=$A; [ $side = b ] && bin=$B
    d=$OUT/$side/$n.reports; mkdir -p "$d"
    extra=(--junit "$d/r.xml" --markdown "$d/r.md" --html "$d/r.html" --csv "$d/csv")
    case "$cmd" in analyze*) extra+=(--annotate-trace "$d/annotated.json") ;; esac
    # shellcheck disable=SC2086
    "$bin" --color never $cmd $args "${extra[@]}" >/dev/null 2>&1
  done
  if ! cmp -s "$OUT/a/$n.json" "$OUT/b/$n.json" || ! cmp -s "$OUT/a/$n.rc" "$OUT/b/$n.rc"; then
    echo "DIFFERS (json) $n: $cmd $args"
    fail=1
  elif ! diff -rq "$OUT/a/$n.reports" "$OUT/b/$n.reports" >/dev/null; then
    echo "differs (report files) $n: $cmd $args: $(diff -rq "$OUT/a/$n.reports" "$OUT/b/$n.reports" | head -3 | tr '\n' ' ')"
  elif ! cmp -s "$OUT/a/$n.txt" "$OUT/b/$n.txt"; then
    echo "differs (text only) $n: $cmd $args"
  fi
done
echo "$n cases; outputs in $OUT"
exit $fail
