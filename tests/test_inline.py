"""kernelindex.service.queries.QueryService never executes on the caller's event loop: every operation
runs in the executor's threads, so the loop serves other tasks while it runs, with the same answer as before."""

from __future__ import annotations

import asyncio
import threading

import anyio
import pytest
from helpers import EMBEDDED_REPO

from kernelindex.core.context import StoredObjects
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service.queries import QueryService
from kernelindex.service.workers import Workers

QUERY = "{ runs(first: 2) { totalCount edges { node { digest } } } }"
SORTING = "{ runs(first: 1, order: LOWEST_VALUE) { edges { node { digest } } } }"


@pytest.fixture(scope="module")
def snapshots() -> Snapshots:
    found = Snapshots(EMBEDDED_REPO)
    found.load()
    return found


@pytest.mark.parametrize("query", [QUERY, SORTING])
def test_the_loop_serves_other_tasks_while_an_operation_executes(snapshots: Snapshots, query: str) -> None:
    """The reproduction: with nothing else in flight, an operation ran on the loop, and a task that was ready
    before it began ran only after it ended."""
    service = QueryService(snapshots, StoredObjects(snapshots), "")

    async def ask() -> tuple[bool, set[str]]:
        ran = asyncio.Event()

        async def other() -> None:
            ran.set()

        task = asyncio.ensure_future(other())  # ready before the answer starts
        threads: set[str] = set()
        original = service.workers.run

        async def spy(function: object, *args: object) -> object:
            def where() -> object:
                threads.add(threading.current_thread().name)
                return function(*args)  # type: ignore[operator]

            return await original(where)

        service.workers.run = spy  # type: ignore[method-assign,assignment]
        answer = await service.answer(query)
        assert not answer.errors, answer.errors
        seen = ran.is_set()
        await task
        return seen, threads

    seen, threads = anyio.run(ask)
    assert seen  # the other task ran while the operation executed
    assert threads == {"kernelindex executor"}
    assert threading.current_thread().name not in threads


def test_answers_are_the_same_on_any_loop(snapshots: Snapshots) -> None:
    """One service answers on one event loop after another (its threads are not bound to a loop)."""
    service = QueryService(snapshots, StoredObjects(snapshots), "")
    first = anyio.run(service.answer, QUERY).body
    assert anyio.run(service.answer, QUERY).body == first


def test_workers_hand_back_results_and_errors_and_skip_work_nobody_waits_for() -> None:
    workers = Workers(1)
    started = threading.Event()
    release = threading.Event()
    calls: list[str] = []

    def block() -> str:
        started.set()
        release.wait(30)
        return "blocked"

    def record(name: str) -> str:
        calls.append(name)
        return name

    def fail() -> None:
        raise ValueError("from the thread")

    async def scenario() -> None:
        blocking = asyncio.ensure_future(workers.run(block))
        await asyncio.to_thread(started.wait, 30)
        waiting = asyncio.ensure_future(workers.run(record, "cancelled"))  # queued behind the blocked one
        await asyncio.sleep(0)
        waiting.cancel()
        release.set()
        assert await blocking == "blocked"
        assert await workers.run(record, "kept") == "kept"
        with pytest.raises(ValueError, match="from the thread"):
            await workers.run(fail)
        with pytest.raises(asyncio.CancelledError):
            await waiting

    anyio.run(scenario)
    assert calls == ["kept"]  # the cancelled work never ran
    workers.stop()
    with pytest.raises(ValueError, match="at least 1"):
        Workers(0)
