#!/usr/bin/env bash
# The screenshots of docs/reports.md: the HTML report of one trace, of the TP=2 run, of 64 ranks
# (the TP=2 pair repeated, as tests/cli/scale.rs makes them) and of a TP=2 comparison, each at
# 1400 and 800 px, the top of the page at 0.6 scale (small PNGs).
#   scripts/docs-screenshots.sh [LAUNCHGUARD]     (default target/debug/launchguard)
set -euo pipefail
cd "$(dirname "$0")/.."
lg=${1:-target/debug/launchguard}
shared=../shared/traces/h200x2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$shared" "$work/r64" <<'PY'
import gzip, os, sys
src, out = sys.argv[1:]
os.makedirs(out)
parts = []
for r in range(2):
    t = gzip.open(f"{src}/tp2_rank{r}.json.gz", "rb").read()
    key = f'"rank": {r}, "world_size": 2'.encode()
    i = t.index(key)
    parts.append((gzip.compress(t[:i], 1), gzip.compress(t[i + len(key):], 1)))
for k in range(64):
    head, tail = parts[k % 2]
    open(f"{out}/rank{k}.json.gz", "wb").write(head + gzip.compress(f'"rank": {k}, "world_size": 64'.encode()) + tail)
PY
"$lg" analyze examples/delay270_clean.json.gz --html "$work/one-trace.html" >/dev/null || true
"$lg" analyze "$shared" --html "$work/tp2.html" >/dev/null || true
"$lg" analyze "$work/r64" --html "$work/ranks64.html" >/dev/null || true
"$lg" compare "$shared" "$shared" --html "$work/compare-tp2.html" >/dev/null || true
mkdir -p docs/screenshots
for page in one-trace tp2 ranks64 compare-tp2; do
  for width in 1400 800; do
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
      --host-resolver-rules="MAP * ~NOTFOUND" --window-size="$width,1300" --force-device-scale-factor=0.6 \
      --screenshot="docs/screenshots/$page-$width.png" "file://$work/$page.html" 2>/dev/null
  done
done
ls -l docs/screenshots
