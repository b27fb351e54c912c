"""Every worker follows main: a refresh when main's ref changes on disk, and a poll as the fallback.

`kernelindex serve --workers N` runs N processes, each with its own snapshots. The refresh hook
reaches one of them; a commit (or a `git fetch` of a mirror) moves `refs/heads/main` for all of
them. So each worker watches the ref itself: inotify tells it within milliseconds, whoever moved main.
The poll every `KERNELINDEX_POLL_SECONDS` stays, for systems without inotify and as a safety net.

The inotify descriptor is read by the event loop itself when the kernel has news (`add_reader`): no
thread. `watchfiles` did this in a thread that woke every 10 ms (its `step`) and took the GIL each time
to check for signals and its stop event: 109 context switches a second in an idle server (10 with this),
and each wake that came while a request ran made the event loop wait for the GIL to come back.

Following never stops on an error (a moment of `OSError: Too many open files` from `store.head()` once
killed the poll and the watcher with it, and `/healthz` said "ok" at the old commit forever). A check that fails
for any reason is retried with a backoff (0.1 s, doubling, up to the poll interval); each kind of failure is
logged once while it lasts, and the recovery once. `Following` holds what `/healthz` says of it: main is
*stale* when no check completed for `stale_after` seconds (two poll intervals and a second), or when the
follower stopped.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from kernelindex import registry

__all__ = ["FIRST_RETRY_SECONDS", "STALE_SLACK_SECONDS", "Following", "follow_main"]

log = logging.getLogger("kernelindex")

_DEBOUNCE_SECONDS = 0.02  # git writes main.lock then renames it: one burst, one refresh
FIRST_RETRY_SECONDS = 0.1
"""After a failed check, the next is this soon; each further failure doubles it, up to the poll interval."""
STALE_SLACK_SECONDS = 1.0
"""Main is stale when no check completed for two poll intervals and this long (a slow refresh, a busy machine)."""


class Following:
    """How this process follows main: when a check of main last completed, what failed since, whether the
    follower runs. Written by the follower on the event loop, read by `/healthz` on the same loop."""

    def __init__(self, poll_seconds: float, clock: Callable[[], float] = time.monotonic, subject: str = "main") -> None:
        self.subject = subject  # what is followed, as the log says it
        self.poll_seconds = poll_seconds
        self.stale_after = 2 * poll_seconds + STALE_SLACK_SECONDS
        self._clock = clock
        self.checked = clock()  # the last completed check (or the start: nothing was stale before it)
        self.failures = 0  # checks failed since the last that completed
        self.error: str | None = None  # the last failure, while checks fail
        self.running = False
        self.watching = False  # main's ref watched through inotify (otherwise: polled only)
        self.stopped: str | None = None  # why the follower ended, if it did
        self._kinds: set[str] = set()  # kinds of failure logged since the last completed check
        self._failing_since = 0.0

    def succeeded(self) -> None:
        """A check of main completed: log the recovery if checks were failing."""
        now = self._clock()
        if self.failures:
            log.warning(
                "kernelindex: following %s again after %d failed check(s) over %.1f s",
                self.subject,
                self.failures,
                now - self._failing_since,
            )
        self.checked = now
        self.failures = 0
        self.error = None
        self._kinds.clear()

    def idle(self) -> None:
        """Nothing to follow yet (the registry is loading): nothing goes stale meanwhile."""
        self.checked = self._clock()

    def failed(self, exc: Exception) -> None:
        """A check of main failed: logged if this kind of failure was not already, since the last success."""
        if not self.failures:
            self._failing_since = self._clock()
        self.failures += 1
        self.error = f"{type(exc).__name__}: {exc}"
        kind = failure_kind(exc)
        if kind in self._kinds:
            return
        self._kinds.add(kind)
        expected = isinstance(exc, (registry.RegistryError, OSError))  # a state of the machine, not a bug
        log.warning(
            "kernelindex: cannot check %s (%s); retrying, and logging no other failure of this kind until it works",
            self.subject,
            self.error,
            exc_info=None if expected else exc,
        )

    def next_check(self) -> float:
        """Seconds until the poll checks main again: the interval, or sooner while checks fail (the backoff)."""
        if not self.failures:
            return self.poll_seconds
        backoff: float = FIRST_RETRY_SECONDS * 2.0 ** min(self.failures - 1, 30)
        return min(self.poll_seconds, backoff)

    def stale(self) -> str | None:
        """Why what is served may be behind main without anyone knowing (None: followed)."""
        if self.stopped is not None:
            return f"not following main: the follower stopped ({self.stopped})"
        if not self.running:
            return "not following main: the follower is not running"
        age = self._clock() - self.checked
        if age <= self.stale_after:
            return None
        why = f" ({self.failures} failed check(s), the last: {self.error})" if self.failures else ""
        return f"main not checked for {age:.1f} s (every {self.poll_seconds:g} s expected){why}"

    def report(self) -> dict[str, object]:
        """What `/healthz` shows under `following`."""
        return {
            "running": self.running and self.stopped is None,
            "watching": self.watching,
            "pollSeconds": self.poll_seconds,
            "lastCheckSecondsAgo": round(self._clock() - self.checked, 1),
            "failures": self.failures,
            "error": self.error or self.stopped,
        }


def failure_kind(exc: BaseException) -> str:
    """What makes two failures the same kind: the exception's class, and an OS error's errno.

    >>> failure_kind(OSError(errno.EMFILE, "Too many open files")), failure_kind(KeyError("x"))
    ('OSError/EMFILE', 'KeyError')
    """
    kind = type(exc).__qualname__
    number = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    return f"{kind}/{errno.errorcode.get(number, number)}" if number is not None else kind


def _ref_files(git_dir: Path) -> set[str]:
    return {str(git_dir / "refs" / "heads" / "main"), str(git_dir / "packed-refs")}


async def follow_main(
    git_dir: Path,
    refresh: Callable[[], Awaitable[object]],
    poll_seconds: float,
    *,
    watch: bool = True,
    ready: Callable[[], bool] = lambda: True,
    following: Following | None = None,
) -> None:
    """Run until cancelled: call `refresh` when main's ref changes, and every `poll_seconds` (sooner while
    checks fail); `following` records how it goes (and, when given, sets the interval: its `poll_seconds`). A
    watcher that fails is logged at once, and polling carries on alone."""
    state = following or Following(poll_seconds)
    state.running = True
    watcher = asyncio.create_task(_watch(git_dir, refresh, ready, state)) if watch else None
    if watcher is not None:
        watcher.add_done_callback(_watcher_ended(state))
    try:
        await _poll(refresh, ready, state)
    finally:
        state.running = False
        if watcher is not None:
            watcher.cancel()


def _watcher_ended(state: Following) -> Callable[[asyncio.Task[None]], None]:
    def ended(task: asyncio.Task[None]) -> None:
        state.watching = False
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("kernelindex: stopped watching main; following it by polling only", exc_info=exc)

    return ended


async def _poll(refresh: Callable[[], Awaitable[object]], ready: Callable[[], bool], state: Following) -> None:
    while True:
        await asyncio.sleep(state.next_check())
        if ready():
            await _safely(refresh, state)
        else:
            state.idle()


async def _watch(
    git_dir: Path, refresh: Callable[[], Awaitable[object]], ready: Callable[[], bool], state: Following
) -> None:
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
                state.watching = False
                log.warning("kernelindex: stopped watching %s (%s); following main by polling only", git_dir, exc)
                return
            for event in events:
                folder = folder_of.get(event.wd)
                # An overflowed queue (no folder) may have dropped the one event we wanted: refresh anyway.
                if folder is None or str(folder / event.name) in wanted:
                    changed.set()

        loop.add_reader(notify.fileno(), readable)
        state.watching = True
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
                await _safely(refresh, state)
    finally:
        loop.remove_reader(notify.fileno())
        notify.close()


async def _safely(refresh: Callable[[], Awaitable[object]], state: Following) -> None:
    """One check of main: whatever it raises is recorded (and logged once per kind), never the end of following."""
    try:
        await refresh()
    except Exception as exc:  # any failure: an exhausted descriptor table, a corrupt ref, a bug
        state.failed(exc)
    else:
        state.succeeded()
