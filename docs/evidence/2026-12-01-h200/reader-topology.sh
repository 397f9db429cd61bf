#!/usr/bin/env bash
# Which CPUs are hyperthread siblings, then the reader before and after b0ca0b6 on a sibling
# pair and on a pair of two physical cores, interleaved in rounds.
set -u
K=$PWD/.device-carry/rb7
date -u
lscpu | grep -E "Model name|Thread|Core|Socket|NUMA|^CPU\(s\)|L2|L3"
for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sort -V); do
  echo "$(basename $c) core $(cat $c/topology/core_id) package $(cat $c/topology/physical_package_id) siblings $(cat $c/topology/thread_siblings_list)"
done
sib0=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)
apart=""
for c in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sort -V); do
  n=${c##*cpu}; [ "$n" = 0 ] && continue
  case ",$(cat $c/topology/thread_siblings_list)," in *,0,*) continue;; esac
  apart="0,$n"; break
done
echo "cpu0's siblings: $sib0; first pair on two physical cores: $apart"
a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $m ] || python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
mkdir -p "$OUT/t"
sets="0,1"; [ -n "$apart" ] && [ "$apart" != "0,1" ] && sets="$sets $apart"
case "$sib0" in *,*|*-*) [ "$sib0" != "0,1" ] && sets="$sets $sib0";; esac
echo "sets: $sets"
for round in 1 2 3; do
  for f in $a $m; do
    cat $f >/dev/null
    for s in $sets 0; do
      for what in read-base read-new; do
        taskset -c $s python3 bench/measure.py --out "$OUT/t/t.jsonl" --file $f --cores all --runs 5 \
          --label "$what on cpus $s" -- $K/$what $f >/dev/null
      done
    done
  done
done
python3 - "$OUT/t/t.jsonl" <<'P'
import json, sys, statistics as st, collections
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    r = json.loads(l); rows[(r["file"], r["label"])].append(r)
print("| file | reader, CPUs | rounds | median of round means, s | min, s | CPU s | GB/s |")
print("|---|---|---|---|---|---|---|")
for (f, lab), rs in rows.items():
    med = st.median(r["mean"] for r in rs)
    print(f"| {f} | {lab} | {len(rs)} | {med:.3f} | {min(r['min'] for r in rs):.3f} | {st.median(r['cpu'] for r in rs):.3f} | {rs[0]['text_bytes']/med/1e9:.2f} |")
P
