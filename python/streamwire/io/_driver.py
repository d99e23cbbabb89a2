"""The HTTP edge's decisions, free of any HTTP library: one ``Driver`` per response.

The sync and async iterators (``_sync.py``, ``_async.py``) do the reading;
this class decides what the response means (docs/design.md "The HTTP edge")
and is shared by every client library and by replay, so that a capture reads
exactly as the live response did. An error response's body is read, bounded,
and ends the stream in ``error``; a captured body without its status line is
read the same way, the status unknown, not assumed. The end of the body, a
timeout or a transport error is an EOF (``finish``), never ``error``: that
status is reserved for errors the stream itself carried.

The adapter is made when the driver is, from the caller's options, so that a
misspelt option, a bad value or an invalid tool schema is refused at the call
(``sw.iter_events(...)``), not at the first event.

The lifecycle is a small machine with its transitions as data (``PHASES``)::

    new        --headers--> streaming | error_body
    new        --body-----> ended          (a captured error body, no headers)
    streaming  --data-----> streaming
    streaming  --end------> ended          (EOF, the result decided, a timeout, a transport error)
    error_body --body-----> ended
    any        --cancel---> ended          (a no-op once ended)
    ended      --end------> ended          (a no-op: the end was decided)

Any other (phase, input) is the caller's mistake (``UsageError``). Timeouts
are computed here (``deadline()``) and enforced by the iterators.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._log import log_warning
from ..accumulate import Accumulator
from ..errors import UsageError
from ..events import Event
from ..kinds import IdleReset
from ..metrics import Timing
from ..protocols import Stream, adapter_class, check_options
from ..protocols._base import retryable_hint
from ..result import StreamResult, StreamWarning
from ._wire import (
    MAX_ERROR_BODY,
    Headers,
    content_types,
    header,
    http_error,
    is_http_protocol,
    media_type,
    request_id,
)

__all__ = [
    "DRAIN_BYTES",
    "DRAIN_SECONDS",
    "PHASES",
    "DrivenIterator",
    "Driver",
    "EndKind",
    "TimeoutKind",
    "TransportFailure",
]

#: Once the result is decided, how long the iterators wait for the rest of the
#: body (unparsed: a chunked body's last chunk, a trailing newline) before
#: closing the response. A body that ends within it leaves its HTTP/1.1
#: connection reusable; an upstream that holds the connection open after its
#: end marker costs its reader at most this long.
DRAIN_SECONDS = 0.05
#: ... and how many bytes of it they read, at most.
DRAIN_BYTES = 64 * 1024

TimeoutKind = Literal["first_event_timeout", "idle_timeout", "total_timeout"]
EndKind = Literal[
    "eof",
    "decided",
    "cancel",
    "first_event_timeout",
    "idle_timeout",
    "total_timeout",
    "transport_error",
    "http_error",
]
Decision = Literal["stream", "error_body"]
Phase = Literal["new", "streaming", "error_body", "ended"]
PhaseInput = Literal["headers", "data", "body", "end", "cancel"]
#: The driver's lifecycle: ``(phase, input) -> next phase`` (``headers`` goes
#: to ``streaming`` or ``error_body`` as the response says; see ``on_headers``).
PHASES: Mapping[tuple[Phase, PhaseInput], Phase] = {
    ("new", "headers"): "streaming",
    ("new", "body"): "ended",
    ("new", "cancel"): "ended",
    ("streaming", "data"): "streaming",
    ("streaming", "end"): "ended",
    ("streaming", "cancel"): "ended",
    ("error_body", "body"): "ended",
    ("error_body", "cancel"): "ended",
    ("ended", "end"): "ended",
    ("ended", "cancel"): "ended",
}
#: Options of the edge itself; the rest go to ``sw.stream(protocol, **options)``.
EDGE_OPTIONS = frozenset(
    {
        "first_event_timeout",
        "idle_timeout",
        "total_timeout",
        "idle_reset",
        "started_at",
        "check_content_type",
        "clock",
        "record",
    }
)


class TransportFailure(Exception):
    """A client library's read failed (disconnect, reset, bad chunked encoding, ...)."""


