#!/usr/bin/env bash
# 376bc8a on a GPU host: the reader before (read-base, dbaabe5) and after (read-crc, the first
# gzip member's CRC-32 summed by the parsing threads on 8 threads or more), against inflate
# alone. Run from the repository root with the binaries and traces in .device-carry/crc/.
set -u
C=.device-carry/crc
echo "== host"; date -u; nproc; lscpu | grep -E "Model name|^L2|^L3"; uptime
echo "== the same events, before and after"
for f in t300.json.gz mixed300.json.gz; do
  echo "$f before $($C/read-base $C/$f) after $($C/read-crc $C/$f)"
done
echo "== a damaged first member (its CRC-32 flipped): the check the parsers make must catch it"
python3 - "$C" <<'PY'
import sys, gzip, shutil
c = sys.argv[1]
gz = bytearray(open(f"{c}/t300.json.gz", "rb").read())
gz[-8] ^= 0x55
open(f"{c}/badcrc.json.gz", "wb").write(gz)
# Two members, the first ending mid-way, and the same with the first member's CRC-32 flipped.
text = gzip.decompress(bytes(open(f"{c}/t300.json.gz", "rb").read()))
at = len(text) // 3 + 17
a, b = gzip.compress(text[:at], 6), gzip.compress(text[at:], 6)
open(f"{c}/two.json.gz", "wb").write(a + b)
a = bytearray(a); a[-8] ^= 0x55
open(f"{c}/twobad.json.gz", "wb").write(bytes(a) + b)
PY
for f in badcrc two twobad; do
  for r in read-base read-crc; do
    a=$(date +%s%N); out=$($C/$r $C/$f.json.gz 2>&1); rc=$?; e=$(date +%s%N)
    echo "$f $r rc=$rc $(( (e - a) / 1000000 )) ms: $out"
  done
done
echo "== inflate alone with and without the CRC-32, 16 cores, 10 rounds"
for f in t300.json.gz mixed300.json.gz; do
  for r in $(seq 10); do
    for m in zlib-rs deflate; do
      a=$(date +%s%N); $C/inflate $m $C/$f > /dev/null; e=$(date +%s%N)
      echo "$f $m r$r $(( (e - a) / 1000 ))"
    done
  done
done
for cpus in 0-15 0-7 0,1; do
  rounds=20; [ $cpus = 0-15 ] || rounds=10
  echo "== paired, cpus $cpus, $rounds rounds"
  INFLATE=$C/inflate BEFORE=$C/read-base AFTER=$C/read-crc bench/paired.sh $rounds $cpus $C/t300.json.gz $C/mixed300.json.gz > /tmp/p-$cpus.txt
  cat /tmp/p-$cpus.txt; python3 bench/paired.py /tmp/p-$cpus.txt
done
