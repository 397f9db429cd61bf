#!/usr/bin/env bash
# Every reader on one and on two vCPUs of a GPU host, plain text, rounds interleaved (issue 19's
# goal of 3 GB/s on 2 cores), and a damaged first gzip member on all 16 before and after 3aa6c05.
# Run from the repository root with the binaries and shared traces in .device-carry/s5/:
#   read      crates/trace/examples/read.rs at 3aa6c05 (fast, sonic, simd-json)
#   read-base the same at bf7e6c7 (before the early check of the first member)
set -u
C=.device-carry/s5
T=/tmp/lgt
mkdir -p $T
echo "== host"; date -u; nproc; lscpu | grep -E "Model name|^Thread|^L2|^L3"; uptime
python3 bench/gen_trace.py $C/shared/traces/h200/healthy_refresh.json.gz $T/t300.json --mb 300 | tail -1
python3 bench/gen_mixed.py $T/mixed300.json --mb 300 $C/shared/traces/public/*/*.json.gz | tail -1
ls -l $T
echo "== rounds: cpus file reader seconds events"
for r in 1 2 3 4 5; do
  for cpus in 0 0,1; do
    for f in t300 mixed300; do
      for reader in cat fast sonic simd-json; do
        a=$(date +%s%N)
        if [ $reader = cat ]; then taskset -c $cpus cat $T/$f.json > /dev/null; n=-
        else n=$(taskset -c $cpus $C/read $T/$f.json $reader); fi
        e=$(date +%s%N)
        echo "r$r cpus=$cpus $f $reader $(( (e - a) / 1000 )) $n"
      done
    done
  done
done > /tmp/rounds.txt
cat /tmp/rounds.txt
python3 - /tmp/rounds.txt $T <<'PY'
import sys, os, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
d = {}
for r, cpus, f, reader, us, n in rows:
    d.setdefault((cpus, f, reader), []).append(int(us) / 1e6)
print("| vCPUs | file | reader | median s | min s | median GB/s | best GB/s |")
print("|---|---|---|---:|---:|---:|---:|")
for (cpus, f, reader), t in sorted(d.items()):
    size = os.path.getsize(f"{sys.argv[2]}/{f}.json") / 1e9
    print(f"| {cpus} | {f}.json | {reader} | {st.median(t):.3f} | {min(t):.3f} | {size/st.median(t):.2f} | {size/min(t):.2f} |")
PY
echo "== a damaged first member of two, 16 cores: before (bf7e6c7) and after (3aa6c05)"
python3 - $T <<'PY'
import sys, gzip
t = sys.argv[1]
text = open(f"{t}/t300.json", "rb").read()
at = len(text) // 3 + 17
a, b = gzip.compress(text[:at], 6), gzip.compress(text[at:], 6)
open(f"{t}/two.json.gz", "wb").write(a + b)
a = bytearray(a); a[-8] ^= 0x55
open(f"{t}/twobad.json.gz", "wb").write(bytes(a) + b)
PY
for r in 1 2 3 4 5; do
  for f in two twobad; do
    for b in read-base read; do
      a=$(date +%s%N); out=$($C/$b $T/$f.json.gz 2>&1); rc=$?; e=$(date +%s%N)
      echo "r$r $f $b rc=$rc $(( (e - a) / 1000000 )) ms: $out"
    done
  done
done
uptime
