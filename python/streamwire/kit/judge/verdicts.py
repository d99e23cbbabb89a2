"""From cells to the capability matrix and the practice's verdicts: one cause, one verdict.

Every layer that failed or degraded in a cell gets exactly one verdict: the
first rule of ``VERDICT_RULES`` (data, like the layer rules) that names it,
else the catch-all ``layer_failed``, which names the layer. A layer whose
failure is only the consequence of another's (``consequence``: "no stream:
the HTTP layer failed") gets none: its cause has one already.

The names (``VERDICT_NAMES``) are fixed, since tests outside the project read
them; docs/kit/verdicts.md lists every one, with what it means and what to do.

A verdict is reported per (route, client) with the cases and layers that
raised it, the first two reasons, and its figures (``VerdictRule.figures``)
as [least, most] over its cells. ``timed_cases`` lists the cases a clock
alone decided (``cell.clock_decided``), the ones a loaded machine could move.
A cell the kit's own limit cut short (``kit_limit``) is inconclusive and
raises no verdict. Only ``ACCEPTABLE`` verdicts leave ``exit_status`` 0: any
other makes it 1; with none, an inconclusive cell makes it 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..vocab.cases import CASES
from ..vocab.delivery import UNARY
from ..vocab.names import END_EVENTS, NO_KEEPALIVE
from .cell import Cell, Check
from .timed import clock_decided

__all__ = [
    "ACCEPTABLE",
    "CATCH_ALL",
    "CAUSED_BY",
    "COST_GROUPS",
    "ERROR_CASES",
    "VERDICT_NAMES",
    "VERDICT_RULES",
    "VerdictRule",
    "cell_verdicts",
    "control_cells",
    "cost",
    "exit_status",
    "matrix",
    "tool_safety",
    "verdicts",
]

#: The match of a rule: (cell, layer, its check) -> whether the rule names it.
Match = Callable[[Cell, str, Check], bool]


@dataclass(frozen=True)
class VerdictRule:
    """A verdict: which failing (or degraded) layers it names, and what to do about it."""

    name: str
    match: Match
    advice: str
    #: The figures of the layer's details it reports as [least, most] over its cells.
    figures: tuple[str, ...] = ()


def _layer(layer: str, *tags: str, verdict: str = "fail") -> Match:
    def match(cell: Cell, name: str, check: Check) -> bool:
        if name != layer or check.verdict != verdict:
            return False
        return not tags or bool(set(tags) & set(check.tags))

    return match


def _case(case: str, *layers: str) -> Match:
    def match(cell: Cell, name: str, check: Check) -> bool:
        return cell.case == case and name in layers and check.verdict == "fail"

    return match


_KEEPALIVE_CASE = _case("keepalive", "http", "framing", "deltas", "completion")


def _keepalives_broke(cell: Cell, name: str, check: Check) -> bool:
    # An upstream without keep-alives sent none (its keep-alive case is the
    # silence alone): what broke its stream is judged as any other cut.
    return cell.upstream not in NO_KEEPALIVE and _KEEPALIVE_CASE(cell, name, check)


#: The cases whose answer ends in the upstream's error (``Case.error``): each kind's.
ERROR_CASES = frozenset(name for name, case in CASES.items() if case.error)


def _error_lost(cell: Cell, name: str, check: Check) -> bool:
    return cell.case in ERROR_CASES and name == "completion" and check.verdict == "fail"


def _degraded(cell: Cell, name: str, check: Check) -> bool:
    return check.verdict == "degraded" and "lost" in check.tags


def _tools(cell: Cell, name: str, check: Check) -> bool:
    return check.verdict == "fail" and name in ("tool_calls", "tool_results")


def _not_called(cell: Cell, name: str, check: Check) -> bool:
    return name == "http" and check.verdict == "fail" and "not_called" in check.tags


def _unary_framing(cell: Cell, name: str, check: Check) -> bool:
    return cell.delivery == UNARY and name == "framing" and check.verdict == "fail"


def _any(cell: Cell, name: str, check: Check) -> bool:
    return check.verdict == "fail"


VERDICT_RULES: tuple[VerdictRule, ...] = (
    VerdictRule(
        "cross_talk",
        _layer("deltas", "cross_talk"),
        "the stream carried text written for another stream (its tag and case are in the "
        "evidence): the gateway shares a buffer, a connection or a response object between "
        "concurrent requests; one user can read another's answer. Find what the two streams "
        "share under load (a pooled connection handed back while still streaming, a "
        "module-level buffer, a cached response keyed too coarsely)",
    ),
    VerdictRule(
        "request_mistranslated",
        _layer("request", "mistranslated"),
        "the gateway sent the upstream a request its API refuses (the field and the "
        "provider's reason are in the evidence): fix the request mapping for this upstream "
        "(tool definitions in its own shape, its required fields, results answering the "
        "calls before them)",
    ),
    VerdictRule(
        "key_forwarded",
        _layer("credentials", "forwarded"),
        "the client's key to the gateway reached the upstream: the gateway must use its own "
        "upstream credentials and drop the client's (a route that passes keys on by design: "
        "--key-passthrough)",
    ),
    VerdictRule(
        "key_echoed",
        _layer("credentials", "echoed"),
        "an answer to the client carried its key (an error body that quotes the request, a "
        "header): never echo a credential; redact it in errors and logs",
    ),
    VerdictRule(
        "request_id_lost",
        _layer("request_id", "lost"),
        "the upstream's request id is what its provider's support asks for: pass it on to "
        "the client, under its own header or one of the gateway's (x-upstream-request-id, "
        "llm_provider-x-request-id), and log it beside the gateway's own id",
    ),
    VerdictRule(
        "compression_buffered",
        _layer("streaming", "compression_buffered"),
        "the hop holds the answer for clients that accept compression (every SDK and browser) "
        "and streams it to those that do not (curl): leave text/event-stream out of its "
        "compression (nginx: gzip_types; caddy: encode's match), or have it flush the "
        "compressor at every event",
        ("first_content_after_last_write_ms", "identity_first_content_delay_ms"),
    ),
    VerdictRule(
        "not_streaming",
        _layer("streaming", "held", "not_streamed"),
        "something between the upstream and the client holds the whole answer: do not mark "
        "the route streaming (look for proxy buffering, compression, a response collected "
        "before it is sent)",
        ("first_content_after_last_write_ms", "headers_after_last_write_ms"),
    ),
    VerdictRule(
        "stream_delayed",
        _layer("streaming", "delayed", verdict="degraded"),
        "the route streams, but late: look for a fixed delay or batched small writes in a "
        "hop (haproxy: option http-no-delay; Nagle's algorithm; a flush interval)",
        ("lag_median_ms", "first_content_delay_ms", "median_gap_ms", "sent_median_gap_ms"),
    ),
    VerdictRule(
        "arguments_buffered",
        _layer("streaming", "arguments_held", verdict="degraded"),
        "a call's arguments arrive only once the call is complete: clients cannot show or "
        "start on partial arguments; do not advertise incremental arguments on this route",
    ),
    VerdictRule(
        "upstream_not_called",
        _not_called,
        "the gateway refused the request without calling the upstream: a parameter the "
        "client sent (see the request in the evidence) is not accepted on this route",
    ),
    VerdictRule(
        "gateway_unreachable",
        _layer("http", "unreachable"),
        "no response at all: check that the gateway runs and listens at the base URL",
    ),
    VerdictRule(
        "response_dropped",
        _layer("http", "dropped"),
        "the gateway called the upstream, then closed the client's connection without any "
        "response (a proxy whose upstream reset or failed mid-answer): answer the client an "
        "error status, or the error event of its protocol, instead of nothing",
    ),
    VerdictRule(
        "compat_gate_failed",
        _case("unknown-event", "http", "framing", "deltas", "completion"),
        "an event type the gateway has not seen broke the stream: ignore unknown events "
        "instead of failing on them",
    ),
    VerdictRule(
        "keepalive_broke_stream",
        _keepalives_broke,
        "the upstream's keep-alives (SSE comments, Anthropic pings, blank lines) broke the "
        "stream: skip them, never end the stream or drop the text after them",
    ),
    VerdictRule(
        "idle_timeout",
        _layer("completion", "idle_cut"),
        "a hop cut the stream while the upstream was silent: reasoning models are silent "
        "for tens of seconds; raise the hop's idle (read) timeout past the longest silence, "
        "or let the upstream's keep-alives through",
        ("cut_after_s", "upstream_closed_after_s"),
    ),
    VerdictRule(
        "idle_timeout_masked",
        _layer("completion", "idle_cut_masked"),
        "a hop cut the silent stream and ended it as if it were whole: clients take a cut "
        "answer for a complete one; raise the idle timeout, and end a cut stream with an error",
        ("cut_after_s", "upstream_closed_after_s"),
    ),
    VerdictRule(
        "retry_spliced",
        _layer("retries", "spliced"),
        "a retry's new attempt was spliced onto the output of the one it replaced: once "
        "text or a call has streamed, a new attempt is a new generation; end the stream with "
        "an error instead (or retry only before the first byte)",
    ),
    VerdictRule(
        "failed_attempt_call",
        _layer("retries", "dead_call"),
        "a tool call of a failed or abandoned attempt reached the client: never execute it; "
        "hold a call until its attempt completes, or drop it with the attempt",
    ),
    VerdictRule(
        "attempt_left_open",
        _layer("retries", "left_open"),
        "a gateway abandoned an attempt (a timeout, a second attempt) without closing it: the "
        "upstream generates, and bills, for nobody; close an attempt you abandon",
    ),
    VerdictRule(
        "client_error_retried",
        _layer("retries", "client_error_retried"),
        "the gateway tried a request again after the upstream refused it with a client error "
        "(4xx other than 408, 409 and 429): the same request fails the same way, and each "
        "attempt costs the provider's quota; pass a 4xx on to the client at once (LiteLLM: "
        "retry_policy's BadRequestErrorRetries: 0)",
    ),
    VerdictRule(
        "retry_after_ignored",
        _layer("retries", "retry_after_ignored"),
        "the gateway tried a rate-limited request again sooner than the Retry-After the "
        "upstream gave: the provider counts the early attempt against the limit, and the "
        "outage lasts longer; wait at least Retry-After (or retry-after-ms) before the next "
        "attempt, or pass the 429 with its Retry-After on to the client",
    ),
    VerdictRule(
        "retry_storm",
        _layer("retries", "retry_storm"),
        "the gateway hammered a failing upstream: more than three attempts of one request, "
        "or three with no backoff between them; bound the retries (two at most) and back "
        "off between them (exponential, with jitter, from a few hundred milliseconds)",
    ),
    VerdictRule(
        "rate_limit_masked",
        _layer("retries", "rate_limit_masked"),
        "the upstream's 429 reached the client as another status (the gateway's own 500, a "
        "502) or without its Retry-After: clients cannot tell a rate limit from an outage, nor "
        "when to try again; pass the 429 on with its Retry-After (and retry-after-ms), or "
        "retry after that wait yourself",
    ),
    VerdictRule(
        "head_of_line_blocked",
        _layer("head_of_line", "head_of_line"),
        "a stream waited as long as a non-streaming request beside it waited on its "
        "upstream: the gateway blocks while it waits (a synchronous HTTP client called in an "
        "async handler, a single worker). Call the upstream with an async client, or off the "
        "event loop (a thread pool), and serve requests concurrently",
        ("first_content_ms", "overlap_ms", "beside_waited_ms", "stream_reached_upstream_ms"),
    ),
    VerdictRule(
        "events_dropped",
        _layer("backpressure", "dropped"),
        "events were dropped for a slow client: buffer within a bound and slow the upstream, "
        "or end the stream with an error; never drop events and go on",
        ("held_bytes",),
    ),
    VerdictRule(
        "slow_reader_buffered",
        _layer("backpressure", "buffered", "unblocked"),
        "the hop piles up a slow client's answer instead of slowing the upstream: memory "
        "grows with every slow client; bound the buffer (nginx: proxy_buffering off) and "
        "state the policy",
        ("held_bytes", "written_by_resume", "read_by_resume"),
    ),
    VerdictRule(
        "slow_reader_cut_silently",
        _layer("backpressure", "cut_silently"),
        "the hop gave up on a slow client and ended the stream as if it were whole: say so "
        "with an error, and close the upstream",
        ("held_bytes",),
    ),
    VerdictRule(
        "truncated_call_executable",
        _layer("completion", "executable"),
        "a tool call the output limit cut arrives executable: turn tool execution off on "
        "this route until the length stop reason reaches the client",
    ),
    VerdictRule(
        "error_masked",
        lambda cell, name, check: (
            _error_lost(cell, name, check)
            or _layer("deltas", "error_as_text")(cell, name, check)
            or _layer("retries", "masked")(cell, name, check)
        ),
        "an upstream error does not reach the client as an error of the provider's type: "
        "clients cannot retry or report it; fix the error mapping",
    ),
    VerdictRule(
        "truncation_masked",
        _layer("completion", "truncation"),
        "an answer the output limit cut arrives as a normal stop: clients will take a cut "
        "answer (or a cut tool call) for a whole one; map the length stop reason",
    ),
    VerdictRule(
        "tool_error_flag_lost",
        _layer("tool_results", "flag_lost"),
        "a failed tool result reaches the upstream as a success: the model cannot tell a "
        "failed tool from a working one; carry the error flag (is_error, status: error)",
    ),
    VerdictRule(
        "session_state_lost",
        _layer("tool_results", "session_state"),
        "a response that continues the previous one (previous_response_id) reached an "
        "upstream socket that never answered it: WebSocket mode keeps that state on the "
        "connection; keep each client socket on one upstream socket",
    ),
    VerdictRule(
        "chat_only",
        _tools,
        "text works, tool calls do not survive: turn tool routing off for this pair",
    ),
    VerdictRule(
        "reasoning_dropped",
        _layer("deltas", "reasoning"),
        "the reasoning (or its signature) the client asked for is lost on the way, though "
        "its protocol can carry it: multi-turn reasoning breaks; pass it through",
    ),
    VerdictRule(
        "semantic_downgrade",
        _degraded,
        "acceptable: the client protocol cannot carry these facts; make sure no "
        "consumer relies on them",
    ),
    VerdictRule(
        "usage_incomplete",
        _layer("usage", "missing"),
        "the final usage is lost: mark the request's usage incomplete, never estimate it",
    ),
    VerdictRule(
        "usage_invented",
        _layer("usage", "invented"),
        "the gateway reports usage the upstream never sent: bill from the upstream's figures",
    ),
    VerdictRule(
        "cancel_not_propagated",
        lambda cell, name, check: (
            _layer("cancel")(cell, name, check)
            or _layer("backpressure", "kept_open")(cell, name, check)
        ),
        "a client that hangs up leaves the upstream generating (and billing): close the "
        "upstream response when the client disconnects",
        ("closed_after_ms", "writes_after_hang_up"),
    ),
    VerdictRule(
        "stream_cut",
        _layer("completion", "broken"),
        "the connection broke off before the stream's end: the client gets no terminal "
        "event; look for a proxy or gateway timeout, or a crash on the way",
    ),
    VerdictRule(
        "non_streaming_broken",
        _unary_framing,
        "the client asked for the whole answer at once (stream: false) and got no answer of "
        "its protocol: honour stream: false, and answer the protocol's JSON (collect the "
        "upstream's stream into one answer when the gateway streams from it)",
    ),
    VerdictRule(
        "sdk_limit",
        _layer("sdk", "sdk_limit", verdict="degraded"),
        "the official SDK cannot read the upstream's own stream (google-genai reads only "
        "'data: ' lines: an SSE comment, a keep-alive, breaks it), and the gateway passed "
        "it on unchanged: acceptable for the gateway; if its clients use that SDK, strip "
        "what the SDK cannot read before it reaches them",
    ),
    VerdictRule(
        "sdk_incompatible",
        _layer("sdk"),
        "the provider's official SDK, pointed at the gateway, raised on its answer or lost "
        "part of it (the exception, or the fields that differ, are in the evidence): clients "
        "built on the SDK fail the same way; the raw HTTP cells of the same case say what "
        "the gateway sent",
    ),
    VerdictRule(
        "framing_broken",
        _layer("framing"),
        "the body is not the client protocol's wire format (content type or events): "
        "clients' parsers will fail on it",
    ),
    VerdictRule(
        "content_altered",
        _layer("deltas"),
        "the text was lost, doubled or changed on the way: compare the evidence's raw "
        "bytes with the mock's",
    ),
)
#: The catch-all: any failing layer no rule above names.
CATCH_ALL = VerdictRule(
    "layer_failed",
    _any,
    "a layer failed in a way no other verdict names: read the layer's evidence",
)
VERDICT_NAMES = (*(r.name for r in VERDICT_RULES), CATCH_ALL.name)
_ADVICE = {r.name: r.advice for r in (*VERDICT_RULES, CATCH_ALL)}
_FIGURES = {r.name: r.figures for r in (*VERDICT_RULES, CATCH_ALL)}
#: Verdicts that do not fail a run.
ACCEPTABLE = frozenset({"semantic_downgrade", "sdk_limit"})
#: The verdicts by what they cost a user, worst first: reports list them in
#: this order (the rules' order is precedence, which is another matter).
#: Corrupted tool calls and content, crossed answers and leaked keys; then
#: errors and cuts a client cannot see; then a gateway that hammers a failing
#: upstream; then streaming; usage; and last what
#: only observability or a declared loss costs.
COST_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "tool calls, content and keys",
        frozenset(
            {
                "cross_talk",
                "chat_only",
                "session_state_lost",
                "key_forwarded",
                "key_echoed",
                "truncated_call_executable",
                "failed_attempt_call",
                "retry_spliced",
                "tool_error_flag_lost",
                "content_altered",
                "request_mistranslated",
                "events_dropped",
            }
        ),
    ),
    (
        "masked errors and truncation",
        frozenset(
            {
                "error_masked",
                "truncation_masked",
                "idle_timeout_masked",
                "slow_reader_cut_silently",
                "stream_cut",
                "framing_broken",
                "non_streaming_broken",
                "sdk_incompatible",
                "upstream_not_called",
                "gateway_unreachable",
                "response_dropped",
                "rate_limit_masked",
                "compat_gate_failed",
                "keepalive_broke_stream",
                "layer_failed",
            }
        ),
    ),
    (
        "retries and the upstream's limits",
        frozenset({"client_error_retried", "retry_after_ignored", "retry_storm"}),
    ),
    (
        "streaming",
        frozenset(
            {
                "compression_buffered",
                "not_streaming",
                "stream_delayed",
                "arguments_buffered",
                "head_of_line_blocked",
                "slow_reader_buffered",
                "idle_timeout",
                "cancel_not_propagated",
                "attempt_left_open",
            }
        ),
    ),
    ("usage", frozenset({"usage_incomplete", "usage_invented"})),
    (
        "observability and declared losses",
        frozenset({"request_id_lost", "reasoning_dropped", "semantic_downgrade", "sdk_limit"}),
    ),
)
_COST = {name: rank for rank, (_, names) in enumerate(COST_GROUPS) for name in names}


def cost(name: str) -> int:
    """The rank of ``COST_GROUPS`` a verdict belongs to (0: the worst)."""
    return _COST.get(name, len(COST_GROUPS))


#: Cases that differ from a control case by one thing the upstream sent: a
#: layer that fails there but passes in the same route, client and delivery's
#: control cell failed because of that thing, and gets its verdict.
CAUSED_BY: dict[str, tuple[str, str]] = {
    "keepalive": ("short-text", "keepalive_broke_stream"),
    "unknown-event": ("short-text", "compat_gate_failed"),
    "silence-start-keepalive": ("silence-start", "keepalive_broke_stream"),
    "silence-after-tool-keepalive": ("silence-after-tool", "keepalive_broke_stream"),
}


def cell_verdicts(cell: Cell, control: Cell | None = None) -> list[tuple[str, str]]:
    """(verdict, layer) for each layer of ``cell`` that failed or degraded,
    in layer order: one verdict each, none for a consequence. ``control``:
    the control cell (``CAUSED_BY``) of the same route, client and delivery."""
    out = []
    for layer, check in cell.checks.items():
        if check.verdict not in ("fail", "degraded") or "consequence" in check.tags:
            continue
        cause = CAUSED_BY.get(cell.case, ("", None))[1]
        if cause == "keepalive_broke_stream" and cell.upstream in NO_KEEPALIVE:
            cause = None  # none was sent (``_keepalives_broke``)
        not_its_cause = None
        if cause is not None and check.verdict == "fail" and control is not None:
            other = control.checks.get(layer)
            if other is not None and other.verdict in ("pass", "not_applicable"):
                out.append((cause, layer))
                continue
            if other is not None and other.verdict == "fail":
                # The control cell fails the same layer without the case's one
                # thing: that thing is not the cause, and its verdict not this one.
                not_its_cause = cause
        rule = next(
            (r for r in VERDICT_RULES if r.name != not_its_cause and r.match(cell, layer, check)),
            None,
        )
        if rule is None and check.verdict == "fail":
            rule = CATCH_ALL
        if rule is not None:
            out.append((rule.name, layer))
    return out


def control_cells(cells: Iterable[Cell]) -> dict[tuple[str, str, str, str], Cell]:
    """(route, client, delivery, case) -> the case's control cell (``CAUSED_BY``)."""
    by_key = {(c.route, c.client, c.delivery, c.case): c for c in cells}
    out = {}
    for route, client, delivery, case in by_key:
        control_case = CAUSED_BY.get(case, ("", ""))[0]
        control = by_key.get((route, client, delivery, control_case))
        if control is not None:
            out[route, client, delivery, case] = control
    return out


