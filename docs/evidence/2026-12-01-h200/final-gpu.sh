#!/usr/bin/env bash
# The final build's GPU paths once more: check of two presets, a kept gzip trace analyzed (the
# sequential and parallel gzip readers), and the same trace through standard input.
set -u
B=$PWD/.device-carry/launchguard
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $B --version
for p in reference tiny; do
  echo "\$ launchguard check --preset $p --keep-trace /tmp/k-$p.json.gz"
  $B check --preset $p --keep-trace /tmp/k-$p.json.gz; echo "exit $?"
  echo "\$ launchguard analyze /tmp/k-$p.json.gz"
  $B analyze /tmp/k-$p.json.gz; echo "exit $?"
  echo "\$ launchguard analyze - < /tmp/k-$p.json.gz   (standard input)"
  $B analyze - < /tmp/k-$p.json.gz | tail -3; echo "exit ${PIPESTATUS[0]}"
done
echo "\$ launchguard check --preset tiny --inject-delay-us 50"
$B check --preset tiny --inject-delay-us 50 | tail -12; echo "exit ${PIPESTATUS[0]}"
