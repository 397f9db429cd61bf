#!/usr/bin/env python3
"""The instruction gate: `launchguard analyze` of fixed inputs counted in instructions (callgrind),
against the record in bench/instructions.json. Counts, unlike timings, do not move with the load
of a shared machine, so a 3% step is a change in the code, not noise.

    scripts/instruction-gate.py [check]   # fails (exit 1) when an input costs > 3% over the record
    scripts/instruction-gate.py update    # measures and rewrites the record (commit it with the change)
    scripts/instruction-gate.py planted   # proves check fails on bench/gate/planted-slowdown.patch

The binary: $LG, else ${CARGO_TARGET_DIR:-target}/release/launchguard (cargo build --release -p
launchguard). The inputs are made at each run from the shared traces (${SHARED:-../shared}) by the
bench/ generators into ${CARGO_TARGET_DIR:-target}/gate-inputs; their sha256 is recorded, so a
generator that stops giving the same bytes is said, not measured against the wrong record.
Exit status: 0 pass, 1 the gate failed, 2 the gate could not measure.
"""

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(REPO, "bench/instructions.json")
PATCH = os.path.join(REPO, "bench/gate/planted-slowdown.patch")
LIMIT = 3.0  # % over the record that fails the gate
PLANTED = (4.0, 7.0)  # the % the planted slowdown must show on every input
BENCH = os.path.join(REPO, "bench")


class GateError(Exception):
    """The gate could not measure (exit 2), as opposed to a measured regression (exit 1)."""


def target_dir():
    return os.path.abspath(os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target"))


def shared():
    path = os.path.abspath(os.environ.get("SHARED") or os.path.join(REPO, "..", "shared"))
    if not os.path.isdir(os.path.join(path, "traces", "public")):
        raise GateError(f"no shared traces at {path} (set SHARED=): the gate's inputs are made from them")
    return path


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    if r.returncode != 0:
        raise GateError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr.decode(errors='replace')[-2000:]}")


def make_inputs(out):
    """Makes the inputs afresh in `out`; returns [(name, [files analyzed together])]. Every
    generator is deterministic (no clock, no random, gzip -n without name and time)."""
    sh = shared()
    py = sys.executable
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    src = os.path.join(sh, "traces/h200/healthy_refresh.json.gz")
    # One real H200 trace repeated: the common case, one profiler's formatting throughout.
    run([py, f"{BENCH}/gen_trace.py", src, "plain16.json", "--mb", "16"], cwd=out)
    # The same bytes gzipped: the inflate path.
    with open(os.path.join(out, "plain16.json"), "rb") as i, open(os.path.join(out, "gzip16.json.gz"), "wb") as o:
        if subprocess.run(["gzip", "-6", "-n", "-c"], stdin=i, stdout=o).returncode != 0:
            raise GateError("gzip -6 -n failed")
    # The two ranks of a real TP=2 run, each repeated, analyzed together: per-rank work and matching.
    # (bench/gen_ranks.py would make more ranks, but it looks for distributedInfo in the footer
    # and Kineto writes it in the header.)
    for r in (0, 1):
        run([py, f"{BENCH}/gen_trace.py", os.path.join(sh, f"traces/h200x2/tp2_rank{r}.json.gz"),
             f"rank{r}.json", "--mb", "8"], cwd=out)
    # Every public trace interleaved: other profilers' key orders, names and args.
    public = sorted(glob.glob(os.path.join(sh, "traces/public/*/*.json.gz")))
    run([py, f"{BENCH}/gen_mixed.py", "mixed16.json", "--mb", "16", *public], cwd=out)
    return [
        ("plain16.json", ["plain16.json"]),
        ("gzip16.json.gz", ["gzip16.json.gz"]),
        ("ranks2x8", ["rank0.json", "rank1.json"]),
        ("mixed16.json", ["mixed16.json"]),
    ]


