"""Following main never stops on an error: a check that fails for any reason is retried with a
backoff and logged once per kind of failure, its recovery once; a follower that stops anyway is logged at once;
`/healthz` says `degraded` while main goes unchecked. The end-to-end test exhausts a real server's file
descriptors (its RLIMIT_NOFILE lowered to the descriptors it holds) while main moves."""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from helpers import TEST_TIME, basic_scenario, commit_manifests, make_operation
from load import server_process

from kernelindex import registry
from kernelindex.service.follow import Following, follow_main

EMFILE = OSError(errno.EMFILE, "Too many open files")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "kernelindex"]


def test_each_kind_of_failure_is_logged_once_and_the_recovery_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "kernelindex")
    clock = Clock()
    following = Following(2.0, clock)
    for _ in range(50):
        following.failed(EMFILE)
    following.failed(registry.RegistryError("main is unreadable"))
    following.failed(OSError(errno.ENOENT, "No such file or directory"))  # another errno: another kind
    for _ in range(50):
        following.failed(EMFILE)
    clock.now += 30
    following.succeeded()
    lines = _warnings(caplog)
    assert len(lines) == 4, lines
    assert "[Errno 24] Too many open files" in lines[0]
    assert "main is unreadable" in lines[1]
    assert "[Errno 2] No such file or directory" in lines[2]
    assert lines[3] == "kernelindex: following main again after 102 failed check(s) over 30.0 s"
    following.failed(EMFILE)  # a new failure after the recovery is news again
    assert len(_warnings(caplog)) == 5


def test_an_unexpected_failure_is_logged_with_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "kernelindex")
    following = Following(2.0, Clock())
    empty: dict[str, int] = {}
    for _ in range(3):
        try:
            empty["missing"]  # a real exception, with a real traceback
        except KeyError as exc:
            following.failed(exc)
    records = [record for record in caplog.records if record.name == "kernelindex"]
    assert len(records) == 1
    assert records[0].exc_info is not None and records[0].exc_info[0] is KeyError


def test_the_backoff_doubles_from_a_tenth_of_a_second_up_to_the_poll_interval() -> None:
    following = Following(2.0, Clock())
    assert following.next_check() == 2.0
    delays = []
    for _ in range(7):
        following.failed(EMFILE)
        delays.append(following.next_check())
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    following.succeeded()
    assert following.next_check() == 2.0


def test_main_is_stale_past_two_poll_intervals_and_a_second() -> None:
    """At 2 s polls, 5 s without a completed check is still followed; a moment more is stale."""
    clock = Clock()
    following = Following(2.0, clock)
    following.running = True
    clock.now += 5.0
    assert following.stale() is None
    following.failed(EMFILE)
    clock.now += 0.1
    reason = following.stale()
    assert reason == (
        "main not checked for 5.1 s (every 2 s expected) (1 failed check(s), the last: OSError: [Errno 24] Too many "
        "open files)"
    )
    following.succeeded()
    assert following.stale() is None
    following.stopped = "RuntimeError: boom"
    assert following.stale() == "not following main: the follower stopped (RuntimeError: boom)"


def test_a_follower_not_running_is_stale() -> None:
    assert Following(2.0, Clock()).stale() == "not following main: the follower is not running"


def test_the_poll_survives_any_error_of_a_refresh(tmp_path: Path) -> None:
    """The reproduction: a refresh raising OSError (EMFILE) once ended the poll, and with it all following."""
    outcomes: list[BaseException | None] = [EMFILE, EMFILE, KeyError("bug"), EMFILE, None, None]
    calls: list[int] = []

    async def refresh() -> None:
        calls.append(1)
        outcome = outcomes[len(calls) - 1] if len(calls) <= len(outcomes) else None
        if outcome is not None:
            raise outcome

    async def follow() -> None:
        task = asyncio.create_task(follow_main(tmp_path, refresh, 0.01, watch=False))
        while len(calls) <= len(outcomes):  # every failure, then checks that work
            await asyncio.sleep(0.01)
            assert not task.done(), f"the follower stopped after {len(calls)} check(s): {task}"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(follow())


