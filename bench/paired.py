#!/usr/bin/env python3
"""Summarizes bench/paired.sh output: for each file and CPU set, the median wall time of inflate
alone and of each reader, each reader's ratio to the inflate alone of the same round (median and
range), and the rounds in which `after` beat `before`.

    bench/paired.py out.txt [more.txt ...]
"""
import collections
import re
import statistics
import sys


def main(paths):
    runs = collections.defaultdict(lambda: collections.defaultdict(dict))
    for path in paths:
        for line in open(path):
            m = re.match(r'(\S+) cpus=(\S+) r(\d+) (inflate|before|after) (\d+)$', line.strip())
            if m:
                f, cpus, r, name, us = m.groups()
                runs[(f, cpus)][name][int(r)] = int(us) / 1000
    for (f, cpus), by in runs.items():
        rounds = sorted(set(by['inflate']) & set(by['before']) & set(by['after']))
        if not rounds:
            continue
        out = [f"{f} cpus={cpus} rounds={len(rounds)}"]
        for name in ('inflate', 'before', 'after'):
            out.append(f"{name} {statistics.median(by[name][r] for r in rounds):.1f} ms")
        for name in ('before', 'after'):
            ratios = [by[name][r] / by['inflate'][r] for r in rounds]
            out.append(f"{name}/inflate {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
        won = sum(by['after'][r] < by['before'][r] for r in rounds)
        out.append(f"after faster in {won}/{len(rounds)}")
        print(' | '.join(out))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
