"""Content codings: which one a client accepts (RFC 9110 section 12.5.3) and the compressed bytes.

Answers of at least `MIN_BYTES` go out as zstd, brotli or gzip when the client accepts one (a 29 KB
`records(first: 100)` answer is ~9 KB in zstd or brotli). A coding's bytes are made once per answer and
kept with it (`Encodings`), so a repeated answer costs no compression; a first-time answer pays it on its
way out, which is why zstd comes first where a client accepts it as much as the others (browsers since
2024, httpx, curl): on our answers it is as small as brotli at quality 5 and 5-25x faster to make (a 1.7 KB
dossier: 14 against 64 microseconds; 29 KB: 0.13 against 0.8 ms) and 2-4x faster to read. Each coded
representation has an entity tag of its own (the identity tag with `-zstd`, `-br` or `-gzip` inside its
quotes), as RFC 9110 section 8.8.3.3 asks of representations that differ in content coding.
"""

from __future__ import annotations

import gzip
import threading
from typing import TYPE_CHECKING

import brotli

from kernelindex.core.footprint import allocation, exact, footprint
from kernelindex.core.negotiation import qualities

if TYPE_CHECKING:
    import zstandard

__all__ = ["CODINGS", "MIN_BYTES", "Encodings", "brotli_window", "negotiate", "tag_for"]

MIN_BYTES = 1024
"""Smaller answers fit in a packet or two anyway; compressing them costs more than it saves."""

CODINGS = ("zstd", "br", "gzip")
"""What we can send, preferred first when a client accepts several with the same weight."""

_BROTLI_QUALITY = 5  # ~1.6 ms for 290 KB of JSON, within 2% of quality 9's size (11 takes 50x as long)
_BROTLI_WINDOWS = (10, 22)  # brotli's smallest and largest sliding window, as log2 of its bytes (22: its default)
_GZIP_LEVEL = 6
# Level 1, not zstd's default 3: in a serving process, between answers that leave little of its tables in the
# CPU's caches, a first-time 24 KB run page took 280-330 us of CPU at level 3 and 125-135 us at level 1 (median
# of 100 pages), for 5% more bytes (7.1 against 6.8 KB); GraphQL answers come out as small (a 6 KB leaderboard
# 1.67 against 1.72 KB, an 18 KB records page 4.9 against 5.1 KB). Its window stays within RFC 9659's 8 MB.
_ZSTD_LEVEL = 1
_zstd = threading.local()  # a compressor per thread: one is not safe to share between threads


def negotiate(accept_encoding: str | None) -> str | None:
    """The coding to send for an `Accept-Encoding` value, or None for the identity.

    >>> negotiate("gzip, deflate, br, zstd")
    'zstd'
    >>> negotiate("gzip, deflate, br")
    'br'
    >>> negotiate("gzip;q=1.0, br;q=0.5")
    'gzip'
    >>> negotiate("br;q=0, zstd;q=0, *")
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


def brotli_window(size: int) -> int:
    """The smallest brotli window (log2 of its bytes, less brotli's 16 reserved) that holds `size` bytes.

    A window larger than the body finds nothing more to refer back to, but at quality 5 the encoder
    sizes its tables by it: a 6 KB answer took 0.34 ms in the default 4 MB window and 0.2 ms in one
    that fits it, a byte or two smaller. The same body always gets the same window, so the same bytes.

    >>> brotli_window(0), brotli_window(1008), brotli_window(1009), brotli_window(6000), brotli_window(10**9)
    (10, 10, 11, 13, 22)
    """
    low, high = _BROTLI_WINDOWS
    return max(low, min(high, (size + 15).bit_length()))


def _zstd_compressor() -> zstandard.ZstdCompressor:
    found: zstandard.ZstdCompressor | None = getattr(_zstd, "compressor", None)
    if found is None:
        import zstandard  # on the first zstd answer: a megabyte a process that never sends one need not hold

        found = _zstd.compressor = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)  # the size in the frame: default
    return found


def _compress(body: bytes, coding: str) -> bytes:
    if coding == "zstd":
        return _zstd_compressor().compress(body)
    if coding == "br":
        return bytes(brotli.compress(body, quality=_BROTLI_QUALITY, lgwin=brotli_window(len(body))))
    return gzip.compress(body, compresslevel=_GZIP_LEVEL, mtime=0)  # mtime 0: the same bytes every time


class Encodings:
    """The coded forms of one body, made on first use."""

    __slots__ = ("_coded", "_lock")

    def __init__(self) -> None:
        self._coded: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def get(self, body: bytes, coding: str) -> tuple[bytes, int]:
        """The body in `coding`, and the memory its holder now holds more for it (0 when it was made before):
        the coded bytes, the coding's name and the growth of the table that keeps them, for its cache to add
        (`ByteLRU.grow`) without weighing the whole answer again."""
        found = self._coded.get(coding)
        if found is not None:
            return found, 0
        # zstandard's output keeps the compression bound of its input (7.9 KB of zstd held 73 KB).
        coded = exact(_compress(body, coding))
        with self._lock:
            if coding in self._coded:  # another thread made it meanwhile: its weight was added there
                return self._coded[coding], 0
            before = allocation(self._coded)
            self._coded[coding] = coded
            grown = allocation(self._coded) - before
        return coded, grown + footprint(coding, coded)
