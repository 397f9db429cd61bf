#!/usr/bin/env bash
# The build with the judge's two changes (e031e66) on a fresh host: selftest of tiny first (the
# first process on the machine), then the final scenario.
set -u
K=$PWD/.device-carry/rb14; B=$K/launchguard
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $B --version; cat $K/BUILD
echo "\$ launchguard selftest --preset tiny --healthy 8 --delays 10,25,50 --keep-results \$OUT/sel/tiny-selftest"
mkdir -p $OUT/sel
/usr/bin/time -f "# wall %e s" $B selftest --preset tiny --healthy 8 --delays 10,25,50 --keep-results $OUT/sel/tiny-selftest 2>&1 | tail -22
echo "# exit ${PIPESTATUS[0]}"
date -u
OUT=$OUT BIN=$B bash scripts/gpu-evidence.sh final
tar -C $OUT -czf $OUT/selftest.tar.gz sel && rm -rf $OUT/sel
date -u
