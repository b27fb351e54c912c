"""The one way to run a GraphQL query: every edge (the GraphQL route, the pages and their JSON twins, badges,
permalinks, `/mcp`, the CLI) asks `QueryService.answer` and reads what it needs from the `Answer`.

The service builds the request's context, executes on one bounded pool of worker threads
(`kernelindex.service.workers`: never on the event loop, which only routes, so /healthz answers under any load,
between two operations of a batch too), gives every error its code, writes
`extensions.registry` (which commits answered), and decides whether the answer may be cached and whether
it can never change. `pinned(rev)` is the one answer to "which commit of main does this name?".
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio.to_thread
import orjson
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult

from kernelindex import registry
from kernelindex.core.budgets import Account
from kernelindex.core.codes import INTERNAL, OPERATION_RESOLUTION_FAILURE, PERSISTED_QUERY_NOT_ALLOWED
from kernelindex.core.context import Context, StoredObjects
from kernelindex.core.errors import UNEXPECTED
from kernelindex.core.previews import Previews
from kernelindex.core.settings import plain_mode
from kernelindex.registry.graph import Graph
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.snapshots import Snapshots
from kernelindex.schema.root import Query, schema
from kernelindex.service.workers import CLIENT, Workers

__all__ = ["EXECUTORS", "Answer", "NotPublished", "QueryService"]

log = logging.getLogger("kernelindex")

T = TypeVar("T")

EXECUTORS = 2
"""GraphQL executions at once. Execution is CPU-bound Python: more threads add no throughput under
the GIL, only contenders for it, each delaying the event loop thread (measured under 6 heavy
clients, /healthz p99: 1 executor ~25 ms, 2 ~50 ms, 4 ~70 ms); two let one wait on git while the
other computes."""


class NotPublished(registry.RegistryError, LookupError):
    """A commit the repository has but the served head's history does not: not (yet) published on main.

    Each edge words its refusal (a permalink, a feed, an export), so the message is only the commit."""

    def __init__(self, commit: str) -> None:
        super().__init__(commit)
        self.commit = commit


class Answer:
    """One operation's answer: what it found, its errors with their codes, and what may be done with it.

    `body` is the GraphQL response (`errors` if any, `data` unless the request never ran, `extensions` with
    `registry`), serialized on first use. `request_error`: the operation never ran (syntax, validation, a
    limit, variables), so the answer has no `data`. `cacheable`: the same request at the same head gets the
    same bytes. `immutable`: pinned to full ids of published commits, nothing asked of the moving head, no
    error: it can never change. `unpublished`: it asked about a commit off main. `throttled`: the client's budget
    could not pay for it, so nothing ran. `personal`: it tells the client about itself (`rateLimit`).
    """

    __slots__ = (
        "_body",
        "cacheable",
        "commit",
        "cost",
        "data",
        "errors",
        "extensions",
        "immutable",
        "personal",
        "request_error",
        "throttled",
        "unpublished",
    )

    def __init__(
        self,
        data: dict[str, Any] | None,
        errors: list[dict[str, Any]],
        extensions: dict[str, Any],
        commit: str,
        *,
        request_error: bool,
        cacheable: bool,
        immutable: bool,
        unpublished: bool = False,
        cost: int = 0,
        throttled: bool = False,
        personal: bool = False,
    ) -> None:
        self.data = data
        self.errors = errors
        self.extensions = extensions
        self.commit = commit
        self.request_error = request_error
        self.cacheable = cacheable
        self.immutable = immutable
        self.unpublished = unpublished
        self.cost = cost
        self.throttled = throttled
        self.personal = personal
        self._body: bytes | None = None

    @property
    def body(self) -> bytes:
        if self._body is None:
            payload: dict[str, Any] = {}
            if self.errors:
                payload["errors"] = self.errors
            if not self.request_error:
                payload["data"] = self.data
            if self.extensions:
                payload["extensions"] = self.extensions
            self._body = orjson.dumps(payload)
        return self._body

    @property
    def codes(self) -> list[str]:
        """The errors' codes, in order."""
        return [str((error.get("extensions") or {}).get("code")) for error in self.errors]

    @property
    def messages(self) -> str:
        """The errors' messages, joined for a one-line refusal."""
        return "; ".join(str(error["message"]) for error in self.errors)


