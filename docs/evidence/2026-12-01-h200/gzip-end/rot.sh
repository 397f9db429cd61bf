D=$(dirname "$0"); f=$D/t300.json.gz
for r in $(seq $1); do for n in 1 64; do echo "rot n=$n r$r $(taskset -c 0 $D/inflate rot $f $n 2>&1 >/dev/null)"; done; done
