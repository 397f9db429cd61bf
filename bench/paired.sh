#!/usr/bin/env bash
# Two readers and inflate alone, one run each in turn, round after round: on hosts whose speed
# drifts between consecutive runs (the GPU hosts' vCPUs: inflate alone of one file took 92 to
# 154 ms), only runs of one round are fairly compared. bench/paired.py summarizes the output:
# each reader's median ratio to inflate alone of the same round, and the rounds each one won.
#
#   INFLATE=target/release/examples/inflate BEFORE=/path/read-before AFTER=/path/read \
#     bench/paired.sh ROUNDS CPUS FILE.gz... > out.txt && bench/paired.py out.txt
#
# CPUS is a taskset list (0-15, 0,1). Output lines: FILE cpus=CPUS rROUND NAME MICROSECONDS.
# Needs coreutils and taskset only; the readers are crates/trace/examples/read.rs builds.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
rounds=$1 cpus=$2; shift 2
: "${INFLATE:?INFLATE=path to examples/inflate}" "${BEFORE:?BEFORE=path to a read build}" "${AFTER:?AFTER=path to a read build}"
for f in "$@"; do
  cat "$f" > /dev/null
  for r in $(seq "$rounds"); do
    for name in inflate before after; do
      case $name in
        inflate) cmd=("$INFLATE" zlib-rs "$f") ;;
        before) cmd=("$BEFORE" "$f") ;;
        after) cmd=("$AFTER" "$f") ;;
      esac
      a=$(date +%s%N); taskset -c "$cpus" "${cmd[@]}" > /dev/null; e=$(date +%s%N)
      echo "$(basename "$f") cpus=$cpus r$r $name $(( (e - a) / 1000 ))"
    done
  done
done
