#!/usr/bin/env python3
"""Seeds for the trace targets from real traces: writes into OUT pieces of each trace's text
(decompressed), small enough for a fuzzer: the first bytes (a truncated trace), and the header
with the first events, closed again into a whole document.

    fuzz/seeds/trace_pieces.py OUT MODE TRACE...

MODE `text` writes the pieces as they are (trace_fast); `gzip` writes them as trace_gzip reads
them: an odd first byte then the text (cut into gzip members by the target), or an even byte
then the piece gzipped (read as a gzip file).
"""
import gzip
import os
import sys

out, mode, traces = sys.argv[1], sys.argv[2], sys.argv[3:]


def text(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def pieces(data):
    for n in (1024, 4096, 16384):
        yield f"head{n}", data[:n]
    # Kineto separates events with "},\n  {": the header and the first k events, closed.
    sep = b"},\n  {"
    at, cuts = 0, []
    while len(cuts) < 40:
        at = data.find(sep, at + 1)
        if at < 0:
            break
        cuts.append(at)
    for k in (3, 12, 40):
        if len(cuts) >= k:
            yield f"events{k}", data[: cuts[k - 1] + 1] + b"\n]}\n"


for path in traces:
    name = os.path.basename(path).split(".")[0]
    for label, piece in pieces(text(path)):
        base = os.path.join(out, f"{name}-{label}")
        if mode == "text":
            open(base, "wb").write(piece)
        else:
            # Members of 32 bytes read in blocks of 16; a gzip file read in blocks of 256.
            open(base + "-members", "wb").write(bytes([0x2B]) + piece)
            open(base + "-gzip", "wb").write(bytes([0x10]) + gzip.compress(piece))
