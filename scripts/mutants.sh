#!/usr/bin/env bash
# Mutation testing of the judge (crates/judge) and of the statistics of `compare`
# (crates/analysis/src/stats.rs, and the shift of each metric in crates/analysis/src/compare.rs):
# cargo-mutants changes the code one way at a time (an operator, a comparison, a function's
# result) and runs the tests of the mutated crate; a mutant no test catches is a wrong verdict the
# tests let through. The scope is below, the build profile in .cargo/mutants.toml; docs/mutants.md
# has the last counts and the mutants that change nothing observable.
#
#   scripts/mutants.sh                 every mutant of the scope, then the counts
#   scripts/mutants.sh --list          the mutants only
#   scripts/mutants.sh --shard 1/4     a quarter of them (k/n), into mutants.out/
#   scripts/mutants.sh --iterate       only the mutants not caught last time
#
#   scripts/mutants.sh -f crates/judge/src/limits.rs    one file (replaces the scope)
#
# Extra arguments go to cargo-mutants. Jobs: MUTANTS_JOBS (default 2). Needs cargo-mutants
# (`cargo install cargo-mutants --locked`; 27.x). Exits 0 when nothing was missed, 2 when a mutant
# was missed or timed out, 1 on another failure; the counts come from mutants.out/outcomes.json.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-mutants > /dev/null; then
  echo "scripts/mutants.sh: needs cargo-mutants (cargo install cargo-mutants --locked)" >&2
  exit 1
fi
# The scope: files (-f) and, within them, mutant names (-F). Given here rather than in
# .cargo/mutants.toml because cargo-mutants adds a command line's -f/-F to the config's instead of
# replacing them; here a -f or -F of the caller replaces the scope (`-f crates/judge/src/limits.rs`
# runs that file alone). Of analysis/compare.rs only the statistics of a metric (its shift,
# relative shift, direction, test and interval in `samples` and `single`); the rest gathers
# samples from traces. --workspace: without it cargo-mutants takes only the root package (the
# CLI) and finds none of these.
scope=(
  -f 'crates/judge/src/*.rs' -f crates/analysis/src/stats.rs -f crates/analysis/src/compare.rs
  -F '^crates/judge/src/' -F '^crates/analysis/src/stats\.rs:'
  -F '^crates/analysis/src/compare\.rs:[0-9]+:[0-9]+: .*\b(samples|single)\b'
)
list=false
for a in "$@"; do
  case $a in
    -f | -F | --file | --file=* | --re | --re=* | -f?* | -F?*) scope=() ;;
    --list | --list-files) list=true ;;
  esac
done
if $list; then
  exec cargo mutants --workspace "${scope[@]}" "$@"
fi
rc=0
cargo mutants --workspace --jobs "${MUTANTS_JOBS:-2}" "${scope[@]}" "$@" || rc=$?
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
