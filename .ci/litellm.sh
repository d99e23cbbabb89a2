#!/usr/bin/env bash
# LiteLLM's proxy under the acceptance kit: a worked example of docs/kit/examples.md.
#
#   bash .ci/litellm.sh [OUT]            install if needed, run the kit (OUT default build/kit/litellm)
#   bash .ci/litellm.sh --install        only make sure the venv is there and current
#   bash .ci/litellm.sh --paths [OUT]    direct against proxied: the kit straight to LiteLLM
#                                        and through nginx and haproxy in front of it
#                                        (docs/kit/examples-litellm-paths.md; OUT default
#                                        build/kit/litellm-paths)
#   bash .ci/litellm.sh --freeze VERSION pin another version: rebuild the venv from the
#                                        index alone and rewrite .ci/litellm-constraints.txt
#
# The venv is build/litellm-venv (ignored by git); build/litellm-venv/bin/python
# imports litellm, build/litellm-venv/bin/litellm starts the proxy. LiteLLM is never
# a dependency of streamwire: it goes into that venv of its own, as
# litellm[proxy]==VERSION with every transitive package held to the versions in
# .ci/litellm-constraints.txt (whose litellm== line is the pin). The venv is rebuilt
# when that file changes.
#   Environment: PYTHON (the interpreter the venv and the kit use; default python3),
#   KIT_CASES, KIT_DELIVERY (the check's --cases and --delivery; default all and
#   whole,paced), KIT_UNARY (--unary, the default: the non-streaming cells too;
#   or --no-unary), KIT_BEDROCK_CASES (the pass-through's --cases; default
#   KIT_CASES), KIT_SDK and KIT_BEDROCK_SDK (the check's --sdk: the official
#   SDKs that read the cases too; default openai,anthropic,google-genai and boto3),
#   KIT_TRANSPORT (the check's --transport; default http1: the worked example
#   was recorded over HTTP/1.1 with identity, before the kit read compressed
#   answers too, and is held to what it documents),
#   LITELLM_DOCS=1 (rewrite the worked example instead of holding
#   the run to it: docs/kit/examples-litellm.md, docs/kit/litellm-expected.json and
#   the whole reports, docs/kit/litellm-report.json.gz; run it with .ci/run's
#   environment, whose cells CI then compares with these, streamwire compare).
#
# The run: the mock upstream and the proxy on loopback, every provider pointed at
# the mock (config below), then the kit through the proxy's chat, responses,
# messages and Gemini endpoints on five upstream routes, its Bedrock pass-through
# and its WebSocket routes: Realtime, to OpenAI's Realtime and to Gemini Live,
# and the Responses API's WebSocket mode (behind a TLS front). LiteLLM has defects the
# kit finds, so the check's own exit status is 1; this script fails when the run
# is not whole or the kit finds other facts than the worked example documents,
# clock-measured verdicts aside (.ci/kit_expect.py states the rule and why).
set -euo pipefail
cd "$(dirname "$0")/.."
python3() { command "${PYTHON:-python3}" "$@"; }
VENV=build/litellm-venv
CONSTRAINTS=.ci/litellm-constraints.txt

if [ "${1:-}" = --freeze ]; then
    version=${2:?usage: bash .ci/litellm.sh --freeze VERSION}
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "litellm[proxy]==$version"
    header=$(sed -n '/^#/p' "$CONSTRAINTS")
    { echo "$header"; "$VENV/bin/pip" freeze; } > "$CONSTRAINTS"
    cp "$CONSTRAINTS" "$VENV/constraints.txt"
    echo "$CONSTRAINTS: litellm[proxy]==$version and $(grep -c '==' "$CONSTRAINTS") pins"
    exit 0
fi

LITELLM_VERSION=$(sed -n 's/^litellm==//p' "$CONSTRAINTS")
PATHS=
if [ "${1:-}" = --paths ]; then
    PATHS=1
    shift
    set -- "${1:-build/kit/litellm-paths}"
