"""The kit under load (``streamwire.kit.run.load``): every stream judged, and what only load shows.

Hops of our own (``kit_hops.py``) that are right for one stream and wrong
under load: ``mix_above`` hands text events between concurrent streams,
``buffer_above`` holds answers once enough streams are in flight,
``leak_cancel`` keeps every tenth cancelled stream's upstream connection;
``hold_arguments`` holds every call's arguments, under load as alone.
Each is clean in a single check and caught under load by its verdict; the
honest relay and examples/gateway are clean at 200 streams in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kit_hops import BUFFER_ABOVE, LEAK_EVERY, MIX_ABOVE
from streamwire.kit.cli import main as kit_main
from streamwire.kit.judge.verdicts import ACCEPTABLE
from streamwire.kit.report.document import build_report
from streamwire.kit.report.load import write_table
from streamwire.kit.run.check import CheckPlan, Route, _tag, run_check
from streamwire.kit.run.load import (
    MACHINE_BUSY,
    LoadPlan,
    LoadReport,
    Reservoir,
    StreamRecord,
    TargetRun,
    _leaks,
    _Sampler,
    percentiles,
    run_load,
)
from streamwire.kit.upstream.mock import MockUpstream, RequestLog
from streamwire.kit.vocab.cases import CASES, SALT_MARK, salted
from streamwire.kit.vocab.httpio import HttpServer, Request, Responder, within

ROOT = Path(__file__).resolve().parent.parent


def _kit_processes() -> Any:
    spec = importlib.util.spec_from_file_location(
        "streamwire_example_kit_processes_load", ROOT / "examples" / "kit_processes.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_procs = _kit_processes()


@contextlib.contextmanager
def _served(behaviour: str) -> Iterator[tuple[str, str]]:
    """(the mock's URL, the hop's): each in a process of its own, as a gateway
    would be, so the generator's event loop is the generator's alone."""
    with _procs.processes() as procs:
        mock = procs.mock()
        hop = procs.start(
            [sys.executable, str(ROOT / "tests" / "kit_hops.py"), mock, behaviour],
            stdout=subprocess.PIPE,
        )
        assert hop.stdout is not None
        line = hop.stdout.readline().decode()
        assert line.startswith("listening on "), line
        yield mock, line.split()[-1]


def _load(
    behaviour: str,
    *,
    concurrency: int,
    streams: int,
    cases: Sequence[str] = ("short-text", "split-anywhere", "single-tool", "cancel"),
    clients: Sequence[str] = ("openai-chat", "anthropic"),
    deliveries: Sequence[str] = ("whole", "paced"),
    direct: bool = True,
) -> LoadReport:
    with _served(behaviour) as (mock, hop):
        plan = CheckPlan(
            routes=[Route(hop, label=behaviour, key_passthrough=True)],
            clients=clients,
            cases=cases,
            deliveries=deliveries,
            unary=False,
            mock_url=mock,
            read_timeout=15.0,
        )
        return asyncio.run(
            run_load(LoadPlan(plan, concurrency=concurrency, streams=streams, direct=direct))
        )


def _target(report: LoadReport, name: str) -> dict[str, Any]:
    return next(t for t in report.summary()["targets"] if t["target"] == name)


def _failing(target: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["verdict"]: f for f in target["findings"] if f["fails"]}


def _untimed(target: dict[str, Any]) -> list[str]:
    """The verdicts no clock decided, less the acceptable ones (straight to the
    mock, and through an honest hop, there must be none)."""
    findings = target["findings"]
    return [f["verdict"] for f in findings if not f["timed"] and f["verdict"] not in ACCEPTABLE]


def _single(behaviour: str, cases: Sequence[str]) -> set[str]:
    with _served(behaviour) as (mock, hop):
        plan = CheckPlan(
            routes=[Route(hop, label=behaviour, key_passthrough=True)],
            clients=("openai-chat", "anthropic"),
            cases=cases,
            deliveries=("whole", "paced"),
            unary=False,
            mock_url=mock,
            concurrency=1,
        )
        report = build_report(asyncio.run(run_check(plan)))
        return {v["name"] for v in report.verdicts}


# --- the parts ---------------------------------------------------------------------------


def test_a_salted_case_names_its_stream_in_every_piece_of_text() -> None:
    case = CASES["split-anywhere"]
    marked = salted(case, "k0000100001")
    assert marked.name == case.name and marked.calls == case.calls
    assert len(marked.text) == len(case.text)
    for plain, piece in zip(case.text, marked.text, strict=True):
        assert piece == (plain + " [k0000100001]" if plain else plain)
    assert {m.group(1) for m in SALT_MARK.finditer("".join(marked.text))} == {"k0000100001"}


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentiles(values) == {"n": 100, "p50": 50.0, "p95": 95.0, "p99": 99.0}
    assert percentiles([]) == {"n": 0, "p50": None, "p95": None, "p99": None}
    assert percentiles([float("nan"), 2.0])["p50"] == 2.0


def test_the_mock_salts_a_tag_s_text_and_reports_its_connections() -> None:
    async def go() -> None:
        async with MockUpstream() as mock:
            mock.set_tag_options("k0000200001", {"salt": 1})
            from streamwire.kit.vocab.httpio import open_request

            body = json.dumps(
                {
                    "model": "sw-short-text.whole.k0000200001",
                    "messages": [{"role": "user", "content": "hi"}],
                    "stream": True,
                }
            ).encode()
            response = await open_request(
                f"{mock.url}/v1/chat/completions",
                method="POST",
                headers=[("content-type", "application/json"), ("authorization", "Bearer k")],
                body=body,
                read_timeout=5.0,
            )
            text = (await response.read()).decode()
            assert text.count("[k0000200001]") == len([t for t in CASES["short-text"].text if t])
            state = mock.load_state()
            assert state["in_flight"] == 0 and isinstance(state["open_connections"], int)
            (entry,) = mock.entries("k0000200001")
            assert entry["connection"] >= 1
            with pytest.raises(ValueError):
                mock.set_tag_options("k0000200001", {"salt": 2})

    asyncio.run(go())


def test_a_reservoir_is_exact_below_its_size_and_a_uniform_sample_beyond() -> None:
    small = Reservoir(size=100)
    for v in range(1, 101):
        small.add(float(v))
    assert small.percentiles() == percentiles([float(v) for v in range(1, 101)])
    big = Reservoir(size=1000)
    for v in range(100_000):
        big.add(float(v))
    assert len(big.values) == 1000 and big.n == 100_000
    out = big.percentiles()
    assert out["n"] == 100_000 and out["sampled"] == 1000
    # Uniform: each tenth of the values holds about a tenth of the sample, and
    # the median is near the middle (seeded: the same sample every run).
    tenths = [sum(1 for v in big.values if k * 10_000 <= v < (k + 1) * 10_000) for k in range(10)]
    assert all(60 <= n <= 140 for n in tenths), tenths
    assert 45_000 <= out["p50"] <= 55_000
    again = Reservoir(size=1000)
    for v in range(100_000):
        again.add(float(v))
    assert again.values == big.values


def _request(connection: int) -> Request:
    return Request("POST", "/v1/chat/completions", "", [], b"{}", 0.0, "peer", connection)


def test_the_mock_knows_running_requests_and_open_connections_past_its_log_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("streamwire.kit.upstream.mock.MAX_LOG", 3)
    log = RequestLog()
    running = log.add(_request(1), {})
    log.tagged(running, "k0000100001")
    for n in range(2, 12):
        log.add(_request(n), {})["ended_at"] = 1.0
    assert running not in log.entries()  # dropped from the log ...
    assert log.in_flight() == [running]  # ... but still running, and the last of its connection
    assert log.last_of_connections([1, 11, 99]) == {1: running, 11: log.entries()[-1]}
    log.closed(1)
    assert 1 not in log.last_of_connections([1])
    running["ended_at"] = 2.0
    assert log.in_flight() == []


def _record(
    tag: str,
    *,
    cancelled: bool = False,
    verdicts: Sequence[tuple[str, str]] = (),
    case: str | None = None,
    timed: Sequence[str] = (),
    arguments_judged: bool = False,
) -> StreamRecord:
    return StreamRecord(
        target="t",
        case=case or ("cancel" if cancelled else "short-text"),
        client="openai-chat",
        delivery="whole",
        tag=tag,
        verdicts=list(verdicts),
        status=200,
        error_type=None,
        headers=0.01,
        first_event=0.02,
        total=0.05,
        gaps=[0.01, 0.02],
        events=3,
        cancelled=cancelled,
        inconclusive=False,
        failed=bool(verdicts),
        timed=list(timed),
        arguments_judged=arguments_judged,
    )


def test_a_target_counts_its_streams_and_keeps_only_hang_ups_that_could_leak() -> None:
    run = TargetRun("t", Route("http://127.0.0.1:1"))
    tags = [_tag() for _ in range(4)]
    run.add(_record(tags[0], verdicts=[("text_altered", "deltas"), ("text_altered", "text")]))
    run.add(_record(tags[1], cancelled=True))
    run.add(_record(tags[2], cancelled=True))
    run.add(_record(tags[3]))
    assert run.judged == 4 and run.events == 12
    assert run.verdicts["text_altered"].streams == 1  # one stream, two layers
    assert dict(run.verdicts["text_altered"].layers) == {"deltas": 1, "text": 1}
    assert run.latencies["gap"].n == 4 and run.latencies["total"].n == 2  # not the hang-ups
    assert run.ours(tags[2]) and not run.ours("k0000100001ffffff") and not run.ours(None)
    later = max(run.hung_up.values()) + 1
    # A partial listing says nothing of the connections it leaves out.
    run.forget_closed({"open_connections": 5, "connections": []}, later)
    assert set(run.hung_up) == {tags[1], tags[2]}
    # tags[1]'s connection is open with it as its last request; tags[2]'s closed.
    listing = [{"connection": 1, "last": {"tag": tags[1]}}, {"connection": 2, "last": None}]
    run.forget_closed({"open_connections": 2, "connections": listing}, later)
    assert set(run.hung_up) == {tags[1]}
    # A hang-up added after the state was asked for is kept whatever it says.
    asked = time.monotonic()
    newest = _tag()
    run.add(_record(newest, cancelled=True))
    run.forget_closed({"open_connections": 0, "connections": []}, asked)
    assert set(run.hung_up) == {newest}


@pytest.mark.parametrize(("held", "fails"), [(1, False), (11, False), (12, True), (60, True)])
def test_held_arguments_fail_under_load_only_in_a_share_of_the_calls_a_stall_cannot_explain(
    held: int, fails: bool
) -> None:
    # A stall of a busy gateway can hold the arguments of the call it overlaps;
    # a hop that holds arguments holds those of every call (a clean-clone CI
    # run saw examples/gateway hold one call of about sixty at 200 in flight).
    run = TargetRun("gateway", Route("http://127.0.0.1:1"))
    verdict = [("arguments_buffered", "streaming")]
    for i in range(60):
        run.add(
            _record(
                _tag(),
                case="single-tool",
                verdicts=verdict if i < held else (),
                timed=["arguments_buffered"] if i < held else (),
                arguments_judged=True,
            )
        )
    for _ in range(40):
        run.add(_record(_tag()))
    plan = LoadPlan(CheckPlan(routes=[run.route], mock_url="http://127.0.0.1:2"), direct=False)
    (finding,) = LoadReport(plan, [run]).findings(run)
    assert finding["verdict"] == "arguments_buffered" and finding["fails"] is fails, finding
    if not fails:
        assert f"held in {held} of the 60 streams" in finding["not_failing"]


def test_a_mock_over_http_listing_tags_of_another_type_names_no_stream() -> None:
    # The mock's state comes over HTTP (--mock URL): a tag that is a list is
    # unhashable, and must neither raise out of the load nor name a leak.
    run = TargetRun("t", Route("http://127.0.0.1:1"))
    tag = _tag()
    run.add(_record(tag, cancelled=True))
    odd = [
        {"connection": 1, "last": {"tag": [tag], "ended": True}},
        {"connection": 2, "last": {"tag": {"t": tag}, "ended": True}},
        {"connection": 3, "last": ["not", "a", "dict"]},
        "not a row",
    ]
    state = {"open_connections": 4, "in_flight": 0, "connections": odd, "requests": []}
    assert _leaks(state, run) == []
    run.forget_closed(state, max(run.hung_up.values()) + 1)
    assert run.hung_up == {}
    # The same connection with the tag as a string is a leak.
    run.add(_record(tag, cancelled=True))
    state["connections"] = [{"connection": 1, "last": {"tag": tag, "ended": True}}]
    assert _leaks(state, run) == [{"kind": "connection open", "tag": tag, "case": None}]


class _SwallowingLog:
    """A mock's log whose poll swallows a cancel that arrives while it runs, as
    Python 3.11's ``asyncio.wait_for`` does when its read completes just then."""

    def __init__(self) -> None:
        self.polls = 0

    async def state(self) -> None:
        self.polls += 1
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(1.0)


