#!/usr/bin/env bash
# GPU evidence: runs launchguard's GPU-only behaviours on a lent GPU machine and keeps every
# command's output, for docs/evidence/. Not part of `cargo test` (there is no GPU in CI).
#
# usage: OUT=dir scripts/gpu-evidence.sh SCENARIO...
#   single  – (2 GPUs) selftest ladders for reference (10 healthy runs) and tiny in parallel on
#             GPU 0 and GPU 1; on GPU 1: check with every report, injected delays, qwen3-0.6b,
#             and the ATOM test's wall time beside check's (if .device-carry/atom/ has it)
#   quick   – check reference and tiny once each (JSON kept)
#   baseline – check --save-baseline, then --baseline healthy and with 10 µs injected
#   four    – (4 GPUs) tp 2 beside a second reference ladder and quick, then tp 4
#   tp N    – check --tp N, a rank killed mid-run, selftest --tp N with a short ladder
#   judge   – (2 GPUs) each preset checked with its trace kept and analyze of the kept trace; a
#             TP=2 baseline, then 25 µs before every launch of rank 1 alone against it; kept
#             traces of two healthy runs compared, and a healthy against a delayed one (HTML kept)
#   onerank – (2 GPUs) a TP=2 baseline, a second healthy run against it, then 25, 50, 100 and
#             300 µs before every launch of rank 1 alone against it
#   launchers – (2 GPUs) check --tp 2 beside two torchrun agents started separately (--nnodes 2,
#             c10d rendezvous on localhost) and two processes with Slurm's variables set by hand;
#             a rank killed under torchrun
#   final   – (1 GPU) what a change to the reader or the judge must show at a session's end: each
#             preset checked with its trace and baseline kept, the trace analyzed from the file
#             (parallel gzip reader) and from standard input (sequential), the reports set side by
#             side; tiny with 50 µs per launch against its baseline, and without
# Each command's stdout+stderr and exit code land in $OUT/ev/NAME.txt; everything is packed into
# $OUT/evidence.tar.gz (the device returns few files).
set -u
BIN=${BIN:-$PWD/.device-carry/launchguard}
E=$OUT/ev
mkdir -p "$E"
export PYTHONUNBUFFERED=1

# run NAME ARGS...: one launchguard command, its output and exit code kept.
run() {
  local name=$1; shift
  {
    echo "\$ launchguard $*"
    echo "# $(date -u +%FT%TZ) on $(hostname), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}"
    /usr/bin/time -f "# wall %e s" "$BIN" "$@"
    echo "# exit code $?"
  } > "$E/$name.txt" 2>&1
  echo "--- $name: $(tail -n 2 "$E/$name.txt" | tr '\n' ' ')"
}

# The pid of rank 1's workload, polled every 0.1 s up to $1 times (empty when it never appears).
rank1_workload() {
  local i p
  for i in $(seq 1 "$1"); do
    for p in $(pgrep -f launchguard_workload.py); do
      if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'RANK=1'; then echo "$p"; return; fi
    done
    sleep 0.1
  done
}

machine() {
  { nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS)=' | sort
    "$BIN" --version; } > "$E/machine.txt" 2>&1
  "$BIN" linkage > "$E/linkage.txt" 2>&1; echo "# exit code $?" >> "$E/linkage.txt"
}

single() {
  ( export CUDA_VISIBLE_DEVICES=0
    run selftest-reference selftest --preset reference --healthy 10 --keep-results "$E/selftest-reference" ) &
  ( export CUDA_VISIBLE_DEVICES=1
    run selftest-tiny selftest --preset tiny --keep-results "$E/selftest-tiny"
    run check-reference check --preset reference --json "$E/check-reference.json" --junit "$E/check-reference.junit.xml" \
      --markdown "$E/check-reference.md" --html "$E/check-reference.html" --keep-trace "$E/check-reference.trace.json"
    if [ -f .device-carry/atom/test_profiler_regression.py ]; then
      { echo "\$ python3 -m pytest -q test_profiler_regression.py (ROCm/ATOM's test, same GPU)"
        /usr/bin/time -f "# wall %e s" python3 -m pytest -q -p no:cacheprovider .device-carry/atom/test_profiler_regression.py
        echo "# exit code $?"; } > "$E/atom-test.txt" 2>&1
      echo "--- atom-test: $(tail -n 2 "$E/atom-test.txt" | tr '\n' ' ')"
      run check-reference-timed check --preset reference
    fi
    run check-reference-delay300 check --preset reference --inject-delay-us 300
    run check-tiny-delay50 check --preset tiny --inject-delay-us 50
    run check-qwen3 check --preset qwen3-0.6b --json "$E/check-qwen3.json" ) &
  wait
}

