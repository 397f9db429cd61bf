# inflate alone into one hot buffer, into 64 cold ones, and into rings read by other threads
D=$(cd "$(dirname "$0")" && pwd); f=$D/t300.json.gz
for r in $(seq $1); do
  for n in 1 64; do echo "r$r rot $n: $($D/inflate-ring rot $f $n 2>&1 >/dev/null)"; done
  for a in "12 131072 1" "12 131072 4" "24 65536 4" "6 262144 2" "8 131072 4" "48 131072 4" "16 1048576 4"; do
    echo "r$r ring $a: $(timeout 20 $D/inflate-ring ring $f $a 2>&1 >/dev/null)"
  done
done