def test_the_sampler_stops_when_a_poll_swallows_its_cancel() -> None:
    # The load hung after its streams in CI, polling the mock's connections for
    # ever: the sampler's cancel had been swallowed by a poll in flight.
    async def main() -> int:
        log = _SwallowingLog()
        sampler = _Sampler(log, TargetRun("t", Route("http://127.0.0.1:1")), time.monotonic())  # type: ignore[arg-type]
        sampling = asyncio.ensure_future(sampler())
        while log.polls == 0:
            await asyncio.sleep(0.01)
        await asyncio.wait_for(sampler.stop(sampling), 5.0)
        return log.polls

    assert asyncio.run(main()) == 1


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 has no asyncio.timeout")
def test_a_kit_limit_never_swallows_a_cancel_that_arrives_as_it_completes() -> None:
    # The class of the sampler's bug: the awaited result and the task's cancel
    # in the same turn of the loop. asyncio.wait_for on 3.11 returns the
    # result and loses the cancel; every limit in the kit goes through within.
    async def main() -> None:
        loop = asyncio.get_running_loop()
        inner: asyncio.Future[int] = loop.create_future()
        waiting = asyncio.ensure_future(within(inner, 5.0))
        await asyncio.sleep(0)  # it is awaiting the inner future now

        def both() -> None:
            inner.set_result(1)
            waiting.cancel()

        loop.call_soon(both)
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        assert waiting.cancelled()

    asyncio.run(main())


