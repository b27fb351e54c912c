"""kernelindex.service.queries.QueryService executes on the caller's event loop when it says it has nothing else to do (`quiet`),
and in a worker thread otherwise, with the same answer either way."""

from __future__ import annotations

import threading

import anyio
import pytest
from helpers import EMBEDDED_REPO

from kernelindex.core.context import StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service.queries import QueryService

QUERY = "{ runs(first: 2) { totalCount edges { node { digest } } } }"


@pytest.fixture(scope="module")
def snapshots() -> Snapshots:
    found = Snapshots(EMBEDDED_REPO)
    found.load()
    return found


def _workers() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate() if t.name == "AnyIO worker thread"}


@pytest.mark.parametrize("quiet", [True, False])
def test_a_quiet_loop_executes_inline_and_a_busy_one_in_a_worker_thread(snapshots: Snapshots, quiet: bool) -> None:
    service = QueryService(snapshots, StoredObjects(snapshots), "", quiet=lambda: quiet)
    plain = QueryService(snapshots, StoredObjects(snapshots), "")

    async def ask() -> tuple[bytes, set[int], bytes]:
        before = _workers()
        body = (await service.answer(QUERY)).body
        started = _workers() - before  # each event loop has its own workers: a fresh loop starts one to use one
        return body, started, (await plain.answer(QUERY)).body

    body, started, expected = anyio.run(ask)
    assert body == expected
    assert bool(started) is not quiet
