D=$(dirname "$0"); f=$D/t300.json.gz
for r in $(seq $1); do
  for n in 1 64; do echo "rot n=$n r$r $($D/inflate rot $f $n 2>&1 >/dev/null)"; done
  for a in "2 2097152 1" "4 2097152 1" "8 2097152 1" "32 2097152 1" "4 1048576 1" "8 1048576 1" "4 524288 1" "8 524288 1" "16 524288 1" "8 262144 1" "16 262144 1" "8 2097152 4" "8 524288 4" "16 262144 4"; do
    echo "r$r $a: $($D/inflate pipe $f $a 2>&1 >/dev/null)"
  done
done
