#!/usr/bin/env bash
# The reader (376bc8a) against inflate alone with and without the first member's CRC-32, one run
# each in turn, 20 rounds, 16 cores: `inflate deflate` as mended after 8aa72f9 (streamed through
# the reader's own decoder, launchguard_trace::gzip_first_crc_unchecked) and as 8aa72f9 had it
# (the deflate data from memory). Run from the repository root with .device-carry/crc/ carried.
set -u
C=.device-carry/crc
raw=$(mktemp)
date -u; nproc; uptime
for f in t300.json.gz mixed300.json.gz; do
  cat $C/$f > /dev/null
  for r in $(seq 20); do
    for name in zlib-rs deflate deflate-8aa72f9 reader; do
      case $name in
        zlib-rs) cmd=($C/inflate zlib-rs $C/$f) ;;
        deflate) cmd=($C/inflate deflate $C/$f) ;;
        deflate-8aa72f9) cmd=($C/inflate-8aa72f9 deflate $C/$f) ;;
        reader) cmd=($C/read-crc $C/$f) ;;
      esac
      a=$(date +%s%N); "${cmd[@]}" > /dev/null; e=$(date +%s%N)
      echo "$f r$r $name $(( (e - a) / 1000 ))"
    done
  done
done | tee "$raw"
# Medians of each command, and of the reader's time over each floor's in the same round.
python3 - "$raw" <<'PY'
import sys, statistics as st
t = {}
for line in open(sys.argv[1]):
    f, r, name, us = line.split()
    t.setdefault(f, {}).setdefault(name, {})[r] = int(us) / 1000
for f, d in t.items():
    ms = " | ".join(f"{n} {st.median(v.values()):.1f} ms" for n, v in d.items())
    ratio = " | ".join(
        f"reader/{n} {st.median(d['reader'][r] / v[r] for r in v):.2f}" for n, v in d.items() if n != "reader")
    print(f"{f} rounds={len(d['reader'])} | {ms} | {ratio}")
PY
rm -f "$raw"
