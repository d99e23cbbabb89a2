"""Exceptions raised by streamwire.

Adapters never raise on bad upstream input: they turn it into a typed event and
a status. These exceptions are for the framing layer used on its own and for
caller misuse (feeding a stream after it was closed).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FramingError", "StreamwireError", "ToolResultError", "UsageError"]


class StreamwireError(Exception):
    """Base class of every exception streamwire raises on purpose."""


class FramingError(StreamwireError, ValueError):
    """The bytes are not valid for the wire format, or exceeded a size cap.

    Attributes:
        kind: a stable short string naming the defect, e.g. ``"prelude_crc"``,
            ``"message_crc"``, ``"line_too_large"``, ``"event_too_large"``,
            ``"truncated"``, ``"utf8"``.
        offset: byte offset, counted from the first byte ever fed to the
            decoder, of the line, event or message that failed.
        partial: what the same ``feed()`` call decoded before the error, so
            nothing valid is lost.

    After a ``FramingError`` the decoder that raised it stays failed: every
    later call raises the same error again.
    """

    kind: str
    offset: int
    partial: list[object]

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        offset: int,
        partial: Sequence[object] = (),
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.offset = offset
        self.partial = list(partial)

    def __repr__(self) -> str:
        return f"FramingError({self.args[0]!r}, kind={self.kind!r}, offset={self.offset})"


class UsageError(StreamwireError, RuntimeError):
    """The caller used an object wrongly, e.g. fed a stream after ``close()``."""


class ToolResultError(UsageError, ValueError):
    """The call id was not produced by this stream (or may not get a client result).

    Raised by ``sw.tool_result`` (``streamwire.toolresults``), and by the
    WebSocket adapters for a call whose response was cancelled.
    """
