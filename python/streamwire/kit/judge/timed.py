"""The timed layers: ``streaming`` (content arrived as the mock paced it) and ``cancel``.

Both compare two clocks on one host (``time.time()``): the mock stamps each
write with its content (``upstream/wire.py``) and the close of the client's
side (``upstream/mock.py``), the judge's client each arrival of content and
its own hang-up (``client/raw.py``). ``streaming`` tells three hops apart:

* one that **holds the answer** (``fail``, tag ``held``, verdict
  ``not_streaming``): no content before the mock's last text write, over a span
  no hop's latency explains (``delivery.PACE_SPAN``, or ``kinds.cancel.CANCEL_TIMER``
  in ``cancel``); asking the upstream with ``stream: false`` is
  ``not_streamed``, a fact of the log;
* one that **streams late** (``degraded``, ``delayed``, ``stream_delayed``):
  the median lag past ``DELAY_BOUND``; the median, because a stall of the
  judge's own event loop delays a few arrivals, never most of them;
* one that **holds a call's arguments** (``degraded``, ``arguments_held``,
  ``arguments_buffered``), where the mock spread them over ``ARGUMENTS_SPAN``.

Each finding says how far its figure lies past its bound (``margin_ms``):
``FIRM_MARGIN`` or more is ``firm``, a fact about the hop; the rest, and what
the hang-up timer raised, are clock-decided (``clock_decided``). A finding,
or a figure near its bound (``borderline``), is confirmed by a run of the
cell alone (``run/check.py``): a busy judge delays its stamps by tens of
milliseconds, never by the spans these rules rest on.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Sequence
from typing import Any

from ..vocab.kinds.cancel import CANCEL_TIMER
from ..vocab.kinds.head_of_line import HOL_SHARE, HOL_WAIT
from .cell import FIRM_MARGIN, TIMING_TAGS, Check, Inputs, clock_decided

__all__ = [
    "ARGUMENTS_SPAN",
    "CANCEL_WITHIN",
    "DELAY_BOUND",
    "FIRM_MARGIN",
    "TIMING_TAGS",
    "cancel",
    "clock_decided",
    "head_of_line",
    "streaming",
]

#: A hop may delay the content by this much (the median of its lags) and still pass.
DELAY_BOUND = 0.05
#: A call's arguments are judged for streaming when the mock spread them over
#: at least this long, in at least three writes.
ARGUMENTS_SPAN = 0.3
#: The client's hang-up must close the upstream within this many seconds.
CANCEL_WITHIN = 1.0
#: Client protocols that carry a tool call whole (Gemini's ``functionCall``,
#: Gemini Live's ``toolCall`` at the turn's end): their arguments are not
#: judged for streaming.
WHOLE_CALLS = frozenset({"gemini", "gemini-live"})
#: A held answer needs the mock's writes to span at least this long.
HELD_SPAN = 1.0


def _margin(details: dict[str, Any], margin: float | None) -> None:
    """Records how far past its bound a finding is, and whether that makes it firm."""
    details["margin_ms"] = _ms(margin)
    details["firm"] = margin is not None and margin >= FIRM_MARGIN


Series = list[tuple[float, str, int]]


def _sends(entry: dict[str, Any]) -> Series:
    out: Series = []
    for write in entry.get("writes") or []:
        if len(write) > 3:
            out += [(write[0], key, chars) for key, chars in write[3].items()]
    return out


def _group(kind: str) -> str:
    return kind.partition(":")[0]


def _lags(sends: Series, arrivals: Series) -> dict[str, list[float]]:
    """Per content kind, the lag of each write: when the client had received
    the content the write completed, less when it was written. Text and
    reasoning are matched character for character (what the client received
    of them is the upstream's, or the deltas layer says otherwise), a call's
    arguments by their share of the whole (a gateway may re-serialize them);
    a write beyond what the client received (it hung up) has no lag."""
    out: dict[str, list[float]] = {}
    for key in dict.fromkeys(k for _, k, _ in sends):
        sent = [(t, c) for t, k, c in sends if k == key]
        got = [(t, c) for t, k, c in arrivals if k == key]
        total_sent = sum(c for _, c in sent)
        total_got = sum(c for _, c in got)
        if not total_sent or not total_got:
            continue
        scale = total_got / total_sent if _group(key) == "arguments" else 1.0
        times, cumulative, running = [], [], 0
        for t, c in got:
            running += c
            times.append(t)
            cumulative.append(running)
        lags, done = [], 0
        for t, c in sent:
            done += c
            i = bisect.bisect_left(cumulative, done * scale - 1e-6)
            if i == len(times):
                break
            lags.append(times[i] - t)
        out[key] = lags
    return out


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)


def _gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times) if b - a > 0.002]


def streaming(x: Inputs) -> Check:
    """The content reached the client as the mock paced it (module docstring).
    An answer held or late that came compressed says so (``compressed``, its
    ``content_encoding``): whether the compression is the cause is decided
    against the same cell over ``http1`` (``compression_cause``)."""
    check = _streaming(x)
    encoding = x.obs.content_encoding
    if encoding and check.verdict != "pass" and {"held", "delayed"} & set(check.tags):
        check.tags = (*check.tags, "compressed")
        check.details["content_encoding"] = encoding
        check.why = f"{check.why} (the answer came {encoding}-compressed)"
    return check


def compression_cause(check: Check, identity: Check) -> None:
    """A held answer that came compressed, whose twin over ``http1`` (no
    coding accepted) streamed: the hop holds what it compresses
    (``compression_buffered``)."""
    if "compressed" not in check.tags or "held" not in check.tags:
        return
    if "compression_buffered" in check.tags:
        return  # decided already (a repeated cell's runs share checks)
    if identity.verdict not in ("pass", "degraded") or "held" in identity.tags:
        return
    check.tags = (*check.tags, "compression_buffered")
    delay = identity.details.get("first_content_delay_ms")
    check.details["identity_first_content_delay_ms"] = delay
    check.why = (
        f"{check.why}; the same answer streamed to a client that accepted no coding "
        f"(first content {delay} ms after the mock's first write)"
    )


def _streaming(x: Inputs) -> Check:
    obs, entry = x.obs, x.entry
    if entry is None:
        return Check("not_applicable", "the gateway never called the mock: nothing to time")
    if entry.get("stream") is False:
        return Check(
            "fail",
            "the gateway called the upstream without streaming: the whole answer was "
            "collected before the client got any of it",
            ("not_streamed",),
        )
    sends = _sends(entry)
    if x.client in WHOLE_CALLS:
        # The client protocol sends each call whole: its arguments cannot stream.
        sends = [s for s in sends if _group(s[1]) != "arguments"]
    if not sends:
        return Check("not_applicable", "the mock wrote no content to time")
    writes = entry.get("writes") or []
    first_write, last_write = writes[0][0], writes[-1][0]
    kinds = {k for _, k, _ in sends}
    arrivals = [a for a in obs.content if a[1] in kinds]
    first_send = sends[0][0]
    details: dict[str, Any] = {
        "sent_span_ms": _ms(last_write - first_write),
        "headers_after_last_write_ms": (
            _ms(obs.head_at - last_write) if obs.head_at is not None else None
        ),
    }
    if x.case.kind.hangs_up:
        return _streaming_before_hang_up(x, sends, arrivals, details)
    if last_write - first_write < HELD_SPAN:
        return Check(
            "not_applicable",
            f"the mock's writes spanned only {(last_write - first_write) * 1000:.0f} ms",
            details=details,
        )
    if not arrivals:
        # An answer that never was a stream (an error status after the whole
        # upstream answer): its head is all there is to time. One whose content
        # was lost is the deltas layer's.
        if obs.result is None and obs.head_at is not None and obs.head_at >= last_write:
            _margin(details, obs.head_at - first_send - DELAY_BOUND)
            return Check(
                "fail",
                f"held: the mock spread its answer over "
                f"{(last_write - first_write) * 1000:.0f} ms; not even the response head "
                f"reached the client until {(obs.head_at - last_write) * 1000:.0f} ms after "
                "the mock's last write",
                ("held",),
                details,
            )
        return Check("not_applicable", "no content reached the client to time", details=details)
    first_arrival = arrivals[0][0]
    # Held is judged against the upstream's last write of the text (or
    # reasoning) the client received, when it was spread over writes: the
    # closing events the paced mock writes after it (the end, usage) are no
    # content to wait for, and a hop that sends the text only once it is
    # complete holds the answer. Only the kinds received: a hop that drops the
    # reasoning and streams the text has not held the text. Otherwise, and for
    # answers that are calls alone (held arguments are their own finding),
    # against the last write of any kind.
    received = {k for _, k, _ in arrivals}
    texts = [t for t, k, _ in sends if _group(k) != "arguments" and k in received]
    spread = len(texts) > 1 and texts[-1] - texts[0] >= HELD_SPAN / 2
    last_content = texts[-1] if spread else last_write
    details["first_content_after_last_write_ms"] = _ms(first_arrival - last_write)
    details["first_content_after_last_content_ms"] = _ms(first_arrival - last_content)
    if first_arrival >= last_content:
        # An honest hop's first content would have had to come this much later.
        _margin(details, first_arrival - first_send - DELAY_BOUND)
        head = ""
        if obs.head_at is not None and obs.head_at >= last_content:
            head = " (not even the response head arrived before it)"
        return Check(
            "fail",
            f"held: the mock spread its answer over {(last_write - first_write) * 1000:.0f} ms; "
            f"no content reached the client until {(first_arrival - last_content) * 1000:.0f} ms "
            f"after the mock's last {'text ' if spread else ''}write{head}",
            ("held",),
            details,
        )
    return _lateness(sends, arrivals, first_send, details)


def _streaming_before_hang_up(
    x: Inputs, sends: Series, arrivals: Series, details: dict[str, Any]
) -> Check:
    obs = x.obs
    hung_up = obs.cancelled_at
    if hung_up is None:
        return Check("not_applicable", "the client did not hang up: nothing to time")
    before = [s for s in sends if s[0] <= hung_up]
    if not arrivals:
        if obs.cancel_reason == "timer" and before and hung_up - before[0][0] >= CANCEL_TIMER / 2:
            written = sum(1 for t, k, _ in before if k == "text")
            _margin(details, None)  # the client's own timer decided when to look
            return Check(
                "fail",
                f"held: the mock wrote {written} text deltas over "
                f"{(hung_up - before[0][0]) * 1000:.0f} ms; none reached the client before it "
                f"hung up {CANCEL_TIMER:.0f} s after its request",
                ("held",),
                details,
            )
        return Check("not_applicable", "no content reached the client before it hung up")
    check = _lateness(before, arrivals, sends[0][0], details)
    # The span judged ends at the kit's own hang-up, a few deltas in: its lags
    # are the first byte's delay (the hop's head latency, the kit's load), which
    # the paced cells judge over a span long enough. Never firm here.
    check.details["firm"] = False
    return check


def _lateness(sends: Series, arrivals: Series, first_send: float, details: dict[str, Any]) -> Check:
    lags = _lags(sends, arrivals)
    held_calls = _held_arguments(sends, arrivals, lags)
    held = held_calls[0] if held_calls is not None else {}
    # A held call's lags are its own finding, not the stream's delay.
    every = [lag for key, values in lags.items() if key not in held for lag in values]
    first_delay = arrivals[0][0] - first_send
    p90 = statistics.quantiles(every, n=10)[-1] if len(every) >= 2 else (every or [0.0])[0]
    sent_times = sorted({t for t, _, _ in sends})
    got_times = sorted({t for t, _, _ in arrivals})
    sent_gaps, got_gaps = _gaps(sent_times), _gaps(got_times)
    details.update(
        first_content_delay_ms=_ms(first_delay),
        lag_median_ms=_ms(statistics.median(every)) if every else None,
        lag_p90_ms=_ms(p90),
        lag_max_ms=_ms(max(every)) if every else None,
        worst_gap_ms=_ms(max(got_gaps)) if got_gaps else None,
        sent_worst_gap_ms=_ms(max(sent_gaps)) if sent_gaps else None,
        median_gap_ms=_ms(statistics.median(got_gaps)) if got_gaps else None,
        sent_median_gap_ms=_ms(statistics.median(sent_gaps)) if sent_gaps else None,
        received_span_ms=_ms(got_times[-1] - got_times[0]),
    )
    details["arguments_streamed"] = (
        None if held_calls is None else {key: key not in held_calls[0] for key in held_calls[1]}
    )
    median = statistics.median(every) if every else 0.0
    details["borderline"] = DELAY_BOUND < median < 2 * DELAY_BOUND
    if median > DELAY_BOUND:
        _margin(details, median - DELAY_BOUND)
        batched = (
            details["median_gap_ms"] is not None
            and details["sent_median_gap_ms"] is not None
            and details["median_gap_ms"] > 1.5 * details["sent_median_gap_ms"]
        )
        ordered = [lag for values in lags.values() for lag in values]
        quarter = max(1, len(ordered) // 4)
        early, late = statistics.median(ordered[:quarter]), statistics.median(ordered[-quarter:])
        behind = len(ordered) >= 8 and late > 3 * max(early, DELAY_BOUND / 2)
        details["falling_behind"] = behind
        if behind:
            how = (
                f"falling behind: {early * 1000:.0f} ms late at first, {late * 1000:.0f} ms at "
                "the end (the hop reads or sends slower than the mock writes)"
            )
        elif batched:
            how = (
                f"in batches about {details['median_gap_ms']:.0f} ms apart (the mock wrote every "
                f"{details['sent_median_gap_ms']:.0f} ms)"
            )
        else:
            how = "each piece late"
        return Check(
            "degraded",
            f"delayed: the content streamed, {how}: {median * 1000:.0f} ms after the mock "
            f"wrote it in the median (the bound is {DELAY_BOUND * 1000:.0f} ms), the first "
            f"{first_delay * 1000:.0f} ms, 90% within {p90 * 1000:.0f} ms",
            ("delayed",),
            details,
        )
    if held:
        _margin(details, held_calls[2] if held_calls is not None else None)
        return Check(
            "degraded",
            "arguments held: "
            + "; ".join(held.values())
            + ", while the rest of the content streamed",
            ("arguments_held",),
            details,
        )
    return Check("pass", details=details)


def _held_arguments(
    sends: Series, arrivals: Series, lags: dict[str, list[float]]
) -> tuple[dict[str, str], list[str], float | None] | None:
    """The calls whose arguments arrived only after the mock wrote their last
    fragment (key -> why), the calls judged, and the least margin of a held
    call past its bound; None when no call was judged."""
    other = [lag for key, values in lags.items() if _group(key) != "arguments" for lag in values]
    typical = statistics.median(other) if other else 0.0
    judged: list[str] = []
    held: dict[str, str] = {}
    margins: list[float] = []
    for key in dict.fromkeys(k for _, k, _ in sends if _group(k) == "arguments"):
        times = [t for t, k, _ in sends if k == key]
        got = [t for t, k, _ in arrivals if k == key]
        if len(times) < 3 or times[-1] - times[0] < ARGUMENTS_SPAN or not got:
            continue
        judged.append(key)
        if got[0] >= times[-1] and got[0] - times[0] > typical + DELAY_BOUND:
            margins.append(got[0] - times[0] - typical - DELAY_BOUND)
            call = key.partition(":")[2]
            held[key] = (
                f"call {call}'s arguments, written over {(times[-1] - times[0]) * 1000:.0f} ms, "
                f"reached the client only {(got[0] - times[-1]) * 1000:.0f} ms after the last "
                "fragment, all at once"
            )
    return (held, judged, min(margins) if margins else None) if judged else None


def cancel(x: Inputs) -> Check:
    """The upstream connection closed within ``CANCEL_WITHIN`` of the client's hang-up."""
    obs, entry = x.obs, x.entry
    if entry is None:
        return Check("not_applicable", "the gateway never called the mock: nothing to cancel")
    if entry.get("stream") is False:
        return Check(
            "not_applicable",
            "the gateway asked the upstream for the whole answer at once (stream: false): "
            "there was no stream to cancel",
        )
    writes = entry.get("writes") or []
    if obs.cancelled_at is None:
        ended = obs.result is not None and obs.result.status not in ("in_progress", "incomplete")
        if ended:
            return Check(
                "not_applicable", "the whole answer arrived before the client could hang up"
            )
        return Check("not_applicable", "the client never got far enough to hang up")
    hung_up = obs.cancelled_at
    after_hang_up = [w for w in writes if w[0] > hung_up]
    details: dict[str, Any] = {
        "hung_up_after_ms": _ms(hung_up - obs.sent_at),
        "hung_up_on": obs.cancel_reason,
        "writes_after_hang_up": len(after_hang_up),
    }
    # The upstream request ended: its connection closed, or (a Realtime
    # response) the mock took the client's ``response.cancel``.
    ends = [entry.get(k) for k in ("disconnected_at", "cancelled_at")]
    gone = min((t for t in ends if isinstance(t, int | float)), default=None)
    if gone is None:
        ran = (writes[-1][0] - hung_up) if writes else 0.0
        how = "to the end of its answer" if entry.get("completed") else "on"
        return Check(
            "fail",
            f"the upstream connection stayed open: the mock kept streaming {how}, "
            f"{len(after_hang_up)} writes over {ran * 1000:.0f} ms after the client hung up",
            ("kept_open",),
            details,
        )
    after = gone - hung_up
    details["closed_after_ms"] = _ms(after)
    details["borderline"] = CANCEL_WITHIN < after < 2 * CANCEL_WITHIN
    if after > CANCEL_WITHIN:
        _margin(details, after - CANCEL_WITHIN)
        return Check(
            "fail",
            f"the upstream closed only {after:.2f} s after the hang-up "
            f"(the bound is {CANCEL_WITHIN:.0f} s)",
            ("slow",),
            details,
        )
    return Check("pass", details=details)


def head_of_line(x: Inputs) -> Check:
    """The stream was not held for as long as the whole answer beside it
    waited on the upstream (``kinds.head_of_line``): its first content came
    before ``HOL_SHARE`` of the time from its request to that answer."""
    obs, beside = x.obs, x.beside_entry
    if x.beside_obs is None or beside is None:
        return Check(
            "not_applicable",
            "the non-streaming request beside the stream never reached the upstream "
            "(the gateway serves no whole answers to this client): nothing to be held behind",
        )
    answered, waited = beside.get("ended_at"), beside.get("answer_after")
    if not isinstance(answered, float) or not isinstance(waited, int | float):
        return Check(
            "not_applicable",
            "the upstream answered the request beside the stream at once (it was refused "
            f"or failed: HTTP {beside.get('status')}): nothing to be held behind",
        )
    overlap = answered - obs.sent_at
    details: dict[str, Any] = {
        "beside_waited_ms": _ms(float(waited)),
        "overlap_ms": _ms(overlap),
        "stream_reached_upstream_ms": (
            _ms(x.entry["t"] - obs.sent_at)
            if x.entry is not None and isinstance(x.entry.get("t"), float)
            else None
        ),
    }
    if overlap < HOL_WAIT / 2:
        return Check(
            "not_applicable",
            f"the answer beside came {overlap * 1000:.0f} ms after the stream was asked for: "
            "too soon to tell a stream held behind it",
            details=details,
        )
    first = obs.content[0][0] if obs.content else obs.ended_at
    if first is None:
        return Check("not_applicable", "the stream never began or ended", details=details)
    stalled = first - obs.sent_at
    bound = HOL_SHARE * overlap
    details.update(first_content_ms=_ms(stalled), bound_ms=_ms(bound))
    details["borderline"] = bound / 2 < stalled < bound
    if stalled < bound:
        return Check("pass", details=details)
    _margin(details, stalled - bound)
    reached = details["stream_reached_upstream_ms"]
    where = (
        f"its request reached the upstream only {reached:.0f} ms after it was sent"
        if reached is not None and reached >= bound * 1000
        else "the upstream had it at once"
    )
    return Check(
        "fail",
        f"held behind a non-streaming request: the stream's first content came "
        f"{stalled * 1000:.0f} ms after it was asked for, while a whole answer beside it "
        f"waited {waited * 1000:.0f} ms on the upstream (it came {overlap * 1000:.0f} ms after "
        f"the stream was asked for); {where}",
        ("head_of_line",),
        details,
    )
