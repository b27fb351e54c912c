"""The MCP server (official Python SDK): KernelIndex's assistant tools over this registry's GraphQL schema.

Tools keep upstream's names and arguments (`apps/mcp/src/server.ts` in SamMausberg/KernelIndex) where
our model allows, and add `at` (a commit, branch or tag; main's served head when omitted). Every
answer is one JSON text block `{"commit", "committedAt", "permalinks", ...}`: the commit the answer is
pinned to, every permalink it mentions, then the data, as the GraphQL API answers it for that commit.
Lists are pages (`limit` at most 100, an opaque `cursor` to continue). A bad argument (unknown id,
ambiguous prefix, unknown revision, a value out of range) is a tool error with a message saying
which and why, never a crash. Resources: `kernelindex://manifests/{digest}` (at main's head) and
`kernelindex://at/{commit}/manifests/{digest}`, the stored bytes of any manifest.

Served two ways: `kernelindex mcp` over stdio (`run_stdio`), and mounted at `/mcp` in
`kernelindex serve` (streamable HTTP, stateless: any worker answers any request).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, ConfigDict, Field

from kernelindex import registry
from kernelindex.core.context import StoredObjects
from kernelindex.registry.kinds import KINDS
from kernelindex.registry.schemas import schema_text
from kernelindex.registry.search_query import MAX_QUERY_CHARS
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service import mcp_documents as docs
from kernelindex.service.queries import QueryService

__all__ = ["TOOLS", "Backend", "Tools", "build_server", "http_app", "run_stdio"]

M = TypeVar("M", bound=Callable[..., Any])

TOOLS = (
    "search_catalog",
    "resolve_kernel",
    "resolve_kernels",
    "get_operation",
    "get_implementation",
    "get_benchmark_evidence",
    "compare_runs",
    "list_records",
    "list_changes",
    "list_runs",
    "list_hardware",
    "validate_manifest",
    "get_manifest_schema",
    "list_models",
    "resolve_serving",
    "get_serving_run",
)
"""The tools served: upstream's 16 (all but `list_challenges` and `find_precedents`, which it added since)."""

At = Annotated[
    str | None,
    Field(
        default=None, max_length=200, description="A commit (full id or unique prefix), branch or tag; default main."
    ),
]
Ident = Annotated[str, Field(min_length=1, max_length=200)]
Limit = Annotated[int, Field(default=20, ge=1, le=100, description="Page size, at most 100.")]
Cursor = Annotated[str | None, Field(default=None, max_length=500, description="endCursor of the previous page.")]
_STATUSES = (
    *("passed", "incorrect_shape", "incorrect_dtype", "incorrect_numerical", "compile_error", "runtime_error"),
    *("timeout", "resource_exceeded", "invalid_reference", "policy_violation", "suspected_reward_hack"),
    *("incomplete_evidence", "revoked"),
)


class ServingConstraint(BaseModel):
    """A bound on a serving metric of serving-v1's vocabulary: `ttft_ms p99 <= 450`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: Annotated[str, Field(min_length=1, max_length=80)]
    operator: Literal["<=", "<", ">=", ">"]
    value: float
    statistic: Annotated[str | None, Field(default=None, max_length=40)] = None
    unit: Annotated[str | None, Field(default=None, max_length=40)] = None


class ServingObjective(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: Annotated[str, Field(min_length=1, max_length=80)]
    direction: Literal["MINIMIZE", "MAXIMIZE"] | None = None
    statistic: Annotated[str | None, Field(default=None, max_length=40)] = None


class ResolveServingRequest(BaseModel):
    """A model, a workload and hardware to serve on, with constraints and an optional objective."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Annotated[str | None, Field(default=None, max_length=200, description="Model id, name or digest.")]
    workload: Annotated[str | None, Field(default=None, max_length=200, description="Serving workload id or name.")]
    hardware: Annotated[
        str | None, Field(default=None, max_length=200, description="Accelerator model or vendor: 'B200', 'amd'.")
    ]
    constraints: Annotated[tuple[ServingConstraint, ...], Field(default=(), max_length=10)] = ()
    objective: ServingObjective | None = None


