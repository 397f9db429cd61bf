#!/usr/bin/env bash
# Does dropping parsed pages (madvise DONTNEED every 4 MiB) cost the 2-CPU runs their extra CPU?
# read-new: every 4 MiB; read-exp: every 32 MiB, or never with LG_NO_RELEASE=1. Alternated.
set -u
K=$PWD/.device-carry/rb7
mkdir -p /tmp/lgt; a=/tmp/lgt/t300.json; m=/tmp/lgt/mixed300.json
[ -s $a ] || python3 bench/gen_trace.py $K/shared/traces/h200/healthy_refresh.json.gz $a --mb 300 >/dev/null
[ -s $m ] || python3 bench/gen_mixed.py $m --mb 300 $(ls $K/shared/traces/public/*/*) >/dev/null
python3 - "$K" "$a" "$m" <<'P'
import os, subprocess, sys, time, statistics as st
K, files = sys.argv[1], sys.argv[2:]
def once(cmd, cpus, env):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    _, s, u = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(s) == 0
    return time.perf_counter() - t, u.ru_utime, u.ru_stime, u.ru_maxrss
base = dict(os.environ)
variants = [("every 4 MiB", "read-new", base), ("every 32 MiB", "read-exp", base),
            ("never", "read-exp", dict(base, LG_NO_RELEASE="1"))]
for f in files:
    open(f, "rb").read()
    for cpus in [{3}, {5, 6}, set(range(16))]:
        res = {v[0]: [] for v in variants}
        for i in range(10):
            order = variants if i % 2 == 0 else variants[::-1]
            for name, exe, env in order:
                res[name].append(once([f"{K}/{exe}", f], cpus, env))
        for name, r in res.items():
            print(f"{os.path.basename(f)} {len(cpus):2} CPUs, release {name:13}: wall {st.median(x[0] for x in r):.3f} s, "
                  f"user {st.median(x[1] for x in r):.3f}, sys {st.median(x[2] for x in r):.3f}, peak RSS {max(x[3] for x in r)//1024} MiB")
P
