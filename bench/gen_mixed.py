#!/usr/bin/env python3
"""Makes a large trace of varied events: the events of several real traces (by default every
trace under ../shared/traces/public, CUDA and ROCm, written by different profilers with different
key orders, spacing, names and args) interleaved a block at a time, repeated until the file has
the size asked for.

Unlike bench/gen_trace.py (one trace repeated: the same names and keys over and over, which
favours a reader's caches), a reader here meets another source's formatting every few hundred
events. Each event's text is kept byte for byte except its "ts", which each repetition shifts so
that the repetitions follow each other.

    bench/gen_mixed.py /tmp/lg-bench/mixed300.json --mb 300
    bench/gen_mixed.py OUT --mb 300 --block 100 SOURCE.json.gz ...
"""

import argparse
import glob
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_trace import from_ns, read, to_ns  # noqa: E402

TS = re.compile(rb'("ts"\s*:\s*)(-?\d+(?:\.\d+)?)(?=[\s,}])')


def events(path):
    """The text of each element of the trace's events array, byte for byte."""
    doc = read(path)
    text = doc.decode("utf-8")
    start = text.index("[", text.index('"traceEvents"')) + 1
    decoder = json.JSONDecoder()
    out = []
    i = start
    ws = " \t\r\n,"
    while True:
        while text[i] in ws:
            i += 1
        if text[i] == "]":
            return out
        _, end = decoder.raw_decode(text, i)
        out.append(text[i:end].encode("utf-8"))
        i = end


def shift(event, dt_ns):
    def move(m):
        value = m.group(2)
        decimals = len(value.partition(b".")[2])
        return m.group(1) + from_ns(to_ns(value) + dt_ns, decimals)

    return TS.sub(move, event) if dt_ns else event


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("sources", nargs="*", help="traces (default: ../shared/traces/public/*/*.json.gz)")
    ap.add_argument("--mb", type=float, required=True, help="about this many MB (10^6 bytes)")
    ap.add_argument("--block", type=int, default=100, help="events taken from one source in a row")
    args = ap.parse_intermixed_args()  # `OUT --mb N SOURCES...`, as bench/run.sh calls it
    here = os.path.dirname(os.path.abspath(__file__))
    sources = args.sources or sorted(glob.glob(os.path.join(here, "../../shared/traces/public/*/*.json.gz")))
    if not sources:
        sys.exit("gen_mixed: no source traces (../shared/traces/public)")
    lists = [events(s) for s in sources]
    # Interleaved: a block of each source in turn, until every source is used up.
    order = []
    at = [0] * len(lists)
    while any(at[k] < len(lists[k]) for k in range(len(lists))):
        for k, evs in enumerate(lists):
            order.extend(evs[at[k] : at[k] + args.block])
            at[k] += args.block
    size = sum(len(e) + 2 for e in order)
    # Each repetition starts after the last one ended (1 s apart; every source's times fit).
    times = [to_ns(m.group(2)) for e in order for m in TS.finditer(e)]
    period = (max(times) - min(times)) + 10**9 if times else 0
    period = -(-period // 1000) * 1000
    target = args.mb * 1e6
    opener = gzip.open if args.out.endswith(".gz") else open
    written = 0
    with opener(args.out, "wb") as out:
        out.write(b'{\n  "schemaVersion": 1,\n  "traceEvents": [\n')
        rep = 0
        first = True
        while written < target:
            for e in order:
                if not first:
                    out.write(b",\n")
                first = False
                e = shift(e, rep * period)
                out.write(e)
                written += len(e) + 2
                if written >= target:
                    break
            rep += 1
        out.write(b'\n  ],\n  "traceName": "mixed"\n}\n')
    print(f"{args.out}: {len(sources)} sources, {len(order)} events a pass ({size / 1e6:.0f} MB), "
          f"{rep} pass(es)", file=sys.stderr)


if __name__ == "__main__":
    main()
