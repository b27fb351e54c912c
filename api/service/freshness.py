"""Monotonic reads: a client sends the last commit it saw, and is never answered from an older one.

Every answer names the commit it came from (`extensions.registry.commit`). A client that sends it
back (`X-Registry-Min-Commit: <id>`, or `registry(minCommit: "<id>")`) is answered from that commit
or a newer one, whichever worker or replica takes the request, as read-your-writes tokens work in
databases. Commits are ordered by main's history:

- served already (the head is it or descends from it): answered at once;
- on main but not yet served here: this worker refreshes first (a head that fails validation is
  never served: then the answer is the retryable `COMMIT_NOT_YET_AVAILABLE`);
- unknown here (a replica that has not fetched it, a write still landing): the request waits for
  main to move, up to `KERNELINDEX_MIN_COMMIT_WAIT` seconds, then `COMMIT_NOT_YET_AVAILABLE`
  (HTTP 503 with `Retry-After`);
- known but not on main (a pull request's commit): `COMMIT_NOT_ON_MAIN` (400), never retryable.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from graphql import ArgumentNode, FieldNode, StringValueNode, VariableNode, parse, visit
from graphql.language import Visitor

from kernelindex import registry
from kernelindex.registry.snapshots import Snapshots

__all__ = ["HEADER", "await_commit", "wanted_commits"]

HEADER = "x-registry-min-commit"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_ARGUMENT = "minCommit"


def wanted_commits(headers: Mapping[str, str], query: str, variables: Mapping[str, Any]) -> list[str]:
    """The minimum commits a request asks for: its header, and `registry(minCommit:)` arguments
    (literals, or variables). Only documents that mention `minCommit` are parsed again here.

    Raises:
        kernelindex.registry.RegistryError (BadMinCommit): a value that is not a full commit id.
    """
    found = [headers[HEADER].strip()] if headers.get(HEADER, "").strip() else []
    if _ARGUMENT in query:
        try:
            document = parse(query)
        except Exception:  # the real parse reports it, with its code
            document = None
        if document is not None:
            collector = _MinCommits(variables)
            visit(document, collector)
            found.extend(collector.found)
    for commit in found:
        if not _COMMIT.fullmatch(commit):
            raise BadMinCommit(commit)
    return found


class BadMinCommit(registry.RegistryError, ValueError):
    """A minimum commit must be the full id an answer reported."""

    def __init__(self, value: str) -> None:
        super().__init__(
            f"a minimum commit is the full, lowercase 40-hex id of extensions.registry.commit (got {value[:60]!r})"
        )


class _MinCommits(Visitor):
    def __init__(self, variables: Mapping[str, Any]) -> None:
        super().__init__()
        self.variables = variables
        self.found: list[str] = []

    def enter_field(self, node: FieldNode, *_: Any) -> None:
        if node.name.value != "registry":
            return
        for argument in node.arguments or ():
            assert isinstance(argument, ArgumentNode)
            if argument.name.value != _ARGUMENT:
                continue
            value = argument.value
            if isinstance(value, StringValueNode):
                self.found.append(value.value)
            elif isinstance(value, VariableNode):
                given = self.variables.get(value.name.value)
                if isinstance(given, str):
                    self.found.append(given)


async def await_commit(
    snapshots: Snapshots,
    commit: str,
    refresh: Callable[[], Awaitable[object]],
    moved: asyncio.Condition,
    wait: float,
) -> None:
    """Return once `commit` is served (refreshing, or waiting for main to move, up to `wait` s).

    Raises:
        kernelindex.registry.errors.CommitNotYetAvailable: not served within `wait` seconds (retryable).
        kernelindex.registry.errors.CommitNotOnMain: a commit main's history does not hold.
    """
    started = time.monotonic()
    refreshed = False
    while True:
        standing = await anyio.to_thread.run_sync(snapshots.standing, commit)
        if standing == "served":
            return
        if standing == "off-main":
            raise registry.errors.CommitNotOnMain(commit, "a branch or tag reaches it, main does not")
        if standing == "on-main" and not refreshed:
            await refresh()
            refreshed = True  # once: a head that fails validation stays unserved however often we try
            continue
        left = wait - (time.monotonic() - started)
        if left <= 0:
            reason = (
                "main has it, but it is not served (see /healthz)" if standing == "on-main" else "main does not have it"
            )
            raise registry.errors.CommitNotYetAvailable(commit, wait, reason)
        # Look again at least every 250 ms: a poll of the ref may have moved main without telling us.
        async with moved:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(moved.wait(), timeout=min(left, 0.25))
        refreshed = False