def test_a_kept_alive_connection_serves_a_second_streamed_request() -> None:
    # The watcher of a streamed response reads the connection until the
    # response ends; the next request's read must wait until the cancelled
    # watcher has left its read (asyncio allows one reader): the server raised
    # "read() called while another coroutine is already waiting" under load.
    async def handler(request: Request, responder: Responder) -> None:
        await responder.start(200, [("content-type", "text/plain")])
        await responder.write(request.path.encode())
        await asyncio.sleep(0.01)  # the watcher is in its read now
        await responder.end()

    async def main() -> list[bytes]:
        server = HttpServer(handler)
        await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        answers = []
        for path in ("/one", "/two"):
            writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
            answer = b""
            while not answer.endswith(b"0\r\n\r\n"):
                data = await asyncio.wait_for(reader.read(4096), 5.0)
                if not data:
                    break
                answer += data
            answers.append(answer)
        writer.close()
        await server.close()
        return answers

    one, two = asyncio.run(main())
    assert one.startswith(b"HTTP/1.1 200") and b"/one" in one
    assert two.startswith(b"HTTP/1.1 200") and b"/two" in two


# --- hops right for one stream, wrong under load ------------------------------------------


@pytest.mark.timed
def test_the_honest_relay_is_clean_at_200_streams_in_flight() -> None:
    report = _load("pass", concurrency=200, streams=400)
    for target in report.summary()["targets"]:
        assert target["judged"] == 400 and target["kit_errors"] == 0, target["kit_error_examples"]
        assert not _failing(target) and not _untimed(target), target["findings"]
        assert target["mock"]["after_settle"]["in_flight"] == 0
    relay = _target(report, "pass")
    assert relay["added_latency"]["first_event"]["p50"] is not None
    assert relay["latency"]["total"]["n"] > 0
    assert report.exit_status == 0
    generator = report.summary()["generator"]
    assert generator["measured_on"] == "direct" and generator["events_judged_per_cpu_second"] > 0


