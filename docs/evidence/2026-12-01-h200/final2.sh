#!/usr/bin/env bash
# The final build (c734a42): check against a baseline on the GPU, then compare of two 300 MB
# traces against one analyze on 16 cores.
set -u
bash .device-carry/baseline-gpu.sh
K=$PWD/.device-carry/rb6
a=/tmp/lgt/t300.json; b=/tmp/lgt/t300-clean.json; mkdir -p /tmp/lgt "$OUT/f"
python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300
python3 bench/gen_trace.py $K/shared/traces/h200/healthy_clean.json.gz $b --mb 300
cat $a $b > /dev/null
for round in 1 2; do
  python3 bench/measure.py --out "$OUT/f/f.jsonl" --file $a --runs 5 --label "analyze A (round $round)" -- $K/launchguard-final analyze $a --format json
  python3 bench/measure.py --out "$OUT/f/f.jsonl" --file $a --runs 5 --label "compare A B, c734a42 (round $round)" -- $K/launchguard-final compare $a $b --format json
done
python3 bench/measure.py --table "$OUT/f/f.jsonl"
