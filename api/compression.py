"""Content codings: which one a client accepts (RFC 9110 section 12.5.3) and the compressed bytes.

Answers of at least `MIN_BYTES` go out as brotli or gzip when the client accepts one (a 66 KB
`records(first: 100)` answer is ~10 KB in brotli). A coding's bytes are made once per answer and kept
with it (`Encodings`), so a repeated answer costs no compression. Each coded representation has an
entity tag of its own (the identity tag with `-br` or `-gzip` inside its quotes), as RFC 9110
section 8.8.3.3 asks of representations that differ in content coding.
"""

from __future__ import annotations

import gzip
import threading

import brotli

from api.negotiation import qualities

__all__ = ["CODINGS", "MIN_BYTES", "Encodings", "negotiate", "tag_for"]

MIN_BYTES = 1024
"""Smaller answers fit in a packet or two anyway; compressing them costs more than it saves."""

CODINGS = ("br", "gzip")
"""What we can send, preferred first when a client accepts several with the same weight."""

_BROTLI_QUALITY = 5  # ~1.6 ms for 290 KB of JSON, within 2% of quality 9's size (11 takes 50x as long)
_GZIP_LEVEL = 6


def negotiate(accept_encoding: str | None) -> str | None:
    """The coding to send for an `Accept-Encoding` value, or None for the identity.

    >>> negotiate("gzip, deflate, br")
    'br'
    >>> negotiate("gzip;q=1.0, br;q=0.5")
    'gzip'
    >>> negotiate("br;q=0, *")
    'gzip'
    >>> negotiate("identity") is None
    True
    >>> negotiate(None) is None
    True
    """
    weights = qualities(accept_encoding)
    best: tuple[float, int, str] | None = None
    for rank, coding in enumerate(CODINGS):
        weight = weights.get(coding, weights.get("*", 0.0))
        if weight > 0 and (best is None or (weight, -rank) > (best[0], best[1])):
            best = (weight, -rank, coding)
    return None if best is None else best[2]


def tag_for(etag: str, coding: str | None) -> str:
    """The entity tag of a coded representation: `"abc"` -> `"abc-br"`."""
    return etag if coding is None else f'{etag[:-1]}-{coding}"'


def _compress(body: bytes, coding: str) -> bytes:
    if coding == "br":
        return bytes(brotli.compress(body, quality=_BROTLI_QUALITY))
    return gzip.compress(body, compresslevel=_GZIP_LEVEL, mtime=0)  # mtime 0: the same bytes every time


class Encodings:
    """The coded forms of one body, made on first use; `size` is what they hold together."""

    __slots__ = ("_coded", "_lock")

    def __init__(self) -> None:
        self._coded: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def get(self, body: bytes, coding: str) -> tuple[bytes, bool]:
        """The body in `coding`, and whether it was made just now (its holder then weighs more)."""
        found = self._coded.get(coding)
        if found is not None:
            return found, False
        coded = _compress(body, coding)
        with self._lock:
            self._coded.setdefault(coding, coded)
        return coded, True

    @property
    def size(self) -> int:
        return sum(len(coded) for coded in self._coded.values())
