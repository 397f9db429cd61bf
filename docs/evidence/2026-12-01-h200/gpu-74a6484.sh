#!/usr/bin/env bash
# The final build's GPU paths: check of two presets with their traces kept, those traces analyzed
# from the file (parallel gzip reader) and from standard input (sequential), the report lines of
# check and analyze set side by side; a 50 µs delay; a run against a saved baseline and one with
# the delay against it (compare's bootstraps).
set -u
K=$PWD/.device-carry/rb12; B=$K/launchguard
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $B --version; cat $K/BUILD
for p in reference tiny; do
  echo "\$ launchguard check --preset $p --keep-trace /tmp/k-$p.json.gz --save-baseline /tmp/b-$p.json"
  $B check --preset $p --keep-trace /tmp/k-$p.json.gz --save-baseline /tmp/b-$p.json > /tmp/check-$p.txt; echo "exit $?"
  cat /tmp/check-$p.txt
  echo "\$ launchguard analyze /tmp/k-$p.json.gz"
  $B analyze /tmp/k-$p.json.gz > /tmp/analyze-$p.txt; echo "exit $?"
  cat /tmp/analyze-$p.txt
  echo "\$ launchguard analyze - < /tmp/k-$p.json.gz   (standard input)"
  $B analyze - < /tmp/k-$p.json.gz > /tmp/stdin-$p.txt; echo "exit $?"
  tail -n +2 /tmp/analyze-$p.txt | cmp - <(tail -n +2 /tmp/stdin-$p.txt) && echo "standard input: the same report after its first line (the trace's name)"
  echo "lines of analyze's report that check's report also has, word for word: $(grep -cxFf /tmp/check-$p.txt /tmp/analyze-$p.txt) of $(wc -l < /tmp/analyze-$p.txt)"
done
echo "\$ launchguard check --preset tiny --inject-delay-us 50 --baseline /tmp/b-tiny.json"
$B check --preset tiny --inject-delay-us 50 --baseline /tmp/b-tiny.json | tail -24; echo "exit ${PIPESTATUS[0]}"
echo "\$ launchguard check --preset tiny --baseline /tmp/b-tiny.json"
$B check --preset tiny --baseline /tmp/b-tiny.json | tail -9; echo "exit ${PIPESTATUS[0]}"
date -u
