#!/usr/bin/env bash
# Opens an HTML report in headless Chromium with every host name unresolvable, at 1400 and 800 px:
# takes a screenshot at each width to look at, and runs scripts/html-check.js inside a copy of
# the page, which reports elements wider than the page, SVG labels clipped, overlapping or drawn
# under 9 px, and whether a wheel step, a key press and a reset change the timeline's range.
# WIDTHS="1600 1200" checks other widths. Exit 1 when the page's script did not mark it drawn, or the check found a problem.
#   scripts/check-html.sh REPORT.html [OUTDIR]      (screenshots OUTDIR/REPORT-1400.png, -800.png)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
html=$(realpath "$1")
outdir=${2:-$(dirname "$html")}
mkdir -p "$outdir"
base=$(basename "${html%.html}")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
checked="$profile/checked.html"
# The report with the check appended at the end of its body, after the page's own script.
python3 - "$html" "$here/html-check.js" "$checked" <<'PY'
import sys
page, check, out = sys.argv[1:]
text = open(page, encoding="utf-8").read()
js = open(check, encoding="utf-8").read()
at = text.rindex("</body>")
open(out, "w", encoding="utf-8").write(text[:at] + "<script>" + js + "</script>" + text[at:])
PY
status=0
for width in ${WIDTHS:-1400 800}; do
  flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
    --disable-component-update --disable-sync --user-data-dir="$profile/u$width" --host-resolver-rules="MAP * ~NOTFOUND"
    --hide-scrollbars --window-size="$width,2600")
  dom=$(chromium "${flags[@]}" --dump-dom "file://$checked" 2>/dev/null)
  chromium "${flags[@]}" --screenshot="$outdir/$base-$width.png" "file://$html" 2>/dev/null
  python3 - "$width" <<PY || status=1
import html, json, re, sys
dom = sys.stdin.read() if False else '''$(printf '%s' "$dom" | grep -o 'data-check="[^"]*"' | head -1 | sed "s/'/\\\\'/g")'''
ok = '''$(printf '%s' "$dom" | grep -o 'data-ok="[0-9]*"' | head -1)'''
svgs = $(printf '%s' "$dom" | grep -o '<svg' | wc -l)
width = sys.argv[1]
m = re.search(r'data-check="([^"]*)"', dom)
if not m:
    print(f"{width} px: the check did not run (the page's script failed?)"); sys.exit(1)
c = json.loads(html.unescape(m.group(1)))
drawn = re.search(r'\d+', ok)
problems = {k: c[k] for k in ("overflow", "clipped", "overlaps", "small") if c[k]}
z = c.get("zoom")
zoomed = z is None or (z["wheel"][1] - z["wheel"][0] < z["before"][1] - z["before"][0] and z["pan"][0] > z["wheel"][0] and z["reset"] == z["before"])
print(f"{width} px: {svgs} svg, drawn {drawn.group(0) if drawn else 'none'}; zoom {z and (z['before'], z['wheel'], z['pan'], z['reset'])}: {'ok' if zoomed else 'NOT WORKING'}")
for k, v in problems.items():
    print(f"  {k}: {len(v)}"); [print("    " + x) for x in v[:8]]
sys.exit(0 if (drawn and int(drawn.group(0)) == svgs and not problems and zoomed) else 1)
PY
  echo "screenshot: $outdir/$base-$width.png"
done
exit $status
