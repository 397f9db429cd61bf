#!/usr/bin/env python3
"""Makes the traces of a large distributed run from the two real TP=2 H200 ranks: N rank traces
of about MB each, rank r made from real rank r % 2 repeated (bench/gen_trace.py) and its
distributedInfo set to rank r of N. The ranks' collectives match, as in one run.

    bench/gen_ranks.py ../shared/traces/h200x2 /tmp/lg-bench/ranks16 --ranks 16 --mb 250
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INFO = re.compile(rb'("distributedInfo": \{[^{}]*\})')


def set_rank(path, rank, world):
    """Rewrites the distributedInfo of the file's footer (the last 64 KB) in place."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        start = max(0, size - 65536)
        f.seek(start)
        tail = f.read()
        m = INFO.search(tail)
        if not m:
            sys.exit(f"{path}: no distributedInfo in its footer")
        info = m.group(1)
        info = re.sub(rb'"rank": \d+', b'"rank": %d' % rank, info)
        info = re.sub(rb'"world_size": \d+', b'"world_size": %d' % world, info)
        tail = tail[: m.start()] + info + tail[m.end():]
        f.seek(start)
        f.write(tail)
        f.truncate()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pair", help="folder with tp2_rank0.json.gz and tp2_rank1.json.gz")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--mb", type=int, default=250)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    made = []
    for src in (0, 1):
        path = os.path.join(a.out, f".base{src}.json")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "gen_trace.py"),
                            os.path.join(a.pair, f"tp2_rank{src}.json.gz"), path, "--mb", str(a.mb)], check=True)
        made.append(path)
    for r in range(a.ranks):
        dst = os.path.join(a.out, f"rank{r}.json")
        shutil.copyfile(made[r % 2], dst)
        set_rank(dst, r, a.ranks)
    print(f"{a.ranks} ranks of {os.path.getsize(made[0]) / 1e6:.0f} MB in {a.out}")


if __name__ == "__main__":
    main()
