"""Medians of the timing lines of a build with timing-9a0415c.diff applied (run7-prof.txt):
ms from the start of read_with to the pool being ready, the cutting thread's start and end, the
end of the parallel read, its return, the trace finished, and dropped; then wall ms."""
import collections, re, statistics, sys

d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if ' new ' not in line:
        continue
    g = lambda k: float(re.search(k + r' ([\d.]+)', line).group(1))
    wall = int(re.search(r'wall_ms (\d+)', line).group(1)) / 1000
    d[line.split()[0]].append((g('pool: ready'), g('cutter: begin'), g('cutter: begin [\\d.]+ end'), g('main: end'),
                               g('parallel returned'), g('lib: finished'), g('read: dropped'), wall))
for f, rows in d.items():
    cols = list(zip(*rows))
    print(f, "n=%d pool %.1f cutter begin %.1f end %.1f; main end %.1f returned %.1f finished %.1f dropped %.1f; wall %.1f"
          % ((len(rows),) + tuple(statistics.median(c) for c in cols)))
