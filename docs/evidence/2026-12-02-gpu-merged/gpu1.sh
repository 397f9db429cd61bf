#!/usr/bin/env bash
# Call 1: issue 30's five-of-each GPU runs on the merged build.
set -u
cd "$(dirname "$0")/.."
echo "# $(date -u +%FT%TZ) $(hostname)"; nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__)'
./.device-carry/launchguard --version
BIN=$PWD/.device-carry/launchguard OUT=$OUT scripts/gpu-verdicts.sh FINAL
echo "# exit $? at $(date -u +%FT%TZ)"
