#!/usr/bin/env bash
# Mutation testing of the judge (crates/judge) and of the statistics of `compare`
# (crates/analysis/src/stats.rs, and the shift of each metric in crates/analysis/src/compare.rs):
# cargo-mutants changes the code one way at a time (an operator, a comparison, a function's
# result) and runs the tests of the mutated crate; a mutant no test catches is a wrong verdict the
# tests let through. The scope and build profile are in .cargo/mutants.toml; docs/mutants.md
# has the last counts and the mutants that change nothing observable.
#
#   scripts/mutants.sh                 every mutant of the scope, then the counts
#   scripts/mutants.sh --list          the mutants only
#   scripts/mutants.sh --shard 1/4     a quarter of them (k/n), into mutants.out/
#   scripts/mutants.sh --iterate       only the mutants not caught last time
#
# The scope spans two crates of the workspace (--workspace; examine_globs narrow it). Extra
# arguments go to cargo-mutants. Jobs: MUTANTS_JOBS (default 2). Needs cargo-mutants
# (`cargo install cargo-mutants --locked`; 27.x). Exits 0 when nothing was missed, 2 when a mutant
# was missed or timed out, 1 on another failure; the counts come from mutants.out/outcomes.json.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-mutants > /dev/null; then
  echo "scripts/mutants.sh: needs cargo-mutants (cargo install cargo-mutants --locked)" >&2
  exit 1
fi
for a in "$@"; do
  case $a in
    --list | --list-files) exec cargo mutants --workspace "$@" ;;
  esac
done
rc=0
cargo mutants --workspace --jobs "${MUTANTS_JOBS:-2}" "$@" || rc=$?
# 0: all caught; 2: some missed; 3: some timed out; 4: the tests fail unmutated.
summary=mutants.out/outcomes.json
if [ -f "$summary" ]; then
  python3 - "$summary" << 'EOF'
import json, sys
o = json.load(open(sys.argv[1]))
print(
    f"mutants: {o['total_mutants']}  caught: {o['caught']}  missed: {o['missed']}  "
    f"unviable: {o['unviable']}  timeout: {o['timeout']}  success (baseline): {o.get('success', 0)}"
)
for x in o["outcomes"]:
    if x.get("summary") in ("MissedMutant", "Timeout"):
        print(f"{x['summary']}: {x['scenario']['Mutant']['name']}")
EOF
fi
exit "$rc"