def _timed(check: Check) -> bool:
    return clock_decided(check.tags, check.details)


def verdicts(cells: Iterable[Cell]) -> list[dict[str, Any]]:
    """Each verdict raised, per (route, client), with its cases, layers and why;
    ``timed_cases``: those of its cases that a clock alone decided."""
    cells = list(cells)
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    statuses: dict[tuple[str, str, str], set[Any]] = {}
    servers: dict[tuple[str, str, str], set[str]] = {}
    #: Verdicts some cell of which came uncompressed (the rest came compressed).
    plain: set[tuple[str, str, str]] = set()
    controls = control_cells(cells)
    for cell in cells:
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        for name, layer in cell_verdicts(cell, control):
            check = cell.checks[layer]
            key = (name, cell.route, cell.client)
            entry = found.setdefault(
                key,
                {
                    "name": name,
                    "route": cell.route,
                    "client": cell.client,
                    "upstream": [],
                    "cases": [],
                    "layers": [],
                    "cells": 0,
                    "why": [],
                    "figures": {},
                    "advice": _ADVICE[name],
                    "timed_cases": [],
                },
            )
            entry["cells"] += 1
            if "compressed" not in check.tags:
                plain.add(key)
            status = (cell.evidence.get("client") or {}).get("status")
            statuses.setdefault(key, set()).add(status)
            server = cell.evidence.get("server")
            if isinstance(server, str):
                servers.setdefault(key, set()).add(server)
            upstream = cell.upstream or "none"
            if upstream not in entry["upstream"]:
                entry["upstream"].append(upstream)
            if layer not in entry["layers"]:
                entry["layers"].append(layer)
            timed = _timed(check)
            if cell.case not in entry["cases"]:
                entry["cases"].append(cell.case)
                if timed:
                    entry["timed_cases"].append(cell.case)
            elif not timed and cell.case in entry["timed_cases"]:
                entry["timed_cases"].remove(cell.case)
            if check.why and check.why not in entry["why"] and len(entry["why"]) < 2:
                entry["why"].append(check.why)
            for figure in _FIGURES[name]:
                value = check.details.get(figure)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    low, high = entry["figures"].get(figure, (value, value))
                    entry["figures"][figure] = (min(low, value), max(high, value))
    order = {name: i for i, name in enumerate(VERDICT_NAMES)}
    out = sorted(
        found.values(),
        key=lambda v: (cost(v["name"]), order[v["name"]], v["route"], v["client"]),
    )
    for entry in out:
        entry["why"] = "; ".join(entry["why"])
        entry["figures"] = {k: list(v) for k, v in entry["figures"].items()}
        key = (entry["name"], entry["route"], entry["client"])
        # Every cell came compressed: the compression is the likely cause.
        compressed = key not in plain
        cause = _cause(entry["name"], entry["figures"], statuses.get(key, set()), compressed)
        entry["advice"] = _advice(entry["name"], cause, statuses.get(key))
        setting = _hop_setting(cause or entry["name"], servers.get(key, set()))
        if setting is not None:
            entry["advice"] += f" ({setting})"
    return out


