"""A serving process's memory between its loads: what C's allocator keeps after a build is given back.

A cold build makes tens of thousands of temporaries beside what the graph keeps: every manifest's bytes, the
publication record's lists, the tables of dicts and sets that grow and are copied. Those larger than 512 bytes
come from C's allocator, and glibc's keeps the pages they leave for the process's next requests: resident
although nothing uses them. `release()` asks it to return them to the system (`malloc_trim`); `limit_arenas()` keeps the
server's few threads on two allocator arenas rather than one per thread (each keeps its own free pages).

Both are glibc's: elsewhere (musl, macOS) they do nothing, and nothing depends on them but the figure.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys

__all__ = ["ARENAS", "limit_arenas", "release"]

ARENAS = 2
"""Allocator arenas for the whole process: the event loop's thread and one shared by the worker threads
(the load, the background preparation, queries run off the loop). They take the GIL to allocate Python
objects, so they seldom wait for an arena's lock."""

_M_ARENA_MAX = -8  # glibc's malloc.h


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library of this process, if it is glibc (the one with `malloc_trim` and `mallopt`)."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: the C library the interpreter runs on
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
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


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most `arenas` allocator arenas from now on (call it before threads start); whether it could."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_ARENA_MAX, arenas))
