#!/usr/bin/env bash
# The pip route, checked as a user meets it: build the wheel, install it into a fresh virtual
# environment, then run the installed `launchguard`, `python -m launchguard`, the pytest plugin on
# a shared trace, and the package's tests (python/tests). Exits non-zero on any failure.
# Needs ../shared/traces beside the clone (as the Rust tests do) and PyPI for maturin and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3}
work=target/python-ci
traces=$root/../shared/traces/h200

step() { echo "python-ci: $*"; }
fail() { echo "python-ci: FAILED: $*" >&2; exit 1; }

[ -d "$traces" ] || fail "$traces is missing: the trace corpus must sit beside the clone"

step "build the wheel"
rm -rf "$work"
scripts/build-wheel.sh "$work/wheels"
wheel=$(ls "$work"/wheels/launchguard-*.whl)

step "install $(basename "$wheel") into a fresh virtual environment"
"$python" -m venv "$work/venv"
venv=$root/$work/venv
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "pytest>=7"
installed=$("$venv/bin/python" -c 'import launchguard; print(launchguard.__file__)')
case "$installed" in
  "$venv"/*) ;;
  *) fail "import launchguard found $installed, not the installed wheel" ;;
esac

step "launchguard --version"
"$venv/bin/launchguard" --version

# From an empty directory: nothing from the checkout can stand in for the installed package. Its
# own (empty) pytest.ini makes it pytest's rootdir, so the repository's pytest settings stay out.
demo=$root/$work/demo
mkdir -p "$demo"
cd "$demo"
printf '[pytest]\n' > pytest.ini

step "python -m launchguard analyze delay270_clean (a 270 us delay per launch: exit 1 expected)"
set +e
"$venv/bin/python" -m launchguard analyze "$traces/delay270_clean.json.gz"
code=$?
set -e
[ "$code" -eq 1 ] || fail "python -m launchguard analyze exited $code, expected 1"

step "pytest --launchguard-trace delay270_clean (occupancy fails: exit 1 expected)"
# Its output goes to a file: an expected "1 failed" summary line must not read as CI's verdict.
set +e
"$venv/bin/python" -m pytest -p no:cacheprovider -v --launchguard-trace="$traces/delay270_clean.json.gz" \
  --junitxml=delay270.xml >delay270.log 2>&1
code=$?
set -e
grep -E '^launchguard::' delay270.log || true
[ "$code" -eq 1 ] || { cat delay270.log; fail "pytest on delay270_clean exited $code, expected 1"; }
grep -q '<testcase classname="launchguard" name="occupancy"[^>]*><failure' delay270.xml \
  || fail "delay270.xml has no failed launchguard::occupancy testcase"
step "as expected: pytest exited 1 and the JUnit XML has launchguard::occupancy failed"

step "pytest --launchguard-trace healthy_clean (nothing fails: exit 0 expected)"
"$venv/bin/python" -m pytest -p no:cacheprovider -v --launchguard-trace="$traces/healthy_clean.json.gz" \
  --junitxml=healthy.xml
! grep -q '<failure' healthy.xml || fail "healthy.xml has a failure"

step "the package's tests (python/tests) against the installed wheel"
cd "$root"
# The cache goes to target/pytest-cache (pyproject.toml), which git ignores.
"$venv/bin/python" -m pytest python/tests