#: The setting that governs a verdict's cause, by the hop whose ``Server``
#: header answered (its name, lower case, before the version): each from the
#: server's own documentation.
HOP_SETTINGS: dict[str, dict[str, str]] = {
    "nginx": {
        "idle_timeout": "this route's hop is nginx: proxy_read_timeout, 60 s by default",
        "not_streaming": "this route's hop is nginx: proxy_buffering off, or the upstream's "
        "X-Accel-Buffering: no",
        "slow_reader_buffered": "this route's hop is nginx: proxy_buffering off, or "
        "proxy_max_temp_file_size 0",
        "compression_buffered": "this route's hop is nginx: gzip_types without text/event-stream",
        "compression_batched": "this route's hop is nginx: gzip_types without text/event-stream",
    },
    "caddy": {
        "compression_buffered": "this route's hop is Caddy: encode's match without "
        "text/event-stream",
        "compression_batched": "this route's hop is Caddy: encode's match without "
        "text/event-stream",
    },
    "apache": {
        "idle_timeout": "this route's hop is Apache httpd: ProxyTimeout, or ProxyPass timeout=",
    },
    "h2o": {"idle_timeout": "this route's hop is h2o: proxy.timeout.io, 30 s by default"},
    "envoy": {
        "idle_timeout": "this route's hop is Envoy: the route's idle_timeout "
        "(stream_idle_timeout, 5 min by default)",
    },
}


