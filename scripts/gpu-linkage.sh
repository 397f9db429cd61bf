#!/usr/bin/env bash
# `linkage` against the real loader of another machine (the GPU host: an Intel Xeon, another
# glibc), for docs/evidence/: what glibc itself says (ld.so --list-diagnostics), what launchguard
# assumed, and every DT_NEEDED of PyTorch's libraries as `ldd` resolves it against launchguard's
# answer. Then the linkage crate's own tests, carried as built binaries.
#
#   BIN=.device-carry/launchguard TESTS=".device-carry/linkage-tests/*" OUT=dir scripts/gpu-linkage.sh
#
# Prints a summary; writes $OUT/linkage.txt (everything) and $OUT/linkage.json (launchguard's).
set -u
BIN=${BIN:-$PWD/.device-carry/launchguard}
OUT=${OUT:-/tmp/lg-linkage}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
log=$OUT/linkage.txt
{
  echo "# $(date -u +%FT%TZ) on $(hostname): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "# $(ldd --version | head -1)"
  ld=$(ls /lib64/ld-linux-x86-64.so.2 2>/dev/null || echo /lib/ld-linux-aarch64.so.1)
  echo "\$ $ld --list-diagnostics | grep -E 'dl_platform|dl_hwcap|glibc-hwcaps|version.'"
  "$ld" --list-diagnostics 2>&1 | grep -E '^(dl_platform|dl_hwcap|dl_dst_lib|version\.|path\.)|glibc-hwcaps|subdirs' | head -40
  echo
  echo "\$ launchguard linkage --python $PYTHON"
  "$BIN" linkage --python "$PYTHON"
  echo "# exit code $?"
  "$BIN" linkage --python "$PYTHON" --format json > "$OUT/linkage.json"
} > "$log" 2>&1

# Every dependency launchguard resolved, against ldd on the library that needs it.
"$PYTHON" - "$OUT/linkage.json" >> "$log" 2>&1 <<'PY'
import json, subprocess, sys
r = json.load(open(sys.argv[1]))
by_needer = {}
for d in r["dependencies"]:
    for n in d["needed_by"]:
        by_needer.setdefault(n, {})[d["name"]] = d["path"]
same = differ = 0
for needer, deps in sorted(by_needer.items()):
    out = subprocess.run(["ldd", needer], capture_output=True, text=True).stdout
    ldd = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            ldd[parts[0]] = None if parts[2] == "not" else parts[2]
    for name, path in deps.items():
        if name not in ldd:
            continue
        want = ldd[name]
        import os
        ok = want == path or (want and path and os.path.realpath(want) == os.path.realpath(path))
        same += ok
        differ += not ok
        if not ok:
            print(f"DIFFERS {needer}: {name}: ldd {want}, launchguard {path}")
print(f"dependencies compared with ldd: {same} the same, {differ} different")
PY

# The crate's tests, built elsewhere: they find their fixtures under the path they were built in.
if [ -n "${TESTS:-}" ]; then
  built=${BUILT_AT:-/work/main}
  [ -e "$built" ] || { mkdir -p "$(dirname "$built")"; ln -s "$PWD" "$built"; }
  for t in $TESTS; do
    echo "\$ $t" >> "$log"
    (cd "$built/crates/linkage" && "$t" --test-threads 4 2>&1 | grep -E '^test |test result|panicked' ) >> "$log"
  done
fi
grep -E 'dl_platform|dependencies compared|test result|DIFFERS|loader|exit code' "$log"