fi
UPGRADE=
if [ "${1:-}" = --upgrade ]; then
    # The same run with a newer LiteLLM, compared cell by cell with the pin's
    # published report (docs/kit/examples-litellm-upgrade.md). Its
    # litellm[proxy] extra may not resolve (at 1.110.2 litellm-proxy==1.110.2
    # and its enterprise pins are not on the registry): the pin's whole
    # environment is installed, then that litellm alone over it (--no-deps).
    UPGRADE=${2:?usage: bash .ci/litellm.sh --upgrade VERSION [OUT]}
    shift 2
    VENV=build/litellm-venv-$UPGRADE
    if [ ! -x "$VENV/bin/litellm" ] || ! "$VENV/bin/pip" show litellm | grep -qx "Version: $UPGRADE"; then
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install --quiet -c "$CONSTRAINTS" "litellm[proxy]==$LITELLM_VERSION"
        "$VENV/bin/pip" install --quiet --no-deps "litellm==$UPGRADE"
        # ... then what the new litellm and its [proxy] extra require, but the
        # pins the index lacks, and what the missing litellm-proxy would have
        # brought that the proxy imports (semver).
        "$VENV/bin/python" .ci/litellm_requirements.py > "$VENV/upgrade-requirements.txt"
        "$VENV/bin/pip" install --quiet -r "$VENV/upgrade-requirements.txt" semver
    fi
    LITELLM_VERSION=$UPGRADE
elif ! cmp -s "$CONSTRAINTS" "$VENV/constraints.txt"; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet -c "$CONSTRAINTS" "litellm[proxy]==$LITELLM_VERSION"
    cp "$CONSTRAINTS" "$VENV/constraints.txt"
fi
[ "${1:-}" = --install ] && exit 0

OUT=${1:-build/kit/litellm}
mkdir -p "$OUT"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# The interpreter itself, not the python3 function nor a launcher that forks
# (a pyenv shim does): $! must be the server, or the cleanup kills its parent
# and leaves the server running.
interpreter=$(python3 -c 'import sys; print(sys.executable)')
"$interpreter" -m streamwire.kit.cli mock-upstream > "$OUT/mock.out" &
pids+=($!)
for _ in $(seq 100); do [ -s "$OUT/mock.out" ] && break; sleep 0.1; done
MOCK=$(head -1 "$OUT/mock.out" | awk '{print $3}')
# LiteLLM's Responses WebSocket route calls only a wss:// upstream (it hands
# a TLS context to the socket it opens): a TLS front before the mock, its
# certificate signed by a test CA that LiteLLM's process trusts (SSL_CERT_FILE).
python3 -c "import sys; from pathlib import Path; sys.path.insert(0, 'examples')
from kit_processes import make_ca; assert make_ca(Path(sys.argv[1])), 'openssl is needed'" "$OUT"
"$interpreter" .ci/tls_front.py --cert "$OUT/server.pem" --key "$OUT/server.key" \
    --upstream "${MOCK#http://}" > "$OUT/tls.out" &
pids+=($!)
for _ in $(seq 100); do [ -s "$OUT/tls.out" ] && break; sleep 0.1; done
MOCK_TLS=$(head -1 "$OUT/tls.out" | awk '{print $3}')

cat > "$OUT/config.yaml" <<EOF
model_list:
  - model_name: "openai/*"
    litellm_params: {model: "openai/*", api_base: "$MOCK/v1", api_key: "sk-streamwire-kit"}
  - model_name: "anthropic/*"
    litellm_params: {model: "anthropic/*", api_base: "$MOCK", api_key: "sk-streamwire-kit"}
  - model_name: "gemini/*"
    litellm_params: {model: "gemini/*", api_base: "$MOCK/v1beta", api_key: "streamwire-kit"}
  - model_name: "responses-ws/*"
    litellm_params: {model: "openai/*", api_base: "$MOCK_TLS/v1", api_key: "sk-streamwire-kit"}
  - model_name: "retry/*"
    litellm_params:
      model: "openai/*"
      api_base: "$MOCK/v1"
      api_key: "sk-streamwire-kit"
      num_retries: 2
      stream_timeout: 1.0
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