class ResolveKernelRequest(BaseModel):
    """What an assistant asks for: an operation, optionally a GPU, a dtype, a case (axis bindings, a shape), a
    workload and an evidence floor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="Operation name, title ('RMSNorm'), family ('attention') or digest; any case: 'rmsnorm'.",
        ),
    ]
    hardware: Annotated[str | None, Field(default=None, max_length=200, description="'NVIDIA B200' or 'sm_100'.")]
    dtype: Annotated[str | None, Field(default=None, max_length=40, description="'bf16', 'bfloat16', 'fp8'...")]
    axes: Annotated[
        dict[Annotated[str, Field(min_length=1, max_length=80)], int] | None,
        Field(default=None, max_length=16, description="Axis bindings of the case: {'tokens': 3000}."),
    ] = None
    shape: Annotated[
        list[Annotated[int, Field(ge=0)]] | None,
        Field(default=None, min_length=1, max_length=8, description="A tensor shape of the case: [2048, 4096]."),
    ] = None
    workload: Annotated[
        str | None, Field(default=None, max_length=200, description="Keep only cohorts of this workload (name).")
    ]
    minTrust: Literal["REPORTED", "REPRODUCIBLE", "VERIFIED", "REPLICATED"] | None = None  # noqa: N815 (upstream's name)


@dataclass
class Backend:
    """What the tools query: the registry, through the query service (its schema, its pool of executors:
    a heavy tool call waits its turn as a GraphQL request does, and never stalls /healthz)."""

    queries: QueryService
    ready: Callable[[], bool] = lambda: True

    async def query(self, document: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """The `registry` field of a pinned query's answer.

        Raises:
            ToolError: the registry is not ready, or the query failed (its message, with its code).
        """
        if not self.ready():
            raise ToolError("the registry is still loading; try again in a moment")
        try:
            answer = await self.queries.answer(document, variables)
        except registry.RegistryError as exc:  # nothing served yet
            raise ToolError(str(exc)) from None
        if answer.errors:
            error = answer.errors[0]
            code = (error.get("extensions") or {}).get("code")
            raise ToolError(f"{error['message']}" + (f" ({code})" if code else ""))
        found: dict[str, Any] | None = (answer.data or {}).get("registry")
        if found is None:
            raise ToolError(f"revision not found: {variables.get('at')!r}")
        return found


def _answer(found: dict[str, Any], data: dict[str, Any]) -> str:
    """The envelope every tool returns: pinned commit, permalinks, data."""
    commit = found["commit"]
    permalinks = sorted(set(_permalinks(data)))
    return json.dumps(
        {"commit": commit["id"], "committedAt": commit["committedAt"], "permalinks": permalinks, **data},
        ensure_ascii=False,
        indent=1,
    )


def _permalinks(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "permalink" and isinstance(item, str):
                found.append(item)
            else:
                found.extend(_permalinks(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_permalinks(item))
    return found


def _page(connection: dict[str, Any]) -> dict[str, Any]:
    """A connection as a page: items, total, the cursor of the next page (None at the end)."""
    info = connection.get("pageInfo") or {}
    return {
        "total": connection["totalCount"],
        "items": [edge["node"] for edge in connection["edges"]],
        "nextCursor": info.get("endCursor") if info.get("hasNextPage") else None,
    }


def _workload_of(item: dict[str, Any]) -> dict[str, Any]:
    """The workload of an exact answer or a nearest case of the resolver."""
    answer = item.get("answer", item)
    return answer["cohort"]["workload"] or {}


def _required(value: Any, what: str, ident: str, commit: str) -> Any:
    if value is None:
        raise ToolError(f"{what} not found: {ident!r} at {commit}")
    return value


_DESCRIPTIONS: dict[str, str] = {}
_RESOURCES: dict[str, tuple[str, str, str]] = {}


def _tool(description: str) -> Callable[[M], M]:
    """Make a method of `Tools` a tool the server lists (in `TOOLS` order), with its description."""

    def mark(method: M) -> M:
        _DESCRIPTIONS[method.__name__] = description
        return method

    return mark


def _resource(uri: str, name: str, description: str) -> Callable[[M], M]:
    """Make a method of `Tools` a resource at `uri` (an RFC 6570 template), a manifest's stored JSON."""

    def mark(method: M) -> M:
        _RESOURCES[method.__name__] = (uri, name, description)
        return method

    return mark


