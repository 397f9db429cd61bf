# Makes t300.json.gz and mixed300.json.gz beside this script from the carried shared traces.
D=$(cd "$(dirname "$0")" && pwd); S=$D/../shared/traces
[ -s $D/t300.json.gz ] || { python3 bench/gen_trace.py $S/h200/healthy_refresh.json.gz /tmp/t300.json --mb 300 && gzip -6 -c /tmp/t300.json > $D/t300.json.gz; } &
[ -s $D/mixed300.json.gz ] || { python3 bench/gen_mixed.py /tmp/mixed300.json --mb 300 $(ls $S/public/*/*) && gzip -6 -c /tmp/mixed300.json > $D/mixed300.json.gz; } &
wait
