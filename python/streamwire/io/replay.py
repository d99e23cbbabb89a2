"""Replaying a ``Recording``: the same bytes, the same chunk boundaries, optionally the same pace.

``replay(recording)`` feeds the recorded chunks, one ``feed()`` per recorded
chunk, through the same ``Driver`` the HTTP helpers use, and ends the stream
the way the recording ended (EOF, cancel, a timeout, a disconnect, an HTTP
error). With ``timing="none"`` (the default) it runs at full speed on a
virtual clock that reads each chunk's recorded arrival time, so the replayed
timing metrics (time to first event, gaps, ``burst``) equal the recorded
ones exactly; with ``timing="real"`` it sleeps to reproduce the arrival times
(divided by ``speed``) and measures with ``time.monotonic``.

``verify(recording)`` replays on the virtual clock and lists every
difference between the replay and what was recorded: each chunk's events,
the end's events, and every field of the result. An empty list means the
recording reproduces.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal

from ..events import Event
from ..result import StreamResult
from .record import Recording, play, playback_driver
from .serialize import event_dict, jsonable, result_dict

__all__ = ["ReplayIterator", "replay", "verify"]

Timing = Literal["none", "real"]


class ReplayIterator:
    """Iterates the events of a replayed recording; ``result`` says how it ended."""

    def __init__(
        self,
        recording: Recording,
        *,
        timing: Timing = "none",
        speed: float = 1.0,
        options: Mapping[str, Any] | None = None,
        record: bool = False,
    ) -> None:
        if timing not in ("none", "real"):
            raise ValueError(f"timing must be 'none' or 'real', got {timing!r}")
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed!r}")
        self._timing = timing
        self._speed = speed
        self._virtual = 0.0
        clock = self._read_virtual if timing == "none" else time.monotonic
        self._driver = playback_driver(recording, options, clock, record=record)
        self._started = self._driver.timing.start
        #: The events of each recorded chunk, as the replay reaches it.
        self.chunk_events: list[list[Event]] = []
        self._events = play(self._driver, recording, self._arrive, self.chunk_events)

    def _read_virtual(self) -> float:
        return self._virtual

    def _arrive(self, t: float | None) -> None:
        if t is None:
            return
        if self._timing == "none":
            self._virtual = t
            return
        delay = self._started + t / self._speed - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    @property
    def result(self) -> StreamResult:
        """The replayed ``StreamResult`` so far; final once the replay ended."""
        return self._driver.result

    @property
    def recording(self) -> Recording | None:
        """The re-recorded replay (with ``record=True``)."""
        recorder = self._driver.recorder
        return None if recorder is None else recorder.recording

    def __iter__(self) -> ReplayIterator:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Stops the replay: ``cancelled`` unless it had ended."""
        self._events.close()
        self._driver.cancel()

    def __enter__(self) -> ReplayIterator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def replay(
    recording: Recording | str,
    *,
    timing: Timing = "none",
    speed: float = 1.0,
    options: Mapping[str, Any] | None = None,
    record: bool = False,
) -> ReplayIterator:
    """Replays a recording (or the path of one); see the module docstring."""
    if not isinstance(recording, Recording):
        recording = Recording.load(recording)
    return ReplayIterator(recording, timing=timing, speed=speed, options=options, record=record)


def verify(recording: Recording) -> list[str]:
    """Every difference between a virtual-clock replay and the recording ([] if none)."""
    it = ReplayIterator(recording)
    events = list(it)
    problems: list[str] = []
    recorded_chunks = [c.events for c in recording.chunks]
    replayed_chunks = [[event_dict(e) for e in chunk] for chunk in it.chunk_events]
    if recording.end != "http_error":
        for i, (want, got) in enumerate(zip(recorded_chunks, replayed_chunks, strict=False)):
            if jsonable(want) != got:
                problems.append(
                    f"chunk {i}: events differ: recorded {want!r:.300}, got {got!r:.300}"
                )
    want_all = jsonable(recording.events)
    got_all = [event_dict(e) for e in events]
    if want_all != got_all:
        problems.append(f"events differ: recorded {len(want_all)}, replayed {len(got_all)}")
    if recording.result is not None:
        got_result = result_dict(it.result)
        want_result = jsonable(recording.result)
        for key in sorted(set(want_result) | set(got_result)):
            if want_result.get(key) != got_result.get(key):
                problems.append(
                    f"result.{key}: recorded {want_result.get(key)!r:.200}, "
                    f"replayed {got_result.get(key)!r:.200}"
                )
    return problems
