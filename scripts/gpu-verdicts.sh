#!/usr/bin/env bash
# The step-synchronous phase on a GPU (issue 30, item 2): what a server pays per decode step when
# it reads each step back, measured by `check` on labeled healthy and delayed runs.
#
#   CALIBRATION  for each preset, healthy runs and runs with a delay busy-waited before each graph
#                launch (+10, +25, +50, +100, +300 µs) or 2 ms before every 10th launch
#                (--inject-delay-us 2000 --inject-every 10): the measured per-step figures as a
#                table (calibration-table.txt) and as JSON (calibration.json), to set the sync_step
#                limits on. Runs in priority order and starts no run that would end past the time
#                budget (BUDGET_S, 450 s), saying which it left out.
#   FINAL        5 healthy runs of each preset, 5 with +100 µs per launch and 5 with 2 ms every
#                10th launch on the reference preset: the verdict counts and each run's per-step
#                cost line. Exit 1 when any expectation is not met: healthy runs do not fail and
#                their sync_step passes; every delayed run FAILs with sync_step failing and its
#                per-step cost stated.
#
# usage: [BIN=target/release/launchguard] [PYTHON=python3] [OUT=dir] [BUDGET_S=450] scripts/gpu-verdicts.sh CALIBRATION|FINAL
# A machine with torch and one GPU, no cargo: the binary is carried. Every check's JSON and
# stderr are kept under $OUT/runs and packed into $OUT/verdicts.tar.gz.
set -u
MODE=${1:?usage: scripts/gpu-verdicts.sh CALIBRATION|FINAL}
BIN=${BIN:-$PWD/target/release/launchguard}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-gpu-verdicts}
BUDGET_S=${BUDGET_S:-450}
R=$OUT/runs
mkdir -p "$R"
export PYTHONUNBUFFERED=1
START=$(date +%s)
# The presets this build has, in this order.
PRESETS=""
for p in reference tiny qwen3-0.6b; do
  "$BIN" check --help | grep -q -- "$p" && PRESETS="$PRESETS $p"
