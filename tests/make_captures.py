"""Writes ``fixtures/captures/``: real ``curl -i`` and HAR captures of loopback responses.

Run ``python tests/make_captures.py`` (curl on PATH; for the HAR file also
``mitmdump``, from ``pip install mitmproxy``, or its path in ``MITMDUMP``).
It starts the test stream server (``servers/stream_server.py``) on
127.0.0.1, serves recorded provider bodies from ``fixtures/providers/`` (and
two error bodies written from the providers' error references), and keeps
what the tools wrote:

* ``curl-*.http``: ``curl -s -i -N`` output, byte for byte: response head,
  then the body as curl received it (still gzip, deflate or br compressed
  unless the name says ``compressed``: those ran with ``--compressed``,
  which decodes the body and keeps the ``Content-Encoding`` header);
* ``mitmdump.har``: the HAR file that mitmproxy's ``mitmdump`` (run as a
  reverse proxy in front of the server, ``--set hardump=...``) wrote for the
  same kinds of requests made through it with curl.

It also writes the sample recording bundled with the package
(``python/streamwire/samples/anthropic-tool-use.jsonl``, what ``streamwire
replay`` shows without arguments): ``streamwire record`` of the server
pacing ``anthropic/prism-tools.sse`` like a provider (the first event after
350 ms, then one event every 20 ms), so its chunk boundaries and arrival
times are real loopback ones.

``captures()`` says what each capture is; ``tests/test_cli_captures.py``
reads the files, never this script. Dates, ports and the server's version in the
headers are whatever they were when the captures were made.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers.stream_server import Scenario, shared_server

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ROOT / "fixtures" / "providers"
OUT = ROOT / "fixtures" / "captures"

#: An OpenAI error body (platform.openai.com/docs/guides/error-codes, checked 2026-12-01).
OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM)",
        "type": "tokens",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
#: An Anthropic error body (docs.claude.com/en/api/errors, checked 2026-12-01).
ANTHROPIC_500 = {
    "type": "error",
    "error": {"type": "api_error", "message": "Internal server error"},
    "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
}
#: A non-streaming chat completion (the request was sent without "stream": true).
OPENAI_NOT_STREAMED = {
    "id": "chatcmpl-capture",
    "object": "chat.completion",
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello."},
            "finish_reason": "stop",
        }
    ],
}


def _body(path: str) -> bytes:
    return (PROVIDERS / path).read_bytes()


def _sse_chunks(body: bytes) -> list[bytes]:
    parts = body.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _brotli(data: bytes) -> bytes:
    import brotli

    out: bytes = brotli.compress(data)
    return out


#: name -> (scenario, curl options, what it is)
def captures() -> dict[str, tuple[Scenario, list[str], str]]:
    tools = _body("anthropic/prism-tools.sse")
    chat = _body("openai-chat/oaipy-tool-single.sse")
    gemini = _body("gemini/pyd-text.sse")
    nova = _body("bedrock-converse/pyd-nova-tool.eventstream")
    return {
        "curl-anthropic-tools.http": (
            Scenario(chunks=_sse_chunks(tools), delay=0.005, headers={"request-id": "req_cap1"}),
            [],
            "anthropic/prism-tools.sse, one SSE event per HTTP chunk",
        ),
        "curl-openai-chat-gzip.http": (
            Scenario(
                body=gzip.compress(chat, mtime=0),
                headers={"Content-Encoding": "gzip", "x-request-id": "req_cap2"},
            ),
            [],
            "openai-chat/oaipy-tool-single.sse, gzip-compressed by the server",
        ),
        "curl-openai-chat-gzip-compressed.http": (
            Scenario(
                body=gzip.compress(chat, mtime=0),
                headers={"Content-Encoding": "gzip", "x-request-id": "req_cap3"},
            ),
            ["--compressed"],
            "the same gzip response, fetched with curl --compressed (body decoded by curl)",
        ),
        "curl-gemini-br.http": (
            Scenario(body=_brotli(gemini), headers={"Content-Encoding": "br"}),
            [],
            "gemini/pyd-text.sse, brotli-compressed by the server",
        ),
        "curl-bedrock-deflate.http": (
            Scenario(
                body=zlib.compress(nova),
                content_type="application/vnd.amazon.eventstream",
                headers={"Content-Encoding": "deflate", "x-amzn-RequestId": "req-cap5"},
            ),
            [],
            "bedrock-converse/pyd-nova-tool.eventstream, deflate (zlib) compressed",
        ),
        "curl-openai-429.http": (
            Scenario(
                status=429,
                content_type="application/json",
                body=json.dumps(OPENAI_429).encode(),
                headers={"x-request-id": "req_cap6", "retry-after": "2"},
            ),
            [],
            "an HTTP 429 with an OpenAI error object",
        ),
        "curl-anthropic-500.http": (
            Scenario(
                status=500,
                content_type="application/json",
                body=json.dumps(ANTHROPIC_500).encode(),
                headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
            ),
            [],
            "an HTTP 500 with an Anthropic error object",
        ),
        "curl-openai-not-streamed.http": (
            Scenario(
                content_type="application/json",
                body=json.dumps(OPENAI_NOT_STREAMED).encode(),
                headers={"x-request-id": "req_cap8"},
            ),
            [],
            "an HTTP 200 chat.completion object: the request had streaming off",
        ),
    }


def _curl(url: str, options: list[str], proxy_port: int | None = None) -> bytes:
    argv = ["curl", "-s", "-i", "-N", *options, url]
    done = subprocess.run(argv, capture_output=True, check=True, timeout=30)
    return done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _har(server_port: int, paths: list[str], har_path: Path) -> str:
    mitmdump = os.environ.get("MITMDUMP") or shutil.which("mitmdump")
    if mitmdump is None:
        raise SystemExit("mitmdump not found: pip install mitmproxy, or set MITMDUMP")
    port = _free_port()
    proc = subprocess.Popen(
        [
            mitmdump,
            "--mode",
            f"reverse:http://127.0.0.1:{server_port}",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(port),
            "--set",
            f"hardump={har_path}",
            "-q",
        ]
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for path in paths:
            _curl(f"http://127.0.0.1:{port}{path}", [])
    finally:
        proc.send_signal(signal.SIGINT)  # mitmdump writes the HAR file as it exits
        proc.wait(30)
    version = subprocess.run([mitmdump, "--version"], capture_output=True, text=True).stdout
    return version.splitlines()[0].strip()


SAMPLE = ROOT / "python" / "streamwire" / "samples" / "anthropic-tool-use"


def sample(server: Any) -> None:
    from streamwire.cli import main as cli

    tools = _body("anthropic/prism-tools.sse")
    url = server.add(
        Scenario(
            chunks=_sse_chunks(tools),
            first_delay=0.35,
            delay=0.02,
            headers={"request-id": "req_sample"},
        )
    )
    cli(["record", url, "--protocol", "anthropic", "--out", str(SAMPLE), "--no-events"])
    for extra in (".sse", ".json"):  # the package ships the recording alone
        SAMPLE.with_name(SAMPLE.name + extra).unlink()
    recording = SAMPLE.with_name(SAMPLE.name + ".recording.jsonl")
    recording.rename(SAMPLE.with_suffix(".jsonl"))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = shared_server()
    made: dict[str, Any] = {}
    urls: dict[str, str] = {}
    for name, (scenario, options, what) in captures().items():
        url = server.add(scenario)
        urls[name] = url
        (OUT / name).write_bytes(_curl(url, options))
        made[name] = what
    curl = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout
    har_names = [
        "curl-anthropic-tools.http",
        "curl-openai-chat-gzip.http",
        "curl-openai-429.http",
        "curl-openai-not-streamed.http",
    ]
    paths = [urls[n].split(str(server.port), 1)[1] for n in har_names]
    mitm = _har(server.port, paths, OUT / "mitmdump.har")
    print(f"made with {curl.splitlines()[0]} and {mitm}")
    for name, what in made.items():
        print(f"  {name}: {what}")
    print(f"  mitmdump.har: the responses of {', '.join(har_names)}, through mitmdump")
    sample(server)


if __name__ == "__main__":
    main()
