#!/usr/bin/env bash
# The acceptance kit against LiteLLM's proxy: the second worked example of docs/kit.md.
#
#   bash .ci/litellm.sh [OUT]        (OUT default build/kit/litellm)
#   LITELLM_DOCS=1 bash .ci/litellm.sh   also rewrite docs/kit/examples-litellm.md
#
# LiteLLM is never a dependency of streamwire: it goes into a venv of its own
# (build/litellm-venv, ignored by git), pinned. litellm[proxy]==1.110.2 pins
# litellm-proxy==1.110.2, which the package index does not have, so the pinned
# litellm wheel gets the proxy extra's other requirements listed here.
# The proxy runs on loopback with every provider pointed at the mock upstream
# (config below); the kit then drives its chat, responses and messages
# endpoints (and its Gemini one) through five upstream routes. LiteLLM has
# defects the kit finds, so the check's own exit status is expected to be 1:
# this script fails only when the run did not judge every cell, or when a
# defect the worked example documents is no longer found (.ci/kit_expect.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python3() { command "${PYTHON:-python3}" "$@"; }
OUT=${1:-build/kit/litellm}
VENV=build/litellm-venv
LITELLM_VERSION=1.110.2
mkdir -p "$OUT"

if [ ! -x "$VENV/bin/litellm" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "litellm==$LITELLM_VERSION" \
        'uvicorn>=0.33,<1' 'fastapi>=0.136.3,<1' 'starlette>=1.0.1,<2' 'backoff>=2.2.1,<3' \
        'orjson>=3.11.6,<4' 'apscheduler>=3.11.2,<4' 'fastapi-sso>=0.19,<1' 'pyjwt>=2.13,<3' \
        'python-multipart>=0.0.27,<1' 'cryptography>=49,<51' 'pynacl>=1.6.2,<2' \
        'websockets>=15.0.1,<16' 'uvloop>=0.22.1,<1' 'gunicorn>=23,<24' 'rq>=2.7,<3' \
        'boto3>=1.43.117,<2' 'mcp>=2.3,<3' 'httpx2>=2.10,<3' litellm-proxy-extras litellm-enterprise \
        'semver>=3.0.4,<4' 'restrictedpython>=8.5,<9' 'rich>=13.9.4,<14' 'tomlkit>=0.13.3,<1' \
        'expression>=5.6,<6' 'backports-zstd>=1,<2' 'polars>=1.38.1,<2' 'soundfile>=0.12.1,<1' \
        'pyroscope-io>=0.8.16,<1' 'azure-identity>=1.25.2,<2' 'azure-storage-blob>=12.28,<13' \
        'inquirerpy>=0.3.4,<1' 'hiredis>=3,<4' 'granian>=2.7.4,<3'
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

python3 -m streamwire.kit.cli mock-upstream > "$OUT/mock.out" &
pids+=($!)
for _ in $(seq 100); do [ -s "$OUT/mock.out" ] && break; sleep 0.1; done
MOCK=$(head -1 "$OUT/mock.out" | awk '{print $3}')

cat > "$OUT/config.yaml" <<EOF
model_list:
  - model_name: "openai/*"
    litellm_params: {model: "openai/*", api_base: "$MOCK/v1", api_key: "sk-streamwire-kit"}
  - model_name: "anthropic/*"
    litellm_params: {model: "anthropic/*", api_base: "$MOCK", api_key: "sk-streamwire-kit"}
  - model_name: "gemini/*"
    litellm_params: {model: "gemini/*", api_base: "$MOCK/v1beta", api_key: "streamwire-kit"}
  - model_name: "bedrock/*"
    litellm_params:
      model: "bedrock/*"
      aws_access_key_id: "AKIDSTREAMWIREKIT"
      aws_secret_access_key: "streamwire-kit"
      aws_region_name: "us-east-1"
      aws_bedrock_runtime_endpoint: "$MOCK"
litellm_settings:
  num_retries: 0
  drop_params: true
EOF

PORT=$(free_port)
export LITELLM_MASTER_KEY=sk-streamwire-kit-master-0123456789abcdef
LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/litellm" --config "$OUT/config.yaml" \
    --host 127.0.0.1 --port "$PORT" > "$OUT/litellm.log" 2>&1 &
pids+=($!)
for _ in $(seq 240); do
    curl -fsS -m 2 "http://127.0.0.1:$PORT/health/liveliness" >/dev/null 2>&1 && break
    sleep 0.5
done

set +e
python3 -m streamwire.cli check "http://127.0.0.1:$PORT" --mock "$MOCK" --key-env LITELLM_MASTER_KEY \
    --client openai-chat,openai-responses,anthropic,gemini \
    --models 'openai/{model},openai/responses/{model},anthropic/{model},gemini/{model},bedrock/converse/{model}' \
    --cases "${KIT_CASES:-all}" --delivery "${KIT_DELIVERY:-whole,paced}" \
    --title "streamwire check: LiteLLM proxy $LITELLM_VERSION" \
    --json "$OUT/check.json" --html "$OUT/check.html" --markdown "$OUT/check.md" --quiet
status=$?
set -e
echo "streamwire check against LiteLLM $LITELLM_VERSION exited $status (1 expected: it has defects)"
if [ "${LITELLM_DOCS:-}" = 1 ]; then
    mkdir -p docs/kit
    cp "$OUT/check.md" docs/kit/examples-litellm.md
fi
python3 .ci/kit_expect.py "$OUT/check.json" docs/kit/litellm-expected.json
