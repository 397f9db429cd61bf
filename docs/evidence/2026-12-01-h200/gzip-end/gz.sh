#!/usr/bin/env bash
# usage: gz.sh ROUNDS CPUS VARIANTS...   (a variant: "name:ENV=1,ENV2=3" ; "inflate" for inflate alone)
D=$(dirname "$0")
rounds=$1; cpus=$2; shift 2
ts() { date +%s%N; }
for f in t300.json.gz mixed300.json.gz; do
  cat $D/$f > /dev/null
  for r in $(seq $rounds); do
    for v in "$@"; do
      name=${v%%:*}; envs=${v#*:}; [ "$envs" = "$v" ] && envs=""
      e=$(echo "$envs" | tr ',' ' ')
      if [ "$name" = inflate ]; then
        a=$(ts); taskset -c $cpus $D/inflate zlib-rs $D/$f >/dev/null; b=$(ts)
        echo "$f r$r $name wall_ms $(( (b-a)/1000 ))e-3"
      else
        a=$(ts); out=$(env LG_GZ_PROF=1 $e taskset -c $cpus $D/read $D/$f 2>&1 >/dev/null); b=$(ts)
        echo "$f r$r $name wall_ms $(( (b-a)/1000 ))e-3 | $(echo "$out" | tr '\n' '|')"
      fi
    done
  done
done
