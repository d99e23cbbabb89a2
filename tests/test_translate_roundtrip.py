"""Every source fixture, re-encoded into every target, read back by the target's adapter.

For each HTTP fixture of ``fixtures/providers/`` and ``fixtures/regression/``
(any protocol with a registered adapter; WebSocket sessions, which carry
several responses, are not HTTP bodies to re-encode) and each target
protocol: source bytes -> source adapter -> encoder -> target adapter. The
target's result must state the same facts as the source's (status category,
stop reason, text, reasoning and signatures, refusals, tool calls with ids,
names, arguments and executability, usage in one convention, the error,
message id and model), or the encoder must have declared the downgrade that
accounts for the difference (``translate_facts.differences``). The target
wire must also be clean: no conflict, no framing error in its own adapter.

The source is replayed under three chunkings (whole; one byte at a time for
small bodies, else many small cuts; a seeded random split), and the encoder is
fed exactly what each ``feed`` of the source adapter returned, as a gateway
does: so the encoders see every grouping of events a socket can produce.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import streamwire as sw
from chunking import split_at
from fixture_replay import Fixture, manifests
from translate_facts import differences

TARGETS = sw.known_encoders()
SOURCES = [f for f in manifests() if f.protocol in sw.known_protocols() and not f.messages]
#: (fixture, target) pairs whose difference is known and not the encoder's, with why.
KNOWN: dict[tuple[str, str], str] = {
    ("bedrock-converse/duplicate-tool-ids", "openai-chat"): (
        "the source's two calls share one id (a defect the source result reports); the "
        "chat wire keeps them apart by index, as the OpenAI SDK reads them, but the "
        "openai-chat adapter keys an id it has seen to that call (for servers that send "
        "ids before indexes) and reads one call with a changed name"
    ),
}


def _chunkings(data: bytes) -> Iterator[tuple[str, list[bytes]]]:
    rng = random.Random(0x7A11)
    yield "whole", [data]
    if len(data) <= 2048:
        yield "bytewise", [data[i : i + 1] for i in range(len(data))]
    elif len(data) > 1:
        cuts = rng.sample(range(1, len(data)), min(len(data) - 1, len(data) // 16))
        yield "small-cuts", split_at(data, cuts)
    if len(data) > 1:
        yield "random", split_at(data, rng.sample(range(1, len(data)), min(len(data) - 1, 5)))


def _translate(
    fixture: Fixture, chunks: list[bytes], target: str
) -> tuple[sw.StreamResult, list[sw.Event], list[bytes], list[sw.Downgrade]]:
    """Source chunks -> (source result, its events, the target wire per feed, downgrades)."""
    source = sw.stream(fixture.protocol, **fixture.manifest.get("options", {}))
    enc = sw.encoder(target, source=fixture.protocol, created=1764412800)
    events: list[sw.Event] = []
    wire: list[bytes] = []
    for chunk in chunks:
        got = source.feed(chunk)
        events += got
        wire.append(enc.feed(got))
    end = source.cancel() if fixture.manifest.get("replay", {}).get("end") == "cancel" else None
    if end is None:
        end = source.close()
    events += end
    wire.append(enc.feed(end))
    wire.append(enc.close())
    return source.result, events, wire, enc.downgrades


def test_sources_were_found() -> None:
    protocols = {f.protocol for f in SOURCES}
    assert {"openai-chat", "openai-responses", "anthropic", "gemini"} <= protocols
    assert len(SOURCES) > 200


@pytest.mark.parametrize("fixture", [pytest.param(f, id=f.name) for f in SOURCES])
def test_roundtrip_every_target(fixture: Fixture) -> None:
    data = fixture.fed_bytes()
    failures: list[str] = []
    for label, chunks in _chunkings(data):
        for target in TARGETS:
            src, src_events, wire, downgrades = _translate(fixture, chunks, target)
            back = sw.stream(target)
            tgt_events: list[sw.Event] = []
            for piece in wire:
                tgt_events += back.feed(piece)
            tgt_events += back.close()
            found = differences(
                fixture.protocol, src, src_events, target, back.result, tgt_events, downgrades
            )
            if (fixture.name, target) in KNOWN:
                # Known and explained: it must still be there (else drop it from KNOWN).
                assert found, f"{fixture.name} -> {target} no longer differs"
                continue
            failures += [f"[{label}] -> {target}: {d}" for d in found]
    assert not failures, f"{fixture.name}:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("target", TARGETS)
def test_translate_helper_streams_what_the_encoder_does(target: str) -> None:
    fixture = next(f for f in SOURCES if f.name == "anthropic/asdk-tool-use")
    chunks = [fixture.raw[i : i + 97] for i in range(0, len(fixture.raw), 97)]
    pieces = list(sw.translate("anthropic", target, chunks, created=7, response_id="r1"))
    assert all(pieces), "translate yields no empty pieces"
    enc = sw.encoder(target, source="anthropic", created=7, response_id="r1")
    source = sw.stream("anthropic")
    manual = b"".join(enc.feed(source.feed(c)) for c in chunks)
    manual += enc.feed(source.close()) + enc.close()
    if target == "openai-responses":  # item ids derive from the response id: equal
        assert b"".join(pieces) == manual
    else:
        back = sw.stream(target)
        back.feed(b"".join(pieces))
        back.close()
        again = sw.stream(target)
        again.feed(manual)
        again.close()
        assert back.result.text == again.result.text
        assert [c.id for c in back.result.tool_calls] == [c.id for c in again.result.tool_calls]
