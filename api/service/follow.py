"""Every worker follows main: a refresh when main's ref changes on disk, and a poll as the fallback.

`kernelindex serve --workers N` runs N processes, each with its own snapshots. The refresh hook
reaches one of them; a commit (or a `git fetch` of a mirror) moves `refs/heads/main` for all of
them. So each worker watches the ref itself: inotify tells it within milliseconds, whoever moved main.
The poll every `KERNELINDEX_POLL_SECONDS` stays, for systems without inotify and as a safety net.

The inotify descriptor is read by the event loop itself when the kernel has news (`add_reader`): no
thread. `watchfiles` did this in a thread that woke every 10 ms (its `step`) and took the GIL each time
to check for signals and its stop event: 109 context switches a second in an idle server (10 with this),
and each wake that came while a request ran made the event loop wait for the GIL to come back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from kernelindex import registry

__all__ = ["follow_main"]

log = logging.getLogger("kernelindex")

_DEBOUNCE_SECONDS = 0.02  # git writes main.lock then renames it: one burst, one refresh


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
        from inotify_simple import INotify, flags  # Linux only: elsewhere the import or the first call fails

        # A ref is replaced by a rename (MOVED_TO), written in place by some tools (CLOSE_WRITE), or made or
        # removed (packing loose refs into packed-refs deletes refs/heads/main).
        mask = flags.MOVED_TO | flags.CLOSE_WRITE | flags.CREATE | flags.DELETE
        notify = INotify(nonblocking=True)
    except (ImportError, AttributeError, OSError) as exc:
        log.warning("kernelindex: cannot watch %s (%s); following main by polling only", git_dir, exc)
        return
    changed = asyncio.Event()
    loop = asyncio.get_running_loop()
    try:
        folder_of = {notify.add_watch(folder, mask): folder for folder in folders}

        def readable() -> None:
            try:
                events = notify.read(timeout=0)
            except OSError as exc:  # the descriptor broke: stop reading it (the poll carries on) rather than spin
                loop.remove_reader(notify.fileno())
                log.warning("kernelindex: stopped watching %s (%s); following main by polling only", git_dir, exc)
                return
            for event in events:
                folder = folder_of.get(event.wd)
                # An overflowed queue (no folder) may have dropped the one event we wanted: refresh anyway.
                if folder is None or str(folder / event.name) in wanted:
                    changed.set()

        loop.add_reader(notify.fileno(), readable)
    except OSError as exc:  # too many watches, a folder gone: the poll carries on alone
        notify.close()
        log.warning("kernelindex: cannot watch %s (%s); following main by polling only", git_dir, exc)
        return
    try:
        while True:
            await changed.wait()
            await asyncio.sleep(_DEBOUNCE_SECONDS)
            changed.clear()  # what landed meanwhile is in this refresh; what lands during it, in the next
            if ready():
                await _safely(refresh)
    finally:
        loop.remove_reader(notify.fileno())
        notify.close()


async def _safely(refresh: Callable[[], Awaitable[object]]) -> None:
    try:
        await refresh()
    except registry.RegistryError as exc:
        log.warning("kernelindex: refresh failed: %s", exc)
