#!/usr/bin/env bash
# Measures every reader of `launchguard analyze` (the hand-written `fast`, the candidates on
# sonic-rs and simd-json, the serde reference) beside the floors that bound any reader (`cat`,
# `zcat`, the inflaters alone) and the Python reference (json.load / orjson + ATOM's loop), in one
# run, on a real H200 trace repeated (bench/gen_trace.py) and on the public traces interleaved
# (bench/gen_mixed.py), plain and gzip, on 2 cores and on all cores.
#
#   bench/run.sh                                   # builds with cargo; results in $OUT/results.md
#   LG=/path/launchguard INFLATE=/path/inflate READ=/path/read bench/run.sh   # carried binaries: no cargo
#
# READ, the reader alone (crates/trace/examples/read.rs: no analysis, no report), gives the rows
# that issue 19's goals compare with `cat` and the inflaters; `launchguard` rows are whole commands.
#   SIZES="300" MIXED="300" CORES="all" RUNS=5 bench/run.sh
#   BASE=/path/launchguard-before bench/run.sh    # adds rows of an earlier build's default reader
#   BASE_READ=/path/read BASE_INFLATE=/path/inflate bench/run.sh   # and of its reader alone, inflate alone
#   LG=/path/to/launchguard FLOOD_RUNS=1 bench/run.sh   # another build (one before a change)
#   COMPARE=0 bench/run.sh                          # leaves out compare of two traces
#
# Without LG it builds with cargo into ${CARGO_TARGET_DIR:-target}. It also reads a hash flood
# (issue 15): FLOOD (10^5) kernel names of one length that agree on every byte the name hash
# samples (the first, middle and last 16). Before the interner kept such names apart by their full
# hash, each was compared with every earlier one (minutes at 10^5): FLOOD_RUNS=1 for such a build,
# FLOOD=0 to leave the flood out. And `compare A B` of two traces of the largest size (issue 17:
# at most 2.5x one `analyze A`), B made from another H200 run.
#
# Needs python3, gzip and coreutils only (timing and peak memory: bench/measure.py). Wall times are
# means after a warm-up run (files in the page cache); peak memory is the largest resident set of
# the runs (MB = 10^6 bytes). The traces are made from $SHARED/traces (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-/tmp/lg-bench}          # results.md, results.jsonl (written as it goes)
TRACES=${TRACES:-$OUT}            # the generated traces (300 MB each)
SIZES=${SIZES-"75 150 300"}
MIXED=${MIXED-"300"}
CORES=${CORES:-$( [ "$(nproc)" -gt 2 ] && echo "2 all" || echo 2 )}
READERS=${READERS:-"fast sonic simd-json"}
RUNS=${RUNS:-10}
SLOW_RUNS=${SLOW_RUNS:-3}
SIMPLE=${SIMPLE:-1}       # 0: leave out the serde reference (slow)
PYREF=${PYREF:-1}         # 0: leave out json.load / orjson (slow)
SHARED=${SHARED:-../shared}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT" "$TRACES"

for tool in gzip zcat "$PYTHON"; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is missing" >&2; exit 2; }
done

FLOOD=${FLOOD:-100000}
COMPARE=${COMPARE:-1}
FLOOD_RUNS=${FLOOD_RUNS:-$RUNS}
built=0
if [ -z "${LG:-}" ]; then
  built=1
  cargo build --release -p launchguard --features candidate-parsers --quiet
  cargo build --release -p launchguard-trace --features candidates --example inflate --example read --quiet
  target=${CARGO_TARGET_DIR:-$PWD/target}
  LG=$target/release/launchguard
  INFLATE=${INFLATE:-$target/release/examples/inflate}
  READ=${READ:-$target/release/examples/read}
fi
INFLATE=${INFLATE:-}
READ=${READ:-}
BASE=${BASE:-}
BASE_READ=${BASE_READ:-}
BASE_INFLATE=${BASE_INFLATE:-}
BASE_LABEL=${BASE_LABEL:-before}

for mb in $SIZES; do
  f=$TRACES/t$mb.json
  [ -s "$f" ] || "$PYTHON" bench/gen_trace.py "$SHARED/traces/h200/healthy_refresh.json.gz" "$f" --mb "$mb"
  [ -s "$f.gz" ] || gzip -6 -c "$f" > "$f.gz"
