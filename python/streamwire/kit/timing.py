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

__all__ = ["BURST_SHARE", "CANCEL_WITHIN", "cancel", "streaming"]

#: The client's hang-up must close the upstream within this many seconds.
CANCEL_WITHIN = 1.0
#: A paced stream is one burst when the client's arrivals span less than
#: this share of the mock's sends.
BURST_SHARE = 0.25


def streaming(x: Inputs) -> Check:
    """The text reached the client while the mock was still sending it."""
    obs, entry = x.obs, x.entry
    if entry is None or obs.result is None:
        return Check("fail", "no stream to time")
    if entry.get("stream") is False:
        return Check(
            "fail",
            "the gateway called the upstream without streaming: the whole answer was "
            "collected before the client got any of it",
            ("buffered",),
        )
    # Text against text: the mock's writes that carry text deltas, the
    # client's arrivals that completed one.
    writes = entry.get("writes") or []
    content = [w[0] for w in writes if "text" in w[2]]
    if len(content) < 2 or not obs.text_times:
        return Check("not_applicable", "too few text events to time")
    sent = content[-1] - content[0]
    if sent < 0.1:
        return Check("not_applicable", f"the mock's text writes spanned only {sent * 1000:.0f} ms")
    got = obs.text_times[-1] - obs.text_times[0]
    first = obs.text_times[0]
    details = {
        "sent_span_ms": round(sent * 1000, 1),
        "received_span_ms": round(got * 1000, 1),
        "first_text_before_last_send_ms": round((content[-1] - first) * 1000, 1),
    }
    # A buffering hop delivers the text only after the mock's last write, and
    # then all at once. Both must hold: a slow but streaming hop delivers it
    # late too, but spread out. (The mock and the judge read one host clock.)
    if first >= content[-1] and got < BURST_SHARE * sent:
        return Check(
            "fail",
            f"buffered: the mock spread its text over {sent * 1000:.0f} ms; the first of it "
            f"reached the client {(first - content[-1]) * 1000:.0f} ms after the mock's last write "
            f"(all within {got * 1000:.0f} ms)",
            ("buffered",),
            details,
        )
    return Check("pass", details=details)


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