def _hop_setting(name: str, servers: set[str]) -> str | None:
    """The setting of the hop that answered (``HOP_SETTINGS``), when every
    cell of the verdict was answered by the same kind of server."""
    kinds = {s.split("/", 1)[0].strip().lower() for s in servers}
    if len(kinds) != 1:
        return None
    return HOP_SETTINGS.get(kinds.pop(), {}).get(name)


#: A route this many milliseconds behind the upstream is not batching writes.
FAR_BEHIND_MS = 1000


def _cause(
    name: str, figures: Mapping[str, list[Any]], statuses: set[Any], compressed: bool
) -> str | None:
    """Which of a verdict's causes its cells show, where one verdict has
    several (``_CAUSE_ADVICE``); None: the rule's own."""
    if name == "stream_delayed":
        # A compressor holds what it has not flushed, seconds of it for a
        # long answer (nginx's gzip buffers): every cell compressed, that first.
        if compressed:
            return "compression_batched"
        lag = figures.get("lag_median_ms")
        if lag and lag[1] >= FAR_BEHIND_MS:
            return "cannot_keep_up"
    if name == "upstream_not_called" and statuses and statuses <= {404, 405}:
        return "no_such_endpoint"
    return None


#: The advice of each cause ``_cause`` tells apart.
_CAUSE_ADVICE = {
    "cannot_keep_up": "the route streams, but seconds behind the upstream: not a hop that "
    "batches writes but one that cannot keep up (CPU-bound, or an event loop blocked by "
    "other work); look at its CPU, its workers and what else it runs",
    "compression_batched": "the route streams, but in batches its compressor makes (every "
    "cell came compressed): leave text/event-stream out of the hop's compression, or have "
    "it flush the compressor at every event",
    "no_such_endpoint": "the gateway has no such endpoint for this client protocol on this "
    "route (HTTP {statuses}): drop this client from the route's check, or serve the endpoint",
}


