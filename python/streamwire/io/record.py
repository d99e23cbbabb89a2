"""Recordings of streamed responses: what arrived, when, and what streamwire made of it.

A recording keeps the response's status and headers, the request's method
and URL, every body chunk exactly as it arrived (bytes, boundaries, arrival
time), the unified events each chunk produced, how reading ended, and the
final ``StreamResult``; ``replay.py`` feeds it back with the same chunking
and checks that the events and the result are reproduced. Get one with
``sw.iter_events(response, protocol, record=True)`` (``iterator.recording``)
and keep it with ``recording.save(path)``; it holds every chunk in memory
until saved. No credential of the request is recorded (docs/design.md
"Fixtures"); ``recording.redacted()`` (or ``save(path, hash_content=True)``)
replaces content with hashes, ``request_body`` (set before saving) too.
Redacting and masking rewrite the bytes (``_redact.py``) and re-derive the
events and the result through the ``Driver`` a replay uses (``play``): that
loop is kept in this module, and ``replay.py`` is built on ``play``.

File format ``streamwire-recording/1``: JSON Lines, UTF-8, one object per line.

1. The header: ``{"format": "streamwire-recording/1", "protocol", "options"
   (the adapter options that are JSON values), "options_omitted" (names of
   those that were not), "request": {"method", "url"} or null,
   "request_body" (optional, as the caller set it), "status", "headers":
   [[name, value], ...], "time_to_headers", "recorded_at" (UTC, ISO 8601),
   "streamwire" (version), "redaction": {"headers_removed": [...],
   "content": "none" | "sha256"}, "original" (with hashed content: the facts
   of the unredacted result)}``.
2. One line per chunk, in order: ``{"t": <seconds since the start>,
   "utf8": <text>}`` when the bytes are valid UTF-8, else ``{"t", "b64":
   <base64>}``; plus ``"events": [<unified events this chunk produced>]``.
3. The end: ``{"end": "eof" | "decided" | "cancel" | "first_event_timeout" |
   "idle_timeout" | "total_timeout" | "transport_error" | "http_error",
   "t", "detail", "events": [<events of the end>]}`` (``decided``: reading
   stopped once the result was decided, before the body ended).
4. The result, last: ``{"result": <every field of the StreamResult>}``.

Readers ignore keys they do not know.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from .._core import __version__
from .._json import dumps
from ..events import Event
from ..result import StreamResult
from ._driver import Driver
from ._redact import facts, hash_chunks, mask_chunks, redact_json
from ._wire import (
    Headers,
    credentials,
    framing_of,
    is_secret_header,
    redact_headers,
    redact_text,
    redact_url,
    to_headers,
)
from .serialize import event_dict, jsonable, result_dict

__all__ = ["FORMAT", "RecordedChunk", "Recorder", "Recording"]

FORMAT = "streamwire-recording/1"
#: The manifest format a recorded body becomes as a fixture (fixtures/README.md).
FIXTURE_FORMAT = "streamwire-fixture/1"


@dataclass(slots=True)
class RecordedChunk:
    """One body chunk as it arrived."""

    #: Seconds from the start (the request's, when known) to its arrival.
    t: float
    #: The bytes, exactly as read.
    data: bytes
    #: The unified events it produced (``event_dict`` form).
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Recording:
    """A recorded response; see the module docstring for the file format."""

    protocol: str
    options: dict[str, Any] = field(default_factory=dict)
    options_omitted: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None
    request_body: Any = None
    status: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    time_to_headers: float | None = None
    recorded_at: str = ""
    streamwire: str = __version__
    redaction: dict[str, Any] = field(
        default_factory=lambda: {"headers_removed": [], "content": "none"}
    )
    original: dict[str, Any] | None = None
    chunks: list[RecordedChunk] = field(default_factory=list)
    end: str | None = None
    end_t: float | None = None
    end_detail: str | None = None
    end_events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None

    # --- views -------------------------------------------------------------

    @property
    def body(self) -> bytes:
        """Every chunk joined: the body as it arrived."""
        return b"".join(c.data for c in self.chunks)

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every unified event, in order (``event_dict`` form)."""
        out = [e for c in self.chunks for e in c.events]
        return out + self.end_events

    # --- files -------------------------------------------------------------

    def lines(self) -> Iterable[str]:
        """The recording as JSON Lines (without newlines)."""
        header = {
            "format": FORMAT,
            "protocol": self.protocol,
            "options": self.options,
            "options_omitted": self.options_omitted,
            "request": self.request,
            "status": self.status,
            "headers": [list(h) for h in self.headers],
            "time_to_headers": self.time_to_headers,
            "recorded_at": self.recorded_at,
            "streamwire": self.streamwire,
            "redaction": self.redaction,
        }
        if self.request_body is not None:
            header["request_body"] = self.request_body
        if self.original is not None:
            header["original"] = self.original
        yield _dump(header)
        for chunk in self.chunks:
            line: dict[str, Any] = {"t": chunk.t}
            try:
                line["utf8"] = chunk.data.decode("utf-8")
            except UnicodeDecodeError:
                line["b64"] = base64.b64encode(chunk.data).decode("ascii")
            line["events"] = chunk.events
            yield _dump(line)
        yield _dump(
            {
                "end": self.end,
                "t": self.end_t,
                "detail": self.end_detail,
                "events": self.end_events,
            }
        )
        yield _dump({"result": self.result})

    def save(self, target: str | os.PathLike[str] | IO[str], *, hash_content: bool = False) -> None:
        """Writes the recording (``hash_content``: ``redacted()`` first)."""
        recording = self.redacted() if hash_content else self
        if isinstance(target, str | os.PathLike):
            with open(target, "w", encoding="utf-8", newline="\n") as fh:
                recording.save(fh)
            return
        for line in recording.lines():
            target.write(line + "\n")

    @classmethod
    def load(cls, source: str | os.PathLike[str] | IO[str]) -> Recording:
        """Reads a recording; ValueError if it is not one."""
        if isinstance(source, str | os.PathLike):
            with open(source, encoding="utf-8") as fh:
                return cls.load(fh)
        return cls.from_lines(source)

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Recording:
        """Parses JSON Lines (see the module docstring); ValueError if malformed."""
        it = (line for line in lines if line.strip())
        try:
            header = json.loads(next(it))
        except StopIteration:
            raise ValueError("empty file: not a streamwire recording") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a streamwire recording: {exc}") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"not a streamwire recording (no format {FORMAT!r} header)")
        rec = cls(
            protocol=str(header["protocol"]),
            options=dict(header.get("options") or {}),
            options_omitted=list(header.get("options_omitted") or []),
            request=header.get("request"),
            request_body=header.get("request_body"),
            status=header.get("status"),
            headers=[(str(k), str(v)) for k, v in header.get("headers") or []],
            time_to_headers=header.get("time_to_headers"),
            recorded_at=str(header.get("recorded_at") or ""),
            streamwire=str(header.get("streamwire") or ""),
            redaction=dict(header.get("redaction") or {}),
            original=header.get("original"),
        )
        for number, line in enumerate(it, start=2):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"line {number}: not JSON: {exc}") from None
            if "t" in obj and ("utf8" in obj or "b64" in obj):
                data = (
                    obj["utf8"].encode("utf-8")
                    if "utf8" in obj
                    else base64.b64decode(obj["b64"], validate=True)
                )
                rec.chunks.append(RecordedChunk(float(obj["t"]), data, list(obj.get("events", []))))
            elif "end" in obj:
                rec.end = obj["end"]
                rec.end_t = obj.get("t")
                rec.end_detail = obj.get("detail")
                rec.end_events = list(obj.get("events", []))
            elif "result" in obj:
                rec.result = obj["result"]
        return rec

    def redacted(self) -> Recording:
        """A copy with content replaced by sha256 hashes (see ``_redact.py``)."""
        return redact_recording(self)


