#!/usr/bin/env bash
# Seeds for trace_fast, written into $1: pieces of the real traces in ../shared/traces and examples/
# (truncated heads, and headers with their first events closed again), see trace_pieces.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
traces=(examples/*.json.gz)
if [ -d ../shared/traces ]; then
    while IFS= read -r -d '' f; do traces+=("$f"); done < <(find ../shared/traces -name '*.json*' -size -2M -print0)
fi
python3 fuzz/seeds/trace_pieces.py "$1" text "${traces[@]}"
