"""Time and failure: slow readers, long silences, retries after partial output, a cut tool call.

Each rule is proven by a hop of our own that breaks it (``kit_hops.py``,
``kit_retry_gateways.py``, ``kit_gateways.py``), caught by its rule and by no
other, beside an honest one that passes; and by a real nginx whose
``proxy_read_timeout`` is shorter than the upstream's silence: it cuts the
silent stream without keep-alives and keeps it with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from kit_conduct_gateways import CAREFUL_PAUSE, ConductGateway
from kit_hops import IDLE, Hop
from kit_retry_gateways import RetryGateway
from servers.nginx import Nginx, find_nginx
from streamwire.kit.judge.rules import MAX_ATTEMPTS, NO_BACKOFF_S, RETRY_AFTER_MARGIN, _held
from streamwire.kit.judge.verdicts import cell_verdicts, control_cells
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.upstream.wire import render_stream, slow_reader_deltas
from streamwire.kit.vocab.buffers import HOLD_BOUND, hold_bound, slow_reader_bytes
from streamwire.kit.vocab.cases import (
    CASES,
    MAX_SLOW_BYTES,
    MAX_SLOW_DELTAS,
    SLOW_DELTA_CHARS,
    SLOW_DELTAS,
    sized,
)
from streamwire.kit.vocab.kinds.silence import SHORT_SILENCE
from streamwire.kit.vocab.names import UPSTREAM_PROTOCOLS

SILENCE = 2.5
RETRIES = ["retry-before-output", "retry-after-text", "retry-after-tool", "retry-stall"]
SILENCES = [
    "silence-start",
    "silence-start-keepalive",
    "silence-after-tool",
    "silence-after-tool-keepalive",
]


async def _report(url_of: Any, cases: Sequence[str], clients: Sequence[str], **plan: Any) -> Report:
    async with MockUpstream() as mock, url_of(mock.url) as url:
        check = CheckPlan(
            routes=[Route(url, label="hop", key_passthrough=True)],
            clients=clients,
            cases=cases,
            deliveries=["whole"],
            mock_url=mock.url,
            **{"unary": False, "silence": SILENCE, "stall": 2.0, **plan},
        )
        return build_report(await run_check(check))


@contextlib.asynccontextmanager
async def _hop(behaviour: str, upstream: str) -> AsyncIterator[str]:
    async with Hop(upstream, behaviour) as hop:
        yield hop.url


@contextlib.asynccontextmanager
async def _gateway(behaviour: str, upstream: str) -> AsyncIterator[str]:
    async with RetryGateway(upstream, behaviour) as gateway:
        yield gateway.url


def _check(kind: str, behaviour: str, cases: Sequence[str], clients: Sequence[str]) -> Report:
    opener = _hop if kind == "hop" else _gateway
    return asyncio.run(_report(lambda url: opener(behaviour, url), cases, clients))


def _verdicts(report: Report) -> set[str]:
    return {v["name"] for v in report.verdicts}


def _only(report: Report, verdict: str | None) -> None:
    want = set() if verdict is None else {verdict}
    assert _verdicts(report) == want, report.verdicts
    controls = control_cells(report.cells)
    for cell in report.cells:
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        names = {name for name, _ in cell_verdicts(cell, control)}
        assert names <= want, cell.as_dict()["evidence"]["layers"]


# --- the slow reader -----------------------------------------------------------------


@pytest.mark.timed
def test_an_honest_relay_passes_a_slow_reader_within_the_bound() -> None:
    report = _check("hop", "pass", ["slow-reader"], ["openai-chat", "anthropic"])
    _only(report, None)
    for cell in report.cells:
        details = cell.checks["backpressure"].details
        assert details["held_bytes"] <= details["bound_bytes"], details


@pytest.mark.timed
@pytest.mark.parametrize(
    ("behaviour", "verdict"),
    [
        ("drop_slow", "events_dropped"),
        ("buffer_all", "slow_reader_buffered"),
        # Resumed before the bound, the upstream never blocked: a clock's finding.
        ("buffer_slowly", "slow_reader_buffered"),
    ],
)
def test_a_hop_that_drops_or_piles_up_for_a_slow_reader(behaviour: str, verdict: str) -> None:
    report = _check("hop", behaviour, ["slow-reader", "short-text"], ["openai-chat"])
    _only(report, verdict)
    (cell,) = [c for c in report.cells if c.case == "slow-reader"]
    assert [layer for _, layer in cell_verdicts(cell)] == ["backpressure"]


def test_what_a_translating_hop_holds_is_counted_in_the_smaller_protocols_bytes() -> None:
    # Measured through examples/gateway, both ways between a Responses stream
    # (about 82.8 MB of events for the case's text) and an Anthropic or Chat one
    # (about 17 MB): counted in the Responses bytes, either crossed the bound
    # while the mock's writes blocked for most of the pause.
    responses, anthropic, chat = 82_822_766, 16_859_863, 17_343_176
    # A Responses upstream to an Anthropic client: the mock had written 17.2 MB.
    held = _held(17_247_801, responses, 20_965, anthropic)
    assert 3_400_000 < held < 3_600_000 < HOLD_BOUND
    # A Chat upstream to a Responses client: the mock had written 6.2 MB.
    held = _held(6_245_402, chat, 34_957, responses)
    assert 6_000_000 < held < 6_300_000 < HOLD_BOUND
    # The same protocol on both sides: the plain difference.
    assert _held(5_000_000, 17_000_000, 30_000, 17_000_000) == 4_970_000
    # A hop that piles the answer up is told by the raw figure when the sizes
    # are unknown, and a client that read past what the mock wrote holds nothing.
    assert _held(13_000_000, 0, 0, 0) == 13_000_000 > HOLD_BOUND
    assert _held(100, 1000, 200, 1000) == 0


def test_the_slow_reader_answer_is_larger_than_what_the_sockets_can_take(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where tcp_rmem tops out at 32 MiB (and tcp_wmem at 4 MiB) an honest
    # relay's pooled upstream connection took the whole 17 MB answer of 4,096
    # deltas into its receive buffer while the client read nothing.
    assert slow_reader_bytes() == hold_bound() + 8 * 1024 * 1024
    monkeypatch.setattr(
        "streamwire.kit.vocab.buffers.hold_bound", lambda: 32 * 2**20 + 4 * 2**20 + 2**21
    )
    need = slow_reader_bytes()
    cap = 16 * 1024 * 1024  # streamwire's default line, event and message caps
    for upstream in UPSTREAM_PROTOCOLS:
        deltas = slow_reader_deltas(upstream, need)
        units = render_stream(sized(CASES["slow-reader"], deltas), upstream, model="m", usage=True)
        wire, largest = sum(len(u.data) for u in units), max(len(u.data) for u in units)
        # Every event of it passes a hop that parses with the defaults.
        assert largest < cap, (upstream, largest)
        if upstream == "openai-responses":
            # Its done events repeat the text: 4,096 deltas are 83 MB of events
            # already, and more would make one event pass the cap.
            assert deltas == SLOW_DELTAS and wire > 80_000_000
            assert slow_reader_deltas(upstream, 10**9) * SLOW_DELTA_CHARS < cap
        else:
            assert need <= wire < need + 12_000, (upstream, deltas, wire)  # two deltas
            assert slow_reader_deltas(upstream, 10**9) == MAX_SLOW_DELTAS
        assert slow_reader_deltas(upstream, 1) == SLOW_DELTAS
    case = CASES["slow-reader"]
    assert len(case.text) == SLOW_DELTAS and case.usage[1] == SLOW_DELTAS
    big = sized(case, 5000)
    assert len(big.text) == 5000 and big.usage == (case.usage[0], 5000)
    assert big.text[:SLOW_DELTAS] == case.text and {len(t) for t in big.text} == {SLOW_DELTA_CHARS}
    assert sized(CASES["short-text"], 5000) is CASES["short-text"]
    assert len(sized(case, 10**9).text) == MAX_SLOW_DELTAS


def test_the_mock_writes_the_slow_reader_answer_the_tag_sized() -> None:
    async def go() -> None:
        from streamwire.kit.vocab.httpio import open_request

        async with MockUpstream() as mock:
            # 5,000 chat chunks' worth of bytes: 5,000 deltas from a chat
            # upstream, the 4,096 least from Responses (five bytes a char).
            need = 5000 * 4203
            for n, (path, body, deltas) in enumerate(
                [
                    (
                        "/v1/chat/completions",
                        '{"model": "sw-slow-reader.whole.TAG", "stream": true, '
                        '"messages": [{"role": "user", "content": "hi"}]}',
                        5000,
                    ),
                    (
                        "/v1/responses",
                        '{"model": "sw-slow-reader.whole.TAG", "stream": true, "input": "hi"}',
                        SLOW_DELTAS,
                    ),
                ]
            ):
                tag = f"k000030000{n}"
                mock.set_tag_options(tag, {"answer_bytes": need})
                response = await open_request(
                    f"{mock.url}{path}",
                    method="POST",
                    headers=[("content-type", "application/json"), ("authorization", "Bearer k")],
                    body=body.replace("TAG", tag).encode(),
                    # The mock renders 21 MB before its head, in this loop: on a
                    # busy machine that takes longer than any read should.
                    read_timeout=120.0,
                )
                text = (await response.read(200_000_000)).decode()
                assert f"<{deltas - 1:04d}>" in text and f"<{deltas:04d}>" not in text
                (entry,) = mock.log.entries(tag)
                assert entry["deltas"] == deltas
            with pytest.raises(ValueError):
                mock.set_tag_options("k0000300009", {"answer_bytes": MAX_SLOW_BYTES + 1})

    asyncio.run(go())


# --- long silences -------------------------------------------------------------------


@pytest.mark.timed
def test_silences_pass_an_honest_relay() -> None:
    _only(_check("hop", "pass", SILENCES, ["openai-chat", "anthropic"]), None)


def test_each_route_s_first_client_probes_the_idle_timeout_and_the_others_are_short() -> None:
    plan = CheckPlan(
        routes=[Route("http://127.0.0.1:1")], clients=["anthropic", "gemini"], silence=75.0
    )
    assert plan.silence_for("anthropic") == 75.0
    assert plan.silence_for("anthropic over http2") == 75.0
    assert plan.silence_for("gemini") == SHORT_SILENCE
    assert CheckPlan(routes=plan.routes, clients=["gemini"], silence=1.0).silence_for("x") == 1.0
    every = CheckPlan(routes=plan.routes, clients=plan.clients, silence_clients="all")
    assert every.silence_for("gemini") == every.silence
    with pytest.raises(ValueError, match="first or all"):
        CheckPlan(routes=plan.routes, silence_clients="some")


@pytest.mark.timed
def test_the_silence_cells_wait_beside_the_readers_in_slots_of_their_own() -> None:
    # Two probes of 4.5 s and two short silences of 3 s, with one reader's
    # slot: in the readers' slot they took 15 s and more; beside them, in
    # slots of their own, the probes wait together and the short ones after.
    started = time.monotonic()
    report = asyncio.run(
        _report(
            lambda url: _hop("pass", url),
            ["silence-start", "silence-after-tool", "short-text", "usage"],
            ["openai-chat", "anthropic"],
            silence=4.5,
            concurrency=1,
        )
    )
    took = time.monotonic() - started
    _only(report, None)
    silences = {
        (c.client, c.case): c.evidence["silence_s"] for c in report.cells if "silence" in c.case
    }
    assert silences == {
        ("openai-chat", "silence-start"): 4.5,
        ("openai-chat", "silence-after-tool"): 4.5,
        ("anthropic", "silence-start"): SHORT_SILENCE,
        ("anthropic", "silence-after-tool"): SHORT_SILENCE,
    }
    assert took < 11.0, took


@pytest.mark.timed
@pytest.mark.parametrize(
    ("behaviour", "verdict"), [("idle_reset", "idle_timeout"), ("idle_end", "idle_timeout_masked")]
)
def test_a_hop_that_cuts_a_silent_stream(behaviour: str, verdict: str) -> None:
    report = _check("hop", behaviour, ["silence-start", "short-text"], ["openai-chat"])
    _only(report, verdict)
    (cell,) = [c for c in report.cells if c.case == "silence-start"]
    cut = cell.checks["completion"].details["cut_after_s"]
    assert IDLE * 0.8 < cut < IDLE + 1.0, cell.checks["completion"]


@pytest.mark.timed
def test_a_stream_cut_as_its_silence_begins_is_no_idle_timeout() -> None:
    # Cut 0.1 s into the silence: no idle timer fires that soon (LiteLLM's
    # Bedrock pass-through did this), so the advice to raise one would be wrong.
    report = _check("hop", "silence_reset", ["silence-start", "short-text"], ["openai-chat"])
    _only(report, "stream_cut")
    (cell,) = [c for c in report.cells if c.case == "silence-start"]
    assert "cut_after_s" not in cell.checks["completion"].details
    assert cell.checks["completion"].tags == ("broken",), cell.checks["completion"]


@pytest.mark.timed
def test_a_bedrock_keepalive_cell_cut_in_its_silence_is_no_keep_alive_s_doing() -> None:
    # An EventStream has no keep-alive: its keep-alive case is the silence
    # alone, so a cut there (LiteLLM's Bedrock pass-through did this) is a cut,
    # though short-text, its twin, passes.
    clients = ["bedrock-converse", "bedrock-invoke"]
    report = _check("hop", "silence_reset", ["keepalive", "short-text"], clients)
    _only(report, "stream_cut")
    assert {(c.case, c.client) for c in report.cells if c.failed} == {
        ("keepalive", client) for client in clients
    }


#: nginx streaming, its proxy_read_timeout shorter than the upstream's silence.
SHORT_READ_TIMEOUT = """\
        location / {
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_buffering off;
            proxy_read_timeout 1s;
        }"""


@contextlib.asynccontextmanager
async def _nginx(upstream: str) -> AsyncIterator[str]:
    binary = find_nginx()
    assert binary is not None, "nginx is not installed (.ci/run installs it)"
    nginx = Nginx(binary, int(upstream.rpartition(":")[2]), SHORT_READ_TIMEOUT)
    await asyncio.to_thread(nginx.start)
    try:
        yield f"http://127.0.0.1:{nginx.port}"
    finally:
        await asyncio.to_thread(nginx.close)


@pytest.mark.timed
def test_nginx_with_a_short_read_timeout_cuts_silence_and_keeps_it_with_keepalives() -> None:
    cases = ["silence-start", "silence-start-keepalive", "short-text"]
    report = asyncio.run(_report(_nginx, cases, ["openai-chat"]))
    by_case = {c.case: c for c in report.cells}
    cut = by_case["silence-start"].checks["completion"]
    # nginx closes the upstream and ends the client's chunked body cleanly
    # after its proxy_read_timeout: the client cannot tell it was cut.
    assert cut.verdict == "fail" and set(cut.tags) & {"idle_cut", "idle_cut_masked"}, cut
    assert 0.5 < cut.details["cut_after_s"] < 2.5, cut.details
    assert not by_case["silence-start-keepalive"].failed, by_case["silence-start-keepalive"].checks
    assert not by_case["short-text"].failed
    assert _verdicts(report) <= {"idle_timeout", "idle_timeout_masked"}


# --- retries -------------------------------------------------------------------------


@pytest.mark.timed
def test_the_direct_path_and_an_honest_retrying_gateway_pass_every_retry_case() -> None:
    @contextlib.asynccontextmanager
    async def direct(url: str) -> AsyncIterator[str]:
        yield url

    direct_report = asyncio.run(_report(direct, RETRIES, ["openai-chat", "anthropic"]))
    _only(direct_report, None)
    honest = _check("gateway", "honest", RETRIES, ["openai-chat"])
    _only(honest, None)
    by_case = {c.case: c for c in honest.cells}
    # A pre-byte failure retried is reported with its attempts.
    assert by_case["retry-before-output"].checks["retries"].details["attempts"] == 2
    assert "attempt 2 answered" in by_case["retry-stall"].checks["retries"].why


@pytest.mark.timed
@pytest.mark.parametrize(
    ("behaviour", "case", "verdict"),
    [
        ("splice", "retry-after-text", "retry_spliced"),
        ("repair", "retry-after-tool", "failed_attempt_call"),
        ("leave_open", "retry-stall", "attempt_left_open"),
    ],
)
def test_a_gateway_that_retries_wrongly(behaviour: str, case: str, verdict: str) -> None:
    report = _check("gateway", behaviour, [case, "short-text"], ["openai-chat"])
    _only(report, verdict)
    (cell,) = [c for c in report.cells if c.case == case]
    assert [layer for _, layer in cell_verdicts(cell)] == ["retries"]


# --- how a gateway treats a failing upstream: the refused cases ------------------------

REFUSED = ["rate-limited", "bad-request", "flapping"]


def _conduct(behaviour: str, cases: Sequence[str]) -> Report:
    @contextlib.asynccontextmanager
    async def gateway(upstream: str) -> AsyncIterator[str]:
        async with ConductGateway(upstream, behaviour) as hop:
            yield hop.url

    return asyncio.run(_report(gateway, cases, ["openai-chat"]))


def _by_case(report: Report) -> dict[str, Any]:
    return {c.case: c for c in report.cells}


def _log(cell: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cell.checks["retries"].details["attempt_log"]
    return rows


@pytest.mark.timed
def test_a_gateway_that_never_retries_passes_the_errors_on_and_passes() -> None:
    report = _conduct("never_retry", [*REFUSED, "short-text"])
    _only(report, None)
    cells = _by_case(report)
    for case, status in (("rate-limited", 429), ("bad-request", 400), ("flapping", 503)):
        assert [r["status"] for r in _log(cells[case])] == [status]
        assert cells[case].evidence["client"]["status"] == status
    assert "retry-after: 1" in cells["rate-limited"].checks["retries"].why
    # The matrix and the reports show each retry cell's attempts.
    (pair,) = report.matrix["hop"]["clients"].values()
    assert {r["case"]: r["spacing"] for r in pair["retries"]} == {
        "rate-limited": "429",
        "bad-request": "400",
        "flapping": "503",
    }


@pytest.mark.timed
def test_a_careful_gateway_waits_out_retry_after_and_pauses_before_a_5xx() -> None:
    report = _conduct("careful", [*REFUSED, "retry-before-output", "short-text"])
    _only(report, None)
    cells = _by_case(report)
    limited = _log(cells["rate-limited"])
    assert [r["status"] for r in limited] == [429, 200]
    assert limited[0]["retry_after_s"] == 1.0
    assert limited[1]["after_s"] >= 1.0 - RETRY_AFTER_MARGIN
    assert "attempt 2 answered" in cells["rate-limited"].checks["retries"].why
    assert [r["status"] for r in _log(cells["bad-request"])] == [400]
    flapping = _log(cells["flapping"])
    assert [r["status"] for r in flapping] == [503, 503]  # once, then the 503 on
    assert flapping[1]["after_s"] >= CAREFUL_PAUSE - 0.05
    # Billing across attempts: the client's usage is the answering attempt's.
    assert cells["rate-limited"].checks["usage"].verdict == "pass"


@pytest.mark.timed
def test_an_eager_gateway_is_judged_for_each_cause_in_its_own_cell() -> None:
    report = _conduct("eager", [*REFUSED, "retry-before-output", "short-text"])
    assert _verdicts(report) == {"retry_after_ignored", "client_error_retried", "retry_storm"}
    cells = _by_case(report)
    expected = {
        "rate-limited": ("retry_after_ignored", [429, 200]),
        "bad-request": ("client_error_retried", [400, 400, 400, 400]),
        "flapping": ("retry_storm", [503, 503, 200]),
    }
    for case, (verdict, statuses) in expected.items():
        cell = cells[case]
        assert cell_verdicts(cell) == [(verdict, "retries")], cell.as_dict()["evidence"]
        assert [r["status"] for r in _log(cell)] == statuses
        # No backoff: each retry within the bound, by a wide margin.
        assert all(r["after_s"] < NO_BACKOFF_S for r in _log(cell)[1:])
    # One immediate retry of an error without Retry-After is no storm.
    assert not cells["retry-before-output"].failed
    assert not cells["short-text"].failed
    storm = next(v for v in report.verdicts if v["name"] == "retry_storm")
    assert storm["cases"] == ["flapping"] and "no backoff" in storm["why"]


@pytest.mark.timed
def test_a_gateway_that_answers_a_429_as_its_own_500_masks_the_rate_limit() -> None:
    report = _conduct("mask_429", [*REFUSED, "short-text"])
    _only(report, "rate_limit_masked")
    cells = _by_case(report)
    cell = cells["rate-limited"]
    assert cell_verdicts(cell) == [("rate_limit_masked", "retries")]
    assert "as HTTP 500" in cell.checks["retries"].why
    # Its other failures reached the client as they came: no verdict.
    assert not cells["bad-request"].failed and not cells["flapping"].failed


def test_the_conduct_rules_on_logged_attempts() -> None:
    from streamwire.kit.judge.rules import _attempt_log, _conduct

    def entry(t: float, end: float, status: int, retry_after: float | None = None) -> Any:
        return {"t": t, "ended_at": end, "status": status, "retry_after": retry_after}

    def found(*entries: Any) -> list[str]:
        return [tag for tag, _ in _conduct(_attempt_log(list(entries)))]

    # Retry-After waited out, or nearly (within the margin): no finding.
    assert found(entry(0, 0.01, 429, 1), entry(1.02, 1.1, 200)) == []
    assert found(entry(0, 0.01, 429, 1), entry(0.8, 0.9, 200)) == []
    assert found(entry(0, 0.01, 429, 1), entry(0.5, 0.6, 200)) == ["retry_after_ignored"]
    # A 400 tried again; 408, 409 and 429 may be.
    assert found(entry(0, 0.01, 400), entry(0.5, 0.6, 400)) == ["client_error_retried"]
    for status in (408, 409):
        assert found(entry(0, 0.01, status), entry(0.5, 0.6, 200)) == []
    # Storms: more than the bound, or three attempts with no backoff.
    many = [entry(i, i + 0.01, 503) for i in range(MAX_ATTEMPTS)] + [entry(9, 9.1, 200)]
    assert found(*many) == ["retry_storm"]
    assert found(entry(0, 0.01, 503), entry(0.02, 0.03, 503), entry(0.04, 0.1, 200)) == [
        "retry_storm"
    ]
    assert found(entry(0, 0.01, 503), entry(0.5, 0.51, 503), entry(0.52, 0.6, 200)) == []
    assert found(entry(0, 0.01, 503), entry(0.02, 0.1, 200)) == []
    # Values of the wrong type are no figures: nothing raised, nothing found.
    assert found({"t": "0", "ended_at": True, "status": "429", "retry_after": "1"}, {}) == []


def test_the_log_keeps_both_ends_of_a_long_answer_and_its_content_adds_up() -> None:
    # The judge reads the last write (held, late) and the writes after a
    # hang-up: a log that kept only the first 2,000 writes said "0 writes over
    # -216 ms after the client hung up" of an answer that ran on.
    from streamwire.kit.upstream.mock import MAX_LOGGED_WRITES, RequestLog
    from streamwire.kit.vocab.httpio import Request

    log = RequestLog()
    entry = log.add(Request("POST", "/v1/chat/completions", "", [], b"{}", 0.0, "t"), {})
    total = 3 * MAX_LOGGED_WRITES + 7
    for n in range(total):
        kind = "text" if n % 2 else "reasoning"
        log.wrote(entry, 10, (kind,), ((kind, n),))
    writes = entry["writes"]
    assert len(writes) == MAX_LOGGED_WRITES
    assert entry["writes_dropped"] == total - MAX_LOGGED_WRITES
    assert sum(w[1] for w in writes) == 10 * total  # every byte, folded or not
    for kind, start in (("text", 1), ("reasoning", 0)):
        assert sum(w[3].get(kind, 0) for w in writes) == sum(range(start, total, 2))
    # The first half as written; the latest writes as written, the last one last.
    assert [w[3] for w in writes[:3]] == [{"reasoning": 0}, {"text": 1}, {"reasoning": 2}]

    def kind_of(n: int) -> str:
        return "text" if n % 2 else "reasoning"

    assert writes[-1][3] == {kind_of(total - 1): total - 1}
    assert writes[-2][3] == {kind_of(total - 2): total - 2}
    times = [w[0] for w in writes]
    assert times == sorted(times)


def test_a_mock_that_answers_its_log_late_is_asked_again_not_taken_for_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A mock over HTTP busy writing large answers once answered its log late:
    # the cell was judged without its entry ("no stream to read").
    from streamwire.kit.run import check

    monkeypatch.setattr(check, "LOG_TIMEOUTS", (0.2, 0.2, 2.0))
    entry = {"id": 1, "tag": "t1", "path": "/v1/chat/completions", "ended_at": 1.0}
    asks: list[float] = []

    async def mock(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        asks.append(time.monotonic())
        if len(asks) < 3:
            await asyncio.sleep(1.0)  # later than the ask's read timeout
        body = json.dumps({"requests": [entry]}).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        with contextlib.suppress(OSError):
            writer.write(head + body)
            await writer.drain()
            writer.close()

    async def go() -> list[dict[str, Any]]:
        server = await asyncio.start_server(mock, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            return await check._Log(None, f"http://127.0.0.1:{port}").entries("t1")

    monkeypatch.setattr(check, "is_entry", lambda e: isinstance(e, dict))
    assert asyncio.run(go()) == [entry]
    assert len(asks) == 3
