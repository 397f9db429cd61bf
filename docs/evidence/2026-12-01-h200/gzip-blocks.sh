#!/usr/bin/env bash
# gzip on all cores: the reader alone (62119e2) with the decompressed block (and so the part, two
# blocks) at 256 KiB, 512 KiB, 1 MiB (the build as committed) and 2 MiB, beside inflate alone,
# interleaved in three rounds; then one round on 2 cores.
set -u
K=$PWD/.device-carry/rb13
date -u; lscpu | grep -E "Model name|^CPU\(s\)"
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $m ] || python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
for f in $a $m; do [ -s $f.gz ] || gzip -6 -c $f > $f.gz & done; wait
date -u
for cores in all all all 2; do
  for f in $a.gz $m.gz; do
    text=$(stat -c %s ${f%.gz})
    python3 bench/measure.py --out $OUT/bs.jsonl --file $f --text-bytes $text --cores $cores --runs 5 --label "inflate only (zlib-rs)" -- $K/inflate zlib-rs $f
    for r in read-b256k read-b512k read read-b2m; do
      python3 bench/measure.py --out $OUT/bs.jsonl --file $f --text-bytes $text --cores $cores --runs 5 --label "reader alone $r (gzip)" -- $K/$r $f
    done
  done
done
python3 bench/measure.py --table $OUT/bs.jsonl
date -u