quick() {
  run check-reference check --preset reference --json "$E/check-reference.json"
  run check-tiny check --preset tiny --json "$E/check-tiny.json"
}

# baseline: a reference baseline saved, then compared with a healthy run and with +10 µs per launch.
baseline() {
  run check-save-baseline check --preset reference --save-baseline "$E/reference-baseline.json"
  run check-vs-baseline check --preset reference --baseline "$E/reference-baseline.json"
  run check-delay10-vs-baseline check --preset reference --inject-delay-us 10 --baseline "$E/reference-baseline.json"
}

tp() {
  local n=$1
  run "check-tp$n" check --tp "$n" --timeout 120 --json "$E/check-tp$n.json" --keep-trace "$E/tp$n.rank{rank}.json"
  if ! grep -q '^# exit code [01]$' "$E/check-tp$n.txt"; then
    echo "check --tp $n did not finish: skipping the kill test and the ladder"; return
  fi
  # A rank killed mid-run: the guard must end with an error naming it and leave no process.
  {
    echo "\$ launchguard check --tp $n & ... kill -9 <rank 1> 5 s after it started"
    "$BIN" check --tp "$n" --timeout 120 > "$E/kill-tp$n.out" 2>&1 &
    local lg=$! victim
    # Rank 1 as soon as it exists, then let it get into its phases (a whole check takes ~10 s).
    victim=$(rank1_workload 100)
    sleep 5
    echo "# killing rank 1: pid ${victim:-none}"; [ -n "$victim" ] && kill -9 "$victim"
    wait $lg; echo "# launchguard exit code $?"
    cat "$E/kill-tp$n.out"
    sleep 2
    local left=0
    for p in $(pgrep -f launchguard_workload.py); do
      tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "WORLD_SIZE=$n" && left=$((left + 1))
    done
    echo "# workload processes of that run left: $left"
  } > "$E/kill-tp$n.txt" 2>&1
  echo "--- kill-tp$n: $(grep '^#' "$E/kill-tp$n.txt" | tr '\n' ' ')"
  run "selftest-tp$n" selftest --tp "$n" --timeout 120 --healthy 3 --delays 25,100,200,400 --keep-results "$E/selftest-tp$n"
}

# four: on 4 GPUs, TP=2 on GPUs 0-1 beside a second reference ladder (10 more healthy runs, out of
# the sample the compare limits were set on) on GPU 2 and the quick checks on GPU 3; then TP=4.
four() {
  ( export CUDA_VISIBLE_DEVICES=0,1; tp 2 ) &
  ( export CUDA_VISIBLE_DEVICES=2
    run selftest-reference-b selftest --preset reference --healthy 10 --delays 5,10,25 --keep-results "$E/selftest-reference-b" ) &
  ( export CUDA_VISIBLE_DEVICES=3; quick ) &
  wait
  tp 4
}

