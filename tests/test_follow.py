"""One registry, one present: every worker of `kernelindex serve --workers N` moves to a new commit
of main together, and a client that sends the last commit it saw never goes back in time.
Real server processes on loopback, real commits landing while they serve."""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pygit2
import pytest
from helpers import TEST_TIME, basic_scenario, commit_manifests, make_operation
from load import Server, server_process

from kernelindex import registry

pytestmark = pytest.mark.slow

HEADER = "X-Registry-Min-Commit"
SEEN = "{ commit { id } }"


def _fresh_client() -> httpx.Client:
    """No keep-alive: every request is a new connection, so the kernel spreads them over the workers."""
    return httpx.Client(timeout=30, limits=httpx.Limits(max_keepalive_connections=0))


def _workers(server: Server, count: int, client: httpx.Client, timeout: float = 120.0) -> dict[int, str]:
    """worker pid -> the commit it serves, once `count` distinct workers have answered."""
    seen: dict[int, str] = {}
    deadline = time.monotonic() + timeout
    while len(seen) < count:
        body = client.get(f"{server.url}/healthz").json()
        if body.get("serving"):
            seen[body["worker"]] = body["serving"]
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(seen)} of {count} workers answered")
    return seen


@pytest.fixture
def repo(store: registry.GitStore) -> Path:
    commit_manifests(store, basic_scenario().docs, TEST_TIME)
    return store.path


def _propagation(server: Server, store: registry.GitStore, workers: int, serial: int) -> float:
    """Seconds from a commit on main (and one hook call) until every worker serves it."""
    with _fresh_client() as client:
        _workers(server, workers, client)
        new = commit_manifests(store, [make_operation(f"landed-{serial}")], TEST_TIME + serial)
        started = time.monotonic()
        client.post(f"{server.url}/hooks/refresh")
        current: dict[int, str] = {}
        while len(current) < workers or any(commit != new for commit in current.values()):
            body = client.get(f"{server.url}/healthz").json()
            current[body["worker"]] = body["serving"]
            assert time.monotonic() - started < 10, f"workers still behind after 10 s: {current}"
        return time.monotonic() - started


@pytest.mark.parametrize("workers", [2, 4])
def test_one_hook_call_moves_every_worker(repo: Path, store: registry.GitStore, workers: int) -> None:
    """Polling is off (an hour): only following main's ref can move the workers the hook missed."""
    with server_process(repo, args=["--workers", str(workers)]) as server:
        lags = [_propagation(server, store, workers, serial) for serial in range(1, 6)]
    line = (
        f"{workers} workers: every worker on the new commit {statistics.median(lags) * 1000:.0f} ms (median) and "
        f"{max(lags) * 1000:.0f} ms (max) after the commit, over {len(lags)} commits"
    )
    print(line)
    assert max(lags) < 10


def _writer(store: registry.GitStore, stop: threading.Event, landed: list[str]) -> None:
    serial = 0
    while not stop.is_set():
        serial += 1
        landed.append(commit_manifests(store, [make_operation(f"burst-{serial}")], TEST_TIME + 1000 + serial))
        time.sleep(0.02)


def test_a_client_that_sends_its_last_commit_never_goes_back(repo: Path, store: registry.GitStore) -> None:
    """1,000 requests over fresh connections to 2 workers while commits land every ~20 ms: each answer's
    commit is at or after the one the client sent (main's history orders them)."""
    stop = threading.Event()
    landed: list[str] = []
    with server_process(repo, args=["--workers", "2"]) as server, _fresh_client() as client:
        _workers(server, 2, client)
        writer = threading.Thread(target=_writer, args=(store, stop, landed))
        writer.start()
        try:
            last: str | None = None
            answers = []
            for _ in range(1000):
                headers = {HEADER: last} if last else {}
                response = client.post(f"{server.url}/graphql", json={"query": SEEN}, headers=headers)
                assert response.status_code == 200, response.text
                commit = response.json()["extensions"]["registry"]["commit"]
                assert response.json()["data"]["commit"]["id"] == commit
                answers.append(commit)
                last = commit
        finally:
            stop.set()
            writer.join()
    order = {commit: position for position, commit in enumerate(reversed(store.first_parents(store.head() or "")))}
    positions = [order[commit] for commit in answers]
    assert all(later >= earlier for earlier, later in itertools.pairwise(positions))
    assert len(set(answers)) > 5, "commits landed while the client read"
    print(f"monotonic reads: 1,000 answers over {len(set(answers))} commits, {len(landed)} commits landed")


