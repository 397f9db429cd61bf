#!/usr/bin/env bash
# Records real `check` runs on a GPU machine for replay where there is no GPU: each run's workload
# config, result and trace (scripts/record-workload.sh) plus check's own JSON and output. The
# recordings are the labeled corpus the judge is tuned and validated on (tests/data/labeled/,
# docs/evidence/) and what tests/cli/replay.rs replays through a stand-in interpreter.
#
# usage: OUT=dir BIN=path/to/launchguard scripts/gpu-record.sh SCENARIO...
#   presets – (2 GPUs) reference and tiny, healthy and with delays, qwen3-0.6b split over both
#   tp      – (2 GPUs) --tp 2 healthy, with a delay on every rank and on rank 1 only
#   setb    – (2 GPUs) more healthy runs of each preset and --tp 2, recorded apart to validate
#             limits chosen on the first ones
# Everything lands in $OUT/rec/NAME/, packed into one tar per preset, cut into 15 MB parts (the
# device returns files of at most 16 MiB).
set -u
BIN=${BIN:-$PWD/.device-carry/launchguard}
REC=$OUT/rec
mkdir -p "$REC"
export PYTHONUNBUFFERED=1
RECORDER=$PWD/scripts/record-workload.sh

# one NAME ARGS...: one recorded check.
one() {
  local name=$1; shift
  local dir=$REC/$name
  mkdir -p "$dir"
  local t0=$(date +%s%N)
  LG_RECORD_DIR=$dir "$BIN" check --python "$RECORDER" --json "$dir/check.json" "$@" > "$dir/output.txt" 2>&1
  local rc=$?
  echo "$rc" > "$dir/exit"
  { echo "\$ launchguard check $*"; echo "# $(date -u +%FT%TZ) CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}";
    echo "# exit $rc, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"; } > "$dir/command.txt"
  echo "--- $name: exit $rc $(grep -m1 '^verdict' "$dir/output.txt")"
}

ladder() {
  local preset=$1 healthy=$2; shift 2
  for i in $(seq -w 1 "$healthy"); do one "$preset-healthy-$i" --preset "$preset"; done
  for d in "$@"; do one "$preset-delay-$d" --preset "$preset" --inject-delay-us "$d"; done
}

presets() {
  ( export CUDA_VISIBLE_DEVICES=0
    ladder reference 10 5 10 25 50 100 255 300 400
    ladder qwen3-0.6b 2 2500 ) > "$OUT/gpu0.log" 2>&1 &
  ( export CUDA_VISIBLE_DEVICES=1
    ladder tiny 10 2 5 10 25 35 50 100
    ladder qwen3-0.6b 0 100 5000
    for i in 3 4; do one "qwen3-0.6b-healthy-0$i" --preset qwen3-0.6b; done ) > "$OUT/gpu1.log" 2>&1 &
  wait
  cat "$OUT/gpu0.log" "$OUT/gpu1.log"
}

setb() {
  ( export CUDA_VISIBLE_DEVICES=0
    for i in 11 12 13 14; do one "reference-healthy-$i" --preset reference; done
    for i in 05 06; do one "qwen3-0.6b-healthy-$i" --preset qwen3-0.6b; done ) > "$OUT/gpu0.log" 2>&1 &
  ( export CUDA_VISIBLE_DEVICES=1
    for i in 11 12 13 14; do one "tiny-healthy-$i" --preset tiny; done
    for i in 07 08; do one "qwen3-0.6b-healthy-$i" --preset qwen3-0.6b; done ) > "$OUT/gpu1.log" 2>&1 &
  wait
  cat "$OUT/gpu0.log" "$OUT/gpu1.log"
  for i in 6 7 8; do one "tp2-healthy-$i" --tp 2 --timeout 120; done
}

tp() {
  for i in 1 2 3 4 5; do one "tp2-healthy-$i" --tp 2 --timeout 120; done
  one tp2-delay-300 --tp 2 --timeout 120 --inject-delay-us 300
  for d in 25 100 300; do one "tp2-rank1-delay-$d" --tp 2 --timeout 120 --inject-delay-us "$d" --inject-delay-ranks 1; done
}

{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; nproc
  "$BIN" --version; } > "$REC/machine.txt" 2>&1
for s in "$@"; do
  case $s in
    presets) presets ;;
    tp) tp ;;
    setb) setb ;;
    *) echo "unknown scenario $s"; exit 2 ;;
  esac
done
for group in reference tiny qwen3-0.6b tp2; do
  names=$(cd "$REC" && ls -d "$group"-* 2>/dev/null)
  [ -n "$names" ] || continue
  (cd "$REC" && tar -cf - $names) | split -b 15m -d - "$OUT/rec-$group.tar."
done
cp "$REC/machine.txt" "$OUT/"
ls -la "$OUT"