# One route per upstream: LiteLLM's provider prefix, then the case's model. The
# Bedrock one is a Claude model id, as a deployment's is: for a model id it does
# not know, LiteLLM (with drop_params) drops the client's tools (docs/kit/examples.md).
ROUTES='openai/{model},openai/responses/{model},anthropic/{model},gemini/{model},bedrock/converse/anthropic.{model}'
PORT=$(free_port)
export LITELLM_MASTER_KEY=sk-streamwire-kit-master-0123456789abcdef
SSL_CERT_FILE="$OUT/ca.pem" LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/litellm" --config "$OUT/config.yaml" \
    --host 127.0.0.1 --port "$PORT" > "$OUT/litellm.log" 2>&1 &
litellm_pid=$!
pids+=($litellm_pid)
for _ in $(seq 240); do
    curl -fsS -m 2 "http://127.0.0.1:$PORT/health/liveliness" >/dev/null 2>&1 && break
    sleep 0.5
done

if [ -n "$PATHS" ]; then
    # The same cells on four paths to LiteLLM: straight, and through nginx (its
    # defaults, and tuned for streaming) and haproxy (its defaults) in front of
    # it, as deployments put them; the report says what each hop changed.
    # Documented (LITELLM_DOCS=1 rewrites the page's matrix), not gated.
    docs=()
    [ "${LITELLM_DOCS:-}" = 1 ] && docs=(--docs --docs-page docs/kit/examples-litellm-paths.md)
    python3 examples/kit_proxies.py --front "http://127.0.0.1:$PORT" --label litellm \
        --proxies nginx,nginx-tuned,haproxy --out "$OUT" "${docs[@]}" \
        --mock "$MOCK" --key-env LITELLM_MASTER_KEY --gateway "litellm@$LITELLM_VERSION" \
        --client openai-chat,openai-responses,anthropic --models 'openai/{model}' \
        --cases "${KIT_CASES:-short-text,split-anywhere,merged-events,keepalive,single-tool,parallel-tools,chunked-json-args,in-stream-error,unknown-event,cancel,truncated,usage,silence-start,silence-after-tool-keepalive,truncated-tool}" \
        --delivery "${KIT_DELIVERY:-whole,paced}" --silence "${KIT_SILENCE:-3}" --stall 2 \
        --no-unary --sdk none --concurrency 8 --transport "${KIT_TRANSPORT:-http1}" \
        --title "streamwire check: LiteLLM proxy $LITELLM_VERSION, straight and behind nginx and haproxy" \
        --quiet || echo "the check exited $? (1 expected: LiteLLM has defects)"
    exit 0
fi

rm -f "$OUT/check.json"  # a check that crashes leaves no report for kit_expect.py to pass
set +e
python3 -m streamwire.cli check "http://127.0.0.1:$PORT" --mock "$MOCK" \
    --key-env LITELLM_MASTER_KEY --gateway "litellm@$LITELLM_VERSION" \
    --client openai-chat,openai-responses,anthropic,gemini \
    --models "$ROUTES" \
    --cases "${KIT_CASES:-all}" --delivery "${KIT_DELIVERY:-whole,paced}" \
    --silence "${KIT_SILENCE:-75}" --stall "${KIT_STALL:-5}" "${KIT_UNARY:---unary}" \
    --sdk "${KIT_SDK:-openai,anthropic,google-genai}" --transport "${KIT_TRANSPORT:-http1}" \
    --title "streamwire check: LiteLLM proxy $LITELLM_VERSION" \
    --json "$OUT/check.json" --html "$OUT/check.html" --markdown "$OUT/check.md" --quiet
