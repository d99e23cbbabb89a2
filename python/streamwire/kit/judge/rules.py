"""The judge: one cell (case x client x upstream x delivery) -> a verdict per layer, with evidence.

The layers (``cell.LAYERS``) and their verdicts (``pass``, ``fail``,
``degraded``, ``not_applicable``) are the practice's, names fixed (tests
outside the project read them); docs/kit/verdicts.md ("The layers") says
what each one checks.

The rules are data: ``LAYER_RULES`` maps each layer to the cases it applies
to and the function that compares what the client got with the case's facts
(``cases.truth``). A fact the client lost is ``degraded`` rather than
``fail`` when streamwire's own translation from that upstream to that client
protocol loses it too (``reference``: the upstream's bytes through
``sw.stream`` and ``sw.encoder``, read back): the client's protocol cannot
carry it, and the encoder declares the loss (``docs/translation.md``). The
rules of the two timed layers are ``judge/timed.py``; the verdicts are
derived from the cells by ``judge/verdicts.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from ..._core import SseDecoder
from ...io._wire import http_error, media_type, to_headers
from ...protocols import Stream
from ...result import StreamResult, Usage
from ...translate._usage import INPUT_INCLUDES_CACHE, figures
from ..client.raw import Observation
from ..upstream.eventstream import converse_units, invoke_units
from ..upstream.live import live_writes
from ..upstream.realtime import RealtimeWriter, sse_payloads
from ..upstream.wire import render_stream
from ..vocab.buffers import hold_bound
from ..vocab.cases import CASES, USAGE_PARTS, Case, Truth, truth
from ..vocab.delivery import UNARY, Unit, Write
from ..vocab.kinds.cancel import CANCEL_TIMER
from ..vocab.names import BEDROCK_CLIENTS, WS_ERROR_TYPES, WS_LOSSES, adapter, encoder, wire_of
from ..vocab.names import media_type as media_type_of
from ..vocab.toolturn import FLAG_PROTOCOLS
from .cell import LAYERS, Check, Inputs, Reference
from .timed import cancel, head_of_line, streaming

__all__ = ["LAYER_RULES", "Rule", "inputs", "judge", "reference"]

_ORDER = {"pass": 0, "not_applicable": 0, "degraded": 1, "fail": 2}


@lru_cache(maxsize=512)
def reference(
    case_name: str,
    upstream: str,
    client: str,
    usage_sent: bool,
    wants_usage: bool,
    attempt: int = 1,
) -> Reference:
    """The upstream's bytes for a case translated by streamwire and read back.

    streamwire has no Bedrock encoder; for a Bedrock client the upstream's
    events are written by the mock's own Bedrock writer (``upstream/eventstream.py``),
    which carries every fact the kit checks: no downgrade is declared there."""
    return reference_of(CASES[case_name], upstream, client, usage_sent, wants_usage, attempt)


def reference_of(
    case: Case,
    upstream: str,
    client: str,
    usage_sent: bool,
    wants_usage: bool,
    attempt: int = 1,
) -> Reference:
    """``reference`` of a case that is not one of ``CASES`` as it stands (a
    salted one, ``cases.salted``), not kept: every stream's is its own."""
    # A WebSocket protocol's facts are its HTTP sibling's (``names.wire_of``).
    asked = client
    upstream, client = wire_of(upstream), wire_of(client)
    units = render_stream(
        case, upstream, model=f"sw-{case.name}", usage=usage_sent, attempt=attempt, silence=0.0
    )
    source = adapter(upstream)
    if client in BEDROCK_CLIENTS:
        return _bedrock_reference(client, source, units)
    include = wants_usage if client == "openai-chat" else True
    enc = encoder(client, source=upstream, include_usage=include)
    body = bytearray()
    for unit in units:
        body += enc.feed(source.feed(unit.data))
    body += enc.feed(source.close()) + enc.close()
    lost = {d.feature: d.detail for d in enc.downgrades}
    if asked == "openai-realtime":
        # Realtime's answer is the Responses one in Realtime's events, as the
        # mock writes them (``upstream/realtime.py``), read back.
        return Reference(_realtime_back(bytes(body)), lost)
    if asked == "gemini-live":
        # Live's, the Gemini one in Live's messages (``upstream/live.py``).
        return Reference(_live_back(bytes(body)), lost)
    back = adapter(client)
    back.feed(bytes(body))
    back.close()
    return Reference(back.result, lost)


def _realtime_back(body: bytes) -> StreamResult:
    writer = RealtimeWriter()
    back: Any = adapter("openai-realtime")
    back.feed_message(json.dumps({"type": "session.created", "session": {}}))
    for payload in sse_payloads(body):
        for event in writer.events(payload):
            back.feed_message(json.dumps(event))
    back.close()
    results = back.results
    result: StreamResult = results[0] if results else back.result
    return result


def _live_back(body: bytes) -> StreamResult:
    turn = live_writes([Write(body)], ())[0][0]
    back: Any = adapter("gemini-live")
    back.feed_message(json.dumps({"setupComplete": {}}))
    for message in turn.messages:
        back.feed_message(json.dumps(message))
    if turn.close is not None:
        back.connection_closed(*turn.close)
    else:
        back.close()
    results = back.results
    result: StreamResult = results[0] if results else back.result
    return result


def carried(facts: Truth, upstream: str) -> Truth:
    """The facts of a case as ``upstream`` (a WebSocket protocol's name, or
    an HTTP one's) can stream them: its HTTP sibling's, less what it has no
    field for (``names.WS_LOSSES``: Realtime sends no reasoning, nor a
    reasoning token count; Gemini Live's error is its close, whose type
    streamwire names ``websocket_close``)."""
    losses = WS_LOSSES.get(upstream, frozenset())
    if "error_type" in losses and facts.error_type is not None:
        facts = replace(facts, error_type=WS_ERROR_TYPES[upstream])
    if "reasoning" not in losses:
        return facts
    parts = tuple(p for p in facts.usage_parts if p[0] != "reasoning")
    return replace(facts, reasoning="", signature=None, usage_parts=parts)


def _bedrock_reference(client: str, source: Stream, units: Sequence[Unit]) -> Reference:
    events = [e for unit in units for e in source.feed(unit.data)] + source.close()
    if client == "bedrock-converse":
        frames = converse_units(events, source.protocol)
    else:
        enc = encoder("anthropic", source=source.protocol)
        sse = enc.feed(events) + enc.close()
        usage = source.result.usage
        billed = figures(usage, source.protocol) if usage else None
        counts = (billed.input_fresh or 0, billed.output or 0) if billed else (0, 0)
        frames = invoke_units([ev.data for ev in SseDecoder().feed(sse)], counts)
    back = adapter(client)
    for frame in frames:
        back.feed(frame.data)
    back.close()
    return Reference(back.result, {})


# --- helpers ---------------------------------------------------------------------


