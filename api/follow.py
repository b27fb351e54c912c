"""Every worker follows main: a refresh when main's ref changes on disk, and a poll as the fallback.

`kernelindex serve --workers N` runs N processes, each with its own snapshots. The refresh hook
reaches one of them; a commit (or a `git fetch` of a mirror) moves `refs/heads/main` for all of
them. So each worker watches the ref itself: inotify (through `watchfiles`, which uvicorn's
reloader uses too) tells it within milliseconds, whoever moved main. The poll every
`KERNELINDEX_POLL_SECONDS` stays, for file systems without change notification and as a safety net.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import watchfiles

import registry

__all__ = ["follow_main"]

log = logging.getLogger("kernelindex")

_DEBOUNCE_MS = 20  # git writes main.lock then renames it: one burst, one refresh
_STEP_MS = 10


def _ref_files(git_dir: Path) -> set[str]:
    return {str(git_dir / "refs" / "heads" / "main"), str(git_dir / "packed-refs")}


async def follow_main(
    git_dir: Path,
    refresh: Callable[[], Awaitable[object]],
    poll_seconds: float,
    *,
    watch: bool = True,
    ready: Callable[[], bool] = lambda: True,
) -> None:
    """Run until cancelled: call `refresh` when main's ref changes, and every `poll_seconds`."""
    tasks = [asyncio.create_task(_poll(refresh, poll_seconds, ready))]
    if watch:
        tasks.append(asyncio.create_task(_watch(git_dir, refresh, ready)))
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


async def _poll(refresh: Callable[[], Awaitable[object]], seconds: float, ready: Callable[[], bool]) -> None:
    while True:
        await asyncio.sleep(seconds)
        if ready():
            await _safely(refresh)


async def _watch(git_dir: Path, refresh: Callable[[], Awaitable[object]], ready: Callable[[], bool]) -> None:
    git_dir = git_dir.resolve()
    wanted = _ref_files(git_dir)
    folders = [p for p in (git_dir, git_dir / "refs" / "heads") if p.is_dir()]
    try:
        async for _ in watchfiles.awatch(
            *folders,
            watch_filter=lambda _change, path: path in wanted,
            recursive=False,
            debounce=_DEBOUNCE_MS,
            step=_STEP_MS,
            ignore_permission_denied=True,
        ):
            if ready():
                await _safely(refresh)
    except (OSError, RuntimeError) as exc:  # no change notification here: the poll carries on alone
        log.warning("kernelindex: cannot watch %s (%s); following main by polling only", git_dir, exc)


async def _safely(refresh: Callable[[], Awaitable[object]]) -> None:
    try:
        await refresh()
    except registry.RegistryError as exc:
        log.warning("kernelindex: refresh failed: %s", exc)
