"""A recording keeps no credential, wherever the upstream repeats it.

docs/design.md ("Fixtures"): recorded streams are redacted, credentials
removed. Beyond the request's secret headers (``test_record_replay.py``):

* URL parameters are secret by a pattern of names, not a list: AWS SigV4
  presigned requests' ``X-Amz-Credential``, ``X-Amz-Signature``,
  ``X-Amz-Security-Token``; ``client_secret``, ``password``,
  ``refresh_token``; a path segment's ``;key=``; a query parameter after a
  ``;`` instead of an ``&`` (``?alt=sse;key=``).
* The values of the response headers that are kept are scanned (a redirect's
  ``Location: ...?key=``).
* Any value equal to a credential the request carried is masked wherever
  the body repeats it (an error body that echoes the key), and so in the
  events and ``result.error.message`` derived from it: in the saved file,
  with and without ``hash_content``, over every client on loopback.
"""

from __future__ import annotations

import io
import json

import pytest

import streamwire as sw
from servers.clients import CLIENTS, fetch
from servers.stream_server import Scenario, StreamServer, shared_server
from streamwire.io import Recording, verify
from streamwire.io._wire import credentials, redact_headers, redact_text, redact_url

KEY = "sk-test-LEAKY0123456789abcdefKEY"
SIGNATURE = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"
PRESIGNED = (
    "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261201%2Fus-east-1%2Fbedrock%2Faws4_request"
    f"&X-Amz-Date=20261201T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
    f"&X-Amz-Security-Token={TOKEN}&X-Amz-Signature={SIGNATURE}"
)


@pytest.fixture(scope="session")
def server() -> StreamServer:
    return shared_server()


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://bedrock.example/model/m/invoke" + PRESIGNED, ["X-Amz-Date", "X-Amz-Expires"]),
        ("https://idp.example/token?client_secret=cs123456&grant_type=refresh", ["grant_type"]),
        ("https://idp.example/token?refresh_token=rt123456&password=pw123456&user=u", ["user"]),
        ("https://gemini.example/v1/models/m:generate;key=AIzaSyEXAMPLE123;x=1?alt=sse", ["alt"]),
        (
            "https://gemini.example/v1/models/m:streamGenerateContent?alt=sse;key=AIzaSyEXAMPLE123",
            ["alt"],
        ),
        (
            "https://gemini.example/v1/models/m:stream?key=AIzaSyEXAMPLE123;alt=sse;x=1",
            ["alt", "x"],
        ),
        ("https://api.example/v1?access_token=at123456&apikey=k1234567&sig=s12345678", []),
    ],
)
def test_url_parameters_are_secret_by_their_name(url: str, kept: list[str]) -> None:
    redacted = redact_url(url)
    for value in (SIGNATURE, TOKEN, "AKIAIOSFODNN7EXAMPLE", "cs123456", "rt123456", "pw123456"):
        assert value not in redacted
    for value in ("AIzaSyEXAMPLE123", "at123456", "k1234567", "s12345678"):
        assert value not in redacted
    for name in kept:
        assert name in redacted


def test_semicolon_separated_query_parameters_are_read_like_ampersand_ones() -> None:
    url = "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse;key=AIzaSyEXAMPLE123"
    assert redact_url(url) == "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse"
    assert credentials([], url) == ["AIzaSyEXAMPLE123"]
    # The separators of the parameters kept stay as they were.
    mixed = "https://h.example/p?a=1;key=AIzaSyEXAMPLE123;b=2&c=3"
    assert redact_url(mixed) == "https://h.example/p?a=1;b=2&c=3"


