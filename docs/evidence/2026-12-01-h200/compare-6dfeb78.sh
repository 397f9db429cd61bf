#!/usr/bin/env bash
# compare A B against analyze A, before (3320541) and after 6dfeb78 (each bootstrap resample's
# median drawn from its exact distribution), interleaved, on all cores and on 2.
set -u
K=$PWD/.device-carry/rb10
date -u; lscpu | grep -E "Model name|^CPU\(s\)"
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; b=/tmp/lgt/t300-clean.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $b ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_clean.json.gz $b --mb 300 >/dev/null
cat $a $b > /dev/null
for round in 1 2; do
  for cores in all 2; do
    for lg in launchguard-old launchguard; do
      python3 bench/measure.py --out $OUT/cmp.jsonl --file $a --cores $cores --runs 5 --label "$lg analyze A" -- $K/$lg analyze $a --format json
      python3 bench/measure.py --out $OUT/cmp.jsonl --file $a --cores $cores --runs 5 --label "$lg compare A B" -- $K/$lg compare $a $b --format json
    done
  done
done
python3 bench/measure.py --table $OUT/cmp.jsonl
for lg in launchguard-old launchguard; do $K/$lg compare $a $b --format json > $OUT/$lg-compare.json; done
python3 - $OUT/launchguard-old-compare.json $OUT/launchguard-compare.json <<'P'
import json, sys
def figs(p):
    d = json.load(open(p)); out = {}
    def walk(x, path=""):
        if isinstance(x, dict):
            if "interval" in x and isinstance(x.get("interval"), dict):
                out[(x.get("id"), x.get("rank"), x.get("graph"))] = (x["interval"]["low"], x["interval"]["high"], x.get("verdict") or x.get("status"))
            for k, v in x.items(): walk(v, path + "/" + k)
        elif isinstance(x, list):
            for v in x: walk(v, path)
    walk(d); return out, d.get("verdict")
(o, ov), (n, nv) = figs(sys.argv[1]), figs(sys.argv[2])
print("verdicts:", ov, "->", nv)
for k in o:
    print(k, "old", o[k], "new", n.get(k))
P
date -u
