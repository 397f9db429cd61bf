#!/usr/bin/env bash
# Stands in for the Python interpreter of `launchguard check --python` on a GPU machine: runs the
# real one, then keeps what the workload wrote (its config, result and trace) under
# $LG_RECORD_DIR, so that tests can replay a real run where there is no GPU
# (tests/cli/replay.rs). Every other use of the interpreter passes straight through.
#
#   LG_RECORD_DIR=rec/reference-1 launchguard check --python scripts/record-workload.sh
set -u
real=${LG_REAL_PYTHON:-python3}
"$real" "$@"
rc=$?
# The workload runs as: PYTHON -u launchguard_workload.py CONFIG
if [ $# -eq 3 ] && [ "${2##*/}" = launchguard_workload.py ] && [ -n "${LG_RECORD_DIR:-}" ]; then
  rank=${RANK:-0}
  mkdir -p "$LG_RECORD_DIR"
  paths=$("$real" -c 'import json, sys
c = json.load(open(sys.argv[1]))
print(c["result_path"].replace("{rank}", sys.argv[2]))
print(c["trace_path"].replace("{rank}", sys.argv[2]))' "$3" "$rank")
  result=$(sed -n 1p <<<"$paths")
  trace=$(sed -n 2p <<<"$paths")
  cp "$3" "$LG_RECORD_DIR/config.json"
  [ -f "$result" ] && cp "$result" "$LG_RECORD_DIR/result.rank$rank.json"
  [ -f "$trace" ] && gzip -9 -c "$trace" > "$LG_RECORD_DIR/trace.rank$rank.json.gz"
fi
exit $rc
