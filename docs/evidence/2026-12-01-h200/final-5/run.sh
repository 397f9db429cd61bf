#!/usr/bin/env bash
# The fifth session's final build on a GPU host (16 cores): the labeled H200 traces' verdicts;
# the reader's gzip changes (3aa6c05: a damaged first member found where it ends; 50255d1: a
# later member's over-long file name refused on many cores as on few, against bf7e6c7); the
# review's hostile inputs (a sparse file of 8 GiB, a trace cut short while it is read); and
# `analyze` of a 300 MB gzip trace. Run from the repository root with .device-carry/f5/:
# launchguard and read at the final commit, read-base at bf7e6c7, t300.json.gz, shared/traces/h200.
set -u
S=.device-carry/f5
F=.device-carry/f5
T=/tmp/lgt
mkdir -p $T
echo "== host"; date -u; nproc; lscpu | grep -E "Model name"; uptime
echo "== labeled traces: verdict and exit code (healthy: PASS or WARN, exit 0; delayed: FAIL, exit 1)"
for f in $S/shared/traces/h200/*.json.gz; do
  $F/launchguard analyze "$f" > $T/out.txt 2>&1; rc=$?
  echo "$(basename $f) exit=$rc $(grep -m1 -iE '^verdict|verdict:' $T/out.txt)"
done
echo "== a second member whose file name is 65,536 bytes (flate2 reads at most 65,535)"
python3 - $T <<'PY'
import sys, gzip, io
t = sys.argv[1]
text = gzip.decompress(open(".device-carry/f5/t300.json.gz", "rb").read())
at = len(text) // 2 + 17
for n in (65535, 65536):
    buf = io.BytesIO()
    with gzip.GzipFile(filename="a" * n, mode="wb", fileobj=buf, compresslevel=6, mtime=0) as g:
        g.write(text[at:])
    open(f"{t}/name{n}.json.gz", "wb").write(gzip.compress(text[:at], 6) + buf.getvalue())
PY
for n in 65535 65536; do
  for b in $S/read-base $F/read; do
    for cpus in 0-15 0,1; do
      out=$(taskset -c $cpus $b $T/name$n.json.gz 2>&1); rc=$?
      echo "name $n $(basename $b)$([ $b = $S/read-base ] && echo ' (bf7e6c7)') cpus=$cpus rc=$rc: $out"
    done
  done
done
echo "== a damaged first member of two, 16 cores, five runs each"
python3 - $T <<'PY'
import sys, gzip
t = sys.argv[1]
text = gzip.decompress(open(".device-carry/f5/t300.json.gz", "rb").read())
at = len(text) // 3 + 17
a, b = gzip.compress(text[:at], 6), gzip.compress(text[at:], 6)
open(f"{t}/two.json.gz", "wb").write(a + b)
a = bytearray(a); a[-8] ^= 0x55
open(f"{t}/twobad.json.gz", "wb").write(bytes(a) + b)
PY
for r in 1 2 3 4 5; do
  for f in two twobad; do
    a=$(date +%s%N); out=$($F/read $T/$f.json.gz 2>&1); rc=$?; e=$(date +%s%N)
    echo "r$r $f rc=$rc $(( (e - a) / 1000000 )) ms: $out"
  done
done
echo "== analyze of t300.json.gz (300 MB of text), 16 cores: wall time and peak memory"
for r in 1 2 3; do
  /usr/bin/time -f "wall %e s, peak %M KB" $F/launchguard analyze $F/t300.json.gz > $T/a.txt 2> $T/time.txt; rc=$?
  echo "r$r exit=$rc $(tail -1 $T/time.txt) $(grep -m1 -iE '^verdict|verdict:' $T/a.txt)"
done
echo "== a sparse file of 8 GiB (only its opening written), 16 cores"
printf '{"traceEvents":[  ' > $T/sparse.json; truncate -s 8G $T/sparse.json
/usr/bin/time -f "wall %e s, peak %M KB" $F/launchguard analyze $T/sparse.json 2>&1; echo "exit=$?"
rm -f $T/sparse.json
echo "== a 300 MB trace cut to 4 KiB while it is read, 16 cores"
gzip -dc $F/t300.json.gz > $T/t300.json
for d in 0.02 0.05 0.1; do
  cp $T/t300.json $T/shrinks.json
  ( sleep $d; truncate -s 4096 $T/shrinks.json ) &
  $F/launchguard analyze $T/shrinks.json > /dev/null 2> $T/err.txt; rc=$?; wait
  echo "cut after $d s: exit=$rc $(tail -1 $T/err.txt | cut -c1-160)"
done
uptime
