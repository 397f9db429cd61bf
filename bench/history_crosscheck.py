"""Cross-checks launchguard's E-divisive against the reference implementations of the method, on
the same series (written by crates/history/examples/evaluate.rs):

- MongoDB's signal-processing-algorithms (`e_divisive`: the statistic with the segment's end as
  its right end, a permutation test), the implementation of Daly et al., ICPE 2020;
- Apache Otava: `compute_change_points_orig` (Matteson & James with its permutation test) and
  `compute_change_points` (Hunter: E-divisive in windows, a t-test, the merge step).

usage (bench/history-eval.sh runs it; each reference in its own venv: they pin different numpy):
  python history_crosscheck.py mongodb SERIES.json OUT.json   # in a venv with signal-processing-algorithms
  python history_crosscheck.py otava SERIES.json OUT.json     # in a venv with apache-otava
  python3 history_crosscheck.py table SERIES.json MONGODB.json OTAVA.json

Each reference runs on every 5th series (its speed), at the same level (p ≤ 0.01) and 199
permutations where it takes them; `table` prints detection rates, false change points per 100
runs and how often each reference agrees with launchguard on values (the same method) and on
ranks (the default), and the statistic itself compared at every split of a few series.
"""

import json
import sys

EVERY = 5
TOLERANCE = 2
ALPHA = 0.01


def load(path):
    with open(path) as f:
        return json.load(f)


def picked(series):
    return [(i, s) for i, s in enumerate(series) if i % EVERY == 0]


def run_mongodb(series_path, out_path):
    import numpy as np
    from signal_processing_algorithms.energy_statistics import energy_statistics as es

    np.random.seed(1)
    out = {}
    for i, s in picked(load(series_path)["series"]):
        out[i] = sorted(int(c) for c in es.e_divisive(s["values"], pvalue=ALPHA, permutations=199))
    with open(out_path, "w") as f:
        json.dump(out, f)


def run_otava(series_path, out_path):
    import numpy as np
    from otava import analysis
    from otava.change_point_divisive.calculator import PairDistanceCalculator

    doc = load(series_path)
    out = {"orig": {}, "hunter": {}, "q": {}}
    for i, s in picked(doc["series"]):
        v = s["values"]
        orig, _ = analysis.compute_change_points_orig(v, max_pvalue=ALPHA, seed=1)
        out["orig"][i] = sorted(int(c.index) for c in orig)
        hunter, _ = analysis.compute_change_points(v, window_len=50, max_pvalue=ALPHA, min_magnitude=0.0)
        out["hunter"][i] = sorted(int(c.index) for c in hunter)
    # The statistic at every split, the segment's end as its right end (Q's last column).
    for i, s in enumerate(doc["series"]):
        if "q" not in s:
            continue
        v = np.array(s["values"], dtype=float)
        calc = PairDistanceCalculator(v)
        q = calc._get_Q_vals(0, len(v))
        out["q"][i] = [[t, float(q[t - 1][len(v) - 2])] for t, _ in s["q"]]
    with open(out_path, "w") as f:
        json.dump(out, f)


def near(points, truth):
    return any(abs(p - truth) <= TOLERANCE for p in points)


def table(series_path, mongodb_path, otava_path):
    doc = load(series_path)
    series = doc["series"]
    mongodb = {int(k): v for k, v in load(mongodb_path).items()}
    otava = load(otava_path)
    orig = {int(k): v for k, v in otava["orig"].items()}
    hunter = {int(k): v for k, v in otava["hunter"].items()}
    methods = [
        ("launchguard, ranks (default)", lambda i: series[i]["ours"]),
        ("launchguard, values", lambda i: series[i]["ours_values"]),
        ("MongoDB e_divisive", lambda i: mongodb[i]),
        ("Otava, Matteson–James", lambda i: orig[i]),
        ("Otava, Hunter", lambda i: hunter[i]),
    ]
    print("## Cross-check against the reference implementations\n")
    print(f"Every {EVERY}th generated series ({len(mongodb)} in all), p ≤ {ALPHA}. Cell: detected (a change point "
          f"within ±{TOLERANCE} runs of the step) / false change points per 100 runs.\n")
    print("| metric | step | " + " | ".join(m[0] for m in methods) + " |")
    print("|---|---:|" + "---:|" * len(methods))
    cells = {}
    for i in mongodb:
        s = series[i]
        cells.setdefault((s["preset"], s["metric"], s["step"]), []).append(i)
    for (preset, metric, step), ids in sorted(cells.items()):
        cols = []
        for _, get in methods:
            det = sum(1 for i in ids if step > 0 and near(get(i), series[i]["truth"]))
            false = sum(sum(1 for p in get(i) if not (step > 0 and abs(p - series[i]["truth"]) <= TOLERANCE)) for i in ids)
            per100 = 100.0 * false / (len(ids) * len(series[ids[0]]["values"]))
            cols.append(("–" if step == 0 else f"{100 * det / len(ids):.0f}%") + f" / {per100:.2f}")
        label = "none" if step == 0 else f"{100 * step:.0f}%"
        print(f"| {preset} `{metric}` | {label} | " + " | ".join(cols) + " |")

    print("\n### Agreement, series by series\n")
    print("The share of series on which two methods agree on whether the step was found (and, for null series, "
          "on whether any change point was), and on which their change points are the same within ±1 run.\n")
    print("| launchguard | reference | same finding | same change points (±1) |\n|---|---|---:|---:|")

    def same_points(a, b):
        return len(a) == len(b) and all(abs(x - y) <= 1 for x, y in zip(sorted(a), sorted(b)))

    def finding(points, s):
        return near(points, s["truth"]) if s["step"] > 0 else bool(points)

    for ours_name, ours in methods[:2]:
        for ref_name, ref in methods[2:]:
            ids = list(mongodb)
            same = sum(1 for i in ids if finding(ours(i), series[i]) == finding(ref(i), series[i]))
            exact = sum(1 for i in ids if same_points(ours(i), ref(i)))
            print(f"| {ours_name} | {ref_name} | {100 * same / len(ids):.0f}% | {100 * exact / len(ids):.0f}% |")

    print("\n### The statistic\n")
    worst = 0.0
    n = 0
    for k, qs in otava["q"].items():
        mine = dict((t, q) for t, q in series[int(k)]["q"])
        for t, q in qs:
            worst = max(worst, abs(mine[t] - q) / max(abs(q), 1e-12))
            n += 1
    print(f"Q at every split (the segment's end as its right end) of {len(otava['q'])} series, {n} values: "
          f"launchguard (on values) against Otava's PairDistanceCalculator, largest relative difference {worst:.1e}.")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "mongodb":
        run_mongodb(sys.argv[2], sys.argv[3])
    elif what == "otava":
        run_otava(sys.argv[2], sys.argv[3])
    elif what == "table":
        table(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(f"unknown step {what}")
