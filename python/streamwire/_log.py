"""The ``streamwire`` logger: what went wrong in a stream, never what it said.

A library logs and leaves the handling to the application (Python's logging
HOWTO, "Configuring Logging for a Library", checked 2026-12-01): the
package's ``__init__`` gives the ``streamwire`` logger a ``NullHandler``, so
nothing is printed unless the application configures logging.

What is logged, once each as it happens (bounded, like the result's own
records, by ``accumulate.MAX_RECORDS``):

* ``WARNING``: a protocol conflict; a framing error; a limit (one of
  streamwire's caps) ending a stream.
* ``INFO``: a stream warning (``missing_done``, ``idle_timeout``, ...) by
  its code; an error the provider (or the HTTP answer) reported, by its
  phase, type and code. Only a stream's first error is logged as one; a
  further error is its ``additional_error`` warning.

A record names the protocol, the request id when known, and stable codes,
under ``extra`` too (``streamwire_protocol``, ``streamwire_request_id``,
``streamwire_code``). It never holds payload text, error messages or
conflict descriptions (an upstream's text, or an error body that echoes a
credential, could be in them): read those on the result.
"""

from __future__ import annotations

import logging

__all__ = ["LOGGER", "log_conflict", "log_error", "log_warning"]

LOGGER = logging.getLogger("streamwire")


def _extra(protocol: str, request_id: str | None, code: str | None) -> dict[str, object]:
    return {
        "streamwire_protocol": protocol,
        "streamwire_request_id": request_id,
        "streamwire_code": code,
    }


def _where(protocol: str, request_id: str | None) -> str:
    return protocol if request_id is None else f"{protocol} (request {request_id})"


def log_conflict(protocol: str, request_id: str | None, count: int) -> None:
    """The stream contradicted itself (its ``count``-th conflict)."""
    if LOGGER.isEnabledFor(logging.WARNING):
        LOGGER.warning(
            "%s stream: protocol conflict #%d; the result's conflicts say what",
            _where(protocol, request_id),
            count,
            extra=_extra(protocol, request_id, "protocol_conflict"),
        )


def log_warning(protocol: str, request_id: str | None, code: str) -> None:
    """A stream warning, by its stable code."""
    if LOGGER.isEnabledFor(logging.INFO):
        LOGGER.info(
            "%s stream: warning %s",
            _where(protocol, request_id),
            code,
            extra=_extra(protocol, request_id, code),
        )


def log_error(
    protocol: str, request_id: str | None, phase: str, type: str | None, code: object
) -> None:
    """An error ended the stream: framing and limit errors warn, the others inform."""
    level = logging.WARNING if phase in ("framing", "limit") else logging.INFO
    if LOGGER.isEnabledFor(level):
        LOGGER.log(
            level,
            "%s stream: %s error %s (code %s)",
            _where(protocol, request_id),
            phase,
            type,
            code,
            extra=_extra(protocol, request_id, type),
        )
