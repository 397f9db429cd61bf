#!/usr/bin/env bash
# Baseline false alarms and detections, measured on real check results (e.g. `selftest
# --keep-results DIR`): every pair of healthy runs is compared both ways with `launchguard compare`
# (a regression between two healthy processes is a false alarm), and every run with an injected
# delay is compared with every healthy run as its baseline.
#
# usage: scripts/baseline-noise.sh DIR [launchguard binary]
# Files: DIR/runNN-delayD.json, D = injected µs (0 = healthy), as selftest names them.
set -u
dir=$1
bin=${2:-launchguard}
healthy=()
delayed=()
for f in "$dir"/run*-delay*.json; do
  d=${f##*-delay}; d=${d%.json}
  if [ "$d" = 0 ]; then healthy+=("$f"); else delayed+=("$f"); fi
done
pairs=0 alarms=0
for a in "${healthy[@]}"; do
  for b in "${healthy[@]}"; do
    [ "$a" = "$b" ] && continue
    pairs=$((pairs + 1))
    "$bin" compare "$a" "$b" > /dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] && { echo "error comparing $a $b"; exit 2; }
    [ $rc -eq 1 ] && { alarms=$((alarms + 1)); echo "false alarm: $(basename "$a") → $(basename "$b")"; }
  done
done
echo "healthy runs: ${#healthy[@]}; ordered pairs compared: $pairs; false alarms: $alarms"
printf '%-10s %s\n' "delay µs" "detected against each of the ${#healthy[@]} healthy baselines"
for f in "${delayed[@]}"; do
  d=${f##*-delay}; d=${d%.json}
  hits=0
  for a in "${healthy[@]}"; do
    "$bin" compare --force "$a" "$f" > /dev/null 2>&1
    [ $? -eq 1 ] && hits=$((hits + 1))
  done
  printf '%-10s %d of %d\n' "$d" "$hits" "${#healthy[@]}"
done
