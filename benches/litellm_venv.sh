#!/usr/bin/env bash
# Creates the virtualenv in which the gate times LiteLLM's streaming
# translation beside streamwire's (benches/bench_litellm.py). LiteLLM is a
# benchmark peer only, never a dependency of streamwire: it lives in a venv of
# its own, pinned, and the gate skips its rows when the venv is absent.
#
#   bash benches/litellm_venv.sh [VENV]      # default: .venv-litellm
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-litellm}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "litellm==1.110.2" "orjson>=3.9"
"$venv/bin/python" -c "import litellm, sys; print('litellm', litellm.__version__ if hasattr(litellm, '__version__') else '?', sys.version.split()[0])"