done
{ "$BIN" --version; nvidia-smi -L; "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "presets: $PRESETS"; } 2>&1 | tee "$OUT/machine.txt"

# Seconds each preset's check took last (a first guess until one ran).
declare -A LAST=([reference]=14 [tiny]=13 [qwen3-0.6b]=20)
SKIPPED=()

# one NAME PRESET DELAY EVERY: one check, its JSON and stderr kept; prints its summary line.
one() {
  local name=$1 preset=$2 delay=$3 every=$4 t0 rc
  local now=$(( $(date +%s) - START ))
  if [ "$MODE" = CALIBRATION ] && [ $(( now + ${LAST[$preset]} )) -gt "$BUDGET_S" ]; then
    SKIPPED+=("$name"); echo "--- $name: left out (${now} s used of $BUDGET_S)"; return
  fi
  t0=$EPOCHREALTIME
  "$BIN" check --python "$PYTHON" --require-gpu --preset "$preset" --inject-delay-us "$delay" \
    --inject-every "$every" --format json > "$R/$name.json" 2> "$R/$name.err"
  rc=$?
  local wall
  wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  LAST[$preset]=$(printf '%.0f' "$wall")
  echo "{\"name\": \"$name\", \"preset\": \"$preset\", \"delay_us\": $delay, \"every\": $every, \"exit\": $rc, \"wall_s\": $wall}" > "$R/$name.meta"
  "$PYTHON" - "$R/$name.json" "$name" "$rc" "$wall" <<'EOF'
import json, sys
path, name, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
try:
    d = json.load(open(path))
except Exception as e:
    print("--- %s: exit %d, no JSON (%s), %.1f s" % (name, rc, e, wall)); sys.exit(0)
s = [c for c in d["checks"] if c["id"] == "sync_step"]
print("--- %s: exit %d, verdict %s, sync_step %s, %.1f s" % (name, rc, d["verdict"], s[0]["status"] if s else "absent", wall))
if s:
    print("    " + s[0]["message"])
EOF
}

# table NAMES...: the per-step figures of each run ($OUT/calibration.txt and .json, or final.*).
table() {
  "$PYTHON" - "$OUT" "${MODE,,}" "$@" <<'EOF'
import json, sys
out, mode, names = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for n in names:
    meta = json.load(open("%s/runs/%s.meta" % (out, n)))
    try:
        d = json.load(open("%s/runs/%s.json" % (out, n)))
    except Exception:
        rows.append(dict(meta, verdict="error")); continue
    b = d.get("phases", {}).get("before", {})
    st = b.get("sync_step") or {}
    g = b.get("gpu_us_per_replay")
    checks = {c["id"]: c["status"] for c in d["checks"]}
    rows.append(dict(meta, verdict=d["verdict"], sync_check=checks.get("sync_step"), gpu_us=g,
                     step_mean_us=st.get("mean_us"), step_p50_us=st.get("p50_us"), step_p90_us=st.get("p90_us"),
                     step_p99_us=st.get("p99_us"), step_max_us=st.get("max_us"), sync_gpu_p50_us=b.get("sync_gpu_p50_us"),
                     host_p50_us=b.get("host_p50_us"), steady_p50_us=b.get("steady_host_p50_us"),
                     failed=[k for k, v in checks.items() if v == "fail"], warned=[k for k, v in checks.items() if v == "warn"]))
json.dump(rows, open("%s/%s.json" % (out, mode), "w"), indent=1)
f = lambda v: "%8.1f" % v if isinstance(v, (int, float)) else "%8s" % "-"
pct = lambda a, b: "%+6.0f%%" % (100 * (a / b - 1)) if a and b else "%7s" % "-"
head = "%-26s %8s %8s %8s %8s %8s %8s %7s %7s %8s %8s %-7s %-6s %s" % (
    "run", "GPU", "step p50", "p90", "p99", "mean", "syncGPU", "p50/GPU", "mean/GPU", "host p50", "b2b p50",
    "verdict", "sync", "failed / warned")
lines = [head]
for r in rows:
    lines.append("%-26s %s %s %s %s %s %s %s %s %s %s %-7s %-6s %s / %s" % (
        r["name"], f(r.get("gpu_us")), f(r.get("step_p50_us")), f(r.get("step_p90_us")), f(r.get("step_p99_us")),
        f(r.get("step_mean_us")), f(r.get("sync_gpu_p50_us")), pct(r.get("step_p50_us"), r.get("gpu_us")),
        pct(r.get("step_mean_us"), r.get("gpu_us")), f(r.get("host_p50_us")), f(r.get("steady_p50_us")),
        r.get("verdict"), r.get("sync_check"), ",".join(r.get("failed", [])), ",".join(r.get("warned", []))))
open("%s/%s-table.txt" % (out, mode), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
}

calibration() {
  local names=() p i d
  # Priority order: what the limits must separate first, the finer ladder after.
  local plan=()
  for p in $PRESETS; do
    plan+=("$p-healthy-1 $p 0 1" "$p-delay100-1 $p 100 1" "$p-every10-1 $p 2000 10")
  done
  for p in $PRESETS; do
    plan+=("$p-healthy-2 $p 0 1" "$p-healthy-3 $p 0 1" "$p-delay300-1 $p 300 1" "$p-delay50-1 $p 50 1")
  done
  for p in $PRESETS; do
    plan+=("$p-delay25-1 $p 25 1" "$p-delay10-1 $p 10 1" "$p-delay100-2 $p 100 1" "$p-every10-2 $p 2000 10")
  done
  for p in $PRESETS; do
    for d in 10 25 50 300; do plan+=("$p-delay$d-2 $p $d 1"); done
  done
  for i in "${plan[@]}"; do
    # shellcheck disable=SC2086
    one $i
    [ -f "$R/${i%% *}.meta" ] && names+=("${i%% *}")
  done
  echo
  table "${names[@]}"
  [ ${#SKIPPED[@]} -gt 0 ] && echo "left out for the time budget: ${SKIPPED[*]}"
  return 0
}

final() {
  local p i fail=0
  local names=()
  for i in 1 2 3 4 5; do
    for p in $PRESETS; do one "$p-healthy-$i" "$p" 0 1; names+=("$p-healthy-$i"); done
    one "reference-delay100-$i" reference 100 1; names+=("reference-delay100-$i")
    one "reference-every10-$i" reference 2000 10; names+=("reference-every10-$i")
  done
  echo
  table "${names[@]}"
  echo
  "$PYTHON" - "$OUT" <<'EOF' | tee "$OUT/final.txt"
import json, sys, collections
out = sys.argv[1]
rows = json.load(open(out + "/final.json"))
groups = collections.OrderedDict()
for r in rows:
    groups.setdefault(r["name"].rsplit("-", 1)[0], []).append(r)
unmet = []
for g, rs in groups.items():
    healthy = "healthy" in g
    verdicts = collections.Counter(r.get("verdict") for r in rs)
    syncs = collections.Counter(r.get("sync_check") for r in rs)
    print("%-22s verdicts %s; sync_step %s" % (g, dict(verdicts), dict(syncs)))
    for r in rs:
        d = json.load(open("%s/runs/%s.json" % (out, r["name"]))) if r.get("verdict") != "error" else {"checks": []}
        s = [c for c in d["checks"] if c["id"] == "sync_step"]
        line = s[0]["message"] if s else "(no sync_step check)"
        print("   %s: %s" % (r["name"], line))
        if healthy:
            ok = r.get("verdict") in ("pass", "warn") and r.get("sync_check") == "pass"
        else:
            ok = r.get("verdict") == "fail" and r.get("sync_check") == "fail" and "% per step" in line
        if not ok:
            unmet.append("%s: verdict %s, sync_step %s" % (r["name"], r.get("verdict"), r.get("sync_check")))
    warned = collections.Counter(w for r in rs for w in r.get("warned", []))
    if warned:
        print("   warnings: %s" % dict(warned))
retried = [r["name"] for r in rows if r.get("verdict") != "error"
           and "second run" in json.dumps(json.load(open("%s/runs/%s.json" % (out, r["name"])))["checks"])]
if retried:
    print("runs whose profiled trace was damaged and run again: %s" % ", ".join(retried))
print("expectations not met: %d%s" % (len(unmet), "".join("\n  " + u for u in unmet)))
sys.exit(1 if unmet else 0)
EOF
  fail=${PIPESTATUS[0]}
  return "$fail"
}

case $MODE in
  CALIBRATION) calibration; rc=$? ;;
  FINAL) final; rc=$? ;;
  *) echo "unknown mode $MODE (CALIBRATION or FINAL)"; exit 2 ;;
esac
echo "gpu-verdicts $MODE: $(( $(date +%s) - START )) s, exit $rc"
tar -C "$OUT" -czf "$OUT/verdicts.tar.gz" runs && rm -rf "$R"
exit "$rc"