def test_header_values_are_scanned() -> None:
    headers = (
        ("Location", "https://gemini.example/v1/models/m?key=AIzaSyEXAMPLE123&alt=sse"),
        ("Link", f"<https://bedrock.example/x{PRESIGNED}>; rel=next"),
        ("x-debug", f"echo Bearer {KEY}"),
        ("x-request-id", "req_123"),
    )
    out = dict(redact_headers(headers, [KEY]))
    text = json.dumps(out)
    for value in ("AIzaSyEXAMPLE123", SIGNATURE, TOKEN, KEY):
        assert value not in text
    assert out["x-request-id"] == "req_123"
    assert "alt=sse" in out["Location"]


def test_the_credentials_of_a_request_are_found() -> None:
    sigv4 = (
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261201/us-east-1/bedrock/"
        f"aws4_request, SignedHeaders=host;x-amz-date, Signature={SIGNATURE}"
    )
    found = credentials(
        [("Authorization", f"Bearer {KEY}"), ("x-amz-security-token", TOKEN), ("Auth2", sigv4)],
        "https://h/p?key=AIzaSyEXAMPLE123",
    )
    for value in (KEY, TOKEN, SIGNATURE, "AIzaSyEXAMPLE123"):
        assert value in found
    assert redact_text(f"the key {KEY} is invalid", found) == "the key [redacted] is invalid"


def _echo_scenarios() -> list[tuple[str, Scenario]]:
    error = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_api_key"}}
    body = json.dumps(error).encode()
    stream = (
        b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        + sw.encode_sse(json.dumps(error))
    )
    location = {"Location": f"https://api.example/retry?key={KEY}&alt=sse"}
    return [
        ("http-error", Scenario(body=body, status=401, content_type="application/json")),
        # The key split across two chunks, in an in-stream error.
        ("in-stream", Scenario(body=stream, chunks=[stream[:90], stream[90:]], headers=location)),
    ]


@pytest.mark.parametrize("case", ["http-error", "in-stream"])
@pytest.mark.parametrize("client", CLIENTS)
def test_no_recording_holds_a_credential_the_upstream_repeats(
    server: StreamServer, client: str, case: str
) -> None:
    scenario = dict(_echo_scenarios())[case]
    url = server.add(scenario)
    headers = {"Authorization": f"Bearer {KEY}", "x-goog-api-key": KEY}
    query = f"?key={KEY}&" + PRESIGNED[1:]
    out = fetch(client, url + query, "openai-chat", record=True, headers=headers)
    assert out.result is not None and out.result.status == "error"
    assert KEY in (out.result.error.message or "")  # the live result is the provider's, verbatim
    recording = out.recording
    assert recording is not None
    for hashed in (False, True):
        buf = io.StringIO()
        recording.save(buf, hash_content=hashed)
        text = buf.getvalue()
        for secret in (KEY, SIGNATURE, TOKEN, "AKIAIOSFODNN7EXAMPLE"):
            assert secret not in text, (hashed, secret)
        loaded = Recording.load(io.StringIO(text))
        assert loaded.result is not None
        message = loaded.result["error"]["message"]
        assert "*" * len(KEY) in message
        assert verify(loaded) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_a_semicolon_key_parameter_is_kept_by_no_recording(
    server: StreamServer, client: str
) -> None:
    # Gemini's streaming URL with its key after a ";" (...:streamGenerateContent?alt=sse;key=),
    # and an error body that echoes the key: neither save() form keeps it.
    scenario = dict(_echo_scenarios())["http-error"]
    url = server.add(scenario) + f"?alt=sse;key={KEY}"
    out = fetch(client, url, "openai-chat", record=True)
    recording = out.recording
    assert recording is not None and recording.request is not None
    for hashed in (False, True):
        buf = io.StringIO()
        recording.save(buf, hash_content=hashed)
        text = buf.getvalue()
        assert KEY not in text, (client, hashed)
        loaded = Recording.load(io.StringIO(text))
        assert loaded.request is not None and "alt=sse" in loaded.request["url"], loaded.request
        assert loaded.result is not None and "*" * len(KEY) in loaded.result["error"]["message"]
        assert verify(loaded) == []