status=$?
echo "streamwire check against LiteLLM $LITELLM_VERSION exited $status (1 expected: it has defects)"
# Its retries: a route with num_retries 2 and a 1 s stream_timeout (a first
# chunk later than that starts another attempt), through the retry cases, and
# the refused ones, whose attempts the mock's log times (a 429 with
# Retry-After: 1, a 400 on every attempt, two 503s: each cell runs its
# attempts' waits, about 3 s at most, beside the others).
rm -f "$OUT/check-retries.json"
python3 -m streamwire.cli check "http://127.0.0.1:$PORT" --mock "$MOCK" \
    --key-env LITELLM_MASTER_KEY --gateway "litellm@$LITELLM_VERSION" --client openai-chat,openai-responses,anthropic \
    --models 'retry/{model}' --label retries \
    --cases retry-before-output,retry-after-text,retry-after-tool,retry-stall,truncated-tool,rate-limited,bad-request,flapping \
    --stall 3 --no-unary --transport "${KIT_TRANSPORT:-http1}" \
    --title "streamwire check: LiteLLM proxy $LITELLM_VERSION, retries" \
    --json "$OUT/check-retries.json" --html "$OUT/check-retries.html" \
    --markdown "$OUT/check-retries.md" --quiet
echo "streamwire check against LiteLLM's retrying route exited $?"
# Its Bedrock pass-through (/bedrock/model/{id}/converse-stream and
# /invoke-with-response-stream), through the config's bedrock/* model, for
# clients that speak Bedrock themselves.
rm -f "$OUT/check-bedrock.json"
python3 -m streamwire.cli check "http://127.0.0.1:$PORT/bedrock" --mock "$MOCK" \
    --key-env LITELLM_MASTER_KEY --gateway "litellm@$LITELLM_VERSION" --client bedrock-converse,bedrock-invoke \
    --models 'bedrock/anthropic.{model}' --label 'bedrock pass-through' \
    --cases "${KIT_BEDROCK_CASES:-${KIT_CASES:-all}}" --delivery "${KIT_BEDROCK_DELIVERY:-whole,paced}" \
    --silence "${KIT_SILENCE:-75}" --stall "${KIT_STALL:-5}" "${KIT_UNARY:---unary}" \
    --sdk "${KIT_BEDROCK_SDK:-boto3}" --transport "${KIT_TRANSPORT:-http1}" \
    --title "streamwire check: LiteLLM proxy $LITELLM_VERSION, Bedrock pass-through" \
    --json "$OUT/check-bedrock.json" --html "$OUT/check-bedrock.html" \
    --markdown "$OUT/check-bedrock.md" --quiet
echo "streamwire check against LiteLLM's Bedrock pass-through exited $?"
# Its WebSocket routes, a check each: PART, the client protocol, the route's
# model, its label, and the report's title.
ws_check() {
    rm -f "$OUT/check-$1.json"
    python3 -m streamwire.cli check "http://127.0.0.1:$PORT" --mock "$MOCK" \
        --key-env LITELLM_MASTER_KEY --gateway "litellm@$LITELLM_VERSION" --client "$2" \
        --models "$3" --label "$4" \
        --cases "${KIT_CASES:-all}" --delivery whole,paced \
        --silence "${KIT_SILENCE:-75}" --stall "${KIT_STALL:-5}" --no-unary \
        --title "streamwire check: LiteLLM proxy $LITELLM_VERSION, $5" \
        --json "$OUT/check-$1.json" --html "$OUT/check-$1.html" \
        --markdown "$OUT/check-$1.md" --quiet
    echo "streamwire check against LiteLLM's $5 route exited $?"
}
# Realtime (/v1/realtime): LiteLLM relays the session to the openai/* model's
# api_base host at /v1/realtime?model=..., every event re-serialized
# (docs/kit/running.md, WebSocket routes).
ws_check realtime openai-realtime 'openai/{model}' realtime Realtime
# The same route for a gemini/* model: LiteLLM opens a Gemini Live session
# with the model's api_base host (/v1beta/ws/...BidiGenerateContent?key=...)
# and turns each Live message into Realtime events and back; the mock's
# session log shows the Live side of each cell.
ws_check live openai-realtime 'gemini/{model}' 'realtime to gemini live' \
    'Realtime to Gemini Live'