class Driver:
    """Turns one HTTP response (status, headers, body chunks) into events and a result."""

    def __init__(
        self,
        protocol: str,
        options: Mapping[str, Any],
        *,
        clock: Callable[[], float],
        started_at: float | None = None,
        first_event_timeout: float | None = None,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        idle_reset: IdleReset = "event",
        check_content_type: bool = True,
        recorder: Any = None,
        where: str = "sw.iter_events",
    ) -> None:
        adapter_class(protocol)  # an unknown protocol is the caller's mistake: raise now
        if not is_http_protocol(protocol):
            raise ValueError(
                f"{protocol} is a WebSocket protocol: streamwire.io reads HTTP bodies "
                "(feed its messages to sw.stream(protocol).feed_message)"
            )
        for name, value in (
            ("first_event_timeout", first_event_timeout),
            ("idle_timeout", idle_timeout),
            ("total_timeout", total_timeout),
        ):
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if idle_reset not in ("event", "data"):
            raise ValueError(f"idle_reset must be 'event' or 'data', got {idle_reset!r}")
        check_options(protocol, options, EDGE_OPTIONS, where=where)
        self.protocol = protocol
        self.options = dict(options)
        # Made now: the adapter checks its options (values, tools) at the call.
        self._adapter = adapter_class(protocol)(**options)
        self.clock = clock
        self.timing = Timing(clock, started_at=started_at)
        self.first_event_timeout = first_event_timeout
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.idle_reset = idle_reset
        self.check_content_type = check_content_type
        self.recorder = recorder
        self.status: int | None = None
        self.headers: Headers = ()
        #: The caller's ``request_id`` option, else the response's header.
        self.request_id: str | None = self.options.get("request_id")
        self.stream: Stream | None = None
        self.ended: EndKind | None = None
        self.phase: Phase = "new"
        self.warnings: list[StreamWarning] = []
        self._error_result: StreamResult | None = None
        self._content_error: str | None = None
        self._final: StreamResult | None = None

    # --- the response ------------------------------------------------------

    @property
    def has_timeouts(self) -> bool:
        """True when any timeout is configured."""
        return (
            self.first_event_timeout is not None
            or self.idle_timeout is not None
            or self.total_timeout is not None
        )

    def _step(self, input: PhaseInput) -> None:
        """Takes the ``PHASES`` transition for ``input``; UsageError if there is none."""
        try:
            self.phase = PHASES[self.phase, input]
        except KeyError:
            raise UsageError(
                f"the HTTP driver cannot take {input!r} in phase {self.phase!r}"
            ) from None

    def on_headers(self, status: int, headers: Headers) -> Decision:
        """The status and headers arrived: stream the body, or read it as an error."""
        self._step("headers")
        self.status = status
        self.headers = headers
        if self.recorder is not None:
            self.recorder.on_headers(status, headers, self.timing.time_to_headers)
        rid = request_id(headers)
        if self.request_id is None:
            self.request_id = rid
        if not 200 <= status < 300:
            self.phase = "error_body"
            return "error_body"
        got = media_type(header(headers, "content-type"))
        expected = content_types(self.protocol)
        if got is None:
            self._warn(
                "content_type_missing",
                f"the response has no Content-Type; read as {expected[0]}",
            )
        elif self.check_content_type and got not in expected:
            self._content_error = got
            self.phase = "error_body"
            return "error_body"
        stream = self.stream = self._adapter
        stream._note_response(
            None if "http_status" in self.options else status,
            None if "request_id" in self.options else rid,
        )
        return "stream"

    def on_error_body(self, body: bytes) -> list[Event]:
        """The (bounded) body of an error response: ends the stream in ``error``,
        phase ``provider`` with the provider's type, code, message and request id
        when the body is a provider error object, else phase ``transport``
        (``http_<status>`` or ``unexpected_content_type``)."""
        self._step("body")
        status = self.status
        at = self.timing.now()
        self.timing.on_data(len(body), at)
        if self.recorder is not None and body:
            self.recorder.on_chunk(body, at, [])
        err = http_error(status or 0, self.headers, body)
        got = self._content_error
        if got is not None and err.phase != "provider":
            expected = content_types(self.protocol)[0]
            hint = " (was the request sent with streaming on?)" if got == "application/json" else ""
            err.type = "unexpected_content_type"
            err.message = f"expected {expected} for {self.protocol}, got {got}{hint}" + (
                f": {err.message}" if err.message else ""
            )
        elif err.message is None:
            err.message = f"HTTP {status or '(status unknown)'} with an empty body"
        acc = Accumulator(self.protocol, request_id=err.request_id, http_status=status)
        retryable = retryable_hint(err.type, err.code, None if got else status)
        events: list[Event] = [
            acc.fail(
                err.phase,
                err.type,
                err.code,
                err.message,
                retryable=retryable,
                request_id=err.request_id,
                raw=err.raw,
            )
        ]
        events += acc.finish()
        acc.events = len(events)
        acc.bytes_received = len(body)
        self._error_result = acc.snapshot()
        self.timing.on_events(events, at)
        self._end("http_error", at, events)
        return events

    # --- the body ----------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Event]:
        """Body bytes as they arrived; returns the unified events they completed."""
        if self.phase != "streaming":
            self._step("data")  # raises: only a streaming body takes data
        stream = self.stream
        assert stream is not None
        at = self.timing.now()
        self.timing.on_data(len(chunk), at)
        events = stream.feed(chunk)
        if events:
            self.timing.on_events(events, at)
        if self.recorder is not None:
            self.recorder.on_chunk(chunk, at, events)
        return events

    @property
    def decided(self) -> bool:
        """True once the body cannot change how the stream ended (``Stream.decided``)."""
        stream = self.stream
        return stream is not None and stream.decided

    def finish(self, end: EndKind = "eof", detail: str | None = None) -> list[Event]:
        """The body ended (EOF, a timeout, a transport error) or reading it
        stopped because the result was decided: the adapter's ``close()``."""
        self._step("end")
        if self.ended is not None:
            return []  # ended already: a no-op
        if end in ("first_event_timeout", "idle_timeout", "total_timeout"):
            self._warn(end, detail or f"reading stopped: {end.replace('_', ' ')}")
        elif end == "transport_error":
            self._warn(end, f"the connection failed while reading the body: {detail}")
        at = self.timing.now()
        events = self.stream.close() if self.stream is not None else []
        if events:
            self.timing.on_events(events, at)
        self._end(end, at, events, detail)
        return events

    def cancel(self) -> list[Event]:
        """The caller stopped reading: ``cancelled`` (unless it had already ended)."""
        self._step("cancel")
        if self.ended is not None:
            return []  # ended already: a no-op
        at = self.timing.now()
        events = self.stream.cancel() if self.stream is not None else []
        if events:
            self.timing.on_events(events, at)
        self._end("cancel", at, events)
        return events

    def _end(self, end: EndKind, at: float, events: list[Event], detail: str | None = None) -> None:
        self.ended = end
        self.timing.on_end(at)
        self._final = None
        if self.recorder is not None:
            self.recorder.on_end(end, at, detail, events, self.result)

    # --- timeouts ----------------------------------------------------------

    def deadline(self, waiting_since: float = 0.0) -> tuple[float, TimeoutKind] | None:
        """The clock reading at which reading must stop, and why; None for no limit.

        ``waiting_since`` (seconds since the start) is when the caller last
        asked for an event: the idle gap counts from the later of it and the
        last event, so the caller's own time between events is not held
        against the stream.
        """
        t = self.timing
        candidates: list[tuple[float, TimeoutKind]] = []
        if self.total_timeout is not None:
            candidates.append((t.start + self.total_timeout, "total_timeout"))
        if t.first_event is None and self.first_event_timeout is not None:
            candidates.append((t.start + self.first_event_timeout, "first_event_timeout"))
        elif self.idle_timeout is not None:
            last = t.last_data if self.idle_reset == "data" else t.last_event
            since = max(last or 0.0, waiting_since)
            candidates.append((t.start + since + self.idle_timeout, "idle_timeout"))
        if not candidates:
            return None
        return min(candidates, key=lambda c: c[0])

    def timeout_message(self, kind: TimeoutKind) -> str:
        """A warning message for a timeout that fired."""
        limit = {
            "first_event_timeout": self.first_event_timeout,
            "idle_timeout": self.idle_timeout,
            "total_timeout": self.total_timeout,
        }[kind]
        what = {
            "first_event_timeout": "no event arrived within",
            "idle_timeout": "no further event arrived within",
            "total_timeout": "the body did not end within",
        }[kind]
        return f"{what} {kind}={limit:g}s; the response was closed"

    # --- the result --------------------------------------------------------

    def _warn(self, code: str, message: str) -> None:
        self.warnings.append(StreamWarning(code=code, message=message))
        self._final = None
        log_warning(self.protocol, self.request_id, code)

    @property
    def result(self) -> StreamResult:
        """The result so far (final once ended), with the edge's warnings and timings."""
        if self._final is not None:
            return self._final
        if self._error_result is not None:
            base = self._error_result
        elif self.stream is not None:
            base = self.stream.result
        else:
            acc = Accumulator(self.protocol, http_status=self.status)
            if self.ended == "cancel":
                acc.cancelled = True
                acc.finish()
            base = acc.snapshot()
        result = dataclasses.replace(
            base,
            warnings=base.warnings + tuple(self.warnings),
            metrics=self.timing.apply(base.metrics),
        )
        if self.ended is not None:
            self._final = result
        return result


