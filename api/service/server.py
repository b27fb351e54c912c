"""A serving process's state: the snapshots it serves and how it follows main, the query service over them,
and the caches of its answers. The HTTP edges read it from the request (`kernelindex.http.requests.server_of`);
`create_app` makes one per application.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator
from types import ModuleType

import anyio
import anyio.to_thread
import orjson

from kernelindex import registry
from kernelindex.core import metrics
from kernelindex.core.budgets import Budgets, Policy
from kernelindex.core.cache import ByteLRU, Representation
from kernelindex.core.context import StoredObjects
from kernelindex.core.graphql_http import PersistedQueries
from kernelindex.core.previews import Previews
from kernelindex.core.settings import Settings
from kernelindex.core.shared_budgets import SharedBudgets
from kernelindex.core.tokens import Tokens
from kernelindex.core.urls import Urls
from kernelindex.registry import search
from kernelindex.registry.export_cache import ExportCache, exports_path
from kernelindex.registry.graphcache import cache_path, load_cache, materialize, save_cache
from kernelindex.registry.mirror import Mirror
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service import dossier, mcp_documents, memory
from kernelindex.service.coalesce import Coalescer
from kernelindex.service.feeds import Feed
from kernelindex.service.follow import Following, follow_main
from kernelindex.service.graphiql import GraphiQL
from kernelindex.service.queries import QueryService

__all__ = [
    "FEED_CACHE_BYTES",
    "PAGE_CACHE_BYTES",
    "RESPONSE_CACHE_BYTES",
    "SWITCH_INTERVAL",
    "Server",
    "own_documents",
]

log = logging.getLogger("kernelindex")

RESPONSE_CACHE_BYTES = 64 * 1024 * 1024
"""GraphQL answers and run dossiers, serialized."""
PAGE_CACHE_BYTES = 32 * 1024 * 1024
"""Rendered pages and their JSON twins."""
FEED_CACHE_BYTES = 16 * 1024 * 1024
"""Rendered Atom feeds: a few hundred KB each at most."""
BACKGROUND_PAUSE = 0.05
"""The longest a slice of background preparation waits for the requests in flight (seconds)."""
SWITCH_INTERVAL = 0.001
"""How long a thread holding the GIL keeps it when another wants it (CPython's default is 5 ms):
the event loop waits for an executor that long at each step of a request (/healthz p99 under 6
heavy clients: ~90 ms at 5 ms, ~50 ms at 1 ms, with the same throughput of heavy queries)."""


def own_documents(*modules: ModuleType) -> list[str]:
    """The GraphQL documents a module of the server's own edges names in its `__all__`."""
    return [value for module in modules for name in module.__all__ if isinstance(value := getattr(module, name), str)]


class Server:
    """What every route of one application shares."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.urls = Urls.of(settings.base_url)
        self.snapshots = Snapshots(
            settings.repo_path, trust_root=settings.trust_root_policy(), cache_root=settings.cache_dir
        )
        self.objects = StoredObjects(self.snapshots)
        self.previews = Previews(self.snapshots)
        # The trusted-documents rule, for every edge: /graphql, the pages, permalinks, /mcp.
        self.persisted = PersistedQueries(settings.trusted_documents())
        self.persisted.trust(own_documents(dossier, mcp_documents))
        # Every client's budget of cost points (kernelindex.http.metering charges it); None: no budgets (`--budget 0`).
        # With several workers, one table they all map: a client's budget is spent once, not once a worker.
        policy = Policy(settings.budget, settings.budget_rate)
        self.budgets: Budgets | None = None
        if settings.budget > 0:
            self.budgets = SharedBudgets(settings.budget_file, policy) if settings.budget_file else Budgets(policy)
        # The tokens an operator issued, with their budgets (`Authorization: Bearer`); None: no file.
        self.tokens = Tokens(settings.tokens_path, policy) if settings.tokens_path else None
        self.quiet = threading.Event()  # set while no HTTP request is being answered (`in_flight`)
        self.in_flight = 0
        self.queries = QueryService(
            self.snapshots,
            self.objects,
            self.urls.base,
            previews=self.previews,
            admitted=self.persisted.allows,
        )
        self.moved = asyncio.Condition()  # notified after each refresh (monotonic reads wait on it)
        self.graphiql = GraphiQL()
        # Every cache weighs the memory its entries hold, keys and bookkeeping included (`kernelindex.core.footprint`).
        self.responses: ByteLRU[tuple[str, ...], Representation] = ByteLRU(
            RESPONSE_CACHE_BYTES, Representation.weight, bookkeeping=True
        )
        # GraphQL answers being executed now, by response-cache key: a request for one of them waits for it.
        self.executing: dict[tuple[str, str], asyncio.Future[Representation]] = {}
        self.pages: ByteLRU[tuple[str, ...], Representation] = ByteLRU(
            PAGE_CACHE_BYTES, Representation.weight, bookkeeping=True
        )
        self.feeds: ByteLRU[tuple[object, ...], Feed] = ByteLRU(FEED_CACHE_BYTES, Feed.weight, bookkeeping=True)
        self.exports = ExportCache(
            settings.export_cache or exports_path(settings.repo_path, settings.cache_dir), settings.export_cache_bytes
        )
        self.graph_cache_path = cache_path(settings.repo_path, settings.cache_dir)  # the warm-start cache
        self.started = time.time()
        self._observed: str | None = None  # the head `/metrics` was last told of
        self.ready = False
        self.load_error: str | None = None
        self.saved: str | None = None  # the commit the warm-start cache describes
        # A replica's canonical repository, fetched on a poll and on the refresh hook (docs/deploy.md).
        self.mirror = (
            Mirror(settings.mirror_url, settings.repo_path, pull_requests=settings.mirror_pull_requests)
            if settings.mirror_url
            else None
        )
        # The refresh hook's calls: at most one fetch-and-refresh in flight and one queued (api/service/coalesce.py).
        self.hook: Coalescer[tuple[str | None, registry.snapshots.HeadStatus]] = Coalescer(self._fetch_and_refresh)
        self.following = Following(settings.poll_seconds)  # how main is followed (every poll_seconds), for /healthz
        # How a replica's polls of its canonical repository go: what `fetch` does not expect, logged once a kind.
        self.mirroring = Following(settings.poll_seconds, subject="the canonical repository")

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve: load (or warm-load) the head, follow main (a replica also its canonical repository) until
        the context ends, then write the warm-start cache for the next start."""
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            await anyio.to_thread.run_sync(self.load)
        except registry.RegistryError as exc:
            self.load_error = str(exc)
            log.error("kernelindex: cannot load %s: %s", self.settings.repo_path, exc)
        try:
            git_dir = self.snapshots.store().git_dir
        except registry.RegistryError:  # no repository (a replica whose first clone failed): nothing to follow
            git_dir = None
        followers = []
        if git_dir is not None:
            settings = self.settings
            following = follow_main(
                git_dir,
                self.refresh_async,
                self.following.poll_seconds,
                watch=settings.watch,
                ready=lambda: self.ready,
                following=self.following,
            )
            followers.append(asyncio.create_task(following))
        else:
            self.following.stopped = "no repository to follow"
        if self.mirror is not None:
            followers.append(asyncio.create_task(self._follow_mirror()))
        for task in followers:
            task.add_done_callback(self._follower_ended)
        try:
            yield
        finally:
            sys.setswitchinterval(switch)
            for task in followers:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self.ready:
                await anyio.to_thread.run_sync(self.save)  # the next start is a warm one

    def _follower_ended(self, task: asyncio.Task[None]) -> None:
        """A background task that follows main ended: it never should while the server runs, so it is logged at
        once (with its traceback) and `/healthz` says so."""
        if task.cancelled():
            return
        exc = task.exception()
        self.following.stopped = f"{type(exc).__name__}: {exc}" if exc is not None else "it returned"
        log.error("kernelindex: stopped following main: %s", self.following.stopped, exc_info=exc)

    async def _follow_mirror(self) -> None:
        """A replica fetches its canonical repository on a poll too (the refresh hook is the fast path); a fetch
        that fails in any way is retried (see `kernelindex.service.follow.Following`), never the end of it."""
        while True:
            await asyncio.sleep(self.mirroring.next_check())
            try:
                await self.fetch()  # says itself why a fetch failed (`mirror.error` in /healthz)
            except Exception as exc:  # whatever else a fetch raises, the next poll tries again
                self.mirroring.failed(exc)
            else:
                self.mirroring.succeeded()

    def load(self) -> None:
        """Build (or warm-load) the head graph; runs in a worker thread at startup. What is left
        (every cohort's ranking and ledger, the cache for the next start) is done afterwards in the
        background, while the server already answers."""
        if self.mirror is not None:
            self.mirror.ensure()  # a replica's first start clones its canonical repository
        store = self.snapshots.store()
        cached = load_cache(self.graph_cache_path, store) if self.settings.graph_cache else None
        if cached is not None:
            if self.settings.handover_from is not None:
                materialize(*cached)  # replacing a serving process: take traffic fully decoded
            self.snapshots.load(*cached)
            self.saved = cached[0].commit
        else:
            self.snapshots.load()
        memory.release()  # a cold build's temporaries, freed but still resident
        self.ready = True
        threading.Thread(target=self._prepare, name="prepare-graph", daemon=True).start()

    def _prepare(self) -> None:
        try:
            head = self.snapshots.head
            publication = self.snapshots.publication
            if self.saved is None or self.saved != self.snapshots.status.serving:
                head.prepare(self._behind_requests)
                self.save()
            elif publication is not None:
                # Started warm at the cached commit: its rankings and ledgers came with it (a cohort's
                # places are computed on first use), but decoded only as requests read them. Decoding the
                # rest now, behind the requests, spares first-time answers a bucket each of nodes, facts
                # and indexes to decode (~0.1 ms apiece, two or three an answer early after a start).
                materialize(head, publication, self._behind_requests)
                head.index_fan_out(self._behind_requests)  # what a refresh's diff bisects (not in the cache)
            if self.settings.prepare_search:
                self._prepare_search(head)
            memory.release()
        except registry.RegistryError as exc:  # nothing served: nothing to prepare
            log.info("kernelindex: nothing to prepare: %s", exc)

    @property
    def in_flight(self) -> int:
        """HTTP requests being answered now (the fast lane counts them: it sees every one)."""
        return self._in_flight

    @in_flight.setter
    def in_flight(self, count: int) -> None:
        self._in_flight = count
        if count:
            self.quiet.clear()
        else:
            self.quiet.set()

    def _behind_requests(self) -> None:
        """Between slices of background work: while requests are in flight, let them run alone, up
        to 50 ms at a time (then one slice of work, so that the work still ends under constant traffic).

        Sharing the GIL instead passes it back and forth at each step of a request, and on a busy
        machine each pass waits for the scheduler: a first query right after a cold start at 50x
        took 0.5-2.5 s beside the ranking pass. Waiting on an event holds no GIL and wakes nobody."""
        self.quiet.wait(BACKGROUND_PAUSE)
        time.sleep(0)

    def _prepare_search(self, graph: registry.graph.Graph) -> None:
        """Build `graph`'s search index and facets now, in the background, rather than in the first search
        that needs them (the first facet search reads every run's manifests: 1.5 s)."""
        store = self.snapshots.store()

        def document(digest: str) -> dict[str, object]:
            found: dict[str, object] = orjson.loads(store.read_blob(graph.nodes[digest].oid))
            return found

        search.prepare(graph, document)
        # Reading those manifests mapped much of the pack and filled libgit2's caches, in this thread's handle
        # (7 MB resident at 1x, for the server's life): closed now, opened again on a next read.
        store.release()

    def _prepare_moved(self, before: str | None) -> None:
        """After a refresh: prepare the new head's search in a thread of its own, if the head moved."""
        if not self.settings.prepare_search or self.snapshots.status.serving in (None, before):
            return
        head = self.snapshots.head
        threading.Thread(target=self._prepare_search, args=(head,), name="prepare-search", daemon=True).start()

    def refresh(self) -> registry.snapshots.HeadStatus:
        """Refresh from main (`Snapshots.refresh`), timed and counted for `/metrics`."""
        started = time.perf_counter()
        try:
            status = self.snapshots.refresh()
        except Exception:
            metrics.REFRESH_FAILURES.inc()
            raise
        metrics.REFRESH_SECONDS.observe(time.perf_counter() - started)
        self.observe_head()
        return status

    def served_commit(self) -> str | None:
        """The commit of the served head (None while nothing is served)."""
        return self.snapshots.status.serving

    def observe_head(self) -> None:
        """The served head's commit and time in `/metrics` (after a refresh, and when scraped)."""
        if self.snapshots.status.serving is None:
            return
        head = self.snapshots.head
        if head.commit != self._observed:
            if self._observed is not None:
                metrics.SNAPSHOT_COMMIT.labels(self._observed).set(0)
            metrics.SNAPSHOT_COMMIT.labels(head.commit).set(1)
            metrics.SNAPSHOT_COMMITTED.set(head.committed_at)
            self._observed = head.commit

    async def refresh_async(self) -> registry.snapshots.HeadStatus:
        """Refresh in a worker thread, then wake the requests waiting for main to move (kernelindex.service.freshness);
        a new
        head's search is prepared in the background."""
        before = self.snapshots.status.serving
        status = await anyio.to_thread.run_sync(self.refresh)
        self._prepare_moved(before)
        async with self.moved:
            self.moved.notify_all()
        return status

    async def _fetch_and_refresh(self) -> tuple[str | None, registry.snapshots.HeadStatus]:
        """What the refresh hook asks for: a replica fetches first; then main is looked at now. Why the fetch
        failed (or None), and the head's status after."""
        failed = await self.fetch()
        return failed, await self.refresh_async()

    async def fetch(self) -> str | None:
        """A replica brings its canonical repository's refs, then refreshes (which validates the new
        head before serving it); why it could not fetch, or None."""
        if self.mirror is None:
            return None
        try:
            fetched = await anyio.to_thread.run_sync(self.mirror.fetch)
        except registry.RegistryError as exc:
            log.warning("kernelindex: %s", exc)
            return str(exc)
        if fetched.moved and self.ready:
            await self.refresh_async()
        return None

    def save(self) -> None:
        """Write the warm-start cache if what is served moved since it was written."""
        publication = self.snapshots.publication
        serving = self.snapshots.status.serving
        if not self.settings.graph_cache or publication is None or serving is None or serving == self.saved:
            return
        graph = self.snapshots.head
        graph.prepare()
        if save_cache(self.graph_cache_path, graph, publication):
            self.saved = graph.commit

    def serving(self) -> bool:
        """Whether a head is served (loaded, and valid)."""
        return self.ready and self.snapshots.status.serving is not None

    def unavailable(self) -> str | None:
        """Why there is nothing to serve yet (loading, or no valid head), or None."""
        if not self.ready:
            return self.load_error or "the registry is still loading"
        if self.snapshots.status.serving is None:
            return f"nothing to serve: {self.snapshots.status.reason}"
        return None