@pytest.mark.timed
def test_a_hop_that_mixes_concurrent_streams_is_cross_talk() -> None:
    assert "cross_talk" not in _single("mix_above", ["short-text", "split-anywhere"])
    report = _load(
        "mix_above",
        concurrency=4 * MIX_ABOVE,
        streams=80,
        cases=("short-text", "split-anywhere"),
    )
    failing = _failing(_target(report, "mix_above"))
    assert "cross_talk" in failing, failing
    why = json.dumps(failing["cross_talk"]["evidence"])
    assert "text written for stream k" in why
    assert not _untimed(_target(report, "direct"))
    assert report.exit_status == 1


@pytest.mark.timed
def test_a_hop_that_buffers_above_a_concurrency_is_not_streaming() -> None:
    assert _single("buffer_above", ["short-text"]) == set()
    report = _load(
        "buffer_above",
        concurrency=3 * BUFFER_ABOVE,
        streams=96,
        cases=("short-text", "split-anywhere"),
        deliveries=("paced",),
    )
    target = _target(report, "buffer_above")
    held = next(f for f in target["findings"] if f["verdict"] == "not_streaming")
    assert held["timed"] and held["share"] > 0.5, held
    if (target["machine_busy"] or 0.0) >= MACHINE_BUSY:
        # A machine busy to the last cycle (tools/timed.py --load) leaves a
        # clock's verdict unproven: the kit reports it, says why, and does not
        # fail on it.
        assert not held["fails"] and held["not_failing"], held
        assert not _failing(target), target["findings"]
    else:
        assert set(_failing(target)) == {"not_streaming"}, target["findings"]
    assert not _untimed(_target(report, "direct"))


