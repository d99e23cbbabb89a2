"""WebSocket cells (``--client`` ``openai-responses-ws``, ``openai-realtime``,
``gemini-live``) through hops of our own.

The judge's client opens a session with the route (``client/ws.py``), the
mock answers each ``response.create`` (``upstream/ws.py``,
``upstream/ws_realtime.py``, ``upstream/ws_live.py``), and the cells are judged on the layers an SSE
cell is. For each client, straight to the mock and through an honest relay
every cell passes; each broken hop (``servers/ws_relay.py``) gets exactly
the verdict of its cause, three runs alike.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from servers.ws_relay import WsRelay
from streamwire.kit.client.ws import WS_CLIENTS, ws_carries
from streamwire.kit.judge.cell import Cell
from streamwire.kit.judge.verdicts import cell_verdicts, control_cells
from streamwire.kit.report.document import Report, build_report
from streamwire.kit.run.check import CheckPlan, Route, run_check
from streamwire.kit.upstream.mock import MockUpstream
from streamwire.kit.vocab.cases import CASE_NAMES, CASES

pytest.importorskip("websockets")

WS = "openai-responses-ws"
RT = "openai-realtime"
LV = "gemini-live"


def _carried(client: str) -> list[str]:
    return [n for n in CASE_NAMES if ws_carries(CASES[n], client)]


CARRIED = _carried(WS)


def _check(
    behaviour: str | None,
    cases: Sequence[str],
    deliveries: Sequence[str],
    clients: Sequence[str] = (WS,),
) -> Report:
    return asyncio.run(_run_hop(behaviour, cases, deliveries, clients))


async def _run_hop(
    behaviour: str | None,
    cases: Sequence[str],
    deliveries: Sequence[str],
    clients: Sequence[str] = (WS,),
) -> Report:
    """A check through the hop (None: straight to the mock), each its own."""
    async with MockUpstream() as mock:
        if behaviour is None:
            return await _run(mock.url, mock.url, "direct", cases, deliveries, clients)
        async with WsRelay(mock.url, behaviour) as relay:
            return await _run(relay.url, mock.url, behaviour, cases, deliveries, clients)


async def _run(
    url: str,
    mock: str,
    label: str,
    cases: Sequence[str],
    deliveries: Sequence[str],
    clients: Sequence[str],
) -> Report:
    plan = CheckPlan(
        routes=[Route(url, label=label, key_passthrough=True)],
        clients=list(clients),
        cases=cases,
        deliveries=deliveries,
        mock_url=mock,
        silence=2.0,
        unary=False,
    )
    return build_report(await run_check(plan))


def _verdicts(report: Report) -> dict[tuple[str, str], set[str]]:
    out = {}
    controls = control_cells(report.cells)
    for cell in report.cells:
        control = controls.get((cell.route, cell.client, cell.delivery, cell.case))
        names = {name for name, _ in cell_verdicts(cell, control)}
        if names:
            out[cell.case, cell.delivery] = names
    return out


def _whole_and_paced(name: str) -> list[str]:
    return [d for d in ("whole", "paced") if d in (CASES[name].only or ("whole", "paced"))]


def test_a_session_carries_the_cases_it_can_and_runs_whole_and_paced() -> None:
    plan = CheckPlan(routes=[Route("http://127.0.0.1:1")], clients=["openai-chat", WS, RT, LV])
    for client in (WS, RT, LV):
        ws = [k for k in plan.keys() if k[2] == client]
        assert {k[1] for k in ws} == set(_carried(client))
        assert {k[3] for k in ws} == {"whole", "paced"}  # no tiny, no unary
    assert not {"slow-reader", "head-of-line", "retry-stall"} & set(CARRIED)
    assert "cancel" in CARRIED and "tool-error-result" in CARRIED
    # Realtime has no reasoning: no cell judges a loss the protocol forces.
    assert set(CARRIED) - set(_carried(RT)) == {"reasoning"}
    # Live has no end for the output limit: its truncated cases are left out.
    assert set(CARRIED) - set(_carried(LV)) == {"truncated", "truncated-tool"}


#: Through the honest relay: text, calls, a tool's result, an error, a hang-up, usage.
RELAYED = [
    "short-text",
    "parallel-tools",
    "tool-error-result",
    "in-stream-error",
    "cancel",
    "usage",
]


@pytest.mark.timed
@pytest.mark.parametrize(("behaviour", "cases"), [(None, CARRIED), ("pass", RELAYED)])
def test_straight_to_the_mock_and_through_an_honest_relay_every_cell_passes(
    behaviour: str | None, cases: list[str]
) -> None:
    # The clients in one run, their cells side by side.
    report = _check(behaviour, cases, ["whole", "paced"], (WS, RT, LV))
    for client in (WS, RT, LV):
        carried = [n for n in cases if ws_carries(CASES[n], client)]
        cells = [c for c in report.cells if c.client == client]
        assert len(cells) == sum(len(_whole_and_paced(n)) for n in carried), client
        failing = {
            (c.case, c.delivery): c.as_dict()["evidence"]["layers"]
            for c in cells
            if c.failed or c.degraded
        }
        assert not failing, (client, failing)
        _hung_up_and_answered(client, cells)


def _hung_up_and_answered(client: str, cells: list[Cell]) -> None:
    """The hang-ups, the tool's result and the paced stream of ``client``'s cells."""
    cancels = {c.delivery: c for c in cells if c.case == "cancel"}
    assert {c.checks["cancel"].verdict for c in cancels.values()} == {"pass"}
    follow = next(c for c in cells if c.case == "tool-error-result")
    assert follow.checks["tool_results"].verdict == "pass"
    # Realtime hangs up in ``paced`` by response.cancel, the socket open:
    # the mock's response ended by it, not by a closed connection.
    ended = {
        d: (c.evidence["mock"]["cancelled_at"], c.evidence["mock"]["disconnected_at"])
        for d, c in cancels.items()
    }
    assert ended["whole"][0] is None and ended["whole"][1] is not None, ended
    # The mock's session log: one socket of the client's protocol for each
    # cell, which the client's hang-up closed, by its close frame.
    for cell in cancels.values():
        (session,) = cell.evidence["upstream_sessions"]
        assert session["protocol"] == client and session["messages_in"] >= 1, session
        assert session["close"]["by"] == "client", session
    if client == RT:
        assert ended["paced"][0] is not None and ended["paced"][1] is None, ended
    else:
        assert ended["paced"][0] is None and ended["paced"][1] is not None, ended
    paced = next(c for c in cells if c.case == "short-text" and c.delivery == "paced")
    assert paced.checks["streaming"].verdict == "pass"
    assert "websocat" in paced.reproduce
    if client == WS:
        assert paced.reproduce.startswith("echo ")
    elif client == LV:  # setup, then the user's turn: a line each
        assert paced.reproduce.startswith("printf ") and "BidiGenerateContent" in paced.reproduce
        assert paced.reproduce.count('"clientContent"') == 1
    else:  # session.update, the user's item, response.create: a line each
        assert paced.reproduce.startswith("printf ") and "/v1/realtime?model=" in paced.reproduce
        assert paced.reproduce.count("conversation.item.create") == 1


#: (behaviour, cases, deliveries, verdict, the cell of its cause, timed): the
#: timed ones (a hold, a close, a cancel) are judged by clocks: run alone.
HOPS = [
    ("hold", ["short-text"], ["whole", "paced"], "not_streaming", ("short-text", "paced"), True),
    (
        "drop_errors",
        ["in-stream-error", "short-text"],
        ["whole"],
        "error_masked",
        ("in-stream-error", "whole"),
        False,
    ),
    (
        "one_call_id",
        ["parallel-tools", "single-tool"],
        ["whole"],
        "chat_only",
        ("parallel-tools", "whole"),
        False,
    ),
    (
        "keep_upstream",
        ["cancel", "short-text"],
        ["whole"],
        "cancel_not_propagated",
        ("cancel", "whole"),
        True,
    ),
]
#: OpenAI's protocols: a hop whose done texts are the last delta's (Live has none).
DONE_HOPS = [
    (
        "last_delta_done",
        ["short-text", "single-tool"],
        ["whole"],
        "content_altered",
        ("short-text", "whole"),
        False,
    ),
]
#: Responses' own: a hop that sends each response.create over a socket of its
#: own loses the state a continuation (previous_response_id) needs.
WS_HOPS = [
    (
        "socket_per_response",
        ["tool-error-result", "parallel-tools"],
        ["whole"],
        "session_state_lost",
        ("tool-error-result", "whole"),
        False,
    ),
]
#: Realtime's own: a hop that drops response.cancel fails the cell that
#: cancels so (``paced``), not the one that closes the socket (``whole``).
RT_HOPS = [
    (
        "drop_cancel",
        ["cancel"],
        ["whole", "paced"],
        "cancel_not_propagated",
        ("cancel", "paced"),
        True,
    ),
]


@pytest.mark.parametrize(
    ("client", "behaviour", "cases", "deliveries", "verdict", "where"),
    [
        pytest.param(client, *hop[:5], marks=[pytest.mark.timed] if hop[5] else [])
        for client, hops in (
            (WS, HOPS + DONE_HOPS + WS_HOPS),
            (RT, HOPS + DONE_HOPS + RT_HOPS),
            (LV, HOPS),
        )
        for hop in hops
    ],
)
def test_each_broken_hop_gets_the_verdict_of_its_cause_three_runs_alike(
    client: str,
    behaviour: str,
    cases: list[str],
    deliveries: list[str],
    verdict: str,
    where: tuple[str, str],
) -> None:
    # Three runs at once, each with a mock and a hop of its own.
    async def three() -> list[Report]:
        runs = (_run_hop(behaviour, cases, deliveries, (client,)) for _ in range(3))
        return list(await asyncio.gather(*runs))

    runs = [_verdicts(report) for report in asyncio.run(three())]
    assert runs[0] == runs[1] == runs[2], runs
    # The verdict of its cause, in the cell of that cause only: the others pass.
    assert runs[0] == {where: {verdict}}, runs[0]


def test_a_cause_every_text_cell_shares_is_not_the_unknown_event_s_nor_a_keep_alive_s() -> None:
    # The hop alters every text's done event: the unknown-event and keep-alive
    # cells fail as their control (short-text) does, so neither the unknown
    # event nor a keep-alive (none crosses a WebSocket) is named the cause.
    cases = ["short-text", "unknown-event", "keepalive"]
    found = _verdicts(_check("last_delta_done", cases, ["whole"], (RT,)))
    assert found == {(case, "whole"): {"content_altered"} for case in cases}, found


@pytest.mark.parametrize(
    ("case", "verdict"),
    [("truncated-tool", "truncated_call_executable"), ("truncated", "truncation_masked")],
)
def test_a_cut_a_live_upstream_cannot_say_is_held_against_no_gateway(
    case: str, verdict: str
) -> None:
    # A Realtime client given exactly what Live carries of a cut answer (Live
    # has no end for the output limit: a whole turn, an executable call): from
    # a Live upstream no gateway could do better; from Gemini's SSE, which
    # says MAX_TOKENS, the same answer masks the cut.
    import time

    from streamwire.kit.client.raw import Observation
    from streamwire.kit.judge.rules import inputs, judge, reference

    live = reference(case, LV, LV, True, CASES[case].wants_usage).result
    assert live.status == "completed"
    found = {}
    for upstream in (LV, "gemini"):
        obs = Observation(RT, "ws://gateway", {}, time.time(), status=101, websocket=True)
        obs.result = live
        entry = {"upstream": upstream, "writes": [], "attempt": 1, "tools": ["add_numbers"]}
        checks = judge(inputs(CASES[case], RT, "whole", obs, entry))
        cell = Cell(case, RT, upstream, "whole", checks, {}, "route")
        found[upstream] = (checks["completion"].verdict, {n for n, _ in cell_verdicts(cell)})
    assert found[LV] == ("not_applicable", set()), found
    assert found["gemini"] == ("fail", {verdict}), found


def _through_gateway(gateway: Any, cases: list[str]) -> Report:
    """A whole-delivery check of the three clients through ``gateway`` (a
    ``websockets`` handler of our own), the mock beside it."""
    from websockets.asyncio.server import serve

    async def go() -> Report:
        async with MockUpstream() as mock, serve(gateway, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            plan = CheckPlan(
                routes=[Route(f"http://127.0.0.1:{port}", label="gateway")],
                clients=[WS, RT, LV],
                cases=cases,
                deliveries=["whole"],
                mock_url=mock.url,
                read_timeout=1.0,
                unary=False,
            )
            return build_report(await run_check(plan))

    return asyncio.run(go())


def test_a_gateway_that_closes_the_socket_before_calling_the_upstream_is_upstream_not_called() -> (
    None
):
    # LiteLLM's Responses route does so to a ws:// upstream (1011, "ssl
    # argument is incompatible with a ws:// URI"): nothing was streamed, so
    # nothing was cut.
    from websockets.asyncio.server import ServerConnection

    async def gateway(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.close(1011, "Internal server error")

    report = _through_gateway(gateway, ["short-text", "single-tool"])
    found = {(c.client, c.case): {n for n, _ in cell_verdicts(c)} for c in report.cells}
    assert found == {
        (client, case): {"upstream_not_called"}
        for client in (WS, RT, LV)
        for case in ("short-text", "single-tool")
    }, found


def test_a_run_without_the_websockets_library_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "websockets.asyncio.client", None)
    with pytest.raises(ValueError, match=r"streamwire\[kit-ws\]"):
        CheckPlan(routes=[Route("http://127.0.0.1:1")], clients=[WS])
    CheckPlan(routes=[Route("http://127.0.0.1:1")], clients=["openai-chat"])  # not needed


def test_the_command_line_names_a_websocket_client_and_all_leaves_it_out() -> None:
    from streamwire.kit.cli import _names
    from streamwire.kit.vocab.names import CLIENTS

    parse = _names(CLIENTS, "client protocol", tuple(WS_CLIENTS))
    assert parse("all") == list(CLIENTS) and WS not in parse("all")
    assert parse(f"openai-chat,{WS}") == ["openai-chat", WS]
    out = subprocess.run(
        [sys.executable, "-m", "streamwire.cli", "check", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert WS in out and LV in out
    assert json.dumps(WS)  # the name is plain ASCII, as every client's


#: What a hostile gateway sends back: bytes, JSON of no event's shape, a
#: deep and a large message.
HOSTILE: list[list[str | bytes]] = [
    [b"\xff\xfe binary", "not json", "[1, 2]", '{"type": 7}', '{"type": ["response.done"]}'],
    [
        '{"type": "response.created", "response": "nope"}',
        '{"type": "response.output_text.delta", "delta": {"a": 1}}',
        '{"type": "response.completed"}',
    ],
    ["{" * 5000, json.dumps({"type": "response.created", "response": {"id": None}}), "x" * 300_000],
    # Realtime's events, of no sane shape.
    [
        '{"type": "session.created", "session": [1]}',
        '{"type": "response.created", "response": {"id": 5}}',
        '{"type": "response.output_audio.delta", "response_id": "r", "delta": "%%not base64"}',
        '{"type": "response.function_call_arguments.delta", "response_id": "r", "call_id": 3}',
        '{"type": "response.done", "response": {"status": ["failed"], "status_details": 1}}',
        '{"type": "response.done", "response": "done"}',
    ],
    # Live's messages, of no sane shape.
    [
        '{"setupComplete": []}',
        '{"serverContent": {"modelTurn": {"parts": "text"}}}',
        '{"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": 5}}]}}}',
        '{"toolCall": {"functionCalls": [{"id": 3, "name": null, "args": "{"}]}}',
        '{"usageMetadata": {"promptTokenCount": "many"}, "serverContent": 1}',
        '{"serverContent": {"turnComplete": "yes", "interrupted": 1}}',
        b'{"toolCall": {}}',
    ],
]


@pytest.mark.parametrize("messages", HOSTILE)
def test_a_hostile_websocket_gateway_gets_verdicts_never_a_traceback(
    messages: list[str | bytes],
) -> None:
    from websockets.asyncio.server import ServerConnection

    async def gateway(ws: ServerConnection) -> None:
        async for _ in ws:
            for message in messages:
                await ws.send(message)
            await ws.close(1011, "gone")

    report = _through_gateway(gateway, ["short-text", "cancel", "tool-error-result"])
    assert len(report.cells) == 9
    for cell in report.cells:
        assert cell.failed or cell.inconclusive, cell.as_dict()
        assert cell.upstream is None  # the gateway never called the mock


def test_a_session_that_never_ends_or_echoes_the_key_everywhere_is_read_within_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from websockets.asyncio.server import ServerConnection, serve

    from streamwire.kit.client import ws
    from streamwire.kit.client.raw import MAX_ECHOES

    monkeypatch.setattr(ws, "MAX_READ_BYTES", 100_000)
    key = "sk-the-kits-own-key"

    async def gateway(connection: ServerConnection) -> None:
        await connection.recv()
        await connection.send(json.dumps({"type": "response.created", "response": {"id": "r"}}))
        while True:  # deltas that carry the key, and no end
            delta = {"type": "response.output_text.delta", "delta": key, "output_index": 0}
            await connection.send(json.dumps(delta))
            await asyncio.sleep(0)  # the client shares this loop

    async def go() -> ws.Observation:
        async with serve(gateway, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            session = await ws.open_session(WS, f"ws://127.0.0.1:{port}/v1/responses", [])
            assert isinstance(session, ws.WsSession), session
            obs = await session.ask({"type": "response.create"}, secrets=(key,))
            session.connection.transport.abort()  # its queue is full: no closing handshake
            return obs

    obs = asyncio.run(go())
    assert obs.kit_limit == "max_read_bytes", obs.failure
    assert 100_000 < obs.raw_bytes < 101_000
    assert len(obs.echoed) == MAX_ECHOES
    assert obs.result is not None and obs.result.text.startswith(key)


def test_an_event_type_of_the_wrong_type_is_read_on_never_raised() -> None:
    from websockets.asyncio.server import ServerConnection, serve

    from streamwire.kit.client import ws

    async def gateway(connection: ServerConnection) -> None:
        await connection.recv()
        await connection.send('{"type": ["response.completed"]}')  # a list: unhashable
        done = {"type": "response.completed", "response": {"id": "r", "status": "completed"}}
        await connection.send(json.dumps(done))

    async def go() -> ws.Observation:
        async with serve(gateway, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            session = await ws.open_session(WS, f"ws://127.0.0.1:{port}/v1/responses", [])
            assert isinstance(session, ws.WsSession), session
            obs = await session.ask({"type": "response.create"})
            await session.close()
            return obs

    obs = asyncio.run(go())
    assert obs.piece_count == 2 and obs.failure is None