class Tools:
    """The tools and resources: each a method that asks `backend` and answers in the envelope of `_answer`."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @_tool(
        description="Find operations by name or title (e.g. 'attention', 'rmsnorm') with their largest cohorts and "
        "each cohort's current #1: digests, values, trust, permalinks."
    )
    async def search_catalog(
        self, q: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)], at: At = None
    ) -> str:
        found = await self.backend.query(docs.SEARCH, {"at": at, "q": q.strip(), "first": 10})
        return _answer(found, {"query": q, "operations": _page(found["operations"])})

    async def _resolve(self, request: ResolveKernelRequest, at: str | None) -> dict[str, Any]:
        variables = {
            "at": at,
            "operation": request.operation,
            "gpu": request.hardware,
            "dtype": request.dtype,
            "axes": [{"name": k, "value": v} for k, v in sorted((request.axes or {}).items())] or None,
            "shape": request.shape,
            # A workload narrows afterwards: ask for every case then (a page of the most measured otherwise).
            "cases": 100 if request.workload else 10,
            "minTrust": request.minTrust,
        }
        found = await self.backend.query(docs.RESOLVE, variables)
        resolution = found["resolveKernel"]
        asked = request.model_dump(exclude_none=True)
        operation_problems = [p for p in resolution["problems"] if p["part"] == "OPERATION"]
        if not resolution["operations"]:
            problem = operation_problems[0] if operation_problems else {"suggestions": []}
            nearest = problem["suggestions"]
            error = f"operation not found: {request.operation!r} at {found['commit']['id']}" + (
                f"; nearest names: {', '.join(nearest)}" if nearest else ""
            )
            return {"request": asked, "found": False, "error": error, "commit": found["commit"]}
        for key in ("exact", "nearest"):
            page = _page(resolution[key])
            if request.workload:
                page["items"] = [
                    item
                    for item in page["items"]
                    if _workload_of(item).get("name") == request.workload
                    or _workload_of(item).get("digest") == request.workload
                ]
                page["total"] = len(page["items"])
            resolution[key] = page
        exact = resolution["exact"]["items"]
        best = [
            {"cohort": answer["cohort"]["key"], "run": answer["cohort"]["best"]["edges"][0]["node"]["run"]}
            for answer in exact
            if answer["cohort"]["best"]["edges"]
        ]
        return {
            "request": asked,
            "mode": resolution["mode"],
            "summary": resolution["summary"],
            "operations": resolution["operations"],
            "resolution": resolution,
            # Runs compare only inside a cohort: one answer per cohort, never a ranking across them.
            "decision": {"comparableAcrossCohorts": False, "bestPerCohort": best},
            "found": bool(best),
            "commit": found["commit"],
        }

    @_tool(
        description="Resolve a kernel request {operation (name, title or family, any case), hardware?, dtype?, "
        "axes?, shape?, workload?, minTrust?}: the cohorts that measured exactly that, each with its leader, best "
        "verified and best deployable run and why (never ranked across cohorts); else the nearest measured cases "
        "with each difference explained; an unknown operation is an error naming the nearest names."
    )
    async def resolve_kernel(self, request: ResolveKernelRequest, at: At = None) -> str:
        decision = await self._resolve(request, at)
        if "error" in decision:
            raise ToolError(decision["error"])
        return _answer({"commit": decision.pop("commit")}, decision)

    @_tool(description="Resolve up to twenty kernel requests in one call; one decision per request, in order.")
    async def resolve_kernels(
        self, requests: Annotated[list[ResolveKernelRequest], Field(min_length=1, max_length=20)], at: At = None
    ) -> str:
        decisions = [await self._resolve(request, at) for request in requests]
        commit = decisions[0].pop("commit")
        for decision in decisions[1:]:
            decision.pop("commit")
        return _answer({"commit": commit}, {"decisions": decisions})

    @_tool(
        description="Operation dossier by name, digest or prefix: family, workloads, implementations, and each "
        "cohort's current record."
    )
    async def get_operation(self, idOrSlug: Ident, at: At = None) -> str:  # noqa: N803 (upstream's name)
        found = await self.backend.query(docs.OPERATION, {"at": at, "id": idOrSlug})
        operation = _required(found["operation"], "operation", idOrSlug, found["commit"]["id"])
        for key in ("workloads", "implementations", "cohorts"):
            operation[key] = _page(operation[key])
        return _answer(found, {"operation": operation})

    @_tool(
        description="Implementation dossier by name, digest or prefix: revision, language, project, its runs. "
        "includeSource adds the manifest's source reference (the registry does not mirror code)."
    )
    async def get_implementation(
        self,
        idOrSlug: Ident,  # noqa: N803 (upstream's name)
        includeSource: bool = False,  # noqa: N803
        at: At = None,
    ) -> str:
        found = await self.backend.query(docs.IMPLEMENTATION, {"at": at, "id": idOrSlug})
        implementation = _required(found["implementation"], "implementation", idOrSlug, found["commit"]["id"])
        implementation["runs"] = _page(implementation["runs"])
        manifest = implementation.pop("manifest")
        spec = manifest["json"]["spec"]
        implementation["manifest"] = {"permalink": manifest["permalink"], "publishedAt": manifest["publishedAt"]}
        if includeSource:
            implementation["source"] = {
                "source": spec.get("source"),
                "projectRevision": spec.get("projectRevision"),
                "callable": spec.get("callable"),
                "licensing": spec.get("licensing"),
            }
        return _answer(found, {"implementation": implementation})

    @_tool(
        description="Run dossier by name, digest or prefix: value, rank, cohort, measurements, correctness, protocol, "
        "environment, trust, lifecycle, provenance, citation and the stored manifest."
    )
    async def get_benchmark_evidence(self, idOrDigest: Ident, at: At = None) -> str:  # noqa: N803 (upstream's name)
        found = await self.backend.query(
            docs.DOSSIER_QUERY.replace("registry(at: $at) {", _PINNED, 1), {"at": at, "id": idOrDigest}
        )
        run = _required(found["run"], "run", idOrDigest, found["commit"]["id"])
        return _answer(found, {"run": run})

    @_tool(
        description="Align 2-8 runs field by field; material mismatches first; ranks only when all share one cohort "
        "(incomparable selections come back explained, never force-ranked)."
    )
    async def compare_runs(self, runs: Annotated[list[Ident], Field(min_length=2, max_length=8)], at: At = None) -> str:
        found = await self.backend.query(docs.COMPARE, {"at": at, "runs": runs})
        comparison = found["compare"]
        if comparison["missing"]:
            raise ToolError(f"run(s) not found at {found['commit']['id']}: {', '.join(comparison['missing'])}")
        return _answer(found, {"comparison": comparison})

    @_tool(
        description="Current record holders across cohorts, newest record first, paged; each with its cohort's "
        "full record history."
    )
    async def list_records(self, cursor: Cursor = None, limit: Limit = 20, at: At = None) -> str:
        found = await self.backend.query(docs.RECORDS, {"at": at, "first": limit, "after": cursor})
        return _answer(found, {"records": _page(found["records"])})

    @_tool(
        description="Record breaks since an ISO instant (default: 30 days before the pinned commit), newest first: "
        "cohorts whose current record began after `since`, paged."
    )
    async def list_changes(
        self,
        since: Annotated[str | None, Field(default=None, max_length=40)] = None,
        cursor: Cursor = None,
        limit: Limit = 20,
        at: At = None,
    ) -> str:
        found = await self.backend.query(docs.RECORDS, {"at": at, "first": limit, "after": cursor})
        boundary = since or _days_before(found["commit"]["committedAt"], 30)
        try:
            moment = registry.nodes.instant_ns(boundary)
        except ValueError:
            raise ToolError(f"since: {boundary!r} is not an ISO 8601 UTC instant (e.g. 2026-08-01T00:00:00Z)") from None
        page = _page(found["records"])
        kept = [item for item in page["items"] if item["since"] and registry.nodes.instant_ns(item["since"]) > moment]
        # The ledger is ordered by `since`, newest first: once one is older, every later page is too.
        done = len(kept) < len(page["items"])
        changes = {"since": boundary, "items": kept, "nextCursor": None if done else page["nextCursor"]}
        return _answer(found, {"changes": changes})

    @_tool(
        description="Benchmark runs, newest observation first, paged; filter by operation (id or name), hardware "
        "(GPU product or architecture), source slug, run status, observed-since instant."
    )
    async def list_runs(
        self,
        operation: Annotated[str | None, Field(default=None, max_length=200)] = None,
        hardware: Annotated[str | None, Field(default=None, max_length=200)] = None,
        source: Annotated[str | None, Field(default=None, max_length=200)] = None,
        status: Annotated[str | None, Field(default=None, max_length=40)] = None,
        since: Annotated[str | None, Field(default=None, max_length=40)] = None,
        cursor: Cursor = None,
        limit: Limit = 20,
        at: At = None,
    ) -> str:
        if status is not None and status.lower() not in _STATUSES:
            raise ToolError(f"status: {status!r} is not a run status; expected one of {', '.join(_STATUSES)}")
        if since is not None:
            try:
                registry.nodes.instant_ns(since)
            except ValueError:
                raise ToolError(f"since: {since!r} is not an ISO 8601 UTC instant") from None
        run_filter = {
            "operation": operation,
            "gpu": hardware,
            "source": source,
            "status": [status.upper()] if status else None,
            "observedSince": since,
        }
        found = await self.backend.query(docs.RUNS, {"at": at, "filter": run_filter, "first": limit, "after": cursor})
        return _answer(found, {"runs": _page(found["runs"])})

    @_tool(
        description="Per-GPU coverage: run and cohort counts and the operation families measured on every GPU "
        "(counts, never a shared ranking)."
    )
    async def list_hardware(self, at: At = None) -> str:
        gpus: dict[tuple[str, ...], dict[str, Any]] = {}
        after: str | None = None
        found: dict[str, Any] = {}
        for _ in range(10_000):  # 100 cohorts a page; a registry of a million cohorts is still bounded
            found = await self.backend.query(docs.COHORTS_PAGE, {"at": at or None, "after": after})
            at = at or found["commit"]["id"]  # every page from the same commit
            for edge in found["cohorts"]["edges"]:
                node = edge["node"]
                environment = node["environment"] or {}
                key = (
                    environment.get("vendor", ""),
                    environment.get("product", ""),
                    environment.get("architecture", ""),
                )
                entry = gpus.setdefault(key, {"runs": 0, "cohorts": 0, "families": set()})
                entry["runs"] += node["size"]
                entry["cohorts"] += 1
                if node["operation"]:
                    entry["families"].add(node["operation"]["family"])
            info = found["cohorts"]["pageInfo"]
            if not info["hasNextPage"]:
                break
            after = info["endCursor"]
        hardware = [
            {
                "vendor": vendor,
                "product": product,
                "architecture": architecture,
                "kernelRuns": entry["runs"],
                "cohorts": entry["cohorts"],
                "operationFamilies": sorted(entry["families"]),
            }
            for (vendor, product, architecture), entry in sorted(
                gpus.items(), key=lambda item: (-item[1]["runs"], item[0])
            )
        ]
        return _answer(found, {"hardware": hardware})

    @_tool(
        description="Validate a manifest (YAML or JSON text) as the registry would: schema, normalization, its "
        "digest and path, and whether each digest it references exists at the pinned commit."
    )
    async def validate_manifest(
        self,
        content: Annotated[str, Field(max_length=1_048_576)],
        format: Literal["yaml", "json"] = "yaml",
        at: At = None,
    ) -> str:
        try:
            # Parsed off the event loop, under the executor bound: a megabyte of YAML takes seconds to refuse.
            data = content.encode("utf-8", errors="surrogatepass")
            manifest = await self.backend.queries.run(registry.load_manifest, data, "manifest", format)
        except registry.InvalidManifest as exc:
            errors = [{"path": p.path or "$", "reason": p.reason} for p in exc.problems]
            return _answer(await self.backend.query(docs.COMMIT, {"at": at}), {"valid": False, "errors": errors})
        except UnicodeEncodeError:
            raise ToolError("content is not valid UTF-8 text") from None
        references = []
        found = {}
        for path, kinds, digest in manifest.references():
            found = await self.backend.query(docs.MANIFEST, {"at": at, "digest": digest})
            target = found["manifest"]
            resolves = target is not None and target["kind"] in kinds
            references.append({"path": path, "digest": digest, "kinds": list(kinds), "resolves": resolves})
        if not found:
            found = await self.backend.query(docs.COMMIT, {"at": at})
        result = {
            "valid": True,
            "kind": manifest.kind,
            "specDigest": manifest.digest,
            "path": manifest.path,
            "references": references,
        }
        return _answer(found, result)

    @_tool(description="The JSON Schema of a manifest kind (e.g. BenchmarkRun, OperationSpec, WorkloadCase).")
    async def get_manifest_schema(self, kind: Annotated[str, Field(min_length=1, max_length=80)]) -> str:
        if KINDS.get(kind) is None:
            raise ToolError(f"no schema for kind {kind!r}; kinds: {', '.join(sorted(KINDS))}")
        return schema_text(kind)  # the shipped JSON Schema (registry/schemas)

    @_tool(
        description="Model coverage: every served model revision with its serving run and cohort counts (kernel "
        "workloads carry no model tags in this registry)."
    )
    async def list_models(self, at: At = None) -> str:
        models: dict[str, dict[str, Any]] = {}
        after: str | None = None
        found: dict[str, Any] = {}
        for _ in range(10_000):
            found = await self.backend.query(docs.SERVING_COHORTS_PAGE, {"at": at, "after": after})
            at = at or found["commit"]["id"]
            for edge in found["servingCohorts"]["edges"]:
                node = edge["node"]
                if node["model"] is None:
                    continue
                entry = models.setdefault(node["model"]["digest"], {**node["model"], "servingRuns": 0, "cohorts": 0})
                entry["servingRuns"] += node["size"]
                entry["cohorts"] += 1
            info = found["servingCohorts"]["pageInfo"]
            if not info["hasNextPage"]:
                break
            after = info["endCursor"]
        listed = sorted(models.values(), key=lambda m: (-m["servingRuns"], m["name"]))
        return _answer(found, {"models": listed})

    @_tool(
        description="Feasible serving configurations for {model?, workload?, hardware?, constraints?, objective?}, "
        "grouped by serving cohort: ranked only under an explicit objective, the Pareto frontier otherwise."
    )
    async def resolve_serving(
        self, request: ResolveServingRequest, limit: Annotated[int, Field(default=5, ge=1, le=20)] = 5, at: At = None
    ) -> str:
        variables = {
            "at": at,
            "filter": {"model": request.model, "workload": request.workload},
            "constraints": [c.model_dump() for c in request.constraints] or None,
            "objective": request.objective.model_dump() if request.objective else None,
        }
        wanted = request.hardware.lower() if request.hardware else None
        cohorts: list[dict[str, Any]] = []
        found: dict[str, Any] = {}
        for _ in range(10_000):
            found = await self.backend.query(docs.SERVING_RESOLVE, variables)
            variables["at"] = variables["at"] or found["commit"]["id"]
            page = found["servingCohorts"]
            cohorts.extend(
                edge["node"]
                for edge in page["edges"]
                if wanted is None or wanted in edge["node"]["topologyKey"].lower()
            )
            if len(cohorts) >= limit or not page["pageInfo"]["hasNextPage"]:
                break
            variables["after"] = page["pageInfo"]["endCursor"]
        result = {
            "request": request.model_dump(exclude_none=True, exclude_defaults=True),
            "cohorts": cohorts[:limit],
            "found": bool(cohorts),
            "comparableAcrossCohorts": False,
        }
        return _answer(found, result)

    @_tool(
        description="Serving run evidence dossier by name, digest or prefix: configuration, topology, measurements, "
        "cohort, caveats and attribution."
    )
    async def get_serving_run(self, id: Ident, at: At = None) -> str:
        dossier = docs.SERVING_DOSSIER_QUERY.replace("registry(at: $at) {", _PINNED, 1)
        found = await self.backend.query(dossier, {"at": at, "id": id})
        run = _required(found["servingRun"], "serving run", id, found["commit"]["id"])
        return _answer(found, {"servingRun": run})

    async def _manifest_text(self, at: str | None, digest: str) -> str:
        try:
            found = await self.backend.query(docs.MANIFEST, {"at": at, "digest": digest})
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        manifest = found["manifest"]
        if manifest is None or manifest["digest"] != digest:
            raise ResourceError(f"manifest not found: {digest} at {found['commit']['id']}")
        return str(manifest["text"])

    @_resource(
        "kernelindex://manifests/{digest}",
        name="manifest",
        description="A manifest's stored bytes at main's served head (sha256:<64 hex>).",
    )
    async def manifest_at_head(self, digest: str) -> str:
        return await self._manifest_text(None, digest)

    @_resource(
        "kernelindex://at/{commit}/manifests/{digest}",
        name="pinned-manifest",
        description="A manifest's stored bytes at a commit.",
    )
    async def manifest_at_commit(self, commit: str, digest: str) -> str:
        return await self._manifest_text(commit, digest)


def build_server(backend: Backend) -> MCPServer:
    """The MCP server over `backend`: the tools in `TOOLS` and the manifest resources."""
    server = MCPServer(
        "kernelindex",
        title="KernelIndex registry",
        version="1.0.0",
        instructions=(
            "A registry of GPU-kernel benchmark results. Runs rank only inside their cohort (same operation, "
            "workload, protocol, environment, correctness policy and metric); lower latency is better. Every "
            "answer names the commit it is pinned to; pass `at` to ask about another commit."
        ),
        log_level="WARNING",
    )
    tools = Tools(backend)
    for name in TOOLS:
        server.tool(description=_DESCRIPTIONS[name])(getattr(tools, name))
    for method, (uri, name, description) in _RESOURCES.items():
        server.resource(uri, name=name, description=description, mime_type="application/json")(getattr(tools, method))
    return server


_PINNED = "registry(at: $at) { commit { id committedAt }"


def _days_before(instant: str, days: int) -> str:
    import datetime as dt

    moment = dt.datetime.fromisoformat(instant.replace("Z", "+00:00")) - dt.timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_stdio(snapshots: Snapshots, base_url: str | None, today: Callable[[], Any]) -> None:
    """Serve the tools over stdin/stdout (`kernelindex mcp`); loads the registry first."""

    snapshots.load()
    queries = QueryService(snapshots, StoredObjects(snapshots), (base_url or "").rstrip("/"), today=today)
    anyio.run(build_server(Backend(queries)).run_stdio_async)


def http_app(backend: Backend) -> tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """The ASGI endpoint for `/mcp` (streamable HTTP, stateless, JSON answers) and the context manager
    the application's lifespan must enter for it to run."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(backend)
    manager = StreamableHTTPSessionManager(
        app=server._lowlevel_server,  # the SDK's own streamable_http_app does the same
        json_response=True,
        stateless=True,
        # Public, read-only data with no credentials: nothing for a rebinding attack to reach.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @contextlib.asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with manager.run():
            yield

    return StreamableHTTPASGIApp(manager), running
