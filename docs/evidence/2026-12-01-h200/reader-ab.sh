#!/usr/bin/env bash
# The reader before and after b0ca0b6 run alternately, one run each in turn, on one CPU; then
# which pairs of CPUs slow each other down (CPU seconds of the same work on 1 and on 2 CPUs).
set -u
K=$PWD/.device-carry/rb7
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $m ] || python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
python3 - "$K" "$a" "$m" <<'P'
import os, subprocess, sys, time, statistics as st
K, files = sys.argv[1], sys.argv[2:]
def once(cmd, cpus):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    _, s, u = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(s) == 0
    return time.perf_counter() - t, u.ru_utime + u.ru_stime
for f in files:
    open(f, "rb").read()
    for cpus in [{3}, {5, 6}]:
        res = {"read-base": [], "read-new": []}
        for i in range(16):
            for w in (["read-base", "read-new"] if i % 2 == 0 else ["read-new", "read-base"]):
                res[w].append(once([f"{K}/{w}", f], cpus))
        for w, r in res.items():
            print(f"{os.path.basename(f)} cpus {sorted(cpus)} {w}: median wall {st.median(x[0] for x in r):.3f} s, min {min(x[0] for x in r):.3f}, median CPU {st.median(x[1] for x in r):.3f} s")
f = files[0]
print("pairs: CPU seconds of read-base on t300.json (median of 5), against one CPU")
for cpus in [{0}, {0, 1}, {0, 2}, {0, 8}, {0, 15}, {7, 8}, {14, 15}]:
    r = [once([f"{K}/read-base", f], cpus) for _ in range(5)]
    print(f"  cpus {sorted(cpus)}: wall {st.median(x[0] for x in r):.3f} s, CPU {st.median(x[1] for x in r):.3f} s")
P
