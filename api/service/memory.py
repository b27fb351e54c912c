"""A serving process's memory after a load: what C's allocator kept of a build's temporaries is given back.

A cold build makes tens of thousands of temporaries beside what the graph keeps: every manifest's bytes, the
publication record's lists, the tables of dicts and sets that grow and are copied. Those larger than 512 bytes
come from C's allocator, and glibc's keeps the pages they leave for the process's next requests: resident
although nothing uses them. `release()` asks it to return them to the system (`malloc_trim`).

Fewer allocator arenas (`mallopt(M_ARENA_MAX)`) would keep ~3 MB fewer at 1x, but a thread that waits for an
arena's lock can wait holding the GIL: on the loaded 2-core machine the first query after a 50x start took
0.17-0.88 s (five starts, median 0.66 s) with two arenas against 0.16-0.38 s (four, median 0.27 s) without.

glibc's only: elsewhere (musl, macOS) `release` does nothing, and nothing depends on it but the figure.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys

__all__ = ["release"]


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library of this process, if it is glibc (the one with `malloc_trim`)."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: the C library the interpreter runs on
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


def release() -> bool:
    """Give the pages C's allocator holds free back to the system; whether it could (glibc only)."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
