#!/usr/bin/env bash
# Opens an HTML report in headless Chromium with every host name unresolvable, prints whether the
# page's script marked it drawn (data-ok on <body>) against the number of <svg> elements, and
# takes a screenshot to look at.
#   scripts/check-html.sh REPORT.html [SCREENSHOT.png] [WIDTH,HEIGHT]
set -euo pipefail
html=$(realpath "$1")
png=${2:-${html%.html}.png}
size=${3:-1400,2600}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --user-data-dir="$profile" --host-resolver-rules="MAP * ~NOTFOUND"
  --hide-scrollbars --window-size="$size")
dom=$(chromium "${flags[@]}" --dump-dom "file://$html" 2>/dev/null)
ok=$(grep -o 'data-ok="[0-9]*"' <<<"$dom" | head -1 | grep -o '[0-9]*' || true)
svgs=$(grep -o '<svg' <<<"$dom" | wc -l)
echo "svg elements: $svgs, drawn (data-ok): ${ok:-none — the script did not finish}"
chromium "${flags[@]}" --screenshot="$png" "file://$html" 2>/dev/null
echo "screenshot: $png"
[ -n "$ok" ] && [ "$ok" = "$svgs" ]
