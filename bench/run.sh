#!/usr/bin/env bash
# Measures `launchguard analyze` beside the Python reference (json.load + ATOM's loop) in one run,
# on three sizes of a real H200 trace repeated (bench/gen_trace.py), plain and gzip, with the
# floors that bound any reader: `cat FILE > /dev/null` and `zcat FILE > /dev/null`.
#
#   bench/run.sh                  # 75, 150 and 300 MB; results in $OUT/results.md
#   SIZES="300" RUNS=5 bench/run.sh
#   LG=/path/to/launchguard FLOOD_RUNS=1 bench/run.sh   # another build (one before a change)
#
# It also reads a hash flood (issue 15): FLOOD (10^5) kernel names of one length that agree on
# every byte the name hash samples (the first, middle and last 16). Before the interner kept such
# names apart by their full hash, each was compared with every earlier one (minutes at 10^5):
# FLOOD_RUNS=1 for such a build.
#
# Needs: hyperfine and GNU time (apt-get install -y hyperfine time), python3, gzip, cargo.
# Wall times are hyperfine's means after a warm-up run (files in the page cache); peak memory is
# GNU time's maximum resident set size of one more run (MB = 10^6 bytes).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-/tmp/lg-bench}
SIZES=${SIZES:-"75 150 300"}
RUNS=${RUNS:-10}
PY_RUNS=${PY_RUNS:-3}
SOURCE=${SOURCE:-../shared/traces/h200/healthy_refresh.json.gz}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"

for tool in hyperfine /usr/bin/time gzip "$PYTHON"; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install -y hyperfine time)" >&2; exit 2; }
done

FLOOD=${FLOOD:-100000}
FLOOD_RUNS=${FLOOD_RUNS:-$RUNS}
if [ -z "${LG:-}" ]; then
  cargo build --release -p launchguard --quiet
  LG=${CARGO_TARGET_DIR:-$PWD/target}/release/launchguard
fi

for mb in $SIZES; do
  f=$OUT/t$mb.json
  [ -s "$f" ] || "$PYTHON" bench/gen_trace.py "$SOURCE" "$f" --mb "$mb"
  [ -s "$f.gz" ] || gzip -6 -k -c "$f" > "$f.gz"
done

flood=$OUT/flood$FLOOD.json
[ -s "$flood" ] || "$PYTHON" - "$flood" "$FLOOD" <<'PY'
import sys
out, n = sys.argv[1], int(sys.argv[2])
with open(out, "w") as f:
    f.write('{"traceEvents":[\n')
    for k in range(n):
        # 96 bytes: bytes 0-16, 40-56 and 80-96 (what the hash samples) are the same in every name.
        name = "k" * 16 + f"{k:024d}" + "m" * 16 + f"{n - k:024d}" + "e" * 16
        sep = "," if k else ""
        f.write(f'{sep}{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{2 * k},"dur":1,'
                f'"args":{{"device":0,"stream":7,"correlation":{k}}}}}\n')
    f.write("]}\n")
PY

# One line of GNU time: seconds and peak resident kilobytes (launchguard exits 1 on a failing
# verdict, which is not a failure of the measurement).
peak() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1 || true; }

results=$OUT/results.md
{
  echo "| file | MB | command | mean s | ± s | peak RSS MB | RSS / file |"
  echo "|---|---|---|---|---|---|---|"
} > "$results"

row() { # file label json-export rss-kb
  local file=$1 label=$2 json=$3 kb=$4
  "$PYTHON" - "$file" "$label" "$json" "$kb" >> "$results" <<'PY'
import json, os, sys
file, label, path, kb = sys.argv[1:]
r = json.load(open(path))["results"][0]
size = os.path.getsize(file)
rss = int(kb) * 1024
print(f"| {os.path.basename(file)} | {size / 1e6:.0f} | {label} | {r['mean']:.3f} | {r['stddev'] or 0:.3f} | {rss / 1e6:.0f} | {rss / size:.0%} |")
PY
}

measure() { # file label runs command...
  local file=$1 label=$2 runs=$3
  shift 3
  local json=$OUT/hf.json
  hyperfine --style basic --warmup 1 --runs "$runs" -i --export-json "$json" "$*" >/dev/null
  local kb
  kb=$(peak bash -c "exec $*" | awk '{print $2}')
  row "$file" "$label" "$json" "$kb"
}

for mb in $SIZES; do
  f=$OUT/t$mb.json
  cat "$f" "$f.gz" >/dev/null
  measure "$f" "cat > /dev/null" "$RUNS" "cat $f > /dev/null"
  measure "$f" "launchguard analyze" "$RUNS" "$LG analyze $f --format json > /dev/null"
  measure "$f" "launchguard --parser simple" "$PY_RUNS" "$LG analyze $f --format json --parser simple > /dev/null"
  measure "$f" "python json.load + ATOM loop" "$PY_RUNS" "$PYTHON bench/atom_reference.py $f > /dev/null"
  if "$PYTHON" -c "import orjson" 2>/dev/null; then
    measure "$f" "python orjson + ATOM loop" "$PY_RUNS" "$PYTHON bench/atom_reference.py $f --orjson > /dev/null"
  fi
  measure "$f.gz" "zcat > /dev/null" "$RUNS" "zcat $f.gz > /dev/null"
  measure "$f.gz" "launchguard analyze (gzip)" "$RUNS" "$LG analyze $f.gz --format json > /dev/null"
  measure "$f.gz" "python json.load + ATOM loop (gzip)" "$PY_RUNS" "$PYTHON bench/atom_reference.py $f.gz > /dev/null"
done

measure "$flood" "launchguard analyze (hash flood, $FLOOD names)" "$FLOOD_RUNS" "$LG analyze $flood --format json > /dev/null"
measure "$flood" "launchguard --parser simple (hash flood)" "$FLOOD_RUNS" "$LG analyze $flood --format json --parser simple > /dev/null"

{
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "$(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -sr); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "launchguard $LG ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates src || echo '+changes') checked out), $($PYTHON --version 2>&1), hyperfine $(hyperfine --version | cut -d' ' -f2)"
} >> "$results"
cat "$results"