# judge: one judge for check and analyze; a slow rank alone caught against a baseline.
judge() {
  ( export CUDA_VISIBLE_DEVICES=0
    for p in reference qwen3-0.6b; do
      run "check-$p-a" check --preset "$p" --keep-trace "$E/$p-a.json.gz" --json "$E/check-$p-a.json"
      run "analyze-$p-a" analyze "$E/$p-a.json.gz"
    done
    run check-reference-b check --preset reference --keep-trace "$E/reference-b.json.gz"
    run compare-reference-kept compare "$E/reference-a.json.gz" "$E/reference-b.json.gz" ) &
  ( export CUDA_VISIBLE_DEVICES=1
    run check-tiny-a check --preset tiny --keep-trace "$E/tiny-a.json.gz" --json "$E/check-tiny-a.json"
    run analyze-tiny-a analyze "$E/tiny-a.json.gz"
    run check-tiny-b check --preset tiny --keep-trace "$E/tiny-b.json.gz"
    run compare-tiny-kept compare "$E/tiny-a.json.gz" "$E/tiny-b.json.gz"
    run check-tiny-delay50 check --preset tiny --inject-delay-us 50 --keep-trace "$E/tiny-delay50.json.gz"
    run analyze-tiny-delay50 analyze "$E/tiny-delay50.json.gz"
    run compare-tiny-delay50 compare "$E/tiny-a.json.gz" "$E/tiny-delay50.json.gz" \
      --html "$E/compare-tiny-delay50.html" --markdown "$E/compare-tiny-delay50.md" ) &
  wait
  run check-tp2-save-baseline check --tp 2 --timeout 120 --save-baseline "$E/tp2-baseline.json" --keep-trace "$E/tp2-a.json.gz"
  run analyze-tp2-kept analyze "$E/tp2-a.rank0.json.gz" "$E/tp2-a.rank1.json.gz"
  run check-tp2-rank1-delay25-vs-baseline check --tp 2 --timeout 120 --inject-delay-us 25 --inject-delay-ranks 1 \
    --baseline "$E/tp2-baseline.json"
}

# onerank: does `check --tp 2 --baseline` see a delay on one rank only, and stay quiet on a
# healthy run? One baseline, the runs after it each against it.
onerank() {
  run onerank-save-baseline check --tp 2 --timeout 120 --save-baseline "$E/onerank-baseline.json"
  run onerank-healthy-vs-baseline check --tp 2 --timeout 120 --baseline "$E/onerank-baseline.json"
  local d
  for d in 25 50 100 300; do
    run "onerank-rank1-delay$d-vs-baseline" check --tp 2 --timeout 120 --inject-delay-us "$d" \
      --inject-delay-ranks 1 --baseline "$E/onerank-baseline.json" --json "$E/onerank-rank1-delay$d.json"
  done
}

# report FILE: the report in a kept output, without the lines run() adds and without the report's
# first line, which names the trace.
report() {
  grep -v -e '^\$ launchguard' -e '^# ' "$1" | sed -n '/^trace /,$p' | tail -n +2
}

# final: one GPU, the paths every session's last build must have run.
final() {
  local p
  for p in reference tiny; do
    run "check-$p" check --preset "$p" --keep-trace "$E/$p.json.gz" --save-baseline "$E/$p-baseline.json"
    run "analyze-$p" analyze "$E/$p.json.gz"
    run "analyze-$p-stdin" analyze - < "$E/$p.json.gz"
    { echo "# analyze of the kept $p trace: the file against standard input, and against check's report"
      if cmp -s <(report "$E/analyze-$p.txt") <(report "$E/analyze-$p-stdin.txt"); then
        echo "file and standard input: the same report after its first line"
      else
        diff <(report "$E/analyze-$p.txt") <(report "$E/analyze-$p-stdin.txt")
      fi
      echo "lines of analyze's report that check's report also has, word for word:" \
        "$(grep -cxFf <(report "$E/check-$p.txt") <(report "$E/analyze-$p.txt")) of $(report "$E/analyze-$p.txt" | wc -l)"
    } > "$E/reports-$p.txt"
    echo "--- reports-$p: $(tail -n 2 "$E/reports-$p.txt" | tr '\n' ' ')"
  done
  run check-tiny-delay50-vs-baseline check --preset tiny --inject-delay-us 50 --baseline "$E/tiny-baseline.json"
  run check-tiny-vs-baseline check --preset tiny --baseline "$E/tiny-baseline.json"
}