def _advice(name: str, cause: str | None, statuses: set[Any] | None = None) -> str:
    """A verdict's advice for its cause (``_cause``), or the rule's own."""
    if cause is None:
        return _ADVICE[name]
    shown = "/".join(str(s) for s in sorted(statuses or (), key=str))
    return _CAUSE_ADVICE[cause].format(statuses=shown)


def _pair_status(cells: Sequence[Cell]) -> str:
    if any(c.failed and not c.flaky for c in cells):
        return "fail"
    if any(c.flaky for c in cells):
        return "flaky"
    if any(c.degraded for c in cells):
        return "degraded"
    if cells and all(c.inconclusive for c in cells):
        return "inconclusive"
    return "pass"


def _mode(cells: Sequence[Cell]) -> dict[str, Any]:
    """A pair's streamed or unary cells in brief (``status`` None: it ran none)."""
    return {
        "status": _pair_status(cells) if cells else None,
        "cells": len(cells),
        "failed": sum(c.failed for c in cells),
    }


def _arguments_streamed(cells: Sequence[Cell]) -> bool | None:
    """Whether the calls' arguments arrived incrementally in the paced cells
    that could tell (None: no cell could)."""
    seen: list[bool] = []
    for cell in cells:
        check = cell.checks.get("streaming")
        per_call = check.details.get("arguments_streamed") if check else None
        if isinstance(per_call, dict):
            seen += [bool(v) for v in per_call.values()]
    return all(seen) if seen else None