class QueryService:
    """GraphQL answers over one registry's snapshots, at most `executors` executing at once.

    `today` is the reader's date where there is one (the CLI, `kernelindex mcp`); a server has none, so
    nothing it caches embeds the day it was computed. `previews`, when given, decides which pinned commits
    are published and refuses previews that fail the pull-request check. `admitted`, when given, is the
    trusted-documents rule: a document it refuses never runs, whichever edge sent it.
    """

    def __init__(
        self,
        snapshots: Snapshots,
        objects: StoredObjects,
        base_url: str,
        *,
        previews: Previews | None = None,
        today: Callable[[], dt.date | None] = lambda: None,
        executors: int = EXECUTORS,
        admitted: Callable[[str], bool] | None = None,
    ) -> None:
        self.snapshots = snapshots
        self.objects = objects
        self.base_url = base_url
        self.previews = previews
        self._today = today
        self._admitted = admitted
        self._known: Callable[[str, dict[str, Any], Context, str | None, Any], ExecutionResult | None] | None = None
        if not plain_mode():  # plain: every query through strawberry's pipeline
            from kernelindex.service.direct import execute_known

            self._known = execute_known
        self.workers = Workers(executors)
        """The executor bound: every execution (and every other heavy step an edge hands over) runs there."""
        self.executions = 0
        """Operations executed (or refused by their document) so far; not those a client's budget refused."""
        self.throttled = 0
        """Operations a client's budget refused before they ran (`kernelindex.core.budgets`)."""

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` off the event loop, under the executor bound (waiting its turn behind the executions
        in flight): what an edge calls for work other than a query that may take longer than a socket can wait
        (an export's render, parsing a manifest an MCP client sent)."""
        return await self.workers.run(function, *args)

    async def answer(
        self,
        document: str,
        variables: Mapping[str, Any] | None = None,
        *,
        operation: str | None = None,
        head: Graph | None = None,
        budget: int | None = None,
    ) -> Answer:
        """Execute `document` (the `operation` of it) against `head` (the served head of main when None; a
        batch passes one for all its operations), within what is left of a batch's cost limit (`budget`).

        Raises:
            kernelindex.registry.RegistryError: nothing is served yet (no head).
        """
        return await self.answer_then(document, variables, _itself, operation=operation, head=head, budget=budget)

    async def answer_then(
        self,
        document: str,
        variables: Mapping[str, Any] | None,
        then: Callable[[Answer], T],
        *,
        operation: str | None = None,
        head: Graph | None = None,
        budget: int | None = None,
        account: Account | None = None,
    ) -> T:
        """`then(answer)` of `answer(document, ...)`, made in the same worker thread right after the execution:
        what a page does with its document's answer (its template, a card) costs no second hand-over. `account`,
        when given, is charged the operation's cost before it runs; one that cannot pay is answered `THROTTLED`
        and nothing runs.

        Raises:
            kernelindex.registry.RegistryError: nothing is served yet (no head).
            Exception: whatever `then` raises.
        """
        head = head if head is not None else self.snapshots.head
        if self._admitted is not None and not self._admitted(document):
            error = {
                "message": "only trusted documents run here; this one is not",
                "extensions": {"code": PERSISTED_QUERY_NOT_ALLOWED},
            }
            refused = Answer(None, [error], {}, head.commit, request_error=True, cacheable=False, immutable=False)
            return await self._then(then, refused)
        self.executions += 1
        context = Context(self.snapshots, self.objects, self.base_url, self._today(), head, self.previews)
        context.cost_budget = budget
        context.account = account
        values = dict(variables or {})

        known = self._known

        def run() -> T:
            # A document met before, compiled, within its limits: answered without strawberry's pipeline
            # (kernelindex.service.direct), which would change nothing; anything else goes through it.
            found = known(document, values, context, operation, Query()) if known is not None else None
            if found is None:
                found = schema.execute_sync(
                    document,
                    variable_values=values,
                    context_value=context,
                    operation_name=operation,
                    root_value=Query(),
                )
            return then(_answer(found, context, head))

        try:
            # Never on the event loop, however quiet: an operation's cost bounds what it may do, not how long
            # the loop would be away (a first-time sort of every run is ~25 ms; a batch is several).
            # In the client's turn (`kernelindex.service.workers`): one client's backlog delays only that client.
            turn = CLIENT.set(account.key if account is not None else None)
            try:
                found = await self.workers.run(run)
            finally:
                CLIENT.reset(turn)
            if context.throttled:
                self.executions -= 1
                self.throttled += 1
            return found
        except (CannotGetOperationTypeError, InvalidOperationTypeError) as exc:
            # strawberry raises these rather than answering them: the operation could not be chosen.
            reason = "only queries are served"
            if isinstance(exc, CannotGetOperationTypeError):
                reason = exc.as_http_error_reason()
            error = {"message": reason, "extensions": {"code": OPERATION_RESOLUTION_FAILURE}}
            refused = Answer(None, [error], {}, head.commit, request_error=True, cacheable=False, immutable=False)
            return await self._then(then, refused)

    async def _then(self, then: Callable[[Answer], T], answer: Answer) -> T:
        """`then(answer)` of an answer made without executing: at once when it is the answer itself."""
        if then is _itself:
            return then(answer)
        return await self.workers.run(then, answer)

    async def pinned(self, rev: str) -> str:
        """The full id of the commit `rev` names, which must be in the history of the served head of main
        (published: answers pinned to it never change).

        Raises:
            kernelindex.registry.RevisionNotFound: no such commit, branch or tag.
            NotPublished: a commit main's served history does not hold.
        """
        head = self.snapshots.head.commit
        if rev == head:
            return rev  # the served head (what pages link to): nothing to look up, no thread to wait for
        commit: str = await anyio.to_thread.run_sync(self.snapshots.store().resolve, rev)
        if not await anyio.to_thread.run_sync(self._published, commit, head):
            raise NotPublished(commit)
        return commit

    def _published(self, commit: str, head: str) -> bool:
        if self.previews is not None:
            return self.previews.published(commit, head)  # remembered: once published, always
        return commit == head or self.snapshots.store().is_ancestor(commit, head)


def _registry_extension(context: Context, head: Graph) -> dict[str, Any]:
    """`extensions.registry`: the head that answered, and any other commit the operation was pinned to."""
    found: dict[str, Any] = {"commit": head.commit, "committedAt": utc_instant(head.committed_at)}
    pinned = [g for commit, g in context.seen.items() if commit != head.commit or not context.used_head]
    if pinned:
        found["pinned"] = [{"commit": g.commit, "committedAt": utc_instant(g.committed_at)} for g in pinned]
    return found


def _itself(answer: Answer) -> Any:
    return answer


def _answer(result: ExecutionResult, context: Context, head: Graph) -> Answer:
    """The answer an execution's `result` makes (in the worker thread that executed it)."""
    # A request error (syntax, validation, limits, variables) never started executing: no error has a
    # path, and the answer has no `data` (the GraphQL-over-HTTP draft).
    request_error = result.data is None and bool(result.errors) and all(not e.path for e in result.errors or ())
    errors = [_formatted(error) for error in result.errors or ()]
    extensions = {**(result.extensions or {}), "registry": _registry_extension(context, head)}
    if context.personal and context.account is not None and isinstance(extensions.get("cost"), dict):
        # An answer about its client (`rateLimit`) is that client's alone: it carries the budget as Shopify's do.
        extensions["cost"] = {**extensions["cost"], "throttleStatus": context.account.throttle_status()}
    unexpected = any(error["extensions"]["code"] == INTERNAL for error in errors)
    # What the operation cost, if it ran: a refused one (over a limit) spent nothing of a batch's budget.
    cost = 0 if request_error else ((result.extensions or {}).get("cost") or {}).get("requested") or 0
    return Answer(
        result.data,
        errors,
        extensions,
        head.commit,
        request_error=request_error,
        cacheable=not unexpected and not context.pinned_by_name and not request_error and not context.personal,
        immutable=(
            bool(context.seen)
            and not context.personal
            and not context.used_head
            and not context.pinned_by_name
            and not context.unpublished
            and not errors
        ),
        unpublished=context.unpublished,
        cost=int(cost),
        throttled=context.throttled,
        personal=context.personal,
    )


def _formatted(error: Any) -> dict[str, Any]:
    """An error as the response carries it; one without a code escaped `kernelindex.core.errors` and is masked."""
    formatted: dict[str, Any] = error.formatted
    if isinstance((formatted.get("extensions") or {}).get("code"), str):
        return formatted
    log.error("kernelindex: unexpected error: %s", error.message, exc_info=getattr(error, "original_error", None))
    masked: dict[str, Any] = {"message": UNEXPECTED, "extensions": {"code": INTERNAL}}
    for key in ("locations", "path"):
        if formatted.get(key):
            masked[key] = formatted[key]
    return masked
