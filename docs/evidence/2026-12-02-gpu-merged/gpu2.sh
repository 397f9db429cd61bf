#!/usr/bin/env bash
# Call 2: the reader and judge paths at the session's end, and every report of check.
set -u
cd "$(dirname "$0")/.."
echo "# $(date -u +%FT%TZ) $(hostname)"
BIN=$PWD/.device-carry/launchguard OUT=$OUT scripts/gpu-evidence.sh final
B=$PWD/.device-carry/launchguard
mkdir -p $OUT/rep
( set -x; $B check --preset tiny --html $OUT/rep/check.html --markdown $OUT/rep/check.md --junit $OUT/rep/check.xml --json $OUT/rep/check.json; echo "exit $?" ) > $OUT/rep/check.txt 2>&1
tail -3 $OUT/rep/*.txt
tar -C $OUT -czf $OUT/reports.tar.gz rep && rm -rf $OUT/rep
ls -la $OUT