def fixture_head(
    case: str, raw_name: str, body: bytes, provider: str, protocol: str
) -> dict[str, Any]:
    """The fields a recorded fixture's manifest opens with: which body it is
    (``raw_name``, its SHA-256 and size) and where it came from."""
    return {
        "format": FIXTURE_FORMAT,
        "case": case,
        "raw": raw_name,
        "sha256": hashlib.sha256(body).hexdigest(),
        "size": len(body),
        "provider": provider,
        "protocol": protocol,
        "origin": "recorded",
    }


def _dump(value: Any) -> str:
    return dumps(jsonable(value))


def _options(options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    kept: dict[str, Any] = {}
    omitted: list[str] = []
    for key, value in options.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            omitted.append(key)
        else:
            kept[key] = value
    return kept, omitted


class Recorder:
    """Builds a ``Recording`` while a ``Driver`` runs (the driver calls it)."""

    def __init__(
        self,
        protocol: str,
        options: Mapping[str, Any],
        *,
        request: Mapping[str, Any] | None = None,
    ) -> None:
        kept, omitted = _options(options)
        #: What the request's credentials were (never recorded: masked wherever they appear).
        self._credentials = (
            [] if request is None else credentials(request.get("headers") or (), request.get("url"))
        )
        self.recording = Recording(
            protocol=protocol,
            options=kept,
            options_omitted=omitted,
            request=None if request is None else _request(request),
            recorded_at=datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="milliseconds"
            ),
        )

    def on_headers(self, status: int, headers: Headers, time_to_headers: float | None) -> None:
        rec = self.recording
        rec.status = status
        rec.headers = list(redact_headers(headers, self._credentials))
        rec.redaction["headers_removed"] = sorted(
            {k.lower() for k, _ in headers if is_secret_header(k)}
        )
        rec.time_to_headers = time_to_headers

    def on_chunk(self, data: bytes, t: float, events: Sequence[Event]) -> None:
        self.recording.chunks.append(RecordedChunk(t, bytes(data), [event_dict(e) for e in events]))

    def on_end(
        self, end: str, t: float, detail: str | None, events: Sequence[Event], result: StreamResult
    ) -> None:
        rec = self.recording
        rec.end = end
        rec.end_t = t
        rec.end_detail = None if detail is None else redact_text(detail, self._credentials)
        rec.end_events = [event_dict(e) for e in events]
        rec.result = result_dict(result)
        if self._credentials:
            self.recording = mask_credentials(rec, self._credentials)