def matrix(cells: Sequence[Cell], found: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """route -> {"upstream": [protocols], "clients": {client -> the pair's summary}}."""
    rows: dict[str, dict[str, list[Cell]]] = {}
    for cell in cells:
        rows.setdefault(cell.route, {}).setdefault(cell.client, []).append(cell)
    out: dict[str, Any] = {}
    for route, by_client in rows.items():
        upstreams = sorted({c.upstream for g in by_client.values() for c in g if c.upstream})
        row: dict[str, Any] = {
            "upstream": upstreams,
            "end_events": {u: END_EVENTS.get(u) for u in upstreams},
            "clients": {},
        }
        for client, group in by_client.items():
            names = sorted(
                {v["name"] for v in found if v["client"] == client and v["route"] == route}
            )
            row["clients"][client] = {
                "status": _pair_status(group),
                "cells": len(group),
                "failed": sum(c.failed for c in group),
                "flaky": sum(c.flaky for c in group),
                "degraded": sum(c.degraded for c in group),
                "inconclusive": sum(c.inconclusive for c in group),
                "never_called": sum(c.upstream is None for c in group),
                "verdicts": names,
                "arguments_streamed": _arguments_streamed(group),
                "streaming": _mode([c for c in group if c.delivery != UNARY]),
                "non_streaming": _mode([c for c in group if c.delivery == UNARY]),
                "tools": tool_safety(group),
            }
            attempts = _attempts(group)
            if attempts:
                row["clients"][client]["retries"] = attempts
        out[route] = row
    return out


def _attempts(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """Each retry cell of a pair with its attempts as the mock logged them:
    the count, the statuses and the seconds between them (``spacing``), and
    the ``retries`` layer's verdict."""
    out = []
    for cell in cells:
        check = cell.checks.get("retries")
        if check is None or not isinstance(check.details.get("spacing"), str):
            continue
        out.append(
            {
                "case": cell.case,
                "delivery": cell.delivery,
                "attempts": check.details.get("attempts"),
                "spacing": check.details["spacing"],
                "verdict": check.verdict,
            }
        )
    return out


#: What tool execution needs of a route, and where a cell shows it lost:
#: (what, the layer, the cases whose failure there says so: None for any).
_TOOL_NEEDS: tuple[tuple[str, str, frozenset[str] | None], ...] = (
    ("call ids, names and arguments", "tool_calls", None),
    ("tool results, correlated to their calls", "tool_results", None),
    (
        "the completion status (a cut answer's calls not run)",
        "completion",
        frozenset({"truncated-tool"}),
    ),
    (
        "in-stream errors, as errors",
        "completion",
        ERROR_CASES | {"retry-after-tool"},
    ),
    ("a failed attempt's calls kept out", "retries", frozenset({"retry-after-tool"})),
)


def tool_safety(group: Sequence[Cell]) -> dict[str, Any]:
    """Whether a (route, client) pair is safe for tool execution: call ids,
    results, completion status and in-stream errors all survive it in every
    firm cell that tests them (``safe``: None when no cell did). Each reason
    names what did not survive, the first cell's case and why. When one does
    not, the practice turns tool routing off for the route and degrades it to
    chat only."""
    tested = False
    reasons: list[str] = []
    for what, layer, cases in _TOOL_NEEDS:
        cells = [
            c
            for c in group
            if not c.inconclusive
            and (cases is None or c.case in cases)
            and c.checks.get(layer) is not None
            and c.checks[layer].verdict != "not_applicable"
        ]
        tested = tested or bool(cells)
        bad = next((c for c in cells if c.checks[layer].verdict == "fail"), None)
        if bad is not None:
            why = bad.checks[layer].why
            reasons.append(f"{what} did not survive ({bad.case}, {layer}: {why[:160]})")
    return {"safe": (not reasons) if tested else None, "why": reasons}


def exit_status(cells: Iterable[Cell], found: Iterable[Mapping[str, Any]]) -> int:
    """0 when every cell passed (or degraded) with only acceptable verdicts; 1 when
    a layer failed, a cell was flaky or another verdict was raised; else 3 when a
    cell was inconclusive."""
    cells = list(cells)
    if any(c.failed or c.flaky for c in cells):
        return 1
    if any(v["name"] not in ACCEPTABLE for v in found):
        return 1
    return 3 if any(c.inconclusive for c in cells) else 0
