#!/usr/bin/env bash
# Interleaved single runs: inflate alone, the reader before (read-old) and after (read-new).
# usage: ab.sh ROUNDS CPUS
D=$(dirname "$0"); rounds=$1; cpus=$2
for f in t300.json.gz mixed300.json.gz; do
  cat $D/$f >/dev/null
  for r in $(seq $rounds); do
    for b in inflate read-old read-new; do
      if [ $b = inflate ]; then cmd="$D/inflate zlib-rs $D/$f"; else cmd="$D/$b $D/$f"; fi
      a=$(date +%s%N); taskset -c $cpus $cmd >/dev/null; e=$(date +%s%N)
      echo "$f cpus=$cpus r$r $b $(( (e-a)/1000 ))"
    done
  done
done
