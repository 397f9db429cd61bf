# inflate alone with N busy neighbours
D=$(dirname "$0"); f=$D/t300.json.gz; n=$1; rounds=$2
for r in $(seq $rounds); do
  a=$(date +%s%N); taskset -c 0 $D/inflate zlib-rs $f >/dev/null; b=$(date +%s%N); alone=$(( (b-a)/1000 ))
  pids=""; for i in $(seq 1 $n); do taskset -c $i sh -c 'while :; do :; done' & pids="$pids $!"; done; sleep 0.2
  a=$(date +%s%N); taskset -c 0 $D/inflate zlib-rs $f >/dev/null; b=$(date +%s%N); busy=$(( (b-a)/1000 ))
  kill $pids; wait 2>/dev/null
  echo "spin n=$n r$r alone_us $alone busy_us $busy"
done