def _dangling_commit(store: registry.GitStore) -> str:
    """A commit object whose parent is main, that no ref names yet (a write about to land)."""
    repo = pygit2.Repository(str(store.git_dir))
    head = store.head()
    assert head is not None
    parent = repo.get(head)
    assert isinstance(parent, pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    data = registry.stored_json(make_operation("arriving"))
    manifest = registry.load_manifest(data, "arriving.json", "json")
    index.add(pygit2.IndexEntry(manifest.path, repo.create_blob(manifest.stored_bytes()), pygit2.enums.FileMode.BLOB))
    person = pygit2.Signature("Test", "test@example.com", TEST_TIME + 50, 0)
    return str(repo.create_commit(None, person, person, "Arriving\n\nSource: test\n", index.write_tree(repo), [head]))


@pytest.fixture
def waiting_server(repo: Path) -> Iterator[Server]:
    with server_process(repo, environ={"KERNELINDEX_MIN_COMMIT_WAIT": "3"}) as server:
        yield server


def test_a_minimum_commit_on_its_way_is_waited_for_and_one_never_coming_is_retryable(
    waiting_server: Server, store: registry.GitStore
) -> None:
    url = waiting_server.url
    arriving = _dangling_commit(store)
    outcome: dict[str, httpx.Response] = {}

    def ask() -> None:
        with httpx.Client(timeout=30) as client:
            outcome["header"] = client.post(f"{url}/graphql", json={"query": SEEN}, headers={HEADER: arriving})

    asking = threading.Thread(target=ask)
    started = time.monotonic()
    asking.start()
    time.sleep(0.5)  # the request is waiting now; then main moves (no hook call)
    head = store.head()
    assert head is not None and store._compare_and_swap(registry.store.MAIN, head, arriving)
    asking.join()
    waited = time.monotonic() - started
    answered = outcome["header"]
    assert answered.status_code == 200, answered.text
    assert answered.json()["extensions"]["registry"]["commit"] == arriving and waited < 3
    never = "0123456789abcdef" * 2 + "01234567"
    with httpx.Client(timeout=30) as client:
        missing = client.post(f"{url}/graphql", json={"query": SEEN}, headers={HEADER: never})
        argument = client.post(
            f"{url}/graphql", json={"query": '{ registry(minCommit: "' + never + '") { commit { id } } }'}
        )
        by_variable = client.post(
            f"{url}/graphql",
            json={
                "query": "query($c: String) { registry(minCommit: $c) { commit { id } } }",
                "variables": {"c": arriving},
            },
        )
    for response in (missing, argument):
        assert response.status_code == 503 and response.headers["retry-after"] == "1"
        assert response.json()["errors"][0]["extensions"]["code"] == "COMMIT_NOT_YET_AVAILABLE"
    assert by_variable.status_code == 200 and by_variable.json()["data"]["registry"]["commit"]["id"] == arriving
    print(f"a minimum commit that landed 0.5 s after the request was answered after {waited * 1000:.0f} ms")


def test_a_commit_off_main_or_not_an_id_is_refused_at_once(waiting_server: Server, store: registry.GitStore) -> None:
    head = store.head()
    assert head is not None
    side = commit_manifests(store, [make_operation("side")], TEST_TIME + 70)  # on main for a moment...
    assert store._compare_and_swap(registry.store.MAIN, side, head)  # ...then only a branch keeps it
    store.create_branch("refs/heads/pr", side)
    with httpx.Client(timeout=30) as client:
        started = time.monotonic()
        off_main = client.post(f"{waiting_server.url}/graphql", json={"query": SEEN}, headers={HEADER: side})
        elapsed = time.monotonic() - started
        short = client.post(f"{waiting_server.url}/graphql", json={"query": SEEN}, headers={HEADER: side[:12]})
        served = client.post(f"{waiting_server.url}/graphql", json={"query": SEEN}, headers={HEADER: head})
    assert off_main.status_code == 400 and off_main.json()["errors"][0]["extensions"]["code"] == "COMMIT_NOT_ON_MAIN"
    assert elapsed < 3  # refused, not waited for
    assert short.status_code == 400 and short.json()["errors"][0]["extensions"]["code"] == "BAD_MIN_COMMIT"
    assert served.status_code == 200 and served.json()["extensions"]["registry"]["commit"] == head