# launchers: the same TP=2 run three ways, then a rank killed under torchrun.
launchers() {
  run check-tp2-local check --tp 2 --timeout 120 --json "$E/launch-local.json"
  local port=$((29400 + RANDOM % 500)) i
  agents "torchrun" "$port" "lg-$port" --json "$E/launch-torchrun.json"
  # Slurm's variables, set by hand: srun is not installed on this machine.
  { echo "\$ SLURM_PROCID=r SLURM_NTASKS=2 SLURM_LOCALID=0 CUDA_VISIBLE_DEVICES=r MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port+1)) launchguard check (r = 0, 1)"
    echo "# srun is not installed here: the variables srun would set, set by hand"
    for i in 0 1; do
      ( export CUDA_VISIBLE_DEVICES=$i SLURM_PROCID=$i SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_JOB_ID=777 \
               MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port + 1))
        "$BIN" check --timeout 120 --out "$E/slurm-ranks" --json "$E/launch-slurm-$i.json" > "$E/slurm-$i.out" 2>&1
        echo "# rank $i exit code $?" >> "$E/slurm-$i.out" ) &
    done
    wait
    for i in 0 1; do echo "--- rank $i"; cat "$E/slurm-$i.out"; done; } > "$E/launch-slurm.txt" 2>&1
  echo "--- launch-slurm: $(grep '^# rank' "$E/launch-slurm.txt" | tr '\n' ' ')"
  # A rank killed: rank 1's workload process, 8 s after its agent started (inside the profiled
  # phases), under torchrun; rank 0 must end with exit 2 naming rank 1.
  { echo "\$ two torchrun agents as above; kill -9 rank 1's workload 8 s in"
    port=$((port + 2))
    ( agents "torchrun-kill" "$port" "lg-kill-$port" ) &
    local victim
    victim=$(rank1_workload 200)
    sleep 8
    echo "# killing rank 1's workload: pid ${victim:-none} at $(date -u +%T)"; [ -n "$victim" ] && kill -9 "$victim"
    wait
    echo "# done at $(date -u +%T)"
    cat "$E/torchrun-kill.txt"
    sleep 2
    echo "# workload processes left: $(pgrep -fc launchguard_workload.py)"; } > "$E/launch-kill.txt" 2>&1
  echo "--- launch-kill: $(grep -E '^# |exit code' "$E/launch-kill.txt" | tr '\n' ' ' | cut -c1-400)"
}

# agents NAME PORT RDZV_ID ARGS...: two torchrun agents (node ranks 0 and 1, one GPU each),
# started separately, meeting through c10d on localhost; each runs launchguard as its worker.
agents() {
  local name=$1 port=$2 id=$3; shift 3
  {
    echo "\$ torchrun --nnodes 2 --nproc-per-node 1 --node-rank N --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$port --rdzv-id $id --no-python launchguard check --timeout 120 --out DIR $* (N = 0, 1; CUDA_VISIBLE_DEVICES=N)"
    echo "# $(date -u +%FT%TZ)"
    local n
    for n in 0 1; do
      ( export CUDA_VISIBLE_DEVICES=$n
        /usr/bin/time -f "# node $n wall %e s" torchrun --nnodes 2 --nproc-per-node 1 --node-rank $n \
          --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" --rdzv-id "$id" --max-restarts 0 \
          --no-python "$BIN" check --timeout 120 --wait 60 --out "$E/$name-ranks" "$@" > "$E/$name-node$n.out" 2>&1
        echo "# node $n torchrun exit code $?" >> "$E/$name-node$n.out" ) &
    done
    wait
    for n in 0 1; do echo "--- node $n"; cat "$E/$name-node$n.out"; done
  } > "$E/$name.txt" 2>&1
  echo "--- $name: $(grep -E 'exit code|^verdict' "$E/$name.txt" | tr '\n' ' ' | cut -c1-300)"
}

machine
while [ $# -gt 0 ]; do
  case $1 in
    single) single; shift ;;
    quick) quick; shift ;;
    baseline) baseline; shift ;;
    four) four; shift ;;
    tp) tp "$2"; shift 2 ;;
    judge) judge; shift ;;
    onerank) onerank; shift ;;
    launchers) launchers; shift ;;
    final) final; shift ;;
    *) echo "unknown scenario $1"; exit 2 ;;
  esac
done
tar -C "$OUT" -czf "$OUT/evidence.tar.gz" ev && rm -rf "$E"
ls -la "$OUT"
