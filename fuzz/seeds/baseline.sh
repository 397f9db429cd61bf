#!/usr/bin/env bash
# Seeds for baseline, written into $1: the check results of tests/data/compare (real H200 runs),
# whole and cut short.
set -euo pipefail
cd "$(dirname "$0")/../.."
for f in tests/data/compare/*.json; do
    cp "$f" "$1/"
    head -c 4096 "$f" >"$1/$(basename "$f" .json)-head4096"
done
