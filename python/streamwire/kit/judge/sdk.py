"""The ``sdk`` layer: what an official SDK made of a gateway's answer, against streamwire's.

An SDK cell (``client.sdk``) keeps the SDK's final object, its exception or
its API error; this judges it: the SDK must read the answer without raising,
and its final object must carry what streamwire's translation of the
upstream's stream into the client protocol carries (``rules.reference``).
"""

from __future__ import annotations

import json
from typing import Any

from ..client.sdk import SdkAnswer, sdk_version
from ..client.unary import read_answer, unary_result
from .cell import Check, Reference

__all__ = ["compare"]


def _calls(result: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in result.tool_calls]


def compare(answer: SdkAnswer, ref: Reference | None, error_type: str | None) -> Check:
    """The ``sdk`` layer: the SDK read the gateway's answer without raising, and
    its final object carries what streamwire's own translation carries (``ref``:
    None when the gateway never called the upstream); ``error_type``: the
    upstream's in-stream error type, when the case ends in one."""
    version = sdk_version(answer.sdk) or "?"
    who = f"{answer.sdk} {version}"
    if answer.raised is not None:
        kind, message = answer.raised
        return Check(
            "fail",
            f"{who} raised {kind} reading the gateway's answer: {message}",
            ("raised",),
            {"raised": kind},
        )
    if ref is None:
        what = f" ({answer.error['class']}: {answer.error.get('message')})" if answer.error else ""
        return Check(
            "fail",
            f"the gateway never called the upstream; {who} got{what or ' an answer'}",
            ("differs",),
        )
    if error_type is not None:
        if answer.error is not None:
            return Check(
                "pass",
                f"the upstream's error surfaced as {who}'s {answer.error['class']} "
                f"(type {answer.error.get('type')!r})",
            )
        if answer.answer is not None:
            events, _ = read_answer(answer.client, json.dumps(answer.answer).encode())
            result = unary_result(answer.client, events)
            if result.status == "error":
                return Check("pass", f"the upstream's error is the answer's ({who}: failed)")
        return Check(
            "fail",
            f"the upstream's {error_type!r} error never surfaced as {who}'s error: the SDK "
            "took the answer as a success",
            ("differs",),
        )
    if answer.error is not None:
        e = answer.error
        return Check(
            "fail",
            f"{who} raised {e['class']} (HTTP {e.get('status')}, type {e.get('type')!r}): "
            f"{e.get('message')}",
            ("raised",),
            {"raised": e["class"]},
        )
    if answer.answer is None:
        return Check("fail", f"{who} gave no final object", ("differs",))
    events, problem = read_answer(answer.client, json.dumps(answer.answer).encode())
    if problem is not None:
        return Check("fail", f"{who}'s final object is no answer: {problem}", ("differs",))
    got = unary_result(answer.client, events)
    want = ref.result
    differences = []
    if got.text != want.text:
        differences.append(f"text {got.text[:80]!r} (want {want.text[:80]!r})")
    if got.reasoning != want.reasoning:
        differences.append(f"reasoning {got.reasoning[:80]!r} (want {want.reasoning[:80]!r})")
    if want.stop_reason == "length":
        # A call the output limit cut has no arguments to compare: each SDK
        # keeps what it could parse of them its own way (anthropic's helper
        # parses the partial JSON); the stop reason is what says "cut".
        names = ([c.name for c in got.tool_calls], [c.name for c in want.tool_calls])
        if names[0] != names[1]:
            differences.append(f"calls {names[0]} (want {names[1]})")
    elif _calls(got) != _calls(want):
        differences.append(f"calls {_calls(got)} (want {_calls(want)})")
    if answer.client != "gemini":
        lost = [c.name for c in got.tool_calls if c.id_source != "provider"]
        if lost:
            differences.append(f"calls without an id: {lost}")
    if got.stop_reason != want.stop_reason:
        differences.append(f"stop reason {got.stop_reason!r} (want {want.stop_reason!r})")
    figures = [(u.input_tokens, u.output_tokens) if u else None for u in (got.usage, want.usage)]
    if want.usage is not None and figures[0] != figures[1]:
        differences.append(f"usage {figures[0]} (want {figures[1]})")
    if differences:
        return Check(
            "fail", f"{who}'s final object differs: " + "; ".join(differences), ("differs",)
        )
    return Check("pass", f"{who} read the answer whole ({answer.events} events)")