class DrivenIterator:
    """What the sync and async event iterators share around their ``Driver``:
    the events decoded and not yet returned, how far the response got, and the
    steps that end it. Reading and closing the response are theirs."""

    def __init__(self, driver: Driver, source: Any) -> None:
        self._driver = driver
        self._source = source
        self._pending: deque[Event] = deque()
        self._started = False
        self._done = False
        self._source_closed = False

    @property
    def result(self) -> StreamResult:
        """The ``StreamResult`` so far; final once iteration ended or the iterator was closed.

        A response closed by its owner while unread (the client's ``with``
        block ended first) makes the result ``cancelled``: nothing more can
        be read from it.
        """
        if not self._done:
            self._closed_elsewhere()
        return self._driver.result

    def _closed_elsewhere(self) -> bool:
        """True (and the stream ``cancelled``) if the response's owner closed it."""
        if self._source_closed or not self._source.closed_elsewhere:
            return False
        self._source_closed = True
        self._stop()
        return True

    @property
    def recording(self) -> Any:
        """The ``Recording`` (with ``record=True``), complete once the stream ended."""
        recorder = self._driver.recorder
        return None if recorder is None else recorder.recording

    @property
    def closed(self) -> bool:
        """True once the response was closed."""
        return self._source_closed

    def _stop(self) -> None:
        """The caller stops reading: ``cancelled`` unless the stream had ended."""
        if not self._done:
            self._done = True
            self._driver.cancel()

    def _end(self, kind: EndKind, detail: str | None = None) -> None:
        """The response ended (``eof``, a timeout, a transport error): its final events."""
        driver = self._driver
        if kind in ("first_event_timeout", "idle_timeout", "total_timeout"):
            detail = driver.timeout_message(kind)
        self._pending.extend(driver.finish(kind, detail))
        self._done = True

    def _end_with_error_body(self, body: bytes) -> None:
        """An HTTP error answer was read (up to ``MAX_ERROR_BODY``): its events."""
        self._pending.extend(self._driver.on_error_body(body[:MAX_ERROR_BODY]))
        self._done = True
