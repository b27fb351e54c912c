"""Every answer of the head or a pinned commit is served from a cache, counted by the query service's executions
(never by time): the changes feed (`/feeds/changes.json`, pinned too) and the badges executed their query on every
request before (100-150 ms each for the feed). A head answer changes with the head; a pinned one does not.
"""

from __future__ import annotations

import pytest
from helpers import basic_scenario, commit_manifests, digest_of, make_operation
from server import Running, serve

from kernelindex import registry

pytestmark = pytest.mark.slow


def _executions(running: Running) -> int:
    return running.service.queries.executions


def _twice(running: Running, path: str) -> tuple[bytes, int]:
    """`path` asked twice: the body (the same both times) and the executions the two cost."""
    before = _executions(running)
    first = running.client.get(path)
    second = running.client.get(path)
    assert first.status_code == second.status_code == 200, (path, first.text)
    assert first.content == second.content and first.headers["etag"] == second.headers["etag"]
    return first.content, _executions(running) - before


def test_feeds_and_badges_execute_once_per_head(basic_store: registry.GitStore) -> None:
    first_head = basic_store.head()
    assert first_head is not None
    run = digest_of(basic_scenario().runs[0])
    implementation = digest_of(basic_scenario().implementations[0])
    paths = [
        "/feeds/changes.json",
        f"/feeds/changes.json?since={first_head[:8]}",
        f"/at/{first_head}/feeds/changes.json",
        f"/badges/runs/{run}.svg",
        f"/badges/implementations/{implementation}.svg",
        f"/at/{first_head}/badges/runs/{run}.svg",
    ]
    with serve(basic_store.path) as running:
        before = {}
        for path in paths:
            body, executed = _twice(running, path)
            assert executed == 1, f"{path}: {executed} executions for two requests"
            before[path] = body
        # A second revalidation is a 304 from the cache, still no execution.
        etag = running.client.get(paths[0]).headers["etag"]
        count = _executions(running)
        assert running.client.get(paths[0], headers={"if-none-match": etag}).status_code == 304
        assert _executions(running) == count

        second_head = commit_manifests(basic_store, [make_operation("later-op")], subject="Add later-op")
        running.service.refresh()
        assert running.service.snapshots.head.commit == second_head
        after = {path: _twice(running, path) for path in paths}
        head_feed = after["/feeds/changes.json"][0]
        assert second_head.encode() in head_feed and head_feed != before["/feeds/changes.json"]  # it moved
        assert after[f"/at/{first_head}/feeds/changes.json"][0] == before[f"/at/{first_head}/feeds/changes.json"]
        assert all(executed == 1 for _, executed in after.values())  # once again for the new head, no more
