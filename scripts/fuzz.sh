#!/usr/bin/env bash
# Runs one cargo-fuzz target for a while and prints its final stats:
#
#   scripts/fuzz.sh TARGET SECONDS
#
# TARGET is one of `cargo +nightly fuzz list` (run without arguments to see them). The corpus
# grows in fuzz/corpus/TARGET (not committed); it starts from the committed seeds in
# fuzz/seeds/TARGET/ and from what fuzz/seeds/TARGET.sh, if there is one, writes into a fresh
# directory (seeds made from this machine's real files). libFuzzer's limits match the bounds the
# tests hold the code to: 10 s per input, 1 GiB of RSS. A crash leaves its input in
# fuzz/artifacts/TARGET/ and this script exits non-zero: add the input to
# crates/<crate>/tests/regressions/TARGET/ so that `cargo test` replays it.
#
# FUZZ_TIMEOUT (seconds, default 10) is libFuzzer's per-input limit, which counts wall-clock
# time: on a machine shared with builds an input can wait for a core longer than it runs, so
# long runs beside other work set it higher (a hang is still caught).
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Honours
# CARGO_TARGET_DIR. Other crates add their targets to fuzz/Cargo.toml; nothing here changes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

targets=$(cd fuzz && cargo +nightly fuzz list)
if [ $# -ne 2 ] || ! grep -qxF -- "$1" <<<"$targets" || ! [[ $2 =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS; TARGET is one of:" >&2
    sed 's/^/  /' <<<"$targets" >&2
    exit 2
fi
target=$1
seconds=$2
timeout=${FUZZ_TIMEOUT:-10}
[[ $timeout =~ ^[0-9]+$ ]] || { echo "FUZZ_TIMEOUT must be a number of seconds" >&2; exit 2; }

corpus=$root/fuzz/corpus/$target
mkdir -p "$corpus"
dirs=("$corpus")
if [ -d "fuzz/seeds/$target" ]; then
    dirs+=("$root/fuzz/seeds/$target")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -x "fuzz/seeds/$target.sh" ]; then
    mkdir "$work/seeds"
    "fuzz/seeds/$target.sh" "$work/seeds"
    dirs+=("$work/seeds")
fi

echo "fuzzing $target for $seconds s: cargo +nightly fuzz run $target ${dirs[*]} -- -max_total_time=$seconds -timeout=$timeout -rss_limit_mb=1024 -print_final_stats=1" >&2
set +e
(cd fuzz && cargo +nightly fuzz run "$target" "${dirs[@]}" -- \
    -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=1024 -print_final_stats=1) >"$work/log" 2>&1
rc=$?
set -e
# The last status line (runs, coverage, features, corpus, exec/s, RSS), then libFuzzer's own
# closing lines.
grep -E '^#[0-9]+' "$work/log" | tail -n 1 || true
grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$work/log" || true
if [ $rc -ne 0 ]; then
    echo "--- $target failed (exit $rc); the end of its log:" >&2
    tail -n 40 "$work/log" >&2
    exit $rc
fi