done
for mb in $MIXED; do
  f=$TRACES/mixed$mb.json
  [ -s "$f" ] || "$PYTHON" bench/gen_mixed.py "$f" --mb "$mb" "$SHARED"/traces/public/*/*.json.gz
  [ -s "$f.gz" ] || gzip -6 -c "$f" > "$f.gz"
done

flood=$TRACES/flood$FLOOD.json
if [ "$FLOOD" -gt 0 ]; then
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
fi

results=$OUT/results.jsonl
: > "$results"
m() { "$PYTHON" bench/measure.py --out "$results" "$@"; }

files=""
for mb in $SIZES; do files="$files $TRACES/t$mb.json"; done
for mb in $MIXED; do files="$files $TRACES/mixed$mb.json"; done
orjson=0
"$PYTHON" -c "import orjson" 2>/dev/null && orjson=1 || echo "bench: orjson is not installed: its rows are left out" >&2

for f in $files; do
  text=$(stat -c %s "$f")
  cat "$f" "$f.gz" >/dev/null
  for cores in $CORES; do
    m --file "$f" --label "cat" --cores "$cores" --runs "$RUNS" -- cat "$f"
    for r in $READERS; do
      m --file "$f" --label "launchguard --parser $r" --cores "$cores" --runs "$RUNS" -- \
        "$LG" analyze "$f" --format json --parser "$r"
    done
    if [ -n "$READ" ]; then
      m --file "$f" --label "reader alone (fast)" --cores "$cores" --runs "$RUNS" -- "$READ" "$f"
    fi
    if [ -n "$BASE_READ" ]; then
      m --file "$f" --label "reader alone $BASE_LABEL" --cores "$cores" --runs "$RUNS" -- "$BASE_READ" "$f"
    fi
    if [ -n "$BASE" ]; then
      m --file "$f" --label "launchguard $BASE_LABEL" --cores "$cores" --runs "$RUNS" -- \
        "$BASE" analyze "$f" --format json
    fi
    m --file "$f.gz" --text-bytes "$text" --label "zcat" --cores "$cores" --runs "$RUNS" -- zcat "$f.gz"
    if [ -n "$INFLATE" ]; then
      # `deflate`: without the first member's CRC-32, as the reader's decompressing thread
      # inflates on 8 threads or more.
      for how in zlib-rs libdeflate deflate; do
        label=$how; [ "$how" = deflate ] && label="zlib-rs, no CRC-32"
        m --file "$f.gz" --text-bytes "$text" --label "inflate only ($label)" --cores "$cores" --runs "$RUNS" -- \
          "$INFLATE" "$how" "$f.gz"
      done
    fi
    if [ -n "$BASE_INFLATE" ]; then
      m --file "$f.gz" --text-bytes "$text" --label "inflate only (zlib-rs) $BASE_LABEL" --cores "$cores" \
        --runs "$RUNS" -- "$BASE_INFLATE" zlib-rs "$f.gz"
    fi
    for r in $READERS; do
      m --file "$f.gz" --text-bytes "$text" --label "launchguard --parser $r (gzip)" --cores "$cores" \
        --runs "$RUNS" -- "$LG" analyze "$f.gz" --format json --parser "$r"
    done
    if [ -n "$READ" ]; then
      m --file "$f.gz" --text-bytes "$text" --label "reader alone (fast, gzip)" --cores "$cores" \
        --runs "$RUNS" -- "$READ" "$f.gz"
    fi
    if [ -n "$BASE_READ" ]; then
      m --file "$f.gz" --text-bytes "$text" --label "reader alone $BASE_LABEL (gzip)" --cores "$cores" \
        --runs "$RUNS" -- "$BASE_READ" "$f.gz"
    fi
    if [ -n "$BASE" ]; then
      m --file "$f.gz" --text-bytes "$text" --label "launchguard $BASE_LABEL (gzip)" --cores "$cores" \
        --runs "$RUNS" -- "$BASE" analyze "$f.gz" --format json
    fi
  done
  # The slow rows once, on one core's worth of work (they use one thread).
  if [ "$SIMPLE" = 1 ]; then
    m --file "$f" --label "launchguard --parser simple" --runs "$SLOW_RUNS" -- \
      "$LG" analyze "$f" --format json --parser simple
  fi
  if [ "$PYREF" = 1 ]; then
    m --file "$f" --label "python json.load + ATOM loop" --runs "$SLOW_RUNS" -- "$PYTHON" bench/atom_reference.py "$f"
    if [ "$orjson" = 1 ]; then
      m --file "$f" --label "python orjson + ATOM loop" --runs "$SLOW_RUNS" -- \
        "$PYTHON" bench/atom_reference.py "$f" --orjson
    fi
  fi
done

largest=$(printf '%s\n' $SIZES | sort -n | tail -1)
if [ "$COMPARE" = 1 ] && [ -n "$largest" ]; then
  a=$TRACES/t$largest.json
  b=$TRACES/t$largest-clean.json
  [ -s "$b" ] || "$PYTHON" bench/gen_trace.py "$SHARED/traces/h200/healthy_clean.json.gz" "$b" --mb "$largest"
  cat "$a" "$b" > /dev/null
  for cores in $CORES; do
    m --file "$a" --label "launchguard analyze A (for compare)" --cores "$cores" --runs "$RUNS" -- \
      "$LG" analyze "$a" --format json
    m --file "$a" --label "launchguard compare A B (goal <= 2.5x analyze A)" --cores "$cores" --runs "$RUNS" -- \
      "$LG" compare "$a" "$b" --format json
  done
fi

if [ "$FLOOD" -gt 0 ]; then
  m --file "$flood" --label "launchguard analyze (hash flood, $FLOOD names)" --runs "$FLOOD_RUNS" -- \
    "$LG" analyze "$flood" --format json
  m --file "$flood" --label "launchguard --parser simple (hash flood)" --runs "$FLOOD_RUNS" -- \
    "$LG" analyze "$flood" --format json --parser simple
fi

{
  "$PYTHON" bench/measure.py --table "$results"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "$(awk '/MemTotal/{printf "%.0f", $2/1048576}' /proc/meminfo) GiB RAM, $(uname -sr);" \
    "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  # Carried binaries may be of another commit than the checkout they run beside.
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo 'no git')
  [ "$built" = 1 ] && from="built here at $commit" || from="given as LG; the checkout here is at $commit"
  echo "$("$LG" --version 2>/dev/null || echo launchguard) ($from), $("$PYTHON" --version 2>&1)"
} > "$OUT/results.md"
cat "$OUT/results.md"
