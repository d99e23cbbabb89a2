"""Live mode: the practice's minimal requests to a real provider or gateway, recorded as fixtures.

``streamwire check --upstream URL --key-env VAR --protocol P [--model M]``
sends two side-effect-free streaming requests in protocol ``P`` (one of the
client protocols): a short text ("say hello") and a tool call (the
``add_numbers`` and ``ping`` tools declared, "add 2 and 3"). The key is read
from the environment variable, never from the command line, and sent only
in the protocol's own header. Each answer is written, as it came off the
wire, as a fixture in the repository's manifest format
(``fixtures/README.md``, ``streamwire-fixture/1``): the raw body beside a
manifest with its sha256, the recording's metadata (streamwire and Python
versions, model, time, request id, HTTP status, time to first event, total
time, usage) and the facts streamwire read from it under ``expect``, marked
for review. Credentials never reach the files: request headers are not
written at all, and the URL is written as recordings write it (without user
info and key-like query parameters, ``streamwire.io``).
"""

from __future__ import annotations

import asyncio
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ... import __version__
from ...io._wire import redact_url, request_id, to_headers
from ...io.record import fixture_head
from ..client.raw import Observation, client_request, observe
from ..vocab.cases import CASES
from ..vocab.names import CLIENTS, adapter

__all__ = ["LIVE_REQUESTS", "record_live", "run_live"]

#: name -> (the case whose request shape is used, the prompt).
LIVE_REQUESTS = {
    "live-text": ("short-text", 'Say "hello" and nothing else.'),
    "live-tool": ("single-tool", "Use the add_numbers tool to add 2 and 3."),
}
_DEFAULT_MODELS = {
    "openai-chat": "gpt-4o-mini",
    "openai-responses": "gpt-4o-mini",
    "anthropic": "claude-haiku-4-5",
    "gemini": "gemini-2.5-flash",
}


def _prompted(body: dict[str, Any], client: str, prompt: str) -> dict[str, Any]:
    if client in ("openai-chat", "anthropic"):
        body["messages"] = [{"role": "user", "content": prompt}]
    elif client == "openai-responses":
        body["input"] = prompt
    else:
        body["contents"] = [{"role": "user", "parts": [{"text": prompt}]}]
    return body


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _events_of_type(protocol: str, data: bytes) -> dict[str, int]:
    """How many unified events of each type streamwire reads from ``data``."""
    reader = adapter(protocol)
    counts: dict[str, int] = {}
    for event in [*reader.feed(data), *reader.close()]:
        name = type(event).__name__
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def _manifest(
    name: str, protocol: str, raw: str, obs: Observation, model: str, data: bytes
) -> dict[str, Any]:
    result = obs.result
    timing = obs.timing
    usage = result.usage.as_dict() if result and result.usage else None
    if usage:
        usage.pop("raw", None)
    expect: dict[str, Any] = {}
    if result is not None:
        expect = {
            "status": result.status,
            "stop_reason": result.stop_reason,
            "text": result.text,
            "tool_call_count": len(result.tool_calls),
            "usage": usage,
            # The unified events, by type: a replay after an upgrade must give the same.
            "events_of_type": _events_of_type(protocol, data),
        }
    provider = urlsplit(obs.url).hostname or "unknown"
    return {
        **fixture_head(name, raw, data, provider, protocol),
        "provenance": {
            "transform": "streamwire check --upstream: the body as received, unmodified",
            "license": "review before committing: the provider's terms apply",
        },
        "recording": {
            "client": f"streamwire {__version__} (kit live mode), "
            f"Python {platform.python_version()}",
            "model": model,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(obs.sent_at)),
            "url": redact_url(obs.url),
            "request_id": request_id(to_headers(obs.headers)),
            "http_status": obs.status,
            "content_type": obs.content_type,
            "time_to_headers": _seconds(timing.time_to_headers if timing else None),
            "time_to_first_event": _seconds(timing.first_event if timing else None),
            "total_time": _seconds(timing.duration if timing else None),
            "usage": usage,
        },
        "exercises": f"live request {name}",
        "expect": expect,
        "notes": [
            "expect was read from this recording by streamwire; review it against the "
            "provider's documentation before relying on it"
        ]
        + ([f"the request failed: {obs.failure}"] if obs.failure else []),
    }


async def record_live(
    url: str, protocol: str, *, key: str | None, model: str | None, out: str | Path
) -> list[Path]:
    """Sends the live requests and writes each answer as a fixture; returns the manifests."""
    if protocol not in CLIENTS:
        raise ValueError(f"live mode speaks {', '.join(CLIENTS)}, not {protocol!r}")
    model = model or _DEFAULT_MODELS[protocol]
    folder = Path(out) / protocol
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (case, prompt) in LIVE_REQUESTS.items():
        target, headers, body = client_request(protocol, CASES[case], model, url, key)
        body = _prompted(body, protocol, prompt)
        if protocol == "openai-chat":
            body["stream_options"] = {"include_usage": True}
        obs = await observe(protocol, target, headers, body, read_timeout=60.0, keep_body=True)
        data = obs.body or b""
        raw = f"{name}.sse"
        (folder / raw).write_bytes(data)
        manifest = _manifest(name, protocol, raw, obs, model, data)
        path = folder / f"{name}.json"
        path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def run_live(url: str, protocol: str, *, key: str | None, model: str | None, out: str) -> int:
    """The CLI's live mode: 0 when every request streamed and completed."""
    try:
        paths = asyncio.run(record_live(url, protocol, key=key, model=model, out=out))
    except (ValueError, OSError) as exc:
        print(f"streamwire: live mode: {exc}", file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        rec = manifest["recording"]
        got = manifest["expect"].get("status")
        print(f"{path}: HTTP {rec['http_status']}, {manifest['size']} bytes, {got}")
        if got not in ("completed", "truncated"):
            status = 1
    return status
