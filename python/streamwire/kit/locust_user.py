"""The kit's streams as Locust requests: ``pip install 'streamwire[locust]'``.

``StreamUser`` is a Locust user class (docs/kit/load.md, "On many machines:
Locust", has a locustfile and the commands). Each task is one stream of the
kit's load mix (``load.LOAD_CASES`` in ``load.LOAD_DELIVERIES``, for each
client), sent to ``host`` and judged with the same layers as a ``streamwire
check`` cell, its text salted with its own tag so that another stream's text
is ``cross_talk``. Locust hears of each stream as a ``STREAM`` request, a
failure when an integrity verdict was raised (any but the acceptable ones
and those a clock decides: under load, lateness is the latency figures' to
show), and of its time to the first event as a ``FIRST_EVENT`` one.

Locust runs on gevent; the kit on asyncio. Each process that runs users keeps
one asyncio loop in a thread of its own (unpatched), and a user's greenlet
waits for its stream there without blocking the others. This module is never
imported by ``import streamwire`` (importing Locust patches the standard
library).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import threading
from collections import Counter, OrderedDict
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, TypeVar

import gevent
import gevent.event
import gevent.monkey
from locust import User, task

from .client.raw import Observation
from .judge.cell import Cell
from .judge.verdicts import ACCEPTABLE
from .run.check import CheckPlan, Route, _Log, judged_stream
from .run.load import (
    EVIDENCE_PER_VERDICT,
    LATENCY_VERDICTS,
    LOAD_CANCEL_WAIT,
    LOAD_CASES,
    LOAD_DELIVERIES,
    LOAD_POLL,
    _cross_talk,
    _record,
)
from .vocab.cases import CASES

__all__ = ["StreamFailure", "StreamUser"]

log = logging.getLogger("streamwire.kit.locust")
T = TypeVar("T")
#: The tags a process remembers, to name another stream's text (the oldest forgotten beyond).
KNOWN_TAGS = 100_000


class StreamFailure(Exception):
    """A stream's integrity verdicts, as Locust counts a failure."""


class _Loop:
    """One asyncio loop per process, in a real thread, for every user's streams."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                # gevent has patched selectors and threads: the loop gets the
                # original selector and a thread of the operating system's.
                (selector,) = gevent.monkey.get_original("selectors", ["DefaultSelector"])
                start = gevent.monkey.get_original("_thread", "start_new_thread")
                loop = asyncio.SelectorEventLoop(selector())
                start(loop.run_forever, ())
                cls._loop = loop
            return cls._loop


def _wait(coro: Coroutine[Any, Any, T]) -> T:
    """Runs ``coro`` on the process's loop; the calling greenlet waits, the others run."""
    hub = gevent.get_hub()
    result: gevent.event.AsyncResult = gevent.event.AsyncResult()
    future = asyncio.run_coroutine_threadsafe(coro, _Loop.get())

    def done(f: Any) -> None:
        error = f.exception()
        if error is not None:
            hub.loop.run_callback_threadsafe(result.set_exception, error)
        else:
            hub.loop.run_callback_threadsafe(result.set, f.result())

    future.add_done_callback(done)
    return result.get()  # type: ignore[no-any-return]


class _Process:
    """What a process's users share: the tags sent (to name cross-talk), the
    evidence logged so far."""

    known: ClassVar[OrderedDict[str, tuple[str, str]]] = OrderedDict()
    logged: ClassVar[Counter[str]] = Counter()

    @classmethod
    def remember(cls, tag: str, case: str, client: str) -> None:
        cls.known[tag] = (case, client)
        while len(cls.known) > KNOWN_TAGS:
            cls.known.popitem(last=False)


