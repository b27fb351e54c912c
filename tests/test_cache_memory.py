"""Caches hold what they say they hold: the memory a full cache keeps, measured by tracemalloc (the memory freed
when the cache is dropped), is within its byte limit, and its weight says at least that much.

orjson keeps the buffer it grew an answer in (a 75-byte body held 4 KB), zstandard the compression
bound of its input (7.9 KB of zstd held 73 KB), so a cache weighing `len(body)` held about 4x its limit.
"""

from __future__ import annotations

import gc
import hashlib
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from kernelindex.core import graphql_http as gh
from kernelindex.core.cache import REVALIDATE, ByteLRU, Representation
from kernelindex.core.compression import CODINGS
from kernelindex.service.feeds import Feed

LIMIT = 512 * 1024
COMMIT = "ab" * 20


@pytest.fixture
def traced() -> Iterator[Callable[[], int]]:
    """The memory Python's allocators hold now (bytes), every thread counted, after a collection."""
    tracemalloc.start()

    def now() -> int:
        gc.collect()
        return tracemalloc.get_traced_memory()[0]

    try:
        yield now
    finally:
        tracemalloc.stop()


def _answer(i: int, items: int) -> bytes:
    """A GraphQL answer as the query service serializes one (orjson), `items` runs long."""
    runs = [{"digest": "sha256:" + hashlib.sha256(f"{i}/{n}".encode()).hexdigest(), "rank": n} for n in range(items)]
    return orjson.dumps({"data": {"registry": {"runs": runs}}, "extensions": {"registry": {"commit": COMMIT}}})


def _held(traced: Callable[[], int], fill: Callable[[], Any]) -> tuple[int, Any]:
    """What `fill()`'s result holds: measured when it is made and again when it is dropped."""
    traced()
    made = fill()
    full = traced()
    weight: int = made.bytes
    del made
    return full - traced(), weight


def _responses(count: int, items: int, codings: bool) -> ByteLRU[tuple[str, ...], Representation]:
    """The response cache as the GraphQL endpoint fills it: one representation per distinct request, its
    coded forms made as clients ask (each adding what it holds, as `kernelindex.http.responses.send` does)."""
    cache: ByteLRU[tuple[str, ...], Representation] = ByteLRU(LIMIT, Representation.weight, bookkeeping=True)
    for i in range(count):
        headers = {"cache-control": REVALIDATE, "x-kernelindex-commit": COMMIT}
        item = Representation(_answer(i, items), "application/json", headers)
        item.key = (COMMIT, hashlib.sha256(str(i).encode()).hexdigest())
        cache.put(item.key, item)
        if codings:
            for coding in CODINGS:
                _, added = item.encodings.get(item.body, coding)
                cache.grow(item.key, item, added)
    return cache


@pytest.mark.parametrize(
    ("count", "items", "codings"),
    [
        (1_500, 0, False),  # the smallest answers: 113 bytes
        (1_000, 8, False),  # 864 bytes
        (100, 100, True),  # 9.6 KB, in every coding
        (60, 250, True),  # 24 KB, in every coding
    ],
    ids=["113B", "864B", "10KB-coded", "24KB-coded"],
)
def test_a_full_response_cache_holds_no_more_than_its_limit(
    traced: Callable[[], int], count: int, items: int, codings: bool
) -> None:
    held, weight = _held(traced, lambda: _responses(count, items, codings))
    assert weight <= LIMIT  # it filled (each case writes several times its limit) and evicted down to it
    assert weight > LIMIT * 0.9
    assert held <= LIMIT, f"holds {held:,} bytes for a limit of {LIMIT:,}"
    assert held <= weight  # what it says it weighs is at least what it holds
    # And not a wild guess: shared names and constants are weighed by each holder, which tiny answers feel most.
    assert held > weight * 0.5


def test_a_full_feed_cache_holds_no_more_than_its_limit(traced: Callable[[], int]) -> None:
    def fill() -> ByteLRU[tuple[object, ...], Feed]:
        cache: ByteLRU[tuple[object, ...], Feed] = ByteLRU(LIMIT, Feed.weight, bookkeeping=True)
        for i in range(3_000):
            cache.put(("feed", COMMIT, f"cohorts/{i}", False), Feed(_answer(i, 0), i))
        return cache

    held, weight = _held(traced, fill)
    assert held <= LIMIT and held <= weight


def test_registered_persisted_documents_hold_no_more_than_their_limit(
    traced: Callable[[], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document of 4-byte characters holds four times its length: weighed by its length, 8 MB of them held 32."""
    monkeypatch.setattr(gh, "PERSISTED_BYTES", LIMIT)

    def fill() -> ByteLRU[str, str]:
        persisted = gh.PersistedQueries()
        for i in range(2_000):
            query = "{ registry { commit { id } } } # " + chr(0x1F600 + i % 80) * 200 + str(i)
            digest = hashlib.sha256(query.encode()).hexdigest()
            operation = gh.Operation(query, {}, None, {"persistedQuery": {"version": 1, "sha256Hash": digest}})
            assert persisted.resolve(operation) == query
        return persisted._registered

    held, weight = _held(traced, fill)
    assert held <= LIMIT and held <= weight


class _Blobs:
    """Stands in for the object store: blob ids to bytes (StoredObjects reads nothing else of its snapshots)."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def store(self) -> _Blobs:
        return self

    def read_blob(self, oid: str) -> bytes:
        return self.blobs[oid]


@pytest.mark.parametrize(
    ("shape", "count"),
    [
        ("empty-objects", 100),  # the worst case per byte of text: `{},` is an empty dict and its list slot
        ("strings", 100),
        ("large-empty-objects", 20),  # over 16 KiB of text: weighed by walking the document
    ],
)
def test_parsed_manifests_hold_no_more_than_their_limit(traced: Callable[[], int], shape: str, count: int) -> None:
    """A manifest's parsed form holds many times its text (up to 21x for `[{},{},...]`); the cache of parsed
    manifests weighed `len` of nothing before (it was bounded by a count of 4,096, of up to 1 MiB each)."""
    from kernelindex.core.context import StoredObjects

    limit = 4 * 1024 * 1024
    per = 20_000 if shape.startswith("large") else 5_000  # each kept: under an eighth of the limit

    def document(i: int) -> bytes:
        if shape.endswith("empty-objects"):
            return b'{"kind":"BenchmarkRun","i":%d,"x":[' % i + b",".join([b"{}"] * (per // 3)) + b"]}"
        return orjson.dumps({"kind": "BenchmarkRun", "i": i, "x": [f"{i}-{n}" for n in range(per // 12)]})

    blobs = {f"{i:040x}": document(i) for i in range(count)}

    def fill() -> Any:
        objects = StoredObjects(_Blobs(blobs), parsed_bytes=limit)  # type: ignore[arg-type]
        for oid in blobs:
            assert objects.get(oid)["i"] == int(oid, 16)
        return objects._parsed

    held, weight = _held(traced, fill)
    assert held <= limit and held <= weight
    assert weight > limit * 0.7  # it filled (each case writes several times its limit) and evicted down to it