def test_a_follower_records_failures_and_recovery(tmp_path: Path) -> None:
    failing = True

    async def refresh() -> None:
        if failing:
            raise EMFILE

    async def follow() -> None:
        nonlocal failing
        following = Following(0.01)
        task = asyncio.create_task(follow_main(tmp_path, refresh, 0.01, watch=False, following=following))
        while following.failures < 3:
            await asyncio.sleep(0.01)
        assert following.running and following.error == "OSError: [Errno 24] Too many open files"
        failing = False
        while following.failures:
            await asyncio.sleep(0.01)
        assert following.error is None
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not following.running and following.stopped is None  # cancelled as asked: not a fault

    asyncio.run(follow())


@pytest.fixture
def repo(store: registry.GitStore) -> Path:
    commit_manifests(store, basic_scenario().docs, TEST_TIME)
    return store.path


def _lowest_free_descriptor(pid: int) -> int:
    held = {int(name.name) for name in Path(f"/proc/{pid}/fd").iterdir()}
    return next(number for number in range(len(held) + 1) if number not in held)


@contextmanager
def _descriptors_exhausted(pid: int) -> Iterator[None]:
    """While inside: process `pid` can open no descriptor (its soft RLIMIT_NOFILE at the lowest free number),
    as when a burst of connections has taken every one; those it holds keep working."""
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (_lowest_free_descriptor(pid), hard))
    try:
        yield
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))


def _health_until(client: httpx.Client, wanted: str, timeout: float = 120.0) -> dict[str, object]:
    """/healthz, asked every 0.2 s (which keeps the one connection alive), until its status is `wanted`."""
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, object] = client.get("/healthz").json()
        if body["status"] == wanted:
            return body
        assert time.monotonic() < deadline, f"/healthz never said {wanted!r}: {body}"
        time.sleep(0.2)


@pytest.mark.slow
def test_the_follower_recovers_after_descriptor_exhaustion(
    repo: Path, store: registry.GitStore, tmp_path: Path
) -> None:
    """Main moves while the server can open no file: `/healthz` says degraded (main unchecked, why) at the old
    commit; once descriptors are free again the server follows main by itself (no hook, no restart), says ok at
    the new commit, and logged one line per kind of failure, not one per poll."""
    log = tmp_path / "server.log"
    with (
        server_process(repo, environ={"KERNELINDEX_POLL_SECONDS": "0.2"}, log=log) as server,
        # One connection, opened before the exhaustion and kept alive: the server accepts no other meanwhile.
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        before = _health_until(client, "ok")
        with _descriptors_exhausted(server.pid):
            moved = commit_manifests(store, [make_operation("landed-while-exhausted")], TEST_TIME + 1)
            degraded = _health_until(client, "degraded")
            assert degraded["serving"] == before["serving"] != moved
            assert isinstance(degraded["reason"], str) and degraded["reason"].startswith("main not checked for")
            assert "Too many open files" in degraded["reason"]
            failing = degraded["following"]
            assert isinstance(failing, dict) and failing["running"] is True and failing["failures"] > 1
        recovered = _health_until(client, "ok")
    assert recovered["serving"] == moved
    assert recovered["reason"] is None
    following = recovered["following"]
    assert isinstance(following, dict) and "lastCheckSecondsAgo" in following
    assert {key: value for key, value in following.items() if key != "lastCheckSecondsAgo"} == {
        "running": True,
        "watching": True,
        "pollSeconds": 0.2,
        "failures": 0,
        "error": None,
    }
    said = log.read_text().splitlines()
    failures = [line for line in said if "cannot check main" in line]
    assert failures, said
    kinds = [line.split("(", 1)[1].split(":", 1)[0] for line in failures]
    assert len(kinds) == len(set(kinds)), failures  # one line per kind of failure
    assert len(failures) < failing["failures"]
    assert sum("following main again after" in line for line in said) == 1, said