@pytest.mark.timed
def test_a_hop_that_holds_every_call_s_arguments_fails_under_load() -> None:
    # The share rule that waives a busy gateway's stalls never waives a hop
    # that holds the arguments of every call.
    report = _load(
        "hold_arguments",
        concurrency=8,
        streams=16,
        cases=("single-tool",),
        clients=("openai-chat",),
        deliveries=("paced",),
        direct=False,
    )
    target = _target(report, "hold_arguments")
    held = next(f for f in target["findings"] if f["verdict"] == "arguments_buffered")
    assert held["streams"] >= 12 and held["timed"], held
    if (target["machine_busy"] or 0.0) >= MACHINE_BUSY:
        assert not held["fails"] and "busy" in held["not_failing"], held
    else:
        assert held["fails"], held


@pytest.mark.timed
def test_a_hop_that_leaks_every_tenth_cancelled_upstream_is_upstream_leaked() -> None:
    report = _load(
        "leak_cancel",
        concurrency=10,
        streams=6 * LEAK_EVERY,
        cases=("cancel",),
        clients=("openai-chat",),
        deliveries=("whole",),
    )
    target = _target(report, "leak_cancel")
    failing = _failing(target)
    leaked = failing.get("upstream_leaked")
    assert leaked is not None, target["findings"]
    assert leaked["streams"] == 6, leaked
    assert {e["kind"] for e in leaked["evidence"]} == {"connection open"}
    assert not _untimed(_target(report, "direct"))


# --- examples/gateway, and the command ---------------------------------------------------


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[str, str]]:
    """(examples/gateway's URL, the mock's URL)."""
    with _procs.processes() as procs:
        mock = procs.mock()
        url = procs.gateway(mock + "/v1", "openai-chat")
        procs.ready()
        yield url, mock


@pytest.mark.timed
def test_examples_gateway_is_clean_at_200_streams_in_flight(
    gateway: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, mock = gateway
    out = tmp_path / "load"
    status = kit_main(
        [
            "check",
            url,
            "--mock",
            mock,
            "--client",
            "openai-chat,anthropic",
            "--no-unary",
            "--load",
            "--load-streams",
            "400",
            "--concurrency",
            "200",
            "--json",
            str(out.with_suffix(".json")),
            "--markdown",
            str(out.with_suffix(".md")),
            "--html",
            str(out.with_suffix(".html")),
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0, printed
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["format"] == "streamwire-load/1"
    targets = {t["target"]: t for t in doc["summary"]["targets"]}
    assert len(targets) == 2 and "direct" in targets, targets.keys()
    for target in targets.values():
        assert target["judged"] == 400 and not _failing(target) and not _untimed(target)
    markdown = out.with_suffix(".md").read_text()
    assert "## Latency" in markdown and "added p50" in markdown
    page = out.with_suffix(".html").read_text()
    assert page.count("<polyline") >= 8 and "<h3>first event</h3>" in page


def test_load_arguments_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        kit_main(["check", "http://127.0.0.1:9", "--client", "openai-chat", "--load-streams", "0"])
    assert "whole number" in capsys.readouterr().err


def _with_open_files(soft: int, hard: int | None, code: str) -> subprocess.CompletedProcess[str]:
    import resource

    def limit() -> None:
        current = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, current if hard is None else hard))

    return subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_load_raises_its_open_file_limit_or_says_it_cannot() -> None:
    raised = _with_open_files(
        200,
        None,
        "import resource; from streamwire.kit.cli import _room_for_sockets; "
        "print(_room_for_sockets(1000), resource.getrlimit(resource.RLIMIT_NOFILE)[0])",
    )
    assert raised.stdout.split() == ["None", "2064"], raised.stderr
    refused = _with_open_files(
        200,
        200,
        "import sys; from streamwire.kit.cli import main; sys.exit(main(['check', "
        "'http://127.0.0.1:9', '--client', 'openai-chat', '--load', '--concurrency', '1000']))",
    )
    assert refused.returncode == 2
    assert "need about 2064 open files" in refused.stderr and "ulimit -n 2064" in refused.stderr


def test_a_report_renders_from_a_small_run() -> None:
    report = _load(
        "pass", concurrency=2, streams=4, cases=("short-text",), clients=("openai-chat",)
    )
    table = io.StringIO()
    write_table(report, table)
    assert "direct: 4 streams" in table.getvalue() and "pass: 4 streams" in table.getvalue()
    doc = io.StringIO()
    report.write_json(doc)
    assert json.loads(doc.getvalue())["summary"]["concurrency"] == 2
