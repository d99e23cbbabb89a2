"""Content codings undone incrementally: ``gzip``, ``deflate``, ``br``, ``zstd``.

``Content-Encoding`` (RFC 9110 section 8.4.1): ``gzip`` (members in
sequence), ``deflate`` (the zlib format of RFC 1950; some servers send bare
RFC 1951 data, which is accepted too), ``br`` (RFC 7932, by the ``brotli``
package: ``pip install 'streamwire[brotli]'``) and ``zstd`` (RFC 8878, by the
``zstandard`` package). A decoder takes the body as it arrives and gives what
each piece decodes to, at most ``PIECE`` bytes per step, so a small input
that expands enormously is read in pieces like any other. Used by
``streamwire inspect`` on captures and by the acceptance kit's client, which
times each event as it decodes.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

__all__ = ["CODINGS", "PIECE", "Decoder", "MissingDecoder", "available", "content_decoder"]

#: The most bytes one decoding step returns.
PIECE = 1 << 20
#: The codings a decoder exists for (``x-gzip`` is ``gzip``).
CODINGS = ("gzip", "deflate", "br", "zstd")


class MissingDecoder(Exception):
    """A body's ``Content-Encoding`` needs a package that is not installed."""


class Decoder(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]:
        """What ``data`` decodes to, in pieces; ``zlib.error`` for corrupt data."""
        ...

    def finish(self) -> tuple[bytes, str | None]:
        """The rest, and what is wrong if the data ended before its end marker."""
        ...


class _Zlib:
    """gzip (members in sequence) or zlib/raw deflate."""

    def __init__(self, encoding: str, first: bytes) -> None:
        if encoding == "gzip":
            self._wbits = 31
        else:  # a zlib header (RFC 1950) or bare deflate data
            zlib_header = (
                len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
            )
            self._wbits = 15 if zlib_header else -15
        self._d = zlib.decompressobj(self._wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            out = self._d.decompress(data, PIECE)
            if out:
                yield out
            data = self._d.unconsumed_tail
            if self._d.eof and self._d.unused_data:
                if self._wbits != 31:
                    return  # bytes after a zlib stream's end are not part of it
                data = self._d.unused_data  # the next gzip member
                self._d = zlib.decompressobj(self._wbits)

    def finish(self) -> tuple[bytes, str | None]:
        rest = self._d.flush()
        return rest, None if self._d.eof else "the compressed body ends before its end marker"


class _Brotli:
    def __init__(self) -> None:
        try:
            import brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise MissingDecoder(
                "the body is brotli-compressed (Content-Encoding: br) and the brotli package "
                "is not installed: pip install 'streamwire[brotli]'"
            ) from None
        self._error: type[Exception] = brotli.error
        self._d = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self._d.process(data, output_buffer_limit=PIECE)
            while True:
                if out:
                    yield out
                if self._d.can_accept_more_data() or self._d.is_finished():
                    return
                out = self._d.process(b"", output_buffer_limit=PIECE)
        except self._error as exc:
            raise zlib.error(str(exc)) from None

    def finish(self) -> tuple[bytes, str | None]:
        done = self._d.is_finished()
        return b"", None if done else "the compressed body ends before its end marker"


class _Zstd:
    def __init__(self) -> None:
        try:
            import zstandard  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise MissingDecoder(
                "the body is zstd-compressed (Content-Encoding: zstd) and the zstandard "
                "package is not installed: pip install zstandard"
            ) from None
        self._error: type[Exception] = zstandard.ZstdError
        self._d = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> Iterator[bytes]:
        try:
            out = self._d.decompress(data)
        except self._error as exc:
            raise zlib.error(str(exc)) from None
        for at in range(0, len(out), PIECE):
            yield out[at : at + PIECE]

    def finish(self) -> tuple[bytes, str | None]:
        done = bool(getattr(self._d, "eof", True))
        return b"", None if done else "the compressed body ends before its end marker"


def content_decoder(encoding: str, first: bytes) -> Decoder:
    """A decoder for one coding (``first``: the body's first bytes, which tell
    zlib from bare deflate data). MissingDecoder when its package is missing;
    ValueError for a coding not in ``CODINGS``."""
    coding = "gzip" if encoding == "x-gzip" else encoding
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    if coding in ("gzip", "deflate"):
        return _Zlib(coding, first)
    raise ValueError(f"unsupported Content-Encoding {encoding!r} ({', '.join(CODINGS)})")


def available() -> tuple[str, ...]:
    """The codings this installation decodes (gzip and deflate always)."""
    found = []
    for coding in CODINGS:
        try:
            content_decoder(coding, b"")
        except MissingDecoder:
            continue
        found.append(coding)
    return tuple(found)