def sha256(work, files):
    """sha256 of the file, or of the sha256sum lines of the files for an input of several."""
    sums = []
    for f in files:
        h = hashlib.sha256()
        with open(os.path.join(work, f), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        sums.append(h.hexdigest())
    if len(files) == 1:
        return sums[0]
    return hashlib.sha256("".join(f"{s}  {f}\n" for s, f in zip(sums, files)).encode()).hexdigest()


def instructions(lg, work, files):
    """Instructions executed by `analyze --format json FILES`, all threads together. The run is
    pinned so that it is the same on every machine: one rayon thread (no work stealing, no idle
    spinning), a fixed small environment, the inputs' folder as cwd, relative paths, and the
    binary called as `./launchguard` (argv[0] and the paths are the only text that would vary).
    The gzip reader's inflating thread still runs beside the parser, and how their allocations
    interleave decided how many bytes glibc's realloc copied: 1 run in 12 of gzip16.json.gz came
    out +0.24%. A fixed mmap threshold (glibc's adapts to earlier frees) and valgrind's fair
    scheduler (threads take turns in order) leave 0.04% over 20 runs."""
    exe = os.path.join(work, "launchguard")
    if os.path.lexists(exe):
        os.remove(exe)
    os.symlink(os.path.abspath(lg), exe)
    out = os.path.join(work, "callgrind.out")
    if os.path.exists(out):
        os.remove(out)
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "RAYON_NUM_THREADS": "1",
           "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"}
    cmd = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--callgrind-out-file=callgrind.out",
           "./launchguard", "analyze", "--format", "json", *files]
    r = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # analyze exits 1 on a FAIL verdict: a measure all the same; 2 and more are errors.
    if r.returncode not in (0, 1) or not os.path.exists(out):
        raise GateError(f"{' '.join(cmd[4:])}: exit {r.returncode}\n{r.stderr.decode(errors='replace')[-2000:]}")
    with open(out) as f:
        m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if not m:
        raise GateError(f"no totals in {out}")
    return int(m.group(1))


def versions(lg):
    """The compiler that built the binary (its .comment section says) and the valgrind counting."""
    with open(lg, "rb") as f:
        m = re.search(rb"rustc version ([0-9][^\x00]*)", f.read())
    rustc = "rustc " + m.group(1).decode() if m else "unknown"
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    return rustc, valgrind


def measure(lg):
    """{name: {instructions, sha256}} for every input, and the versions they were measured with."""
    if not os.path.isfile(lg):
        raise GateError(f"no binary at {lg} (cargo build --release -p launchguard, or LG=)")
    if shutil.which("valgrind") is None:
        raise GateError("valgrind is not installed (apt-get install valgrind)")
    work = os.path.join(target_dir(), "gate-inputs")
    counts = {}
    for name, files in make_inputs(work):
        counts[name] = {"instructions": instructions(lg, work, files), "sha256": sha256(work, files)}
    return counts, versions(lg)


def load_record():
    try:
        with open(RECORD) as f:
            return json.load(f)
    except FileNotFoundError:
        raise GateError(f"no record at {RECORD}: run scripts/instruction-gate.py update") from None


def compare(counts, vers, record):
    """Prints one line per input; returns {name: % over the record} of the inputs over LIMIT.
    Raises GateError when an input is not the recorded one (its counts would mean nothing)."""
    rel = os.path.relpath(RECORD, REPO)
    if [record.get("rustc"), record.get("valgrind")] != list(vers):
        print(f"instruction gate: warning: the record was measured with {record.get('rustc')}, "
              f"{record.get('valgrind')}; this is {vers[0]}, {vers[1]}: counts depend on the compiler")
    over, stale = {}, False
    for name, now in counts.items():
        was = record["inputs"].get(name)
        if was is None:
            raise GateError(f"{name} is not in {rel}: run scripts/instruction-gate.py update")
        if was["sha256"] != now["sha256"]:
            raise GateError(f"{name}: the input made now (sha256 {now['sha256'][:16]}…) differs from the "
                            f"recorded one ({was['sha256'][:16]}…): a generator in bench/ or a shared trace "
                            f"changed; if that is meant, run scripts/instruction-gate.py update")
        n, r = now["instructions"], was["instructions"]
        pct = 100.0 * (n - r) / r
        line = f"instruction gate: {name}: {n:,} instructions, {pct:+.1f}% "
        if pct > LIMIT:
            over[name] = pct
            print(line + f"over the record {r:,} ({rel}); if the change is meant, run "
                  f"scripts/instruction-gate.py update and commit the record with it")
        else:
            stale |= pct < -LIMIT
            print(line + f"against the record {r:,}: ok")
    if stale:
        print(f"instruction gate: note: an input is more than {LIMIT:g}% below the record; run "
              f"scripts/instruction-gate.py update so that the record does not hide a later regression")
    return over