# The Responses API's WebSocket mode (/v1/responses upgraded), for the
# responses-ws/* model: LiteLLM opens a socket to the TLS front's
# /v1/responses?model=... for each client socket and relays its messages.
ws_check responses-ws openai-responses-ws 'responses-ws/{model}' 'responses websocket' \
    'Responses WebSocket mode'
# LiteLLM's own process crashing (a clean-clone CI run saw it die of SIGSEGV
# inside libpython, mid-check, once) leaves every later cell
# failing against a closed port: no verdict about LiteLLM's streaming, nor
# a test of the kit. Said so, with its own exit status (75), for .ci/run to
# run the step once more.
if ! kill -0 "$litellm_pid" 2>/dev/null; then
    wait "$litellm_pid"
    code=$?
    signal=
    [ "$code" -gt 128 ] && signal=", signal $((code - 128))"
    echo "LiteLLM's proxy died during the checks (exit status $code$signal; its log: $OUT/litellm.log): these reports are no verdict" >&2
    exit 75
fi
set -e
if [ -n "$UPGRADE" ]; then
    # Every change from the pin's published report, not gated: the upgrade's
    # worked comparison (its Markdown is docs/kit/examples-litellm-upgrade.md's).
    for part in "" -retries -bedrock -realtime -live -responses-ws; do
        gunzip -c "docs/kit/litellm${part}-report.json.gz" > "$OUT/published$part.json"
        python3 -m streamwire.cli compare "$OUT/published$part.json" "$OUT/check$part.json" \
            --no-gate-timing --markdown "$OUT/compare$part.md" --json "$OUT/compare$part.json" \
            || true
    done
elif [ "${LITELLM_DOCS:-}" = 1 ]; then
    [ -s "$OUT/check.json" ] || { echo "the check wrote no report" >&2; exit 1; }
    { cat "$OUT/check.md"; echo; cat "$OUT/check-retries.md"; echo; cat "$OUT/check-bedrock.md"
      echo; cat "$OUT/check-realtime.md"; echo; cat "$OUT/check-live.md"
      echo; cat "$OUT/check-responses-ws.md"
      cat <<'PAGE'

# The same LiteLLM, compared

* [Upgrading it](examples-litellm-upgrade.md): this run's reports against
  1.110.2's, cell by cell (`bash .ci/litellm.sh --upgrade 1.110.2`).
* [Behind nginx and haproxy](examples-litellm-paths.md): the cells straight
  and through each proxy in front of it (`bash .ci/litellm.sh --paths`).
PAGE
    } > docs/kit/examples-litellm.md
    for part in "" -retries -bedrock -realtime -live -responses-ws; do
        python3 .ci/kit_expect.py "$OUT/check$part.json" "docs/kit/litellm${part}-expected.json" \
            --write
        # The whole report, evidence and all, published (gzip, no name or time in it).
        gzip -9 -n -c "$OUT/check$part.json" > "docs/kit/litellm${part}-report.json.gz"
    done
else
    for part in "" -retries -bedrock -realtime -live -responses-ws; do
        python3 .ci/kit_expect.py "$OUT/check$part.json" "docs/kit/litellm${part}-expected.json"
        # ... and cell by cell against the published report: a change in
        # LiteLLM's behaviour at the pin, or in the kit's judgement, fails CI
        # (clock-decided changes are reported, not gated, as kit_expect.py does).
        gunzip -c "docs/kit/litellm${part}-report.json.gz" > "$OUT/published$part.json"
        python3 -m streamwire.cli compare "$OUT/published$part.json" "$OUT/check$part.json" \
            --no-gate-timing --accepted docs/kit/litellm-accepted.json \
            --markdown "$OUT/compare$part.md" --json "$OUT/compare$part.json"
    done
fi
