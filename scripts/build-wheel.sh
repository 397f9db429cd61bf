#!/usr/bin/env bash
# Builds the Python wheel: the `launchguard` binary of the `dist` profile (maturin, bindings = "bin") plus the
# python/launchguard package. Usage: scripts/build-wheel.sh [OUT_DIR]  (default: target/wheels)
#
# The platform tag: maturin audits the binary's ELF (as auditwheel does) and names the oldest
# manylinux policy whose glibc symbol versions cover everything the binary needs. The binary links
# only libc, libm and libgcc_s; built here (Debian 12, glibc 2.36) it needs GLIBC_2.34 at most
# (`objdump -T target/release/launchguard | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1`), so the
# wheel is manylinux_2_34_x86_64: it installs on glibc 2.34 or newer (Debian 12, Ubuntu 22.04,
# RHEL 9) and pip refuses it on older systems instead of failing at run time. An older baseline
# needs a build on an older glibc (a manylinux container), not a different tag.
#   --compatibility pypi: refuse a tag PyPI would reject (a bare linux_x86_64);
#   --auditwheel check:   fail rather than silently bundle a new shared library into the wheel.
# Environment: PYTHON (default python3) for the build tool's venv; CARGO_TARGET_DIR as for cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-target/wheels}
python=${PYTHON:-python3}
# The build tool lives in its own venv under target/ (ignored), kept between runs.
tools=target/python-tools
if ! "$tools/bin/maturin" --version >/dev/null 2>&1; then
  echo "build-wheel: installing maturin into $tools"
  rm -rf "$tools"
  "$python" -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.5,<2"
fi

mkdir -p "$out"
rm -f "$out"/launchguard-*.whl
# The `dist` profile: the release build without debug info (Cargo.toml).
"$tools/bin/maturin" build --profile dist --compatibility pypi --auditwheel check --out "$out"

wheels=("$out"/launchguard-*.whl)
if [ ${#wheels[@]} -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  echo "build-wheel: expected one wheel in $out, found: ${wheels[*]}" >&2
  exit 1
fi
case "${wheels[0]}" in
  *-py3-none-manylinux_*.whl | *-py3-none-macosx_*.whl | *-py3-none-win_*.whl) ;;
  *) echo "build-wheel: unexpected tag on ${wheels[0]}" >&2; exit 1 ;;
esac
echo "build-wheel: ${wheels[0]}"