def _request(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request as recorded: its method and URL (credentials removed); its
    headers only served to learn the credentials."""
    out = {k: v for k, v in request.items() if k != "headers"}
    if isinstance(out.get("url"), str):
        out["url"] = redact_url(out["url"])
    return out


# --- playing a recording back, and re-deriving a rewritten one -----------------

_TIMEOUT_ENDS = frozenset({"first_event_timeout", "idle_timeout", "total_timeout"})


def playback_driver(
    recording: Recording,
    options: Mapping[str, Any] | None,
    clock: Callable[[], float],
    *,
    record: bool,
) -> Driver:
    """The ``Driver`` that plays ``recording`` back (its options, ``options``
    over them), re-recording it with a ``Recorder`` when ``record``."""
    merged = {**recording.options, **(options or {})}
    recorder = Recorder(recording.protocol, merged, request=recording.request) if record else None
    driver = Driver(
        recording.protocol, merged, clock=clock, recorder=recorder, where="sw.io.replay"
    )
    # The recorded times count from the request's start; so do the replayed ones.
    driver.timing.time_to_headers = recording.time_to_headers
    return driver


def play(
    driver: Driver,
    recording: Recording,
    arrive: Callable[[float | None], None],
    chunk_events: list[list[Event]],
) -> Generator[Event, None, None]:
    """Feeds ``recording`` to ``driver`` as it arrived: its status and
    headers, one ``feed()`` per recorded chunk (each after ``arrive(its
    time)``; its events appended to ``chunk_events``), and the end the way
    the recording ended (EOF, cancel, a timeout, a disconnect, an HTTP
    error). Yields the events."""
    if driver.on_headers(recording.status or 200, to_headers(recording.headers)) == "error_body":
        if recording.chunks:
            arrive(recording.chunks[-1].t)
        yield from driver.on_error_body(recording.body)
        return
    for chunk in recording.chunks:
        arrive(chunk.t)
        events = driver.feed(chunk.data)
        chunk_events.append(events)
        yield from events
    arrive(recording.end_t)
    end = recording.end or "eof"
    if end == "cancel":
        yield from driver.cancel()
    elif end in _TIMEOUT_ENDS or end == "transport_error":
        yield from driver.finish(end, recording.end_detail)  # type: ignore[arg-type]
    else:
        yield from driver.finish("eof")


def redact_recording(recording: Recording) -> Recording:
    """A copy of ``recording`` with its content hashed; events and result re-derived."""
    if recording.redaction.get("content") == "sha256":
        return recording
    new_data = hash_chunks(
        [c.data for c in recording.chunks],
        framing_of(recording.protocol),
        error_body=recording.end == "http_error",
    )
    new = _rederived(recording, new_data)
    new.request_body = (
        None if recording.request_body is None else redact_json(recording.request_body)
    )
    new.redaction = {**recording.redaction, "content": "sha256"}
    new.original = facts(recording.result)
    return new


def mask_credentials(recording: Recording, secrets: Sequence[str]) -> Recording:
    """``recording`` with every occurrence of a credential value of its request
    (``_wire.credentials``) masked in its bytes (``_redact.mask_chunks``), so
    that the events and result re-derived from them hold none either: an
    error body that echoes the key, and the error message made of it. The
    recording itself when its bytes hold none."""
    eventstream = framing_of(recording.protocol) == "eventstream"
    new_data = mask_chunks(
        [c.data for c in recording.chunks],
        secrets,
        eventstream=eventstream and recording.end != "http_error",
    )
    if new_data is None:
        return recording
    new = _rederived(recording, new_data)
    new.redaction["credentials"] = "masked"
    return new


def _rederived(recording: Recording, new_data: list[bytes]) -> Recording:
    """A copy of ``recording`` whose chunks hold ``new_data`` (chunk by chunk,
    same arrival times), its events and result re-derived by playing them
    back on a virtual clock that reads the recorded arrival times."""
    draft = Recording(
        protocol=recording.protocol,
        options=dict(recording.options),
        options_omitted=list(recording.options_omitted),
        request=recording.request,
        status=recording.status,
        headers=list(recording.headers),
        time_to_headers=recording.time_to_headers,
        chunks=[RecordedChunk(c.t, d) for c, d in zip(recording.chunks, new_data, strict=True)],
        end=recording.end,
        end_t=recording.end_t,
        end_detail=recording.end_detail,
    )
    now = [0.0]

    def arrive(t: float | None) -> None:
        if t is not None:
            now[0] = t

    driver = playback_driver(draft, None, lambda: now[0], record=True)
    for _ in play(driver, draft, arrive, []):
        pass
    recorder = driver.recorder
    assert isinstance(recorder, Recorder)
    new = recorder.recording
    new.request = recording.request
    new.request_body = recording.request_body
    new.headers = list(recording.headers)
    new.recorded_at = recording.recorded_at
    new.redaction = dict(recording.redaction)
    new.original = recording.original
    return new
