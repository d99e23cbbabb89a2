"""The mock's content codings (``mock-upstream --compress``): gzip, and br with ``brotli``.

A provider's own front compresses its answers for a client that asks
(``Accept-Encoding``), streams included, and flushes the compressor after
every event so that each event decodes as soon as its bytes arrive. The
mock does the same when it compresses: ``choose`` picks the coding the
request's ``Accept-Encoding`` prefers (RFC 9110 section 12.5.3: q-values,
``*``, ``x-gzip`` for ``gzip``; gzip where the two weigh the same), and an
``Encoder`` codes each write on its own flush (zlib's ``Z_SYNC_FLUSH``,
brotli's ``flush``) and ends the body with the compressor's finish.
``deflate`` is never chosen: providers' fronts answer gzip or br, and
``deflate`` is sent in two formats (RFC 1950 and bare RFC 1951) that
clients tell apart by guessing.
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["CODINGS", "Encoder", "brotli_available", "choose"]

#: The codings the mock may answer in, best first when a request weighs them the same.
CODINGS = ("gzip", "br")
#: zlib's compression level: its default, what servers commonly use.
LEVEL = 6
#: brotli's quality for a stream: a front's on-the-fly setting, not the
#: slowest (11), which is for static files.
BROTLI_QUALITY = 5


def _brotli() -> Any:
    try:
        import brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    return brotli


def brotli_available() -> bool:
    """Whether the ``brotli`` package is installed (the mock then offers ``br``)."""
    return _brotli() is not None


def _weights(accept: str) -> dict[str, float]:
    """Each coding an ``Accept-Encoding`` names, lower-cased, with its q-value
    (a q that is no number in 0..1 makes its coding unacceptable)."""
    out: dict[str, float] = {}
    for item in accept.split(","):
        name, *params = (p.strip() for p in item.split(";"))
        name = name.lower()
        if not name:
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
                if not 0.0 <= q <= 1.0:
                    q = 0.0
        out["gzip" if name == "x-gzip" else name] = q
    return out


def choose(accept: str | None, offered: tuple[str, ...]) -> str | None:
    """The coding of ``offered`` (in ``CODINGS`` order of preference) that
    ``accept`` (a request's ``Accept-Encoding``) weighs highest above 0, or
    None (identity) when it accepts none of them or is absent."""
    if not accept:
        return None
    weights = _weights(accept)
    star = weights.get("*", 0.0)
    best: str | None = None
    best_q = 0.0
    for coding in (c for c in CODINGS if c in offered):
        q = weights.get(coding, star)
        if q > best_q:
            best, best_q = coding, q
    return best


class Encoder:
    """Codes one answer's body in ``coding`` (None: identity, bytes as they are).

    ``chunk`` codes one write and flushes, so that it decodes as soon as it
    arrives; ``finish`` is the end of a streamed body; ``whole`` codes a
    body sent at once. ``vary``: the answer depends on ``Accept-Encoding``
    (the mock compresses), so its headers say so even when it is identity."""

    def __init__(self, coding: str | None, *, vary: bool) -> None:
        self.coding = coding
        self.vary = vary
        self._zlib: Any = None
        self._brotli: Any = None
        if coding == "gzip":
            self._zlib = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
        elif coding == "br":
            brotli = _brotli()
            if brotli is None:
                raise ValueError("br needs the brotli package: pip install 'streamwire[brotli]'")
            self._brotli = brotli.Compressor(quality=BROTLI_QUALITY)
        elif coding is not None:
            raise ValueError(f"the mock codes gzip or br, not {coding!r}")

    def headers(self) -> list[tuple[str, str]]:
        """The answer's ``Content-Encoding`` and ``Vary`` headers."""
        out = [("content-encoding", self.coding)] if self.coding else []
        return [*out, ("vary", "accept-encoding")] if self.vary else out

    def chunk(self, data: bytes) -> bytes:
        """``data`` coded and flushed (empty stays empty: no write, no flush)."""
        if not data:
            return b""
        if self._zlib is not None:
            return bytes(self._zlib.compress(data) + self._zlib.flush(zlib.Z_SYNC_FLUSH))
        if self._brotli is not None:
            return bytes(self._brotli.process(data) + self._brotli.flush())
        return data

    def finish(self) -> bytes:
        """The end of the coded stream (the gzip trailer, brotli's last block)."""
        if self._zlib is not None:
            return bytes(self._zlib.flush(zlib.Z_FINISH))
        if self._brotli is not None:
            return bytes(self._brotli.finish())
        return b""

    def whole(self, data: bytes) -> bytes:
        """A body sent at once, coded whole."""
        if self.coding is None:
            return data
        return self.chunk(data) + self.finish()