class StreamUser(User):
    """A Locust user that sends the kit's streams to ``host`` and judges each.

    Set ``mock`` (the URL of the ``streamwire mock-upstream`` the gateway
    calls), and as you need ``clients``, ``cases``, ``deliveries``, ``model``
    (the route's model template), ``key``."""

    abstract = True
    #: The mock upstream the gateway calls (``streamwire mock-upstream``).
    mock: ClassVar[str] = ""
    clients: ClassVar[Sequence[str]] = ("openai-chat",)
    cases: ClassVar[Sequence[str]] = LOAD_CASES
    deliveries: ClassVar[Sequence[str]] = LOAD_DELIVERIES
    model: ClassVar[str] = "{model}"
    key: ClassVar[str | None] = None
    #: The gateway passes the client's key on to the upstream by design (``Route``).
    key_passthrough: ClassVar[bool] = False
    #: Seconds a read may wait before the kit gives up on a stream (inconclusive).
    read_timeout: ClassVar[float] = 20.0

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        if not self.mock:
            raise ValueError(f"{type(self).__name__}: set mock to the mock upstream's URL")
        if not self.host:
            raise ValueError(f"{type(self).__name__}: give the gateway's URL (--host)")
        options: dict[str, Any] = {"key": self.key} if self.key else {}
        self.plan = CheckPlan(
            routes=[Route(self.host, self.model, key_passthrough=self.key_passthrough)],
            clients=tuple(self.clients),
            cases=tuple(self.cases),
            deliveries=tuple(self.deliveries),
            unary=False,
            mock_url=self.mock,
            read_timeout=self.read_timeout,
            **options,
        )
        mix = [(k[1], k[2], k[3]) for k in self.plan.keys()]
        if not mix:
            raise ValueError(f"{type(self).__name__}: the cases and clients give no stream")
        start = random.randrange(len(mix))
        self._mix = itertools.cycle(mix[start:] + mix[:start])
        self._log = _Log(None, self.mock, poll=LOAD_POLL)

    @task
    def stream(self) -> None:
        case, client, delivery = next(self._mix)
        name = f"{case} {client} {delivery}"
        try:
            cell, obs = _wait(
                judged_stream(
                    self.plan,
                    self._log,
                    self.plan.routes[0],
                    CASES[case],
                    client,
                    delivery,
                    salt=True,
                    cancel_wait=LOAD_CANCEL_WAIT,
                )
            )
        except Exception as exc:  # the kit's own fault: a failure named as such
            self._fire("STREAM", name, 0.0, 0, StreamFailure(f"kit_error: {exc!r}"[:200]))
            return
        self._report(name, cell, obs)

    def _report(self, name: str, cell: Cell, obs: Observation) -> None:
        tag = str(cell.evidence.get("tag", ""))
        _Process.remember(tag, cell.case, cell.client)
        _cross_talk(cell, obs, _Process.known)
        record = _record(self.host or "", cell, obs)
        integrity = [
            (verdict, layer)
            for verdict, layer in record.verdicts
            if verdict not in ACCEPTABLE
            and verdict not in record.timed
            and verdict not in LATENCY_VERDICTS
        ]
        failure: StreamFailure | None = None
        if integrity:
            failure = StreamFailure(", ".join(f"{v} ({layer})" for v, layer in integrity))
            for verdict, _ in integrity:
                _Process.logged[verdict] += 1
                if _Process.logged[verdict] <= EVIDENCE_PER_VERDICT:
                    log.warning("%s in %s (%s): %s", verdict, name, tag, cell.as_dict())
        elif record.inconclusive:
            failure = StreamFailure("inconclusive: the kit's own timeout cut the stream short")
        total = (record.total or 0.0) * 1000
        self._fire("STREAM", name, total, record.events, failure)
        if record.first_event is not None:
            self._fire("FIRST_EVENT", name, record.first_event * 1000, 0, None)

    def _fire(
        self, kind: str, name: str, ms: float, length: int, failure: Exception | None
    ) -> None:
        self.environment.events.request.fire(
            request_type=kind,
            name=name,
            response_time=ms,
            response_length=length,
            exception=failure,
            context={},
        )
