"""Fair queuing in front of the executor (kernelindex.service.workers): clients with work waiting are served
in turn, so a polite client's one query is not queued behind a greedy client's backlog."""

from __future__ import annotations

import asyncio
import threading

from kernelindex.service.workers import CLIENT, Workers


async def _as(client: object, workers: Workers, job: object, name: object) -> object:
    CLIENT.set(client)  # a task's own context: as the query service sets it for each execution
    return await workers.run(job, name)  # type: ignore[arg-type]


def test_a_polite_client_is_served_in_its_turn_not_behind_a_backlog() -> None:
    async def scenario() -> list[str]:
        workers = Workers(1)
        order: list[str] = []
        gate, holding = threading.Event(), threading.Event()

        def job(name: str) -> str:
            if name == "greedy 0":
                holding.set()
                gate.wait(30)  # holds the one thread while the others queue
            order.append(name)
            return name

        tasks = [asyncio.ensure_future(_as("ip:greedy", workers, job, f"greedy {n}")) for n in range(6)]
        while not holding.is_set() or workers.busy < 6:
            await asyncio.sleep(0.001)
        tasks.append(asyncio.ensure_future(_as("ip:polite", workers, job, "polite")))
        await asyncio.sleep(0)
        tasks.append(asyncio.ensure_future(_as(None, workers, job, "server's own")))
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*tasks)
        workers.stop()
        return order

    order = asyncio.run(scenario())
    # The greedy client's first was running, its second had the turn; then the polite client's, the server's own.
    assert order[:4] == ["greedy 0", "greedy 1", "polite", "server's own"]
    assert order[4:] == ["greedy 2", "greedy 3", "greedy 4", "greedy 5"]  # each client's in the order it came


def test_stopping_lets_the_work_queued_before_it_finish() -> None:
    async def scenario() -> list[int]:
        workers = Workers(2)
        done: list[int] = []
        tasks = [asyncio.ensure_future(_as(n % 3, workers, done.append, n)) for n in range(9)]
        await asyncio.sleep(0)
        workers.stop()
        await asyncio.gather(*tasks)
        return done

    assert sorted(asyncio.run(scenario())) == list(range(9))
