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
# Its members nest (pg_config is a list of objects): the rank and world size are the first of
# their names after the opening, within a few KB.
INFO = re.compile(rb'"distributedInfo": \{.{0,4096}?"world_size": \d+', re.S)


def set_rank(path, rank, world):
    """Rewrites the distributedInfo of the file: Kineto writes it among the keys before the events
    (the first 64 KB), older files after them (the last 64 KB)."""

    def rewritten(m):
        info = re.sub(rb'"rank": \d+', b'"rank": %d' % rank, m.group(0), count=1)
        return re.sub(rb'"world_size": \d+', b'"world_size": %d' % world, info, count=1)

    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(65536)
    m = INFO.search(head)
    if m:
        # The text may change length: the file is written anew behind the rewritten head.
        with open(path, "rb") as f, open(path + ".tmp", "wb") as out:
            f.seek(len(head))
            out.write(head[: m.start()] + rewritten(m) + head[m.end():])
            shutil.copyfileobj(f, out, 1 << 24)
        os.replace(path + ".tmp", path)
        return
    with open(path, "r+b") as f:
        start = max(0, size - 65536)
        f.seek(start)
        tail = f.read()
        m = INFO.search(tail)
        if not m:
            sys.exit(f"{path}: no distributedInfo in its first or last 64 KB")
        tail = tail[: m.start()] + rewritten(m) + tail[m.end():]
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