def _excerpt(text: str, at: int, width: int = 40) -> str:
    return repr(text[max(0, at - width // 2) : at + width // 2])


def _diff(got: str, want: str) -> str:
    n = 0
    limit = min(len(got), len(want))
    while n < limit and got[n] == want[n]:
        n += 1
    return (
        f"{len(got)} chars received, {len(want)} sent; first difference at {n}: "
        f"got {_excerpt(got, n)}, sent {_excerpt(want, n)}"
    )


def _worst(checks: Sequence[Check]) -> Check:
    if not checks:
        return Check("pass")
    worst = max(checks, key=lambda c: _ORDER[c.verdict])
    whys = "; ".join(c.why for c in checks if c.why and c.verdict == worst.verdict)
    tags = tuple(t for c in checks if c.verdict == worst.verdict for t in c.tags)
    return Check(worst.verdict, whys, tags)


def _compare(
    label: str,
    got: Any,
    want: Any,
    ref: Any,
    loss: str | None,
    show: Callable[[Any, Any], str],
    tag: str = "",
) -> Check:
    if got == want:
        return Check("pass")
    if ref is not None and got == ref and ref != want:
        return Check(
            "degraded", f"{label}: {loss or 'not carried by the client protocol'}", ("lost",)
        )
    return Check("fail", f"{label}: {show(got, want)}", (tag,) if tag else ())


def _plain(got: Any, want: Any) -> str:
    return f"got {got!r}, the upstream sent {want!r}"


def _loss(ref: Reference | None, *features: str) -> str | None:
    if ref is None:
        return None
    for feature in features:
        if feature in ref.downgrades:
            return ref.downgrades[feature]
    return None


# --- the layer rules ---------------------------------------------------------------


def _http(x: Inputs) -> Check:
    obs = x.obs
    if obs.status is None:
        if obs.cancel_reason == "timer":
            return Check(
                "not_applicable",
                f"the client hung up ({CANCEL_TIMER:.0f} s) before the response head arrived",
            )
        if obs.kit_limit is not None:
            return Check("not_applicable", _cut(x), ("kit_limit",))
        if x.entry is not None:
            # The gateway did call the upstream: it answered the client nothing.
            return Check(
                "fail",
                f"no response, though the gateway called the upstream: {obs.failure}",
                ("dropped",),
            )
        return Check("fail", f"no response: {obs.failure}", ("unreachable",))
    if not obs.succeeded:
        body = obs.raw_head.decode("utf-8", "replace")[:300]
        if x.entry is None:
            return Check(
                "fail",
                f"HTTP {obs.status} without any call to the upstream: {body}",
                ("status", "not_called"),
            )
        if x.truth.error_type is not None:
            # The gateway held the stream back and answered the upstream's
            # in-stream error as a status: ``completion`` judges its type.
            return Check("pass", f"the upstream's in-stream error arrived as HTTP {obs.status}")
        if x.case.kind.per_attempt:
            # A failed attempt's error passed on (``retries`` judges it).
            return Check("pass", f"the failed attempt's error arrived as HTTP {obs.status}")
        return Check("fail", f"HTTP {obs.status}: {body}", ("status",))
    if x.entry is None:
        error = obs.result.error if obs.result is not None else None
        if obs.websocket and not obs.content and (obs.failure or error is not None):
            # The socket opened, and the gateway closed it (Live: an error's
            # close) with nothing said, never having called the upstream: its
            # refusal, as a status is.
            why = obs.failure or (error.message if error is not None else None)
            return Check(
                "fail",
                f"the socket opened, then ended without any call to the upstream: {why}",
                ("not_called",),
            )
        return Check("pass", "the request never reached the mock (the gateway answered itself)")
    return Check("pass")


def _cut(x: Inputs) -> str:
    """Why a cell was cut by the kit's own limit, and where the mock was then."""
    obs, entry = x.obs, x.entry
    limit = (obs.kit_limit or "").replace("_", " ")
    if entry is None:
        mock = "the mock had not been called"
    elif entry.get("completed"):
        mock = "the mock had sent its whole answer"
    else:
        mock = f"the mock had made {len(entry.get('writes') or [])} writes and was still writing"
    return f"cut by the kit's {limit} ({obs.failure}); {mock}: not the gateway's verdict"


def _coding(name: str) -> str:
    return "gzip" if name == "x-gzip" else name


def _framing(x: Inputs) -> Check:
    obs = x.obs
    if not obs.succeeded and (x.truth.error_type is not None or x.case.kind.per_attempt):
        return Check("not_applicable", f"the error arrived as HTTP {obs.status}")
    unary = x.delivery == UNARY
    want = "application/json" if unary or obs.websocket else media_type_of(x.client)
    encoding = next((v for k, v in obs.headers if k == "content-encoding"), "identity")
    codings = [c.strip().lower() for c in encoding.split(",")]
    accepted = {a.split(";")[0].strip().lower() for a in obs.accept_encoding.split(",")}
    refused = [c for c in codings if c not in ("", "identity") and _coding(c) not in accepted]
    if refused:
        # A client library decodes what the header says, or fails on it.
        return Check(
            "fail",
            f"content-encoding {encoding!r}, which the client did not accept (it asked for "
            f"{obs.accept_encoding}): a client decodes the body as that, or fails",
        )
    if not obs.websocket and media_type(obs.content_type) != want:
        body = obs.raw_head.decode("utf-8", "replace")[:300]
        kind = "an HTML page" if body.lstrip().lower().startswith("<") else "a body"
        return Check("fail", f"content type {obs.content_type!r}, not {want}: {kind}: {body}")
    if obs.framing_error:
        if unary:
            return Check("fail", f"the body is no {x.client} answer: {obs.framing_error}")
        return Check("fail", f"the framing broke: {obs.framing_error}")
    result = obs.result
    if result is not None and not result.framing_ok:
        err = result.error
        what = f"{err.type}: {err.message}" if err else "unparseable events"
        return Check("fail", f"an event is not {x.client}'s wire format ({what})")
    return Check("pass")


def _deltas(x: Inputs) -> Check:
    result, t, ref = x.obs.result, x.truth, x.ref
    if result is None:
        if x.http_ok and t.error_type is not None:
            return Check("not_applicable", "the in-stream error arrived as an HTTP status")
        return Check("fail", "no stream to read", ("consequence",))
    if x.case.kind.hangs_up:
        if not result.text and x.obs.cancelled_at is not None:
            return Check("not_applicable", "no text arrived before the client hung up")
        if t.text.startswith(result.text) and result.text:
            return Check("pass", f"{len(result.text)} chars before the hang-up, in order")
        return Check(
            "fail",
            f"the text before the hang-up is not the upstream's: {_diff(result.text, t.text)}",
            ("text",),
        )
    text_tag = "text"
    if t.error_type is not None and result.text.startswith(t.text) and result.status != "error":
        # The upstream's error went on as text after the answer: what masked it.
        text_tag = "error_as_text"
    checks = [
        _compare(
            "text",
            result.text,
            t.text,
            ref.result.text if ref else None,
            None,
            lambda g, w: _diff(g, w),
            text_tag,
        )
    ]
    if t.reasoning:
        checks.append(
            _compare(
                "reasoning",
                result.reasoning,
                t.reasoning,
                ref.result.reasoning if ref else None,
                _loss(ref, "reasoning"),
                lambda g, w: _diff(g, w),
                "reasoning",
            )
        )
    if t.signature:
        got = result.choices[0].reasoning_signatures if result.choices else ()
        want = (t.signature,)
        refsig = ref.result.choices[0].reasoning_signatures if ref and ref.result.choices else None
        checks.append(
            _compare(
                "reasoning signature",
                tuple(got),
                want,
                refsig,
                _loss(ref, "reasoning_signature"),
                _plain,
                "reasoning",
            )
        )
    if not result.deltas_ok:
        checks.append(
            Check(
                "fail",
                f"deltas rejected: {'; '.join(result.conflicts) or 'a cap was hit'}",
                ("text",),
            )
        )
    return _worst(checks)


def _tool_calls(x: Inputs) -> Check:
    result, t, ref = x.obs.result, x.truth, x.ref
    if result is None:
        return Check("fail", "no stream to read", ("consequence",))
    got = result.tool_calls
    details = {
        "calls": [
            {
                "id": c.id,
                "id_source": c.id_source,
                "name": c.name,
                "raw_arguments": c.raw_arguments[:500],
            }
            for c in got
        ]
    }
    problems = []
    declared = x.entry.get("tools") if x.entry else None
    if isinstance(declared, list):
        dropped = sorted({name for _, name, _ in t.calls} - set(declared))
        if dropped:
            problems.append(
                f"the gateway's request to the upstream declares {declared or 'no tools'}, "
                f"not {dropped}: a model there could not call them"
            )
    if len(got) != len(t.calls):
        problems.append(f"{len(got)} calls, the upstream made {len(t.calls)}")
    for i, (call, (_, name, args)) in enumerate(zip(got, t.calls, strict=False)):
        if call.name != name:
            problems.append(f"call {i}: name {call.name!r}, the upstream's is {name!r}")
        if call.arguments is None:
            problems.append(f"call {i}: arguments are not JSON: {call.raw_arguments[:120]!r}")
        elif call.arguments != args:
            problems.append(
                f"call {i}: arguments {json.dumps(call.arguments)[:160]} differ from the upstream's"
            )
    ids = [c.id for c in got if c.id_source == "provider" and c.id]
    # A call the upstream gave no id (Gemini) may reach the client without one.
    sent_ids = [cid for cid, _, _ in t.calls]
    missing = [
        i
        for i, c in enumerate(got)
        if not (c.id_source == "provider" and c.id) and i < len(sent_ids) and sent_ids[i]
    ]
    ref_missing = ref is not None and any(c.id_source != "provider" for c in ref.result.tool_calls)
    id_check = Check("pass")
    if missing:
        if ref_missing or x.client == "gemini":
            # Gemini's API makes call ids optional: a result names its call.
            id_check = Check(
                "degraded",
                f"calls {missing} have no id: {x.client} correlates results by name",
                ("lost",),
            )
        else:
            problems.append(f"calls {missing} have no id")
    if len(set(ids)) != len(ids):
        problems.append(f"call ids repeat: {ids}")
    if not result.tool_args_complete and not problems:
        problems.append("a call was never completed")
    if problems:
        return Check("fail", "; ".join(problems), details=details)
    id_check.details = details
    return id_check


def _tool_results(x: Inputs) -> Check:
    first = x.obs.result
    if first is None:
        return Check("fail", "no answer to read, so no call to answer", ("consequence",))
    if not first.tool_calls:
        return Check("fail", "no call was streamed to answer")
    follow, entry = x.follow_obs, x.follow_entry
    if follow is None:
        return Check(
            "fail", "the follow-up request could not be built from what the client received"
        )
    if entry is not None and entry.get("failed") == "previous_response_not_found":
        # WebSocket mode's state is the upstream socket's: the gateway sent the
        # continuation over another one.
        return Check(
            "fail",
            "the follow-up continued the first response (previous_response_id) on an upstream "
            "socket that never answered it: previous_response_not_found",
            ("session_state",),
        )
    if not follow.succeeded:
        return Check(
            "fail",
            f"the follow-up was refused: HTTP {follow.status} {follow.failure or ''}".strip(),
        )
    if entry is None:
        return Check("fail", "the follow-up never reached the upstream")
    check = entry.get("tool_result")
    details = {"upstream_saw": check}
    if check is None:
        return Check(
            "fail",
            "the follow-up reached the upstream without the history (one turn)",
            details=details,
        )
    if not check["found"]:
        return Check("fail", "the upstream request carries no tool result", details=details)
    if not check["correlated"]:
        return Check(
            "fail",
            f"the result answers {check['seen']}, the upstream's call is {check['expected']!r}",
            details=details,
        )
    if not check["call_in_history"]:
        return Check(
            "fail", "the assistant's call is missing from the history it answers", details=details
        )
    if check["flag_exists"] and check["is_error"] is not True:
        if x.client in FLAG_PROTOCOLS:
            return Check(
                "fail",
                "the result's error flag was lost: the upstream sees the failed tool as a success",
                ("flag_lost",),
                details,
            )
        out = Check("degraded", f"{x.client} tool results have no error flag", ("lost",), details)
    else:
        out = Check("pass", details=details)
    answer = follow.result
    t = x.truth
    if answer is None or answer.text != t.follow_up or answer.status != "completed":
        got = answer.text if answer else None
        return Check(
            "fail", f"the answer to the result did not arrive intact: {got!r}", details=details
        )
    return out


def _completion(x: Inputs) -> Check:
    result, t, ref = x.obs.result, x.truth, x.ref
    status = x.obs.status
    if not x.http_ok and not (t.error_type is not None and status is not None):
        http = x.checks.get("http")
        if http is not None and http.verdict == "not_applicable":
            return Check("not_applicable", http.why, http.tags)
        return Check("fail", "no stream: the HTTP layer failed", ("consequence",))
    if t.error_type is not None and status is not None and not x.obs.succeeded:
        # The gateway held the stream back and answered an HTTP error instead.
        # The head holds the error body: the first KEEP_BYTES of it.
        kind = http_error(status, to_headers(x.obs.headers), x.obs.raw_head).type
        if _same_type(kind, t.error_type):
            return Check("pass", f"the error became HTTP {x.obs.status}, type {kind!r} kept")
        return Check(
            "fail",
            f"the upstream's {'' if x.delivery == UNARY else 'in-stream '}{t.error_type!r} "
            f"became HTTP {x.obs.status} "
            f"with type {kind!r}",
            ("type_lost",),
        )
    if result is None:
        if x.case.kind.per_attempt:
            return Check("not_applicable", "the client got the failure: see retries")
        return Check("fail", "no stream to read", ("consequence",))
    if x.obs.kit_limit is not None:
        return Check("not_applicable", _cut(x), ("kit_limit",))
    if x.case.kind.silent:
        cut = _silence_cut(x)
        if cut is not None:
            return cut
    if x.case.kind.per_attempt and result.status == "error":
        return Check("not_applicable", "the client got the failure: see retries")
    if x.obs.failure:
        return Check("fail", f"the answer broke off: {x.obs.failure}", ("broken",))
    if x.case.kind.hangs_up:
        return _ended_before_hang_up(x, result, t)
    if t.status == "truncated" and "length" in WS_LOSSES.get(x.upstream or "", ()):
        # The upstream has no end for the output limit (Gemini Live): it told
        # the gateway of no cut, and no gateway can pass one on.
        return Check(
            "not_applicable",
            f"the upstream protocol ({x.upstream}) has no end for the output limit: "
            "the cut never reached the gateway",
        )
    if x.case.name == "truncated-tool" and result.executable:
        return Check(
            "fail",
            f"the call the output limit cut arrived executable ({result.status}, stop reason "
            f"{result.stop_reason!r})",
            ("truncation", "executable"),
        )
    if t.error_type is not None:
        err = result.error
        if result.status != "error" or err is None:
            # What the client was told, as it was told it: the status, the
            # stop reason the stream gave, and what became of the text.
            said = f"{result.status}, stop reason {result.stop_reason!r}"
            if result.provider_stop_reason not in (None, result.stop_reason):
                said += f" ({result.provider_stop_reason!r} on the wire)"
            text = "the text altered" if t.text != result.text else "the text as sent"
            return Check(
                "fail",
                f"the upstream's {t.error_type} arrived as {said}, {text}: not as an error",
                ("masked",),
            )
        if err.type != t.error_type:
            refer = ref.result.error if ref else None
            if refer is not None and refer.type == err.type:
                return Check(
                    "degraded", f"error type {t.error_type} carried as {err.type}", ("lost",)
                )
            return Check(
                "fail",
                f"the provider's error type {t.error_type!r} arrived as {err.type!r} "
                f"(code {err.code!r})",
                ("type_lost",),
            )
        return Check("pass", f"error {err.type!r} kept")
    got = (result.status, result.stop_reason)
    want = (t.status, t.stop_reason)
    deltas = x.checks.get("deltas")
    if result.status == "protocol_conflict" and deltas is not None and deltas.verdict == "fail":
        # The stream contradicted itself, which made its status: one cause, the deltas'.
        return Check(
            "fail",
            f"status {result.status!r}, the upstream sent {t.status!r}: see deltas",
            ("consequence",),
        )
    refgot = (ref.result.status, ref.result.stop_reason) if ref else None
    tag = "truncation" if t.status == "truncated" and result.status != "truncated" else ""
    return _compare(
        "status and stop reason", got, want, refgot, _loss(ref, "stop_reason"), _plain, tag
    )


def _ended_before_hang_up(x: Inputs, result: StreamResult, t: Truth) -> Check:
    """A cancel case's stream that ended before its client hung up (after
    its kind's few text deltas, or its timer): the upstream was still
    streaming, so only its whole answer could have ended it."""
    if result.status == "completed" and result.text == t.text:
        return Check("pass", "the whole answer arrived before the client could hang up")
    how = (
        "without its end event"
        if result.status in ("in_progress", "incomplete")
        else (f"as {result.status}")
    )
    return Check(
        "fail",
        f"the stream ended {how} after {len(result.text)} of the upstream's {len(t.text)} "
        f"characters, before the client hung up (after {x.case.kind.conduct.hang_up_after} "
        "text deltas): "
        "the upstream was still streaming",
        ("broken",),
    )


def _same_type(got: str | None, want: str) -> bool:
    """The same error type: AWS names an exception in lowerCamelCase in its event
    streams and in UpperCamelCase in an HTTP error's ``x-amzn-errortype``."""
    if got is None or got == want:
        return got == want
    return want.endswith("Exception") and got[:1].lower() + got[1:] == want[:1].lower() + want[1:]


def _figures(result: StreamResult | None) -> tuple[int | None, int | None] | None:
    usage = result.usage if result else None
    if usage is None:
        return None
    return usage.input_tokens, usage.output_tokens


def _in_convention(t: Truth, client: str) -> tuple[int, int] | None:
    """The truth's (input, output) in ``client``'s convention: its input counts
    the cached tokens, or only the fresh ones (Anthropic, Bedrock:
    ``translate._usage``), the upstream's cache figures taken out."""
    if t.usage is None:
        return None
    i, o = t.usage
    if not INPUT_INCLUDES_CACHE.get(client, True):
        parts = dict(t.usage_parts)
        i -= parts.get("cache_read", 0) + parts.get("cache_write", 0)
    return i, o


def _as_reported(t: Truth, upstream: str | None, client: str) -> str:
    """The upstream's (input, output) as it reported them, and what they are in
    ``client``'s convention when that counts the cached input otherwise."""
    want = _in_convention(t, client)
    sent = _in_convention(t, upstream or client)
    if sent == want or want is None or sent is None:
        return str(want)
    cached = abs(sent[0] - want[0])
    counted = "without" if want[0] < sent[0] else "with"
    return (
        f"{sent}, which is {want} for {client} clients (input {counted} its {cached} cached tokens)"
    )


def _part(usage: Usage | None, name: str) -> int:
    value = getattr(usage, USAGE_PARTS[name]) if usage is not None else None
    return value if isinstance(value, int) else 0


def _usage(x: Inputs) -> Check:
    result, t, ref = x.obs.result, x.truth, x.ref
    if result is None:
        return Check("fail", "no stream to read", ("consequence",))
    usage = result.usage
    got = _figures(result)
    if x.obs.cancelled_at is not None:  # the client hung up
        if usage is not None and usage.final:
            return Check("fail", f"a final usage {got} before the stream ended", ("invented",))
        return Check(
            "pass", "no final usage after the hang-up: record it as incomplete, never estimate"
        )
    asked = x.client != "openai-chat" or x.case.wants_usage
    zero = got is not None and not any(got)
    if t.usage is None:  # the upstream reported none
        if (got is None or zero) and x.case.wants_usage:
            return Check(
                "fail",
                "the upstream was never asked for usage (stream_options.include_usage), "
                "so the client's request for it went unmet",
                ("missing",),
            )
        if got is None:
            return Check("pass", "no usage reported, none invented")
        if zero and ref is not None and _figures(ref.result) == got:
            # The client protocol carries usage in every answer (Anthropic's
            # message_start): streamwire's own translation writes the same.
            return Check(
                "degraded",
                f"usage {got} where the upstream sent none: the client protocol carries "
                "usage in every answer, and zeros stand for none",
                ("lost",),
            )
        # Zeros are figures: a client bills, budgets and logs by them.
        return Check("fail", f"usage {got} reported, the upstream sent none", ("invented",))
    if got is None or not (usage and usage.final):
        if not asked:
            return Check("pass", "not asked for (chat without include_usage)")
        refgot = _figures(ref.result) if ref else None
        if ref is not None and (
            refgot is None or not ref.result.usage or not ref.result.usage.final
        ):
            return Check(
                "degraded", "the client protocol could not carry the final usage", ("lost",)
            )
        return Check("fail", f"the upstream's final usage {t.usage} is missing", ("missing",))
    want = _in_convention(t, x.client)
    if got != want:
        if ref is not None and _figures(ref.result) == got:
            return Check("degraded", f"usage converted to {got}", ("lost",))
        said = _as_reported(t, x.upstream, x.client)
        if zero:
            return Check("fail", f"usage {got}: the upstream's {said} was lost", ("missing",))
        return Check("fail", f"usage {got}; the upstream reported {said}", ("invented",))
    return _usage_parts(usage, t.usage_parts, ref.result.usage if ref else None)


def _usage_parts(usage: Usage, sent: Sequence[tuple[str, int]], carried: Usage | None) -> Check:
    """The parts beyond input and output (cache reads and writes, reasoning):
    each the upstream sent must arrive with its figure, unless the client
    protocol has no field for it (``carried``: streamwire's own translation
    read back); none may arrive that the upstream did not send."""
    sent_parts = dict(sent)
    checks = []
    for name in USAGE_PARTS:
        want, have = sent_parts.get(name, 0), _part(usage, name)
        label = name.replace("_", " ")
        if want and not have:
            if carried is not None and not _part(carried, name):
                checks.append(
                    Check(
                        "degraded", f"{label} {want}: the client protocol has no field", ("lost",)
                    )
                )
            else:
                checks.append(
                    Check("fail", f"{label}: the upstream's {want} did not arrive", ("missing",))
                )
        elif have != want and (have or want):
            checks.append(
                Check("fail", f"{label} {have}, the upstream reported {want}", ("invented",))
            )
    return _worst(checks)


#: A cut this soon into a silence (or the upstream closed this soon) is no
#: idle timeout: LiteLLM's Bedrock pass-through was seen closing the upstream
#: 0.06 s into one and the client's stream 0.3 s in, intermittently.
IDLE_LEAST = 0.5


def _silence_cut(x: Inputs) -> Check | None:
    """Whether the hop cut a silent stream, when, and how the client heard of it
    (None: it did not)."""
    result, t, obs = x.obs.result, x.truth, x.obs
    assert result is not None
    if result.text == t.text and result.status == t.status and not obs.failure:
        return None
    entry = x.entry or {}
    silent_from = x.case.kind.silent_since(entry)
    writes = entry.get("writes") or []
    gone = entry.get("disconnected_at")
    # The hop got through the silence when the mock wrote after it, with the
    # connection still open, and the client was still there to read it: then
    # what was lost is not the silence's doing (the other layers say what).
    after = [w[0] for w in writes if silent_from is not None and w[0] > silent_from + 0.05]
    if after and (gone is None or gone > after[0]) and (obs.ended_at or 0.0) > after[0]:
        return None
    details: dict[str, Any] = {"cut_after_s": None}
    if silent_from is not None and obs.ended_at is not None:
        details["cut_after_s"] = round(obs.ended_at - silent_from, 2)
    if silent_from is not None and gone is not None:
        details["upstream_closed_after_s"] = round(gone - silent_from, 2)
    marks = [details[k] for k in ("cut_after_s", "upstream_closed_after_s") if k in details]
    if any(m is not None and m < IDLE_LEAST for m in marks):
        # Cut, or the upstream let go, as the silence began: no idle timer
        # fires that soon, so the stream broke for another reason, and the
        # other rules say how (a broken stream, a status that is not the
        # upstream's).
        return None
    after = details["cut_after_s"]
    when = f" {after:.1f} s into the silence" if after is not None else ""
    if obs.failure or result.status == "error":
        why = obs.failure or (result.error.message if result.error else "an error")
        return Check(
            "fail",
            f"the hop cut the silent stream{when}: the client saw it break ({why})",
            ("idle_cut",),
            details,
        )
    return Check(
        "fail",
        f"the hop cut the silent stream{when} and ended it as {result.status} "
        f"({len(result.text)} of {len(t.text)} chars): the client cannot tell it was cut",
        ("idle_cut_masked",),
        details,
    )


def _held(written: int, total: int, read: int, client_total: int) -> int:
    """What a hop held at least when the slow reader read on.

    The mock had written ``written`` of its ``total`` bytes, the client had
    read ``read`` of the ``client_total`` it read in all. A hop that
    translates holds a mix: the upstream's bytes before it translates them,
    the client's after, and the two sizes differ (a Responses stream of
    16 MiB of text is 83 MB of events, an Anthropic or Chat one 17 MB). The
    gap between the mock's share of its answer and the client's share of its
    own, counted in the smaller protocol's bytes, is at most what the hop
    held, whatever the mix; counted in the larger one's, a single 4 MiB
    socket buffer on the compact side would read as five times that."""
    if total <= 0 or client_total <= 0:
        return max(0, written - read)
    share = written / total - read / client_total
    return max(0, round(share * min(total, client_total)))


#: A pause that reached the upstream blocked the mock's writes at least this
#: long (or half the pause): an honest hop's buffers fill within milliseconds.
BLOCKED_LEAST = 0.5
#: ... unless it held less than this share of the bound: a translating hop,
#: slow to read, may keep the upstream writing a while and hold a small part
#: of it (examples/gateway: 0.3 to 17 MB against a bound of 39.8 MB, blocked
#: 0.7 s and more), and a plain one's kernel may take seconds to fill its
#: sockets' buffers (caddy, haproxy and nginx without buffering, over ten CI
#: runs: up to 19.9 MB held with the writes blocked 0.2 s of a 3.6 s pause).
NEAR_BOUND = 0.75


def _backpressure(x: Inputs) -> Check:
    """The slow reader: every event, a bounded hold, or a cut said as an error."""
    obs, entry, result, t = x.obs, x.entry, x.obs.result, x.truth
    if entry is None or result is None:
        return Check("fail", "no stream to read", ("consequence",))
    if obs.resumed_at is None or obs.read_at_resume is None:
        return Check("not_applicable", "the client never got far enough to pause")
    writes = entry.get("writes") or []
    before = [w for w in writes if w[0] <= obs.resumed_at]
    written = sum(w[1] for w in before)
    total = int(entry.get("bytes_sent") or 0)
    held = _held(written, total, obs.read_at_resume, obs.raw_bytes)
    # The pause reached the upstream when the mock's writes stopped before the
    # client read on, its answer unfinished: its writes were blocked.
    finished = bool(entry.get("completed")) and written >= total > 0
    blocked = obs.resumed_at - before[-1][0] if before and not finished else 0.0
    details = {
        "held_bytes": held,
        "bound_bytes": hold_bound(),
        "written_by_resume": written,
        "read_by_resume": obs.read_at_resume,
        "answer_bytes": total,
        "client_answer_bytes": obs.raw_bytes,
        "mock_blocked_s": round(blocked, 2),
        "mock_finished_during_pause": finished,
        "pause_s": round(obs.resumed_at - (obs.paused_at or obs.resumed_at), 2),
    }
    if result.text != t.text:
        missing = len(t.text) - len(result.text)
        if obs.failure or result.status == "error":
            if entry.get("disconnected_at") is None and entry.get("completed"):
                return Check(
                    "fail",
                    "the hop gave up on the slow client but left the upstream generating "
                    "to its end",
                    ("kept_open",),
                    details,
                )
            return Check(
                "pass",
                f"the hop gave up on the slow client ({missing} chars unsent) and said so "
                f"({obs.failure or 'an error'}); the upstream was closed",
                details=details,
            )
        if result.status == "completed":
            return Check(
                "fail",
                f"events dropped while the client paused, the stream then completed: "
                f"{_diff(result.text, t.text)}",
                ("dropped",),
                details,
            )
        return Check(
            "fail",
            f"the hop cut the stream while the client paused and ended it cleanly "
            f"({result.status}): {missing} chars never arrived, and nothing says so",
            ("cut_silently",),
            details,
        )
    bound = hold_bound()
    if finished or held > bound:
        how = "all of its answer" if finished else f"{written:,} bytes"
        return Check(
            "fail",
            f"the hop let the mock write {how} while the client paused, holding at least "
            f"{held:,} bytes (the client had read {obs.read_at_resume:,}): it buffers a slow "
            f"client's answer instead of slowing the upstream (the bound is {bound:,})",
            ("buffered",),
            details,
        )
    pause = details["pause_s"]
    if blocked < min(BLOCKED_LEAST, pause / 2) and held > bound * NEAR_BOUND:
        # Under the bound, but the upstream wrote on through the pause: the hop
        # kept reading it while the client read nothing, and a longer pause
        # would have found it past the bound. The clock decided (a pause of
        # another length, a slower upstream): the run confirms it alone.
        return Check(
            "fail",
            f"the mock's writes never stopped during the client's {pause:.1f} s pause "
            f"(blocked {blocked:.1f} s): the hop read the upstream on while the client read "
            f"nothing, {held:,} bytes held when it read on (the bound is {bound:,}, "
            f"{bound - held:,} away: a longer pause would have crossed it)",
            ("unblocked",),
            details,
        )
    return Check(
        "pass",
        f"the pause reached the upstream: the mock's writes blocked for {blocked:.1f} s, "
        f"at least {held:,} bytes held on the way",
        details=details,
    )


#: Response headers that expose a gateway's attempts, fallbacks or routes.
_EXPOSING = ("retry", "retries", "attempt", "fallback", "deployment", "model-id")


def _failed_visibly(x: Inputs) -> bool:
    """The client was told its answer failed: an error status, an error in the
    stream, or the connection breaking before the end."""
    result = x.obs.result
    return (
        result is None
        or result.status == "error"
        or (x.obs.status or 200) != 200
        or (x.obs.failure is not None and x.obs.kit_limit is None)
    )


#: An attempt this much sooner than the ``Retry-After`` the attempt before it
#: gave is ``retry_after_ignored``: the mock's log times both ends on one
#: clock, and a gateway that waits the second out is never that early, while
#: one that does not wait is early by nearly the whole second.
RETRY_AFTER_MARGIN = 0.25
#: The most attempts of one client request that are no storm: the first and
#: two retries (what the OpenAI and Anthropic SDKs default to, ``max_retries=2``).
MAX_ATTEMPTS = 3
#: A retry that reached the upstream this soon after the failure before it
#: had no backoff; three attempts or more, each retry without one, are a
#: storm. A gateway that retries at once does so within milliseconds; one
#: that backs off waits hundreds of them.
NO_BACKOFF_S = 0.1
#: Client errors that a retry may cure (RFC 9110: 408 Request Timeout, 409
#: Conflict; 429 has its own rule, ``retry_after_ignored``).
_RETRYABLE_4XX = frozenset({408, 409, 429})


def _number(value: Any) -> float | None:
    """A number of the mock's log (never a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _attempt_log(attempts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each attempt as the mock logged it, in order: its status, how it failed,
    when it reached the mock (``at_s``, from the first), how long after the
    attempt before it ended (``after_s``) and the ``Retry-After`` it gave."""
    rows: list[dict[str, Any]] = []
    first = _number(attempts[0].get("t")) if attempts else None
    previous_end: float | None = None
    for n, entry in enumerate(attempts, 1):
        at = _number(entry.get("t"))
        status = entry.get("status")
        rows.append(
            {
                "attempt": n,
                "status": status if type(status) is int else None,
                "failed": entry["failed"][:40] if isinstance(entry.get("failed"), str) else None,
                "at_s": round(at - first, 3) if at is not None and first is not None else None,
                "after_s": (
                    round(at - previous_end, 3)
                    if at is not None and previous_end is not None
                    else None
                ),
                "retry_after_s": _number(entry.get("retry_after")),
                "refused": entry.get("refused") is True,
            }
        )
        previous_end = _number(entry.get("ended_at"))
    return rows


def _spacing(rows: Sequence[Mapping[str, Any]]) -> str:
    """The attempts and their spacing in words: ``429 -> 1.01 s -> 200``."""
    parts: list[str] = []
    for row in rows:
        if row["after_s"] is not None:
            parts.append(f"{row['after_s']:.2f} s")
        status = row["status"]
        parts.append(str(status) if status is not None else (row["failed"] or "no answer"))
    return " -> ".join(parts)


def _conduct(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """How the gateway treated the upstream, from the mock's log of the
    attempts (``_attempt_log``): a client error tried again, a ``Retry-After``
    not waited out, a storm. One cause, one finding: a storm of client errors
    is ``client_error_retried``, one of rate limits ``retry_after_ignored``."""
    found: list[tuple[str, str]] = []
    for before, row in pairwise(rows):
        status, gap = before["status"], row["after_s"]
        if before["refused"]:
            continue  # the request's contract refused it: ``request`` judges that
        if status is not None and 400 <= status < 500 and status not in _RETRYABLE_4XX:
            found.append(
                (
                    "client_error_retried",
                    f"attempt {before['attempt']} got HTTP {status}, a client error, and the "
                    f"gateway tried again (attempt {row['attempt']}, {_spacing(rows)})",
                )
            )
            break
        wait = before["retry_after_s"]
        if wait is not None and gap is not None and gap < wait - RETRY_AFTER_MARGIN:
            found.append(
                (
                    "retry_after_ignored",
                    f"attempt {row['attempt']} reached the upstream {gap:.2f} s after its "
                    f"HTTP {status} said Retry-After: {wait:g} ({_spacing(rows)})",
                )
            )
            break
    if found:
        return found
    retries = [
        r
        for before, r in pairwise(rows)
        if before["status"] is not None and before["status"] >= 500
    ]
    if len(rows) > MAX_ATTEMPTS:
        found.append(
            (
                "retry_storm",
                f"{len(rows)} attempts of one request, more than {MAX_ATTEMPTS} ({_spacing(rows)})",
            )
        )
    elif (
        len(rows) >= MAX_ATTEMPTS
        and len(retries) == len(rows) - 1
        and all(r["after_s"] is not None and r["after_s"] < NO_BACKOFF_S for r in retries)
    ):
        found.append(
            (
                "retry_storm",
                f"{len(rows)} attempts with no backoff between them, each retry within "
                f"{NO_BACKOFF_S * 1000:.0f} ms of the failure before it ({_spacing(rows)})",
            )
        )
    return found


#: Where a client finds when to try again: the ``Retry-After`` header (RFC
#: 9110), OpenAI's ``retry-after-ms``, Google's ``RetryInfo`` in the body.
_RETRY_HEADERS = ("retry-after", "retry-after-ms")


def _retry_information(obs: Observation) -> str | None:
    """Where the client's answer says when to try again, or None."""
    for name, value in obs.headers:
        if name.lower() in _RETRY_HEADERS:
            return f"{name.lower()}: {value[:20]}"
    if b"retryDelay" in obs.raw_head:
        return "the body's retryDelay"
    return None


def _retries(x: Inputs) -> Check:
    """A retry case: one clean answer from one attempt, or an error that says
    what failed; never two attempts in one stream, never a failed attempt's
    call, never an abandoned attempt left open."""
    obs, result = x.obs, x.obs.result
    attempts = x.attempts
    exposed = sorted({k for k, _ in obs.headers if any(word in k for word in _EXPOSING)})
    rows = _attempt_log(attempts)
    details: dict[str, Any] = {
        "attempts": len(attempts),
        "failed": [e.get("failed") for e in attempts],
        "exposed_headers": exposed,
        "attempt_log": rows,
        "spacing": _spacing(rows),
    }
    if not attempts:
        return Check("not_applicable", "the gateway never called the mock")
    text = result.text if result is not None else ""
    seen = sorted({n for n in range(1, len(attempts) + 1) if f"Attempt {n}: " in text})
    details["answered_by"] = seen
    if len(seen) > 1:
        return Check(
            "fail",
            f"output from attempts {seen} in one stream: {text[:120]!r}",
            ("spliced",),
            details,
        )
    used = seen[0] if seen else None
    problems: list[tuple[str, str]] = []
    calls = result.tool_calls if result is not None else ()
    # A call reaches the client as one to run when the stream does not end in
    # the failure: then a failed or abandoned attempt's call is a dead call.
    for call in calls if not _failed_visibly(x) else ():
        marks = [n for n in range(1, len(attempts) + 1) if call.id and call.id.endswith(f"_a{n}")]
        by_args = call.arguments.get("a") if isinstance(call.arguments, dict) else None
        owner = marks[0] if marks else by_args if isinstance(by_args, int) else None
        if owner is None or not 0 < owner <= len(attempts):
            continue
        failed = attempts[owner - 1].get("failed")
        if owner != used or failed not in (None, "stall"):
            problems.append(
                (
                    "dead_call",
                    f"a call of attempt {owner} ({failed or 'abandoned'}) was delivered: "
                    f"{call.id or call.name}",
                )
            )
    ended = obs.ended_at or obs.sent_at
    for entry in attempts:
        if entry.get("attempt") == used:
            continue
        if entry.get("disconnected_at") is None:
            # Still streaming (the judge stopped waiting), or streamed to its end
            # well after the client's answer was over: nobody closed it.
            ran_on = (entry.get("ended_at") or time.time()) - ended
            if ran_on > 0.5:
                problems.append(
                    (
                        "left_open",
                        f"attempt {entry.get('attempt')} was abandoned but left open: the mock "
                        f"streamed it to its end {ran_on:.1f} s after the client's answer ended",
                    )
                )
    problems += _conduct(rows)
    if problems:
        tags = tuple(dict.fromkeys(tag for tag, _ in problems))
        return Check("fail", "; ".join(why for _, why in problems), tags, details)
    last = rows[-1]
    whole = used is not None and text == "".join(x.case.text_of(used))
    if last["retry_after_s"] is not None and not whole and obs.status is not None:
        # The gateway gave up on a rate limit: the client must get the 429
        # and when to try again.
        info = _retry_information(obs)
        if obs.status == 429 and info is not None:
            return Check(
                "pass", f"the upstream's 429 reached the client, with {info}", details=details
            )
        said = f"HTTP {obs.status}" if obs.status is not None else "no response"
        if obs.status == 429:
            said += " without a Retry-After, retry-after-ms or retryDelay"
        return Check(
            "fail",
            f"the upstream's 429 (Retry-After: {last['retry_after_s']:g}) reached the client "
            f"as {said}: neither the answer nor the rate limit with its retry information",
            ("rate_limit_masked",),
            details,
        )
    if _failed_visibly(x):
        kind = result.error.type if result is not None and result.error else None
        if not obs.succeeded:
            said = f"HTTP {obs.status}"
        elif obs.failure:
            said = f"a broken connection ({obs.failure})"
        else:
            said = f"an error ({kind or 'untyped'})"
        return Check("pass", f"the failure reached the client as {said}", details=details)
    assert result is not None  # else it failed visibly
    if used is None:
        return Check(
            "fail",
            f"the client's answer is no attempt's ({text[:80]!r}), ended as {result.status}",
            ("masked",),
            details,
        )
    want = "".join(x.case.text_of(used))
    if text != want:
        return Check(
            "fail",
            f"attempt {used}'s answer arrived cut ({len(text)} of {len(want)} chars) as "
            f"{result.status}, not as an error",
            ("masked",),
            details,
        )
    return Check(
        "pass", f"attempt {used} answered, after {len(attempts)} attempts", details=details
    )


@dataclass(frozen=True)
class Rule:
    """When a layer applies, and how it is judged."""

    applies: Callable[[Inputs], bool]
    check: Callable[[Inputs], Check]
    #: Judged even when the HTTP layer failed (else: fail, "no stream").
    before_http: bool = False


def _always(x: Inputs) -> bool:
    return True


def _of_kind(layer: str) -> Callable[[Inputs], bool]:
    """A layer of the kinds' own: it applies where the case's kind names it."""
    return lambda x: x.case.kind.judges(layer)


def _requests(x: Inputs) -> list[dict[str, Any]]:
    """Every upstream request of the cell the mock logged: the answered one,
    the follow-up, a retry case's attempts."""
    out: list[dict[str, Any]] = []
    for entry in (x.entry, x.follow_entry, *x.attempts):
        if entry is not None and all(entry is not e for e in out):
            out.append(entry)
    return out


def _request(x: Inputs) -> Check:
    for entry in _requests(x):
        found = entry.get("request_problems") or []
        if found:
            field, message = found[0]
            refused = entry.get("refused") is True
            answer = (
                f"the mock refused it as the provider would (HTTP {entry.get('status')})"
                if refused
                else "the mock was lenient and answered it all the same"
            )
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return Check(
                "fail",
                f"the {entry.get('upstream')} request breaks its contract at "
                f"{field or 'the body'}: {message}{more}; {answer}",
                ("mistranslated",),
                {"field": field, "problems": found, "refused": refused},
            )
    return Check("pass", "every upstream request is one the provider accepts")


def _credentials(x: Inputs) -> Check:
    key = x.key_sha256
    forwarded = None
    for entry in _requests(x) if key is not None else ():
        prints = entry.get("credentials") or []
        if any(isinstance(p, dict) and p.get("sha256") == key for p in prints):
            forwarded = entry
            break
    if forwarded is not None and not x.key_passthrough:
        return Check(
            "fail",
            "the kit's key to the gateway reached the upstream (a credential of the "
            f"{forwarded.get('upstream')} request has its fingerprint {key})",
            ("forwarded",),
        )
    for name, obs in (("answer", x.obs), ("follow-up's answer", x.follow_obs)):
        if obs is not None and obs.echoed:
            return Check(
                "fail",
                f"the {name} carries the kit's key to the gateway: {', '.join(obs.echoed)}",
                ("echoed",),
            )
    if forwarded is not None:
        return Check("pass", "the client's key reached the upstream, as this route declares")
    return Check("pass")


#: Response header names that look like an id: the evidence of a lost one.
_ID_NAME = ("request-id", "requestid", "request_id", "call-id", "trace")


def _carries(obs: Observation, rid: str) -> str | None:
    """Where ``obs`` carries ``rid``: a header's name, or the body's field."""
    for name, value in obs.headers:
        if rid in value:
            return f"header {name}"
    error = obs.result.error if obs.result is not None else None
    if error is not None and error.request_id == rid:
        return "the error's request_id"
    if rid.encode() in obs.raw_head:
        return "the body"
    return None


def _hops_own_page(status: int, entries: Sequence[dict[str, Any]]) -> bool:
    """A gateway error status (502, 503, 504) where the upstream answered no
    error: the hop's own page (its upstream timed out, reset, or could not be
    reached), which relays no upstream answer, hence no id."""
    # An upstream error status the gateway translated is the upstream's answer.
    return status in (502, 503, 504) and all(e.get("status") in (None, 200) for e in entries)


def _request_id(x: Inputs) -> Check:
    """The upstream's request id (``mock.REQUEST_ID_HEADER``) reached the
    client, under any header of the gateway's choosing or in the body: it is
    what a provider's support asks for."""
    answered = [e for e in _requests(x) if e is not x.follow_entry]
    pairs = [(x.obs, answered)]
    if x.follow_obs is not None and x.follow_entry is not None:
        pairs.append((x.follow_obs, [x.follow_entry]))
    checks = []
    for obs, entries in pairs:
        ids = [e["request_id"] for e in entries if isinstance(e.get("request_id"), str)]
        if not ids or obs.status is None:
            continue
        if _hops_own_page(obs.status, entries):
            checks.append(
                Check(
                    "not_applicable",
                    f"the answer is the hop's own error page (HTTP {obs.status}; the upstream "
                    "answered otherwise): the id of an answer it never relayed is not asked",
                )
            )
            continue
        where = next((w for w in (_carries(obs, rid) for rid in ids) if w), None)
        if where is not None:
            checks.append(Check("pass", f"the upstream's request id arrived in {where}"))
            continue
        seen = [f"{n}: {v[:60]}" for n, v in obs.headers if any(k in n.lower() for k in _ID_NAME)]
        checks.append(
            Check(
                "fail",
                f"the upstream's request id {ids[-1]} reached the client in no header and no "
                f"field (the answer's id headers: {', '.join(seen) or 'none'})",
                ("lost",),
            )
        )
    return _worst(checks) if checks else Check("not_applicable", "no upstream request id")


LAYER_RULES: Mapping[str, Rule] = {
    "http": Rule(_always, _http, before_http=True),
    "framing": Rule(_always, _framing),
    "deltas": Rule(lambda x: bool(x.case.text or x.case.reasoning), _deltas),
    "tool_calls": Rule(lambda x: bool(x.case.calls), _tool_calls),
    "tool_results": Rule(_of_kind("tool_results"), _tool_results),
    # A hang-up's ending is the client's, unless the stream ended before the
    # client could hang up: then how it ended is judged.
    "completion": Rule(lambda x: x.obs.cancelled_at is None, _completion, before_http=True),
    "usage": Rule(lambda x: not x.case.error, _usage),
    "streaming": Rule(
        lambda x: (
            x.delivery != UNARY
            and (
                x.delivery == "paced"
                or x.case.kind.judges("streaming")
                or (x.entry is not None and x.entry.get("stream") is False)
            )
        ),
        streaming,
    ),
    "cancel": Rule(_of_kind("cancel"), cancel),
    "backpressure": Rule(_of_kind("backpressure"), _backpressure),
    "retries": Rule(_of_kind("retries"), _retries, before_http=True),
    "request": Rule(lambda x: x.entry is not None, _request, before_http=True),
    "credentials": Rule(_always, _credentials, before_http=True),
    "request_id": Rule(
        lambda x: any(e.get("request_id") for e in _requests(x)), _request_id, before_http=True
    ),
    # An SDK cell's only layer (``sdk.compare``): a raw HTTP cell has none.
    "sdk": Rule(lambda x: False, lambda x: Check("not_applicable")),
    "head_of_line": Rule(_of_kind("head_of_line"), head_of_line),
}


def _consequences(x: Inputs, checks: dict[str, Check]) -> None:
    """Layers that failed because of another finding of the same cell: the cut
    of a silent stream, the hop's way with a slow reader, a retry's outcome
    own what the content layers then miss."""
    cause = None
    if {"idle_cut", "idle_cut_masked"} & set(checks["completion"].tags):
        cause = "completion"
    elif checks["backpressure"].verdict == "fail":
        cause = "backpressure"
    elif checks["retries"].verdict == "fail":
        cause = "retries"
    elif checks["backpressure"].verdict == "pass":
        # A hop that gave up on the slow client and said so: its policy.
        if checks["deltas"].verdict == "fail" and checks["backpressure"].why:
            checks["deltas"] = Check("not_applicable", checks["backpressure"].why)
        return
    elif checks["retries"].verdict == "pass":
        if _failed_visibly(x):
            # The failure itself reached the client, as it should: nothing to hold
            # the content to.
            for layer in ("deltas", "tool_calls", "completion", "usage"):
                if checks[layer].verdict in ("fail", "degraded"):
                    checks[layer] = Check("not_applicable", checks["retries"].why)
        return
    if cause is None:
        return
    for layer in ("deltas", "tool_calls", "tool_results", "completion", "usage"):
        check = checks[layer]
        if layer != cause and check.verdict == "fail" and "consequence" not in check.tags:
            why = f"{check.why} (see {cause})"
            checks[layer] = Check("fail", why, (*check.tags, "consequence"), check.details)


def _timed_hang_up(x: Inputs, layer: str) -> bool:
    # The cancel case's timer hung up before the head: the timed layers are
    # judged all the same (a hop that held even the head).
    return layer in ("streaming", "cancel") and x.obs.cancel_reason == "timer"


def judge(x: Inputs) -> dict[str, Check]:
    """Every layer's check for one cell, in ``LAYERS`` order."""
    http = LAYER_RULES["http"].check(x)
    x.http_ok = http.verdict == "pass" and x.obs.status is not None
    checks: dict[str, Check] = {}
    x.checks = checks
    if x.obs.kit_limit is not None:
        # Cut by the kit's own limit: what arrived is a part, judged by nothing.
        cut = Check("not_applicable", _cut(x), ("kit_limit",))
        return {layer: http if layer == "http" else cut for layer in LAYERS}
    for layer in LAYERS:
        rule = LAYER_RULES[layer]
        if layer == "http":
            checks[layer] = http
        elif not rule.applies(x):
            checks[layer] = Check("not_applicable")
        elif not x.http_ok and not rule.before_http and not _timed_hang_up(x, layer):
            if "kit_limit" in http.tags or http.verdict == "not_applicable":
                checks[layer] = Check("not_applicable", http.why, http.tags)
            else:
                checks[layer] = Check("fail", "no stream: the HTTP layer failed", ("consequence",))
        else:
            checks[layer] = rule.check(x)
    _consequences(x, checks)
    if checks["request"].details.get("refused"):
        # The provider's refusal of a mistranslated request is all the client saw.
        for layer, check in checks.items():
            if layer != "request" and check.verdict == "fail" and "consequence" not in check.tags:
                why = f"{check.why} (the upstream refused the request: see request)"
                checks[layer] = Check("fail", why, (*check.tags, "consequence"), check.details)
    if "broken" in checks["completion"].tags:
        # The stream broke off: what it then misses is that break's doing.
        for layer in ("deltas", "tool_calls", "tool_results", "usage"):
            check = checks[layer]
            if check.verdict == "fail" and "consequence" not in check.tags:
                why = f"{check.why} (the stream broke off: see completion)"
                checks[layer] = Check("fail", why, (*check.tags, "consequence"), check.details)
    return checks


def inputs(
    case: Case,
    client: str,
    delivery: str,
    obs: Observation,
    entry: dict[str, Any] | None,
    follow_obs: Observation | None = None,
    follow_entry: dict[str, Any] | None = None,
) -> Inputs:
    """The judge's inputs; the truth and reference come from the mock's log entry."""
    upstream = entry["upstream"] if entry else None
    if entry is None or upstream is None:
        # The gateway never called the mock: judge against the case itself.
        facts, ref = truth(case, "openai-chat"), None
    else:
        usage_sent = entry.get("usage_sent") is not False
        given = entry.get("attempt")
        attempt = given if isinstance(given, int) else 1
        facts = truth(case, wire_of(upstream), usage_sent=usage_sent, attempt=attempt)
        facts = carried(facts, upstream)
        # A whole answer carries its usage whatever the client asked.
        wants = case.wants_usage or delivery == UNARY
        if CASES.get(case.name) is case:
            ref = reference(case.name, upstream, client, usage_sent, wants, attempt)
        else:
            ref = reference_of(case, upstream, client, usage_sent, wants, attempt)
    return Inputs(
        case, client, upstream, delivery, obs, entry, follow_obs, follow_entry, facts, ref
    )
