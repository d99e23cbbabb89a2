#!/usr/bin/env bash
# Creates the virtualenv in which the gate times LiteLLM's streaming
# translation beside streamwire's (benches/bench_litellm.py). LiteLLM is a
# benchmark peer only, never a dependency of streamwire: it lives in a venv of
# its own, pinned, and the gate skips its rows when the venv is absent.
#
#   bash benches/litellm_venv.sh [VENV]      # default: build/litellm-venv
#
# The default is the venv .ci/litellm.sh makes for the acceptance kit's
# LiteLLM example (the same pin, .ci/litellm-constraints.txt, with the proxy's
# requirements): either one serves the gate.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-build/litellm-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# The project's one pin, with the versions of everything it pulls in.
constraints=.ci/litellm-constraints.txt
"$venv/bin/python" -m pip install --quiet -c "$constraints" \
    "litellm==$(sed -n 's/^litellm==//p' "$constraints")"
LITELLM_LOCAL_MODEL_COST_MAP=True "$venv/bin/python" -m pip show litellm | head -2
