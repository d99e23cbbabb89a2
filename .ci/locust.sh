#!/usr/bin/env bash
# Locust, pinned, in a venv of its own (build/locust-venv, ignored by git), for
# the load tests' master and workers (tests/test_kit_locust.py):
#   bash .ci/locust.sh                  install if needed (or if the pins changed)
#   bash .ci/locust.sh --freeze VERSION pin another version in .ci/locust-constraints.txt
# Locust is never in the test venv: it registers a pytest plugin, and importing
# it patches the standard library (gevent). streamwire is not installed there
# either: the tests put the tree's python/ (built extension included) on
# PYTHONPATH, so the venv is made from the same interpreter (PYTHON, default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
python3() { command "${PYTHON:-python3}" "$@"; }
VENV=build/locust-venv
CONSTRAINTS=.ci/locust-constraints.txt

if [ "${1:-}" = --freeze ]; then
    version=${2:?usage: bash .ci/locust.sh --freeze VERSION}
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "locust==$version"
    header=$(sed -n '/^#/p' "$CONSTRAINTS")
    { echo "$header"; "$VENV/bin/pip" freeze; } > "$CONSTRAINTS"
    cp "$CONSTRAINTS" "$VENV/constraints.txt"
    exit 0
fi

if ! cmp -s "$CONSTRAINTS" "$VENV/constraints.txt" 2>/dev/null; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet -c "$CONSTRAINTS" "locust==$(sed -n 's/^locust==//p' "$CONSTRAINTS")"
    cp "$CONSTRAINTS" "$VENV/constraints.txt"
fi
"$VENV/bin/python" -c "import locust; print('locust', locust.__version__, 'in', '$VENV')"
