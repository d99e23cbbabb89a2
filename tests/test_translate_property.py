"""Property: any stream of unified events survives re-encoding, or says what it lost.

Hypothesis generates unified event streams as an adapter emits them (a
started message; text, reasoning, summaries, signatures, redacted reasoning,
refusals and tool calls in any order, calls completed at once or at the end,
sometimes interleaved; usage; an ending that completes, truncates, cuts,
cancels or fails), feeds them to every encoder in random groups (as the
``feed`` calls of a socket would deliver them), and reads the wire back with
the target's adapter: the facts must match (``translate_facts.differences``,
against ``sw.result_from_events`` of the source) and the wire must follow the
target's grammar and the SDKs' models (``translate_grammar.check``).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import streamwire as sw
from translate_facts import differences
from translate_grammar import check

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=10)
VALUES = st.one_of(st.integers(-5, 5000), TEXT, st.booleans(), st.none())
ARGS = st.dictionaries(st.text(max_size=4), VALUES, max_size=3)
END_STATUS = st.sampled_from(
    ["completed", "completed", "truncated", "incomplete", "cancelled", "error"]
)


@st.composite
def _fragments(draw: Any, text: str) -> list[str]:
    if len(text) < 2:
        return [text]
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=3)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@st.composite
def streams(draw: Any) -> list[sw.Event]:
    events: list[sw.Event] = [sw.MessageStarted(message_id="msg_p", model="m-p", role="assistant")]
    deferred = draw(st.booleans())  # chat style: calls complete at the end
    pending: list[sw.Event] = []
    refused = False
    calls = 0
    for kind in draw(
        st.lists(
            st.sampled_from(
                [
                    "text",
                    "reasoning",
                    "summary",
                    "signature",
                    "redacted",
                    "refusal",
                    "call",
                    "call2",
                ]
            ),
            max_size=8,
        )
    ):
        if kind == "text":
            events.append(sw.TextDelta(text=draw(TEXT)))
        elif kind in ("reasoning", "summary"):
            events.append(
                sw.ReasoningDelta(
                    text=draw(TEXT), kind="text" if kind == "reasoning" else "summary"
                )
            )
        elif kind == "signature":
            events.append(sw.ReasoningDelta(signature=f"sig-{len(events)}"))
        elif kind == "redacted":
            events.append(sw.ReasoningDelta(redacted=f"enc-{len(events)}"))
        elif kind == "refusal":
            refused = True
            events.append(sw.RefusalDelta(text=draw(TEXT)))
        else:
            group = []
            for _ in range(2 if kind == "call2" else 1):
                args = json.dumps(draw(ARGS), ensure_ascii=draw(st.booleans()))
                index, call_id = calls, f"call_{calls}"
                calls += 1
                started = sw.ToolCallStarted(index=index, id=call_id, name=f"tool{index}")
                frags = [
                    sw.ToolCallArgumentsDelta(index=index, id=call_id, delta=f)
                    for f in draw(_fragments(args))
                ]
                done = sw.ToolCallCompleted(
                    index=index,
                    id=call_id,
                    name=f"tool{index}",
                    type="function",
                    raw_arguments=args,
                    arguments=json.loads(args),
                    invalid_reason=None,
                )
                group.append((started, frags, done))
            if len(group) == 2 and draw(st.booleans()):  # interleave the two calls
                events += [group[0][0], group[1][0]]
                a, b = group[0][1], group[1][1]
                for i in range(max(len(a), len(b))):
                    events += a[i : i + 1] + b[i : i + 1]
            else:
                for started, frags, _ in group:
                    events += [started, *frags]
                    if not deferred:
                        events.append(_)
            for _, _, done in group:
                if deferred or len(group) == 2:
                    pending.append(done)
    status = draw(END_STATUS)
    if status in ("completed", "truncated"):
        events += pending
    if draw(st.booleans()):
        prompt, completion = draw(st.integers(0, 900)), draw(st.integers(0, 900))
        raw = {"prompt_tokens": prompt, "completion_tokens": completion}
        events.append(
            sw.UsageReported(
                usage=sw.Usage(
                    input_tokens=prompt,
                    output_tokens=completion,
                    total_tokens=prompt + completion,
                    cache_read_tokens=draw(st.none() | st.integers(0, prompt)),
                    final=True,
                    raw=raw,
                )
            )
        )
    stop: Any = None
    if status == "completed":
        stop = "content_filter" if refused else "tool_calls" if calls else "stop"
    elif status == "truncated":
        stop = "length"
    elif status == "error":
        at = draw(st.integers(1, len(events)))
        events.insert(
            at,
            sw.ErrorReceived(
                phase="provider", type="server_error", code="E1", message="boom", retryable=False
            ),
        )
    events.append(sw.MessageCompleted(status=status, stop_reason=stop, provider_stop_reason=None))
    return events


@given(source=streams(), cuts=st.lists(st.integers(0, 60), max_size=6))
def test_any_stream_survives_every_target_or_declares_it(
    source: list[sw.Event], cuts: list[int]
) -> None:
    src = sw.result_from_events(source, protocol="openai-chat")
    points = sorted({c % (len(source) + 1) for c in cuts})
    groups = [source[a:b] for a, b in zip([0, *points], [*points, len(source)], strict=True)]
    for target in sw.known_encoders():
        enc = sw.encoder(target, source="openai-chat", created=0)
        wire = b"".join(enc.feed(g) for g in groups) + enc.close()
        back = sw.stream(target)
        got = back.feed(wire) + back.close()
        found = differences("openai-chat", src, source, target, back.result, got, enc.downgrades)
        assert not found, f"{target}: {found}"
        assert not check(target, wire), f"{target}: {check(target, wire)}"
