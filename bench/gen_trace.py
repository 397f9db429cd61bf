#!/usr/bin/env python3
"""Makes a large Kineto trace from a real one: the events repeated N times, each copy shifted in
time and in ids so that the copies follow each other, in Kineto's own formatting.

The source's text is kept byte for byte except the values that move: every "ts", and the ids that
tie events together ("correlation" and "External id" in args, "id" of flow events). Header and
footer (deviceProperties, baseTimeNanoseconds, distributedInfo, ...) appear once, as in the source.

    bench/gen_trace.py ../shared/traces/h200/healthy_refresh.json.gz /tmp/lg-bench/t300.json --mb 300
    bench/gen_trace.py SRC OUT --copies 70 [--gzip]
"""

import argparse
import gzip
import re
import sys

# "ts" values and the ids, where they stand in Kineto's text: `"ts": 5118046478616.443`.
SLOT = re.compile(rb'("(?:ts|correlation|External id|id)": )(-?\d+(?:\.\d+)?)')
GAP_NS = 1_000_000  # 1 ms between the end of one copy and the start of the next.


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def to_ns(text):
    """Exact integer ns of Kineto's decimal µs text."""
    neg = text.startswith(b"-")
    whole, _, frac = text.lstrip(b"-").partition(b".")
    ns = int(whole) * 1000 + int((frac + b"000")[:3])
    return -ns if neg else ns


def from_ns(ns, decimals):
    """µs text with the source's number of decimals (Kineto writes 3)."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if decimals == 0:
        return f"{sign}{ns // 1000}".encode()
    frac = f"{ns % 1000:03d}"[:decimals].ljust(decimals, "0")
    return f"{sign}{ns // 1000}.{frac}".encode()


def split(doc):
    """Header (through `"traceEvents": [`), events text, footer (from the array's `]`)."""
    start = doc.index(b'"traceEvents"')
    start = doc.index(b"[", start) + 1
    end = doc.rindex(b"]")  # Kineto puts the footer keys (traceName) after the array.
    return doc[:start], doc[start:end], doc[end:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("out")
    size = ap.add_mutually_exclusive_group(required=True)
    size.add_argument("--copies", type=int, help="how many times the events are repeated")
    size.add_argument("--mb", type=float, help="repeat until the file is about this many MB (10^6 bytes)")
    ap.add_argument("--gzip", action="store_true", help="write gzip (level 6) instead of plain JSON")
    args = ap.parse_args()

    head, body, foot = split(read(args.source))
    body = body.rstrip()
    pieces = SLOT.split(body)
    # pieces: text, key, value, text, key, value, ..., text
    texts = pieces[0::3]
    keys = pieces[1::3]
    values = pieces[2::3]
    ts_ns = [to_ns(v) for k, v in zip(keys, values) if k.startswith(b'"ts"')]
    ids = [int(v) for k, v in zip(keys, values) if not k.startswith(b'"ts"') and b"." not in v]
    # Kineto writes `"ts": T, "dur": D` together: the last end is the largest T + D.
    ends = [to_ns(t) + to_ns(d) for t, d in re.findall(rb'"ts": (-?\d+(?:\.\d+)?), "dur": (-?\d+(?:\.\d+)?)', body)]
    period_ns = max(ends + ts_ns) - min(ts_ns) + GAP_NS
    period_ns = -(-period_ns // 1000) * 1000  # whole µs, so integer-µs sources stay exact
    id_step = max(ids, default=0) + 1
    decimals = [len(v.partition(b".")[2]) for v in values]
    # Fractional ids (not written by Kineto) are left as they are.
    parsed = [to_ns(v) if k.startswith(b'"ts"') else int(v) if b"." not in v else None for k, v in zip(keys, values)]
    is_ts = [k.startswith(b'"ts"') for k in keys]

    copies = args.copies or max(1, round(args.mb * 1e6 / (len(body) + 2)))
    opener = gzip.open if args.gzip else open
    with opener(args.out, "wb") as out:
        out.write(head)
        for c in range(copies):
            if c:
                out.write(b",")
            parts = [texts[0]]
            dt, di = c * period_ns, c * id_step
            for i, key in enumerate(keys):
                if parsed[i] is None:
                    value = values[i]
                elif is_ts[i]:
                    value = from_ns(parsed[i] + dt, decimals[i])
                else:
                    value = str(parsed[i] + di).encode()
                parts += (key, value, texts[i + 1])
            out.write(b"".join(parts))
        out.write(b"\n  " + foot)
    print(f"{args.out}: {copies} copies of {args.source}", file=sys.stderr)


if __name__ == "__main__":
    main()
