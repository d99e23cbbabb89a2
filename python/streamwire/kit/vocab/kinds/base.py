"""The plain kind of case, and the plain data the kinds hand each side."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ....events import Event
from ....result import StreamResult
from ..delivery import Unit

__all__ = ["PLAIN", "Conduct", "Failure", "Kind", "Limits", "at_least"]


@dataclass(frozen=True)
class Conduct:
    """What the client does while it reads (``raw.observe``); by default, read on."""

    #: Hang up after this many text deltas, or ``hang_up_timer`` seconds after
    #: sending, whichever comes first.
    hang_up_after: int | None = None
    hang_up_timer: float = 0.0
    #: Stop reading after this many text deltas, for ``pause_for`` seconds.
    pause_after: int | None = None
    pause_for: float = 0.0
    #: The receive buffer (SO_RCVBUF), and the largest SSE line or event the
    #: client parses (None: the defaults).
    recv_buffer: int | None = None
    event_bytes: int | None = None


@dataclass(frozen=True)
class Failure:
    """How one attempt fails at the mock (``MockUpstream._handle``)."""

    #: What the log's ``failed`` says.
    name: str
    #: The provider's error status before any byte.
    before_output: bool = False
    #: Not a byte, not even the head, for the tag's ``stall`` seconds.
    stall: bool = False
    #: The connection resets after this many text events.
    reset_after_texts: int | None = None
    #: Which of the provider's error answers a failure before any byte sends
    #: (``wire.FAILURE_ANSWERS``: ``rate_limited``, ``bad_request``,
    #: ``overloaded``); None: the retry cases' own (``wire.retry_error``).
    answer: str | None = None

    def cut(self, units: list[Unit]) -> list[Unit]:
        """The units written before the reset (all of them without one)."""
        if self.reset_after_texts is None:
            return units
        texts = [i for i, u in enumerate(units) if u.kind == "text"]
        return units[: texts[min(self.reset_after_texts - 1, len(texts) - 1)] + 1]


@dataclass(frozen=True)
class Limits:
    """A cell's time limits (each read, the whole answer, the wait for the
    mock's log, and that wait after a hang-up), and the run's settings a kind
    sizes them by (``--silence``, ``--stall``)."""

    read: float
    total: float
    settle: float
    hang_up: float
    silence: float
    stall: float


@dataclass(frozen=True)
class Kind:
    """A case with no conduct of its own: the mock writes its answer, the
    client reads it through, and the layers every case has judge it. Each
    other kind overrides what it changes."""

    #: The layers (``cell.LAYERS``) that judge this kind of case only.
    layers: ClassVar[frozenset[str]] = frozenset()
    #: Each attempt answers with its own text and call ids (``{attempt}``),
    #: and the judge reads every attempt the mock logged.
    per_attempt: ClassVar[bool] = False
    #: The upstream goes silent: ``completion`` asks whether the hop cut the
    #: stream then (``silent_since``).
    silent: ClassVar[bool] = False
    #: The mock's send buffer (SO_SNDBUF) for it (None: the kernel's).
    send_buffer: ClassVar[int | None] = None

    # --- the case ----------------------------------------------------------------

    def sized(self, case: Any, deltas: int) -> Any:
        """``case`` with an answer of ``deltas`` text deltas, where the kind's
        answer is sized to the machine; else ``case`` itself."""
        return case

    def salted(self, salt: Callable[[tuple[str, ...]], tuple[str, ...]]) -> Kind:
        """The kind with ``salt`` applied to the text it carries."""
        return self

    # --- what the upstream writes ------------------------------------------------

    def failure(self, attempt: int) -> Failure | None:
        """How ``attempt`` fails at the mock (None: it answers)."""
        return None

    def events(
        self, events: list[Event], attempt: int, error: tuple[str, str | int | None, str]
    ) -> list[Event]:
        """The unified events of ``attempt``'s answer (``error``: the upstream's
        own (type, code, message), should the kind end it in an error)."""
        return events

    def units(self, units: list[Unit], keepalives: list[Unit], silence: float | None) -> list[Unit]:
        """The first answer's units as written, paced: ``keepalives`` (the
        upstream's, when the case has them) before the text; ``silence``:
        the tag's seconds of silence (None: the kind's default)."""
        return [*keepalives, *units]

    def logged(self, case: Any) -> dict[str, Any]:
        """What the mock's log entry adds for the kind."""
        return {}

    def tool_turn(self, upstream: str, body: Any, case: Any, entry: dict[str, Any]) -> bool:
        """Whether the request is the follow-up that answers the case's call
        (what the upstream saw of it is logged in ``entry``)."""
        return False

    # --- what the client does ----------------------------------------------------

    @property
    def conduct(self) -> Conduct:
        """What the client does while it reads."""
        return Conduct()

    def tag_options(self, limits: Limits) -> dict[str, float]:
        """What the mock is told for the cell's tag (``mock.TAG_OPTIONS``)."""
        return {}

    def limits(self, limits: Limits) -> Limits:
        """The cell's limits: the kind's own waits outwaited by the client."""
        return limits

    def next_request(
        self, client: str, body: dict[str, Any], result: StreamResult | None
    ) -> dict[str, Any] | None:
        """The request the client sends after the answer ``result`` (None: none)."""
        return None

    # --- what the judge expects --------------------------------------------------

    @property
    def plain(self) -> bool:
        """No conduct of its own: the answer is written and read through, and
        what arrives and when is all that is judged."""
        return type(self) is Kind

    @property
    def hangs_up(self) -> bool:
        """The client hangs up mid-answer (``conduct``): the answer it holds
        to is ``cancelled``, and what came before the hang-up is judged."""
        return self.conduct.hang_up_after is not None

    @property
    def clock_events(self) -> str | None:
        """Why a comparison leaves the count and order of the events to the
        clock (``compare.clock_facts``); None: it does not."""
        return None

    def silent_since(self, entry: Mapping[str, Any]) -> float | None:
        """When the mock's silence began, by its log entry (None: unknown)."""
        return None

    def judges(self, layer: str) -> bool:
        """Whether ``layer`` judges this kind of case (of the kinds' own layers)."""
        return layer in self.layers


#: The kind of a case with no conduct of its own.
PLAIN = Kind()


def at_least(limits: Limits, **floors: float) -> Limits:
    """``limits``, each named one raised to at least its floor."""
    return replace(limits, **{k: max(getattr(limits, k), v) for k, v in floors.items()})
