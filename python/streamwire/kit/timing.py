"""The timed layers: ``streaming`` (the text arrived as the mock paced it) and ``cancel``.

Both compare the client's clock with the mock's: the mock stamps each write
and the moment the client's side of the connection closed (``mock.py``), the
judge's client each arrival and the moment it hung up (``client.py``), all
with ``time.time()`` on one host. A failure here is confirmed by running the
cell again with nothing else in flight (``check.py``) before it is reported:
the judge's own event loop, busy with other cells, can bunch the arrivals it
stamps.
"""

from __future__ import annotations

from .cell import Check, Inputs

__all__ = ["BURST_SHARE", "CANCEL_WITHIN", "TIMING_TAGS", "cancel", "streaming"]

#: The tags of the timed layers' failures measured with the two clocks. The
#: other (``not_streamed``: the gateway's request to the mock said ``stream:
#: false``) is a fact of the log, whatever the machine's load.
TIMING_TAGS = frozenset({"buffered", "kept_open", "slow"})
#: The client's hang-up must close the upstream within this many seconds.
CANCEL_WITHIN = 1.0
#: A paced stream is one burst when the client's arrivals span less than
#: this share of the mock's sends.
BURST_SHARE = 0.25


def streaming(x: Inputs) -> Check:
    """The text reached the client as the mock paced it, not held back and sent in one go.

    Two facts, text against text (the mock's writes that carry text deltas,
    the client's arrivals that completed one; one host clock): *early*, the
    first text reached the client before the mock's last text write; *spread*,
    the client's text arrivals span at least ``BURST_SHARE`` of the mock's.
    A hop that holds the answer until the upstream finished is neither. For a
    short answer a slow but streaming hop can be late too (its latency longer
    than the mock's few paced writes), so only both together fail it; a case
    marked ``stream_early`` (the 1 MiB one, paced over hundreds of
    milliseconds) fails on either.
    """
    obs, entry = x.obs, x.entry
    if entry is None or obs.result is None:
        return Check("fail", "no stream to time")
    if entry.get("stream") is False:
        return Check(
            "fail",
            "the gateway called the upstream without streaming: the whole answer was "
            "collected before the client got any of it",
            ("not_streamed",),
        )
    content = [w[0] for w in entry["writes"] if "text" in w[2]]
    first, last = obs.first_text_at, obs.last_text_at
    if len(content) < 2 or first is None or last is None:
        return Check("not_applicable", "too few text events to time")
    sent = content[-1] - content[0]
    if sent < 0.1:
        return Check("not_applicable", f"the mock's text writes spanned only {sent * 1000:.0f} ms")
    got = last - first
    early = first < content[-1]
    spread = got >= BURST_SHARE * sent
    details = {
        "sent_span_ms": round(sent * 1000, 1),
        "received_span_ms": round(got * 1000, 1),
        "first_text_before_last_send_ms": round((content[-1] - first) * 1000, 1),
        "early": early,
        "spread": spread,
    }
    strict = x.case.stream_early
    if (early or spread) and (not strict or (early and spread)):
        return Check("pass", details=details)
    what = f"the mock spread its text over {sent * 1000:.0f} ms; "
    if not early:
        what += (
            f"none of it reached the client until {(first - content[-1]) * 1000:.0f} ms "
            "after the mock's last write"
        )
    if not spread:
        what += ", then " if not early else ""
        what += f"the client got it all within {got * 1000:.0f} ms"
    return Check("fail", f"buffered: {what}", ("buffered",), details)


def cancel(x: Inputs) -> Check:
    """The upstream connection closed within ``CANCEL_WITHIN`` of the client's hang-up."""
    obs, entry = x.obs, x.entry
    if obs.cancelled_at is None:
        return Check("fail", "the client never got far enough to hang up")
    if entry is None:
        return Check("fail", "the request never reached the mock")
    gone = entry.get("disconnected_at")
    writes = len(entry.get("writes") or [])
    if entry.get("stream") is False:
        return Check(
            "fail",
            "the gateway called the upstream without streaming: the whole answer was "
            "generated before the client could hang up",
            ("not_streamed",),
        )
    if gone is None:
        how = "to the end" if entry.get("completed") else "on"
        return Check(
            "fail",
            f"the upstream connection stayed open: the mock kept streaming {how} ({writes} writes)",
            ("kept_open",),
        )
    after = gone - obs.cancelled_at
    details = {"closed_after_ms": round(after * 1000, 1), "writes": writes}
    if after > CANCEL_WITHIN:
        return Check(
            "fail", f"the upstream closed only {after:.2f} s after the hang-up", ("slow",), details
        )
    return Check("pass", details=details)
