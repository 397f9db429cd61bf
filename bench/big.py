#!/usr/bin/env python3
"""Traces larger than memory, and a gzip bomb of valid events: what `launchguard analyze` does
with each under a memory budget (issue 35). Standard library only.

Makes (once, into --dir):
- bomb.json.gz: one gzip member of small valid kernel events repeated until --bomb-gb of JSON
  text (3.2 GB: ~19 MB on disk, ~29 million events), the shape of the issue's bomb.
- t<N>.json: the real H200 trace repeated to --big-gb of plain text (bench/gen_trace.py: each copy
  shifted in time and ids, Kineto's own formatting). Not gzip: plain files are mapped, and this is
  the case of a serving trace too large for memory.
Then runs each (pinned to --cores cores), one run each: exit status, the first line of standard
error, wall and CPU seconds, GB/s of text, peak resident set, and bytes of peak per event read.

    bench/big.py --lg target/release/launchguard --dir /work/lgt --big-gb 20 --budget-mib 4096
    bench/big.py --lg ... --dir ... --big-gb 0          # the bomb only
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ~126 bytes: about the size of the events of the bomb (3.2 GB of text, 28.6 M events).
EVENT = (
    '{{"ph":"X","cat":"kernel","name":"k{k}","pid":0,"tid":7,"ts":{ts}.{frac:03d},'
    '"dur":1.5,"args":{{"stream":7,"correlation":{corr}}}}}'
)


def make_bomb(path, gb):
    """One gzip member: a block of 200 valid kernel events repeated, one event of each copy
    different, so that it inflates ~77x (under the reader's 200x bomb guard, which a block
    repeated exactly trips) and has to be read event by event. Returns the events written."""
    n = 200
    ev = lambda k, r: EVENT.format(k=k % 7, ts=5118046481399 + k * 3, frac=(k * 37 + r) % 1000, corr=k + r)
    rest = "," + ",".join(ev(k, 0) for k in range(1, n))
    written, copies = 0, 0
    with open(path + ".tmp", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as z:
        z.write(b'{"traceEvents":[')
        while written < gb * 1e9:
            text = ("," if copies else "") + ev(0, copies) + rest
            z.write(text.encode())
            written += len(text)
            copies += 1
        z.write(b"]}")
    os.replace(path + ".tmp", path)
    return copies * n


def make_big(path, gb, shared):
    src = os.path.join(shared, "traces/h200/healthy_refresh.json.gz")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_trace.py"), src, path + ".tmp",
                    "--mb", str(int(gb * 1000))], check=True, stdout=subprocess.DEVNULL)
    os.replace(path + ".tmp", path)


def measure(cmd, cores, out_path):
    """Exit status, first line of standard error, wall and CPU seconds, peak RSS (bytes) of one
    run, its standard output in `out_path`; rusage through wait4."""
    cpus = set(sorted(os.sched_getaffinity(0))[:cores]) if cores else None
    start = time.perf_counter()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE,
                                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    first = next((l for l in err.decode(errors="replace").splitlines() if l.strip()), "")
    return code, first, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def events_read(out_path):
    """Events the analysis read, from its JSON document; None when it stopped."""
    try:
        with open(out_path, "rb") as f:
            return json.load(f)["source"]["events"]
    except (ValueError, KeyError, TypeError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lg", required=True, help="the launchguard binary")
    ap.add_argument("--dir", required=True, help="where the inputs are made (tens of GB free)")
    ap.add_argument("--shared", default=os.path.join(HERE, "../../shared"))
    ap.add_argument("--bomb-gb", type=float, default=3.2)
    ap.add_argument("--big-gb", type=float, default=20)
    ap.add_argument("--budget-mib", type=int, default=4096, help="--max-memory-mib for the big trace")
    ap.add_argument("--cores", type=int, default=2, help="0: all")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rows = []
    cases = []
    if a.bomb_gb > 0:
        bomb = os.path.join(a.dir, f"bomb{a.bomb_gb:g}.json.gz")
        if not os.path.exists(bomb):
            make_bomb(bomb, a.bomb_gb)
        cases.append(("bomb, default settings", bomb, [], a.bomb_gb * 1e9))
    if a.big_gb > 0:
        big = os.path.join(a.dir, f"t{a.big_gb:g}g.json")
        if not os.path.exists(big):
            make_big(big, a.big_gb, a.shared)
        size = os.path.getsize(big)
        cases.append(("plain, default settings", big, [], size))
        cases.append((f"plain, --max-memory-mib {a.budget_mib}", big, ["--max-memory-mib", str(a.budget_mib)], size))
    print(f"| input | on disk | case | exit | wall s | CPU s | GB/s of text | peak RSS MiB | bytes of peak per event | said |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for label, path, extra, text in cases:
        cmd = [a.lg, "analyze", path, "--format", "json", *extra]
        out = os.path.join(a.dir, "big-out.json")
        code, first, wall, cpu, rss = measure(cmd, a.cores, out)
        events = events_read(out) if code in (0, 1) else None
        per = f"{rss / events:.0f}" if events else "–"
        said = first.replace("|", "\\|")[:160] or "(verdict on standard output)"
        print(f"| {os.path.basename(path)} | {os.path.getsize(path) / 1e9:.2f} GB | {label} | {code} | "
              f"{wall:.2f} | {cpu:.2f} | {text / 1e9 / wall:.2f} | {rss / 2**20:.0f} | {per} | {said} |", flush=True)


if __name__ == "__main__":
    main()
