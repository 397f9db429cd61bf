#!/usr/bin/env bash
# gzip on all cores and on 2: the reader alone of 5c6bd8a (read-base) against a build whose
# recycled buffers keep their bytes so that only new bytes are zeroed (read, 74a6484),
# and inflate alone, interleaved in rounds.
set -u
K=$PWD/.device-carry/rb12
date -u; lscpu | grep -E "Model name|^CPU\(s\)"
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $m ] || python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
for f in $a $m; do gzip -6 -c $f > $f.gz & done; wait
date -u
for round in 1 2 3; do
  for f in $a.gz $m.gz; do
    text=$(stat -c %s ${f%.gz})
    for cores in all 2; do
      python3 bench/measure.py --out $OUT/gz.jsonl --file $f --text-bytes $text --cores $cores --runs 5 --label "inflate only (zlib-rs)" -- $K/inflate zlib-rs $f
      for r in read-base read; do
        python3 bench/measure.py --out $OUT/gz.jsonl --file $f --text-bytes $text --cores $cores --runs 5 --label "reader alone $r (gzip)" -- $K/$r $f
      done
    done
  done
done
python3 bench/measure.py --table $OUT/gz.jsonl
date -u
