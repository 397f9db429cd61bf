#!/usr/bin/env bash
# check against a baseline on the GPU with the build whose bootstraps run on all cores: a run
# against its own preset's baseline, then one with a 50 µs delay against the same baseline.
set -u
B=$PWD/.device-carry/launchguard
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "\$ launchguard check --preset tiny --save-baseline /tmp/b.json"
$B check --preset tiny --save-baseline /tmp/b.json | tail -3; echo "exit ${PIPESTATUS[0]}"
echo "\$ launchguard check --preset tiny --baseline /tmp/b.json"
$B check --preset tiny --baseline /tmp/b.json | tail -22; echo "exit ${PIPESTATUS[0]}"
echo "\$ launchguard check --preset tiny --inject-delay-us 50 --baseline /tmp/b.json"
$B check --preset tiny --inject-delay-us 50 --baseline /tmp/b.json | tail -22; echo "exit ${PIPESTATUS[0]}"