def binary():
    return os.environ.get("LG") or os.path.join(target_dir(), "release", "launchguard")


def check():
    over = compare(*measure(binary()), load_record())
    print(f"instruction gate: {'FAILED' if over else 'passed'} ({len(over)} input(s) over +{LIMIT:g}%)")
    return 1 if over else 0


def update():
    counts, (rustc, valgrind) = measure(binary())
    record = {
        "about": "scripts/instruction-gate.py: instructions of `analyze --format json` per input "
                 "(callgrind, RAYON_NUM_THREADS=1, fixed mmap threshold, fair scheduling); sha256 of the input "
                 "made by bench/",
        "rustc": rustc,
        "valgrind": valgrind,
        "inputs": counts,
    }
    tmp = RECORD + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, RECORD)
    for name, c in counts.items():
        print(f"instruction gate: {name}: {c['instructions']:,} instructions recorded")
    print(f"instruction gate: wrote {os.path.relpath(RECORD, REPO)} ({rustc}, {valgrind})")
    return 0


def planted():
    """Builds the committed tree with the planted patch and checks that the gate fails on every
    input at a percentage in PLANTED. The copy lives at a fixed path in the target folder, so
    that its build reuses the dependencies and one run's artifacts replace the last's."""
    tree = os.path.join(target_dir(), "gate-planted")
    lg = os.path.join(target_dir(), "release", "launchguard")
    keep = lg + ".gate-kept"
    subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=REPO, capture_output=True)
    shutil.rmtree(tree, ignore_errors=True)
    run(["git", "worktree", "add", "--detach", tree, "HEAD"], cwd=REPO)
    try:
        # --3way falls back on the blobs named in the patch when the lines around it moved.
        if subprocess.run(["git", "apply", PATCH], cwd=tree, capture_output=True).returncode != 0:
            run(["git", "apply", "--3way", PATCH], cwd=tree)
        # The build's binary lands at target/release/launchguard, where the real one is: kept aside.
        if os.path.exists(lg):
            shutil.copy2(lg, keep)
        try:
            print("instruction gate: planted: building the committed tree with the planted slowdown")
            run(["cargo", "build", "--release", "-p", "launchguard"], cwd=tree,
                env=dict(os.environ, CARGO_TARGET_DIR=target_dir()))
            slow = os.path.join(tree, "launchguard-planted")
            shutil.copy2(lg, slow)
        finally:
            if os.path.exists(keep):
                os.replace(keep, lg)
        over = compare(*measure(slow), load_record())
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=REPO, capture_output=True)
    counts = load_record()["inputs"]
    missed = [n for n in counts if not PLANTED[0] <= over.get(n, float("-inf")) <= PLANTED[1]]
    seen = ", ".join(f"{n} {p:+.1f}%" for n, p in over.items())
    if missed:
        print(f"instruction gate: planted: FAILED: the gate did not fail on {', '.join(missed)} with "
              f"{PLANTED[0]:g}..{PLANTED[1]:g}% (saw: {seen or 'nothing over'}); is the record up to date, "
              f"and does {os.path.relpath(PATCH, REPO)} still cost about 5%?")
        return 1
    print(f"instruction gate: planted: passed: the gate failed on every input ({seen})")
    return 0


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "check"
    commands = {"check": check, "update": update, "planted": planted}
    if what not in commands or len(sys.argv) > 2:
        sys.exit(__doc__)
    try:
        return commands[what]()
    except GateError as e:
        print(f"instruction gate: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
