"""``check``: drive a gateway with every case through every client protocol, and judge each cell.

One cell is (case, client protocol, delivery) on one route (a gateway's
base URL and the model-name template it routes by); its upstream protocol
is whatever endpoint of the mock the gateway then called, read from the
mock's log by the cell's tag. For each cell the judge's client sends the
case's request with the model ``sw-<case>.<delivery>.<tag>`` (put through
the route's template, e.g. ``anthropic/{model}``) and a prompt that names it
too (for a gateway that sends one fixed model upstream), reads the answer
(``raw.observe``), waits for the mock to finish its side (bounded), sends
the follow-up of ``tool-error-result``, and judges (``judge/rules.py``). Cells run
concurrently (``concurrency``), all on one event loop; nothing blocks it.

The mock is either given (``mock_url``: read its log over HTTP) or started
in-process on a free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import ssl
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlsplit

from ... import __version__
from ...io._wire import REQUEST_ID_HEADERS
from ..client.command import cell_command, curl_command, key_variable, websocat_command
from ..client.raw import Observation, client_request, observe
from ..client.sdk import (
    SDK_CASES,
    SDK_DELIVERIES,
    SDK_PACED_CASES,
    SdkAnswer,
    ask,
    missing_sdks,
    sdk_version,
)
from ..client.sdk import test_record as sdk_record
from ..client.ws import (
    WS_CLIENTS,
    WS_DELIVERIES,
    WsSession,
    hang_up_form,
    open_session,
    ws_carries,
    ws_follow_up,
    ws_request,
)
from ..client.ws import (
    require as require_ws,
)
from ..judge.cell import LAYERS, Cell, Check, repeated
from ..judge.rules import inputs, judge, reference
from ..judge.sdk import compare
from ..judge.timed import TIMING_TAGS, compression_cause
from ..judge.timed import streaming as timed_streaming
from ..upstream.mock import MockUpstream, fingerprint, is_entry
from ..upstream.ws_socket import is_session
from ..vocab.cases import (
    CASE_NAMES,
    CASES,
    UNARY_CASES,
    Case,
    cell_model,
    salted,
    sized,
    truth,
)
from ..vocab.delivery import DELIVERIES, UNARY
from ..vocab.h2io import require as require_h2
from ..vocab.httpio import (
    Http2Only,
    Http2Unsupported,
    SetupError,
    TransportError,
    Trust,
    open_request,
    within,
)
from ..vocab.kinds.base import Limits
from ..vocab.kinds.cancel import CANCEL_WAIT
from ..vocab.kinds.head_of_line import BESIDE_CASE, HOL_REACH, HOL_WAIT, HeadOfLine
from ..vocab.kinds.retry import DEFAULT_STALL
from ..vocab.kinds.silence import DEFAULT_SILENCE, SHORT_SILENCE
from ..vocab.names import CLIENTS, SDKS
from ..vocab.transport import TRANSPORTS, Transport, client_label, split_label

__all__ = ["CheckPlan", "Route", "run_check", "run_record", "sdk_clients"]

#: How long the judge waits for the mock to finish its side of a request.
SETTLE = 2.0
#: Layers judged by timing: a clock-decided finding, or a figure near its bound
#: (``details["borderline"]``), is confirmed by a second run of the cell alone ...
TIMED_LAYERS = ("streaming", "cancel", "backpressure", "head_of_line")
#: ... until this many cells of a (route, client) confirmed the same finding.
CONFIRMATIONS = 3


def _suspect(check: Check) -> bool:
    if check.details.get("borderline"):
        return True
    return check.verdict in ("fail", "degraded") and bool(set(check.tags) & TIMING_TAGS)


@dataclass(frozen=True)
class Route:
    """A gateway base URL, the template its model names go through, and its label."""

    base_url: str
    #: ``{model}`` is replaced by ``sw-<case>.<delivery>.<tag>``; a template
    #: without it is sent as it is (a gateway that routes by its own model or
    #: endpoint names): the mock then reads the cell from the prompt.
    model: str = "{model}"
    #: The route's name in the matrix and the verdicts (default: see ``CheckPlan``).
    label: str = ""
    #: The hop passes the client's key on to the upstream by design (a reverse
    #: proxy in front of the provider): the ``credentials`` layer allows it.
    key_passthrough: bool = False

    @property
    def name(self) -> str:
        return self.label or _host(self.base_url)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


def _host(url: str) -> str:
    parts = urlsplit(url)
    return (parts.netloc or url) + parts.path.rstrip("/")


def _labelled(routes: Sequence[Route]) -> list[Route]:
    """The routes, each with a readable label where it has none: its model
    template (``anthropic/{model}`` -> ``anthropic/*``) when the routes share
    one base URL, its host when they share one template, else both."""
    one_url = len({r.base_url for r in routes}) == 1
    one_template = len({r.model for r in routes}) == 1
    out = []
    for route in routes:
        if route.label:
            out.append(route)
            continue
        template = route.model.replace("{model}", "*")
        if one_url and not one_template:
            label = template
        elif one_template and route.model == "{model}":
            label = _host(route.base_url)
        elif one_template:
            label = template if one_url else f"{_host(route.base_url)} {template}"
        else:
            label = f"{_host(route.base_url)} {template}"
        out.append(replace(route, label=label))
    return out


@dataclass
class CheckPlan:
    """What ``run_check`` runs."""

    routes: Sequence[Route]
    clients: Sequence[str] = CLIENTS
    cases: Sequence[str] = CASE_NAMES
    deliveries: Sequence[str] = DELIVERIES
    mock_url: str | None = None
    #: The in-process mock's port when ``mock_url`` is None (0: a free one).
    mock_port: int = 0
    #: The in-process mock streams a request its provider would refuse
    #: (``upstream/contract.py``) instead of refusing it; the ``request`` layer still fails.
    lenient_mock: bool = False
    #: The in-process mock answers a gateway that asks for gzip (or br)
    #: compressed, flushed per event (``MockUpstream(compress=True)``).
    mock_compress: bool = False
    concurrency: int = 8
    #: The kit's key to the gateway; None: a key unique to the run
    #: (``sk-swkit-<run>``), a canary that must never reach the upstream.
    key: str | None = None
    #: The environment variable the key came from (``--key-env``): each cell's
    #: ``reproduce`` command reads it from there (else ``$STREAMWIRE_KEY``).
    key_env: str | None = None
    read_timeout: float = 20.0
    connect_timeout: float = 10.0
    #: The most a whole answer may take (a silence case's: its silence and 60 s more).
    total_timeout: float = 120.0
    #: The run's id (set by the plan): in its key, unless one is given, and in
    #: every prompt's canary (``swc-<run>``).
    run_id: str = field(default="", init=False)
    canary: str = field(default="", init=False)
    #: The silence cases' seconds of silence (``kinds.silence.DEFAULT_SILENCE``: past the
    #: common proxies' idle timeouts, nginx's 60 s ``proxy_read_timeout`` first).
    silence: float = DEFAULT_SILENCE
    #: Which client protocols' silence cells say nothing for ``silence`` (the
    #: idle-timeout probes): ``first``, the plan's first on each route (the
    #: others' for ``SHORT_SILENCE``, or ``silence`` if shorter), or ``all``.
    silence_clients: str = "first"
    #: How long the retry-stall case's first attempt says nothing.
    stall: float = DEFAULT_STALL
    #: Each case of ``UNARY_CASES`` in the plan is also asked for its whole
    #: answer (``stream: false``): one ``unary`` cell per case and client.
    unary: bool = True
    #: The official SDKs (``sdk.SDKS``) that also read the cases: one SDK cell
    #: per (case of ``SDK_CASES``, client protocol the SDK speaks, delivery of
    #: ``SDK_DELIVERIES``) in the plan, judged by the ``sdk`` layer.
    sdks: Sequence[str] = ()
    #: A response header that names the gateway's version: each cell keeps its value.
    version_header: str | None = None
    #: Each cell runs this many times; one whose runs differ in a verdict no
    #: clock decided is ``flaky`` (``Cell.flaky``), and fails the run.
    repeat: int = 1
    #: The transports the cells read over (``vocab/transport.py``): the first
    #: reads every case, the others the plain cases in the paced delivery.
    transports: Sequence[str] = ("http1",)
    #: Whom the client trusts on https routes (``httpio.Trust``: ``--cacert``,
    #: ``--insecure``), or a TLS context of the caller's (None: the system's
    #: trust store).
    tls: Trust | ssl.SSLContext | None = None

    def limits(self, hang_up: float, client: str | None = None) -> Limits:
        """A cell's limits before its kind's own (``hang_up``: how long a
        hang-up's upstream request may take to end; ``client``: the cell's
        client label, whose silence is ``silence_for``'s)."""
        return Limits(
            read=self.read_timeout,
            total=self.total_timeout,
            settle=SETTLE,
            hang_up=hang_up,
            silence=self.silence if client is None else self.silence_for(client),
            stall=self.stall,
        )

    def silence_for(self, client: str) -> float:
        """How long a silence cell of ``client`` (a client label) is silent:
        ``silence`` when it probes the route's idle timeout (``silence_clients``),
        else ``SHORT_SILENCE`` at most."""
        probe = self.silence_clients == "all" or split_label(client)[0] == self.clients[0]
        return self.silence if probe else min(self.silence, SHORT_SILENCE)

    def sdk_keys(self) -> list[tuple[Route, str, str, str, str]]:
        """(route, case, SDK, client, delivery) of every SDK cell, in plan order."""
        return [
            (route, name, sdk, client, delivery)
            for route in self.routes
            for sdk in self.sdks
            for client in SDKS[sdk]
            if client in self.clients
            for name in self.cases
            if name in SDK_CASES
            for delivery in self.deliveries
            if delivery in SDK_DELIVERIES and delivery in (CASES[name].only or DELIVERIES)
            if delivery != "paced" or name in SDK_PACED_CASES
        ]

    def keys(self) -> list[tuple[Route, str, str, str]]:
        """(route, case, client, delivery) of every cell, in plan order; a case
        that runs in some deliveries only (``Case.only``) skips the others, and
        a unary case's ``unary`` cell follows its streamed ones."""
        unary = (UNARY,) if self.unary else ()
        http = [c for c in self.clients if c not in WS_CLIENTS]
        first = [
            (route, name, client, delivery)
            for route in self.routes
            for client in http
            for name in self.cases
            for delivery in (*self.deliveries, *unary)
            if delivery in (CASES[name].only or DELIVERIES)
            or (delivery == UNARY and name in UNARY_CASES)
        ]
        if self.transports[0] != "http1":
            first = [(r, n, client_label(c, self.transports[0]), d) for r, n, c, d in first]
        # The WebSocket clients: the cases a session carries, whole and paced.
        sessions = [
            (route, name, client, delivery)
            for route in self.routes
            for client in self.clients
            if client in WS_CLIENTS
            for name in self.cases
            if ws_carries(CASES[name], client)
            for delivery in self.deliveries
            if delivery in WS_DELIVERIES and delivery in (CASES[name].only or DELIVERIES)
        ]
        # The other transports: the plain cases, paced (or the first delivery).
        paced = "paced" if "paced" in self.deliveries else self.deliveries[0]
        others = [
            (route, name, client_label(client, transport), paced)
            for transport in self.transports[1:]
            for route in self.routes
            for client in http
            for name in self.cases
            if CASES[name].kind.plain and paced in (CASES[name].only or DELIVERIES)
        ]
        return first + sessions + others

    @property
    def size(self) -> int:
        """How many cells the plan runs."""
        return len(self.keys()) + len(self.sdk_keys())

    def __post_init__(self) -> None:
        for name, given, known in (
            ("client", self.clients, (*CLIENTS, *WS_CLIENTS)),
            ("case", self.cases, CASE_NAMES),
            ("delivery", self.deliveries, DELIVERIES),
        ):
            unknown = [g for g in given if g not in known]
            if unknown:
                raise ValueError(f"unknown {name} {', '.join(unknown)}; known: {', '.join(known)}")
        if self.silence_clients not in ("first", "all"):
            raise ValueError(f"--silence-clients is first or all, not {self.silence_clients!r}")
        if not self.transports or any(t not in TRANSPORTS for t in self.transports):
            raise ValueError(
                f"unknown transport in {', '.join(self.transports) or 'none'}; "
                f"known: {', '.join(TRANSPORTS)}"
            )
        if any(TRANSPORTS[t].http2 for t in self.transports):
            require_h2()
        if any(c in WS_CLIENTS for c in self.clients):
            require_ws()
        unknown = [s for s in self.sdks if s not in SDKS]
        if unknown:
            raise ValueError(f"unknown SDK {', '.join(unknown)}; known: {', '.join(SDKS)}")
        missing = missing_sdks(self.sdks)
        if missing:
            raise ValueError(
                f"the SDK {', '.join(missing)} is not installed: pip install 'streamwire[kit-sdk]'"
            )
        self.run_id = secrets.token_hex(6)
        self.canary = f"swc-{self.run_id}"
        if self.key is None:
            self.key = f"sk-swkit-{self.run_id}"
        if self.repeat < 1:
            raise ValueError(f"--repeat must be at least 1, not {self.repeat}")
        self.routes = _labelled(self.routes)
        names = [r.name for r in self.routes]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two routes are labelled {', '.join(twice)}: give each its own label")


def run_record(plan: CheckPlan) -> dict[str, Any]:
    """What the report says of the run's canaries: its id, the canary in every
    prompt, and its key to the gateway (itself when the run made it, a
    fingerprint when it was given: a real key is never stored), and how the
    mock started here was set (lenient, compressing)."""
    made = plan.key == f"sk-swkit-{plan.run_id}"
    return {
        "id": plan.run_id,
        "canary": plan.canary,
        "key": plan.key if made else None,
        "key_sha256": fingerprint(plan.key)["sha256"] if plan.key else None,
        "lenient_mock": plan.lenient_mock,
        "mock_compress": plan.mock_compress,
    }


#: Each ask of a mock over HTTP for a tag's log entries, its read timeout: a
#: mock writing many large answers at once (the slow reader's, 48 to 83 MB,
#: to several buffering proxies) was seen not answering within 5 s, and its
#: cells then judged without the log ("no stream to read").
LOG_TIMEOUTS = (5.0, 10.0, 20.0)


class _Log:
    """The mock's log: in-process, or over HTTP."""

    def __init__(self, mock: MockUpstream | None, url: str, poll: float = 0.02) -> None:
        self.mock = mock
        self.url = url.rstrip("/")
        #: How often ``settled`` and ``ended`` read the log while they wait.
        self.poll = poll

    async def entries(self, tag: str) -> list[dict[str, Any]]:
        """The tag's entries; [] when a mock over HTTP did not answer
        ``LOG_TRIES`` asks (a busy mock answers late: "no answer" is not
        "no entry" until then)."""
        if self.mock is not None:
            return self.mock.entries(tag)
        for timeout in LOG_TIMEOUTS:
            try:
                response = await open_request(
                    f"{self.url}/_sw/log?tag={quote(tag)}", method="GET", read_timeout=timeout
                )
                data = json.loads(await response.read())
            except (TransportError, ValueError):
                continue
            requests = data.get("requests") if isinstance(data, dict) else None
            return [r for r in requests if is_entry(r)] if isinstance(requests, list) else []
        return []

    async def sessions(self, tag: str) -> list[dict[str, Any]]:
        """The WebSocket sessions a response of the tag was on (``/_sw/sessions``);
        [] when a mock over HTTP does not answer with them."""
        if self.mock is not None:
            return self.mock.sessions.sessions(tag)
        try:
            response = await open_request(
                f"{self.url}/_sw/sessions?tag={quote(tag)}", method="GET", read_timeout=5.0
            )
            data = json.loads(await response.read())
        except (TransportError, ValueError):
            return []
        sessions = data.get("sessions") if isinstance(data, dict) else None
        return [s for s in sessions if is_session(s)] if isinstance(sessions, list) else []

    async def state(self) -> dict[str, Any] | None:
        """The mock's open connections and requests in flight (``MockUpstream.load_state``);
        None when a mock over HTTP does not answer with them."""
        if self.mock is not None:
            return self.mock.load_state()
        try:
            response = await open_request(
                f"{self.url}/_sw/connections", method="GET", read_timeout=5.0
            )
            data = json.loads(await response.read())
        except (TransportError, ValueError):
            return None
        ok = isinstance(data, dict) and all(
            isinstance(data.get(k), int) and isinstance(data.get(r), list)
            for k, r in (("open_connections", "connections"), ("in_flight", "requests"))
        )
        return data if ok else None

    async def set_options(self, tag: str, options: dict[str, float]) -> None:
        """What the mock does for this tag's requests (``mock.TAG_OPTIONS``)."""
        if self.mock is not None:
            self.mock.set_tag_options(tag, options)
            return
        with contextlib.suppress(TransportError):
            response = await open_request(
                f"{self.url}/_sw/tags/{quote(tag)}",
                method="PUT",
                headers=[("content-type", "application/json")],
                body=json.dumps(options).encode(),
                read_timeout=5.0,
            )
            await response.read()
            response.close()

    async def ended(self, tag: str, wait: float) -> list[dict[str, Any]]:
        """The tag's entries once all of them ended (or ``wait`` passed)."""
        deadline = time.monotonic() + wait
        while True:
            entries = await self.entries(tag)
            if all(e.get("ended_at") is not None for e in entries) or time.monotonic() > deadline:
                return entries
            await asyncio.sleep(max(self.poll, 0.05))

    async def appeared(self, tag: str, wait: float) -> list[dict[str, Any]]:
        """The tag's entries once one is in the log (or ``wait`` passed)."""
        deadline = time.monotonic() + wait
        while True:
            entries = await self.entries(tag)
            if entries or time.monotonic() > deadline:
                return entries
            await asyncio.sleep(self.poll)

    async def settled(
        self, tag: str, count: int, wait: float, appear: float | None = None
    ) -> list[dict[str, Any]]:
        """The tag's entries once ``count`` of them ended (or ``wait`` passed, or
        ``appear`` passed with none in the log at all)."""
        started = time.monotonic()
        deadline = started + wait
        while True:
            entries = await self.entries(tag)
            done = [e for e in entries if e.get("ended_at") is not None]
            now = time.monotonic()
            absent = not entries and appear is not None and now > started + appear
            if len(done) >= count or now > deadline or absent:
                return entries
            await asyncio.sleep(self.poll)


_tags = itertools.count(1)
#: This process's mark in its tags: many processes (a load's workers, on many
#: machines) share one mock, and each tag must name one stream.
_PROCESS_MARK = secrets.token_hex(3)


def _tag() -> str:
    return f"k{int(time.time()) % 100000:05d}{next(_tags):05d}{_PROCESS_MARK}"


def tag_number(tag: str) -> int | None:
    """The sequence number of a tag this process made (``_tag``: they rise in
    the order streams start); None for another process's, or not a tag."""
    if not tag.startswith("k") or not tag.endswith(_PROCESS_MARK):
        return None
    digits = tag[6 : len(tag) - len(_PROCESS_MARK)]
    return int(digits) if len(digits) >= 5 and digits.isdigit() else None


async def _ask_beside(
    plan: CheckPlan, log: _Log, route: Route, client: str, transport: Transport, tag: str
) -> tuple[asyncio.Task[Observation], str]:
    """The head-of-line cell's request beside its stream: a whole answer
    (``BESIDE_CASE``) that the mock holds ``HOL_WAIT`` seconds, asked for
    and awaited until the mock has it (at most ``HOL_REACH``); its task and tag."""
    beside_tag = f"{tag}b"
    name = cell_model(BESIDE_CASE, UNARY, beside_tag)
    await log.set_options(beside_tag, {"answer_after": HOL_WAIT})
    url, headers, body = client_request(
        client,
        CASES[BESIDE_CASE],
        route.model.replace("{model}", name),
        route.base_url,
        plan.key,
        canary=plan.canary,
        stream=False,
        accept_encoding=transport.accept_encoding,
        cell=name,
    )
    task = asyncio.get_running_loop().create_task(
        observe(
            client,
            url,
            headers,
            body,
            connect_timeout=plan.connect_timeout,
            read_timeout=plan.read_timeout,
            secrets=(plan.key,) if plan.key else (),
            unary=True,
            decode=transport.decodes,
            tls=plan.tls,
            http2=transport.http2,
        )
    )
    await log.appeared(beside_tag, HOL_REACH)
    return task, beside_tag


async def _answer_beside(
    log: _Log, task: asyncio.Task[Observation], tag: str
) -> tuple[Observation, dict[str, Any] | None]:
    """What the client and the mock saw of the request beside, once it ended."""
    beside = await task
    entries = await log.settled(tag, 1, SETTLE, 0.2)
    return beside, entries[0] if entries else None


async def _run_cell(
    plan: CheckPlan, log: _Log, route: Route, case: Case, client: str, delivery: str
) -> Cell:
    cell, _ = await judged_stream(plan, log, route, case, client, delivery)
    return cell


async def judged_stream(
    plan: CheckPlan,
    log: _Log,
    route: Route,
    case: Case,
    client: str,
    delivery: str,
    *,
    salt: bool = False,
    cancel_wait: float | None = None,
) -> tuple[Cell, Observation]:
    """One cell, and what its client saw. ``salt``: the mock writes the case's
    text with the cell's tag in it (``cases.salted``), and the judge expects it.
    ``cancel_wait``: how long a hang-up's upstream request may take to end
    before it is judged (``CANCEL_WAIT`` unless told; a load gives it longer).
    ``client``: a client label (``transport.client_label``): the protocol,
    and the transport the cell reads over unless ``http1``."""
    label = client
    client, transport = split_label(label)
    tag = _tag()
    name = cell_model(case.name, delivery, tag)
    model = route.model.replace("{model}", name)
    kind, plain = case.kind, case
    limits = kind.limits(plan.limits(cancel_wait or CANCEL_WAIT, label))
    options = kind.tag_options(limits)
    if salt:
        options["salt"] = 1
        case = salted(case, tag)
    unary = delivery == UNARY
    websocket = client in WS_CLIENTS
    messages: list[dict[str, Any]] = []
    if websocket:
        url, headers, messages = ws_request(
            client, case, model, route.base_url, plan.key, plan.canary, cell=name, delivery=delivery
        )
        body = messages[0] if len(messages) == 1 else {"messages": messages}
    else:
        url, headers, body = client_request(
            client,
            case,
            model,
            route.base_url,
            plan.key,
            canary=plan.canary,
            stream=not unary,
            accept_encoding=transport.accept_encoding,
            cell=name,
        )
    watched = (plan.key,) if plan.key else ()
    if options:
        await log.set_options(tag, options)
    beside = None
    if isinstance(kind, HeadOfLine):
        beside = await _ask_beside(plan, log, route, client, transport, tag)
    session: WsSession | None = None
    if websocket:
        opened = await open_session(
            client, url, headers, connect_timeout=plan.connect_timeout, tls=plan.tls
        )
        if isinstance(opened, Observation):
            obs = opened
            obs.request = body
        else:
            session = opened
            obs = await session.ask(
                messages,
                conduct=kind.conduct,
                hang_up=hang_up_form(client, delivery),
                read_timeout=limits.read,
                total_timeout=limits.total,
                secrets=watched,
            )
    else:
        obs = await observe(
            client,
            url,
            headers,
            body,
            conduct=kind.conduct,
            connect_timeout=plan.connect_timeout,
            read_timeout=limits.read,
            total_timeout=limits.total,
            secrets=watched,
            unary=unary,
            decode=transport.decodes,
            tls=plan.tls,
            http2=transport.http2,
        )
    # No answer at all: the mock's log is read almost at once; but a client
    # that hung up before the head gives the hop its time to close too.
    answered = obs.status is not None or obs.cancelled_at is not None
    # A load's long wait is for a request that runs on, not for one never made.
    appear = SETTLE if cancel_wait is not None else None
    entries = await log.settled(tag, 1, limits.settle if answered else 0.2, appear)
    if kind.per_attempt:
        entries = await log.ended(tag, limits.settle)
    first = _answering(case, entries, obs)
    deltas = first.get("deltas") if first is not None else None
    if isinstance(deltas, int) and not isinstance(deltas, bool):
        # The answer as the mock sized it (the slow reader's).
        case = sized(plain, deltas)
        if salt:
            case = salted(case, tag)
    follow_obs: Observation | None = None
    follow_entry: dict[str, Any] | None = None
    if session is not None:
        # The tool's result goes on the same socket, as the protocol sends it.
        again = ws_follow_up(client, kind, messages, obs.result)
        if again is not None:
            follow_obs = await session.ask(again, read_timeout=plan.read_timeout, secrets=watched)
    second = None if websocket else kind.next_request(client, body, obs.result)
    if second is not None:
        follow_obs = await observe(
            client,
            url,
            headers,
            second,
            read_timeout=plan.read_timeout,
            secrets=watched,
            unary=unary,
            decode=transport.decodes,
            tls=plan.tls,
            http2=transport.http2,
        )
    if session is not None:
        await session.close()
    if follow_obs is not None:
        entries = await log.settled(tag, len(entries) + 1, SETTLE)
        later = [e for e in entries if first is None or e["id"] > first["id"]]
        follow_entry = later[-1] if later else None
    x = inputs(case, client, delivery, obs, first, follow_obs, follow_entry)
    if beside is not None:
        x.beside_obs, x.beside_entry = await _answer_beside(log, *beside)
    x.attempts = [e for e in entries if e.get("case") == case.name] if kind.per_attempt else []
    x.key_sha256 = fingerprint(plan.key)["sha256"] if plan.key else None
    # Straight to the mock, the client's key is the upstream's by definition.
    x.key_passthrough = route.key_passthrough or _origin(route.base_url) == _origin(log.url)
    checks = judge(x)
    evidence: dict[str, Any] = {
        "tag": tag,
        "model": model,
        "record": test_record(client, model, obs, [e for e in (first, *x.attempts) if e]),
        "client": obs.evidence(),
        "upstream_requests": len(entries),
        "mock": _mock_summary(first, obs.sent_at),
        "timeline": _timeline(obs, first),
    }
    server = next((v for n, v in obs.headers if n.lower() == "server"), None)
    if server is not None:
        evidence["server"] = server[:120]  # the hop that answered, for advice by hop
    if plan.version_header:
        wanted = plan.version_header.lower()
        evidence["version_header"] = next((v for n, v in obs.headers if n.lower() == wanted), None)
    if kind.per_attempt:
        evidence["attempts"] = [_mock_summary(e, obs.sent_at) for e in x.attempts]
    if kind.silent:
        evidence["silence_s"] = limits.silence
    if x.beside_obs is not None:
        evidence["beside"] = {
            "client": x.beside_obs.evidence(),
            "mock": _mock_summary(x.beside_entry, x.beside_obs.sent_at),
        }
    if follow_obs is not None:
        evidence["follow_up"] = {
            "client": follow_obs.evidence(),
            "mock": _mock_summary(follow_entry, follow_obs.sent_at),
        }
    if websocket:
        # The mock's side of the sockets the hop opened for this cell, as they went.
        sessions = await log.sessions(tag)
        evidence["upstream_sessions"] = [_session_summary(s, obs.sent_at) for s in sessions]
    cell = Cell(case.name, label, x.upstream, delivery, checks, evidence, route.name)
    cell.transport = transport.name
    var = key_variable(plan.key_env)
    if websocket:
        cell.reproduce = websocat_command(url, headers, messages, key=plan.key, var=var)
    else:
        cell.reproduce = curl_command(
            url, headers, body, key=plan.key, var=var, http2=transport.http2
        )
    return cell, obs


async def _run_sdk_cell(
    plan: CheckPlan, log: _Log, route: Route, case: Case, sdk: str, client: str, delivery: str
) -> Cell:
    """One SDK cell: the case's request through the SDK, judged by the ``sdk`` layer."""
    tag = _tag()
    name = cell_model(case.name, delivery, tag)
    model = route.model.replace("{model}", name)
    sent_at = time.time()
    answer = await ask(
        sdk,
        client,
        case,
        model,
        route.base_url,
        plan.key or "sk-swkit",
        canary=plan.canary,
        timeout=plan.total_timeout,
        cell=name,
    )
    entries = await log.settled(tag, 1, SETTLE)
    entry = entries[0] if entries else None
    upstream = entry.get("upstream") if entry else None
    ref = None
    error_type = "error" if case.error else None
    if entry is not None and isinstance(upstream, str):
        usage_sent = entry.get("usage_sent") is not False
        error_type = truth(case, upstream, usage_sent=usage_sent).error_type
        ref = reference(case.name, upstream, client, usage_sent, case.wants_usage)
    checks = {
        layer: Check("not_applicable", "an SDK cell: the raw HTTP cells judge this layer")
        for layer in LAYERS
    }
    checks["sdk"] = compare(answer, ref, error_type)
    if delivery == "paced":
        checks["streaming"] = _sdk_streaming(case, client, delivery, answer, entry, sent_at)
    control = None
    if answer.raised is not None and upstream == client:
        # The gateway passed the upstream's own protocol on: does the SDK raise
        # on the upstream's own stream too? Then it is the SDK's limit.
        if _origin(route.base_url) == _origin(log.url):
            control = answer
        else:
            again = cell_model(case.name, delivery, _tag())
            control = await ask(
                sdk,
                client,
                case,
                again,
                log.url,
                plan.key or "sk-swkit",
                timeout=plan.total_timeout,
                cell=again,
            )
        if control.raised is not None and control.raised[0] == answer.raised[0]:
            first = checks["sdk"]
            checks["sdk"] = Check(
                "degraded",
                f"{first.why}; it raises the same on the upstream's own stream, straight from "
                "the mock: the SDK's limit, not the gateway's (which passed the stream on)",
                ("sdk_limit",),
                first.details,
            )
    evidence: dict[str, Any] = {
        "tag": tag,
        "model": model,
        "sdk": answer.evidence(),
        "sdk_on_the_upstream": control.evidence() if control not in (None, answer) else None,
        "record": sdk_record(answer, model, sent_at, entry),
        "upstream_requests": len(entries),
        "mock": _mock_summary(entry, sent_at),
    }
    known = upstream if isinstance(upstream, str) else None
    cell = Cell(case.name, f"{client} via {sdk}", known, delivery, checks, evidence, route.name)
    cell.transport = "sdk"
    cell.reproduce = cell_command(
        client,
        case,
        model,
        route.base_url,
        key=plan.key,
        var=key_variable(plan.key_env),
        canary=plan.canary,
        stream=delivery != UNARY,
        cell=name,
    )
    return cell


def _sdk_streaming(
    case: Case,
    client: str,
    delivery: str,
    answer: SdkAnswer,
    entry: dict[str, Any] | None,
    sent_at: float,
) -> Check:
    """A paced SDK cell's streaming layer: the raw cells' rule, on the times
    the SDK yielded its content (``SdkAnswer.content``): a hop that holds
    the answer for the SDK, whatever it does for the raw client, is seen."""
    obs = Observation(client, "", {}, sent_at)
    obs.content = list(answer.content)
    check = timed_streaming(inputs(case, client, delivery, obs, entry))
    check.details["timed_by"] = "the SDK's own events"
    if check.verdict != "pass" and check.why:
        check.why = f"{check.why} (timed as the SDK yielded its events)"
    return check


def sdk_clients(plan: CheckPlan) -> dict[str, str]:
    """Each SDK cell's client label (``<protocol> via <sdk>``) and its SDK and version."""
    return {
        f"{client} via {sdk}": f"{sdk} {sdk_version(sdk) or '?'}"
        for sdk in plan.sdks
        for client in SDKS[sdk]
        if client in plan.clients
    }


def test_record(
    client: str, model: str, obs: Observation, entries: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """What a release record keeps of one request (docs/kit/outputs.md, "The test
    record"): the client, the model asked for and the one the answer named,
    when, the upstream's request id and the gateway's own, the status, time to
    first content and in all, how it ended, and the usage as the client got
    it. No prompt, tool argument or result, and no credential: a watched key
    the answer carried is replaced (``Observation.redacted``)."""
    result = obs.result
    timing = obs.timing
    upstream_ids = [e["request_id"] for e in entries if isinstance(e.get("request_id"), str)]
    gateway_id = next(
        (v for n, v in obs.headers if n.lower() in REQUEST_ID_HEADERS and v not in upstream_ids),
        None,
    )
    usage = result.usage if result is not None else None
    figures = None
    if usage is not None:
        figures = {k: v for k, v in usage.as_dict().items() if k != "raw" and v is not None}
    return obs.redacted(
        {
            "client": f"streamwire {__version__}",
            "protocol": client,
            "model": model,
            "model_answered": result.model if result is not None else None,
            "time": datetime.fromtimestamp(obs.sent_at, timezone.utc).isoformat(
                timespec="milliseconds"
            ),
            "upstream_request_id": upstream_ids[-1] if upstream_ids else None,
            "gateway_request_id": gateway_id,
            "status": obs.status,
            "ttft": _round(timing.first_content if timing else None),
            "total": _round(timing.duration if timing else None),
            "completion": result.status if result is not None else None,
            "stop_reason": result.stop_reason if result is not None else None,
            "usage": figures,
        }
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _answering(
    case: Case, entries: list[dict[str, Any]], obs: Observation
) -> dict[str, Any] | None:
    """The log entry the client's answer came from: the first request, or, for a
    retry case, the attempt whose text the client got (else the last)."""
    if not entries:
        return None
    if not case.kind.per_attempt:
        return entries[0]
    attempts: list[dict[str, Any]] = [e for e in entries if e.get("case") == case.name]
    text = obs.result.text if obs.result is not None else ""
    for entry in reversed(attempts):
        if text.startswith(f"Attempt {entry.get('attempt')}: "):
            chosen: dict[str, Any] = entry
            return chosen
    return attempts[-1] if attempts else entries[0]


def _session_summary(session: dict[str, Any], t0: float) -> dict[str, Any]:
    """A WebSocket session of the mock's, its times from ``t0`` (the client's
    first message): its messages each way, and how it closed (None: open when read)."""
    messages = session["messages"]
    closed = session.get("closed_at")
    return {
        "protocol": session["protocol"],
        "opened_at": round(session["opened_at"] - t0, 4),
        "messages_in": sum(1 for m in messages if m[1] == "in"),
        "messages_out": sum(1 for m in messages if m[1] == "out"),
        "messages_dropped": session["messages_dropped"],
        "closed_at": None if closed is None else round(closed - t0, 4),
        "close": session.get("close"),
    }


def _mock_summary(entry: dict[str, Any] | None, t0: float) -> dict[str, Any] | None:
    if entry is None:
        return None
    writes = entry.get("writes") or []

    def rel(t: float | None) -> float | None:
        return None if t is None else round(t - t0, 4)

    return {
        "path": entry.get("path"),
        "upstream": entry.get("upstream"),
        "stream": entry.get("stream"),
        "status": entry.get("status"),
        "received_at": rel(entry.get("t")),
        "writes": len(writes) + int(entry.get("writes_dropped") or 0),
        "bytes_sent": entry.get("bytes_sent"),
        # How the mock coded its answer (``--mock-compress``), and its bytes so.
        "coding": entry.get("coding"),
        "wire_bytes": entry.get("wire_bytes"),
        "first_write_at": rel(writes[0][0]) if writes else None,
        "last_write_at": rel(writes[-1][0]) if writes else None,
        "completed": entry.get("completed"),
        "disconnected_at": rel(entry.get("disconnected_at")),
        # A Realtime response the client's response.cancel ended.
        "cancelled_at": rel(entry.get("cancelled_at")),
        "usage_sent": entry.get("usage_sent"),
        "attempt": entry.get("attempt"),
        "failed": entry.get("failed"),
        "reset": entry.get("reset"),
        "tool_result": entry.get("tool_result"),
        "request_body_keys": sorted(entry["body"]) if isinstance(entry.get("body"), dict) else None,
        "request_problems": entry.get("request_problems"),
        "refused": entry.get("refused"),
        "credentials": entry.get("credentials"),
    }


def _compression_causes(cells: Iterable[Cell]) -> None:
    """Each cell over a transport that accepts codings, whose streaming layer
    found the answer held and compressed, against its twin over ``http1``
    (same route, protocol, case and delivery): if that one streamed, the
    compression is the cause (``timed.compression_cause``)."""
    cells = list(cells)
    identity = {(c.route, c.client, c.delivery, c.case): c for c in cells if c.transport == "http1"}
    for cell in cells:
        if cell.transport in ("http1", "sdk"):
            continue
        twin = identity.get((cell.route, split_label(cell.client)[0], cell.delivery, cell.case))
        if twin is None or "streaming" not in twin.checks:
            continue
        for run in (cell, *cell.runs):
            if "streaming" in run.checks:
                compression_cause(run.checks["streaming"], twin.checks["streaming"])
    # An SDK's cell held where the raw cell asking the codings the SDKs ask
    # for (http1-gzip) was held for its compression: one cause, one verdict.
    gzip = {
        (c.route, c.client, c.delivery, c.case): c for c in cells if c.transport == "http1-gzip"
    }
    for cell in cells:
        if cell.transport != "sdk" or "streaming" not in cell.checks:
            continue
        protocol = cell.client.split(" via ", 1)[0]
        twin = gzip.get(
            (cell.route, client_label(protocol, "http1-gzip"), cell.delivery, cell.case)
        )
        found = twin.checks.get("streaming") if twin is not None else None
        if found is None or "compression_buffered" not in found.tags:
            continue
        if twin is not None and "server" in twin.evidence:
            # The hop that held the twin's answer (the SDK's own response
            # headers are not the kit's to read).
            cell.evidence.setdefault("server", twin.evidence["server"])
        for run in (cell, *cell.runs):
            check = run.checks.get("streaming")
            if check is not None and "held" in check.tags and "compressed" not in check.tags:
                check.tags = (*check.tags, "compressed", "compression_buffered")
                encoding = found.details.get("content_encoding")
                check.details["content_encoding"] = encoding
                check.why = (
                    f"{check.why}; the same request over http1-gzip, which accepts the "
                    f"codings the SDK asks for, came {encoding}-compressed and held, and "
                    "streamed over http1"
                )


def _timeline(obs: Observation, entry: dict[str, Any] | None) -> dict[str, Any]:
    """Send and arrival times (seconds after the request), for the HTML report:
    the mock's writes (time, size, kinds, content), the body pieces that
    reached the client (time, size), and the content in them (time, kind,
    characters)."""
    t0 = obs.sent_at
    sends = [
        [round(w[0] - t0, 4), w[1], w[2], w[3] if len(w) > 3 else {}]
        for w in (entry or {}).get("writes") or []
    ]
    arrivals = [[round(t - t0, 4), n] for t, n in obs.pieces]
    content = [[round(t - t0, 4), k, n] for t, k, n in obs.content]
    series = {"sends": sends, "arrivals": arrivals, "content": content}
    out: dict[str, Any] = {name: _thinned(items) for name, items in series.items()}
    # The whole span stays in the picture: a long answer is thinned evenly, its
    # first and last points kept, and the counts say so.
    out["totals"] = {name: len(items) for name, items in series.items()}
    return out


#: The most points of one series a cell's timeline keeps.
TIMELINE_POINTS = 600


def _thinned(items: list[Any], limit: int = TIMELINE_POINTS) -> list[Any]:
    """``items`` evenly thinned to at most ``limit``, the first and last kept."""
    if len(items) <= limit:
        return items
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def _phase(case: Case, delivery: str) -> int:
    if isinstance(case.kind, HeadOfLine):
        return 3
    if case.name == "long-text":
        return 2
    return 0 if delivery == "paced" or case.kind.hangs_up else 1


def _interleaved(keys: Sequence[tuple[Any, ...]], batch: Sequence[int]) -> list[int]:
    """``batch`` (indexes of ``keys``, whose first member is the route) in the
    order they run: the same cell on every route back to back, routes in plan
    order. Run route after route, a path's cells would meet whatever changes
    over the run (a gateway warming up, a busy minute) and the others not: the
    path comparison would blame a hop for the clock."""
    order: dict[tuple[Any, ...], int] = {}
    for i in batch:
        order.setdefault(keys[i][1:], len(order))
    return sorted(batch, key=lambda i: order[keys[i][1:]])


class _Exclusive:
    """Holds every slot of a semaphore: nothing else runs while it is held."""

    def __init__(self, semaphore: asyncio.Semaphore, slots: int) -> None:
        self.semaphore = semaphore
        self.slots = slots
        self.lock = asyncio.Lock()

    async def __aenter__(self) -> None:
        await self.lock.acquire()
        for _ in range(self.slots):
            await self.semaphore.acquire()

    async def __aexit__(self, *exc: object) -> None:
        for _ in range(self.slots):
            self.semaphore.release()
        self.lock.release()


Progress = Callable[[Cell], None]
_Key = tuple[Route, str, str, str]
_SdkKey = tuple[Route, str, str, str, str]


async def _speaking_http1(
    plan: CheckPlan,
    keys: list[_Key],
    sdk_keys: list[_SdkKey],
    on_notice: Callable[[str], None] | None,
) -> tuple[list[_Key], list[_SdkKey]]:
    """``keys`` and ``sdk_keys`` less the cells read over HTTP/1.1 (the http1
    transports', and the SDKs', whose clients speak it) on routes whose front
    speaks HTTP/2 alone (one request, ``GET`` its base URL over HTTP/1.1,
    tells: ``Http2Only``), each such route named to ``on_notice``; Http2Only
    when none of the routes the http1 transports read speaks it, as
    ``_speaking_h2`` does for HTTP/2 (a route whose SDK cells alone read it
    over HTTP/1.1 is only named: no ``--transport`` reads those over HTTP/2)."""
    over_http1 = list(dict.fromkeys(k[0] for k in keys if not split_label(k[2])[1].http2))
    wanted = list(dict.fromkeys([*over_http1, *(k[0] for k in sdk_keys)]))

    async def refusal(base_url: str) -> str | None:
        try:
            response = await within(
                open_request(
                    base_url,
                    method="GET",
                    connect_timeout=plan.connect_timeout,
                    read_timeout=plan.read_timeout,
                    context=plan.tls,
                ),
                plan.connect_timeout + plan.read_timeout,  # a head that trickles in, too
            )
            response.close()
        except Http2Only as exc:
            return str(exc)
        except (TransportError, asyncio.TimeoutError) as exc:
            if isinstance(exc, SetupError):
                raise
            # It spoke HTTP/1.1, or failed otherwise: the cells will say.
        return None

    urls = list(dict.fromkeys(route.base_url for route in wanted))
    answers = await asyncio.gather(*map(refusal, urls))
    refused = {url: why for url, why in zip(urls, answers, strict=True) if why is not None}
    if over_http1 and all(route.base_url in refused for route in over_http1):
        raise Http2Only(next(iter(refused.values())))
    for route in wanted:
        if route.base_url in refused and on_notice is not None:
            on_notice(
                f"route {route.name}: {refused[route.base_url]}; its HTTP/1.1 cells were not run"
            )
    return (
        [k for k in keys if not (k[0].base_url in refused and not split_label(k[2])[1].http2)],
        [k for k in sdk_keys if k[0].base_url not in refused],
    )


async def _speaking_h2(
    plan: CheckPlan, keys: list[_Key], on_notice: Callable[[str], None] | None
) -> list[_Key]:
    """``keys`` less the http2 cells of the routes that speak no HTTP/2 (an
    http URL without h2c: one request, ``GET`` its base URL, tells), each
    such route named to ``on_notice``; Http2Unsupported when no route speaks
    it (the run was asked for nothing it can do)."""
    wanted = list(dict.fromkeys(k[0] for k in keys if split_label(k[2])[1].http2))
    refused: dict[str, str] = {}
    for route in wanted:
        try:
            response = await open_request(
                route.base_url,
                method="GET",
                connect_timeout=plan.connect_timeout,
                read_timeout=plan.read_timeout,
                context=plan.tls,
                http2=True,
            )
            response.close()
        except Http2Unsupported as exc:
            refused[route.base_url] = str(exc)
        except SetupError:
            raise
        except TransportError:
            pass  # it spoke HTTP/2, or failed otherwise: the cells will say
    if wanted and len(refused) == len(wanted):
        raise Http2Unsupported(next(iter(refused.values())))
    for route in wanted:
        if route.base_url in refused and on_notice is not None:
            on_notice(
                f"route {route.name}: {refused[route.base_url]}; its http2 cells were not run"
            )
    return [k for k in keys if not (k[0].base_url in refused and split_label(k[2])[1].http2)]


async def _stopped(task: asyncio.Future[Any]) -> None:
    """Cancels ``task`` if it still runs (a run that ended on an error), and waits for it."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def run_check(
    plan: CheckPlan,
    *,
    on_cell: Progress | None = None,
    on_mock: Callable[[str], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> list[Cell]:
    """Runs every cell of ``plan`` and returns them in plan order.
    ``on_notice``: told of cells the run leaves out, and why (the http2 cells
    of a route that speaks no HTTP/2: ``_speaking_h2``; the HTTP/1.1 cells of
    one that speaks HTTP/2 alone: ``_speaking_http1``)."""
    mock: MockUpstream | None = None
    async with contextlib.AsyncExitStack() as stack:
        if plan.mock_url is None:
            mock = await stack.enter_async_context(
                MockUpstream(
                    port=plan.mock_port, lenient=plan.lenient_mock, compress=plan.mock_compress
                )
            )
            url = mock.url
        else:
            url = plan.mock_url
        if on_mock is not None:
            on_mock(url)
        log = _Log(mock, url)
        semaphore = asyncio.Semaphore(max(1, plan.concurrency))
        quiet = _Exclusive(semaphore, max(1, plan.concurrency))
        confirmed: dict[tuple[str, ...], int] = {}

        async def one(
            route: Route,
            case: Case,
            client: str,
            delivery: str,
            slots: asyncio.Semaphore | None = None,
        ) -> Cell:
            runs = [
                await confirmed_run(route, case, client, delivery, slots)
                for _ in range(plan.repeat)
            ]
            cell = runs[0] if len(runs) == 1 else repeated(runs)
            if on_cell is not None:
                on_cell(cell)
            return cell

        async def confirmed_run(
            route: Route,
            case: Case,
            client: str,
            delivery: str,
            slots: asyncio.Semaphore | None = None,
        ) -> Cell:
            async with slots or semaphore:
                cell = await _run_cell(plan, log, route, case, client, delivery)
            timed = [layer for layer in TIMED_LAYERS if _suspect(cell.checks[layer])]
            finding = (route.name, client, *sorted(t for x in timed for t in cell.checks[x].tags))
            if timed and confirmed.get(finding, 0) < CONFIRMATIONS:
                # The judge's own loop, busy with other cells, can delay the
                # arrivals it timestamps and see a disconnect late: a timed
                # finding is confirmed by running the cell again with nothing
                # else in flight, until CONFIRMATIONS cells of the pair have
                # confirmed the same finding (then the hop does it: a
                # batching proxy delays every paced cell alike).
                async with quiet:
                    again = await _run_cell(plan, log, route, case, client, delivery)
                again.evidence["first_attempt"] = {
                    **{
                        layer: {
                            "verdict": cell.checks[layer].verdict,
                            "why": cell.checks[layer].why,
                            **cell.checks[layer].details,
                        }
                        for layer in timed
                    },
                    "timeline": cell.evidence.get("timeline"),
                }
                if all(
                    again.checks[x].verdict == cell.checks[x].verdict
                    and again.checks[x].tags == cell.checks[x].tags
                    for x in timed
                ):
                    confirmed[finding] = confirmed.get(finding, 0) + 1
                cell = again
            return cell

        keys, sdk_keys = await _speaking_http1(plan, plan.keys(), plan.sdk_keys(), on_notice)
        keys = await _speaking_h2(plan, keys, on_notice)
        cells: dict[int, Cell] = {}
        # The silence cells wait more than they read: they run from the start,
        # beside the phases, in slots of their own, enough for every probe of
        # an idle timeout at once (a long silence would hold the readers'
        # slots for its whole length).
        silent = [i for i, k in enumerate(keys) if CASES[k[1]].kind.silent]
        probes = sum(plan.silence_for(keys[i][2]) == plan.silence for i in silent)
        waiting = asyncio.Semaphore(max(1, plan.concurrency, probes))
        waiters = asyncio.gather(
            *(
                one(keys[i][0], CASES[keys[i][1]], keys[i][2], keys[i][3], waiting)
                for i in _interleaved(keys, silent)
            )
        )
        stack.push_async_callback(_stopped, waiters)
        gateways: dict[tuple[str, str, int | None], asyncio.Lock] = {}

        async def alone(route: Route, case: Case, client: str, delivery: str) -> Cell:
            # With no other cell of its gateway in flight: a gateway that
            # blocks would hold those too (the head-of-line cells).
            async with gateways.setdefault(_origin(route.base_url), asyncio.Lock()):
                return await one(route, case, client, delivery)

        # Phases: timed cells first, while nothing heavy competes for the
        # CPU (their verdicts are timings); then the rest; the 1 MiB case
        # two at a time (it is the CPU-heavy one, for every hop); last the
        # head-of-line cells, one at a time per gateway.
        for phase in (0, 1, 2, 3):
            batch = _interleaved(
                keys,
                [
                    i
                    for i, k in enumerate(keys)
                    if _phase(CASES[k[1]], k[3]) == phase and not CASES[k[1]].kind.silent
                ],
            )
            if phase == 2:
                semaphore = asyncio.Semaphore(max(1, plan.concurrency // 4))
                quiet = _Exclusive(semaphore, max(1, plan.concurrency // 4))
            run = alone if phase == 3 else one
            done = await asyncio.gather(
                *(run(keys[i][0], CASES[keys[i][1]], keys[i][2], keys[i][3]) for i in batch)
            )
            cells.update(zip(batch, done, strict=True))

        async def by_sdk(key: tuple[Route, str, str, str, str]) -> Cell:
            route, name, sdk, client, delivery = key
            runs = []
            for _ in range(plan.repeat):
                async with semaphore:
                    run = await _run_sdk_cell(plan, log, route, CASES[name], sdk, client, delivery)
                streaming = run.checks.get("streaming")
                if streaming is not None and _suspect(streaming):
                    # As a raw cell's: a timed finding is confirmed with nothing
                    # else in flight (the gateway, busy with the kit's other
                    # cells, may lag where it would not for one client).
                    async with sdk_quiet:
                        again = await _run_sdk_cell(
                            plan, log, route, CASES[name], sdk, client, delivery
                        )
                    again.evidence["first_attempt"] = {
                        "streaming": {
                            "verdict": streaming.verdict,
                            "why": streaming.why,
                            **streaming.details,
                        }
                    }
                    run = again
                runs.append(run)
            cell = runs[0] if len(runs) == 1 else repeated(runs)
            if on_cell is not None:
                on_cell(cell)
            return cell

        # The SDK cells last: the paced ones first (their streaming layer is
        # timed), beside each other only; then the rest, whose verdicts are no
        # timings.
        semaphore = asyncio.Semaphore(max(1, plan.concurrency))
        sdk_quiet = _Exclusive(semaphore, max(1, plan.concurrency))
        sdk_cells: dict[int, Cell] = {}
        for paced in (True, False):
            batch = [i for i, k in enumerate(sdk_keys) if (k[4] == "paced") is paced]
            order = _interleaved(sdk_keys, batch)
            answers = await asyncio.gather(*(by_sdk(sdk_keys[i]) for i in order))
            sdk_cells.update(zip(order, answers, strict=True))
        cells.update(zip(_interleaved(keys, silent), await waiters, strict=True))
        every = [cells[i] for i in range(len(keys))] + [sdk_cells[i] for i in range(len(sdk_keys))]
        _compression_causes(every)
        return every
    raise AssertionError("unreachable")
