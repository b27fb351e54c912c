"""The MCP server (api/http/mcp_server.py) through the SDK's own client, over stdio (`kernelindex mcp`) and over
streamable HTTP (`/mcp` of a real server): every tool with real arguments (the seed runs, their cohorts),
answers pinned to a commit, and bad arguments as tool errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from helpers import EMBEDDED_REPO, PROJECT_ROOT
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent
from server import serve

from kernelindex.http.mcp_server import TOOLS
from kernelindex.registry.schemas import schema_of

pytestmark = pytest.mark.slow

SEEDED = "e775d39b6768675ff8eb086da76420493425c1a4"  # pinned: the embedded registry's commit with the seeds
SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"  # sol-submission-6709
SEED_000_COHORT = "sha256:92bc0be5b5ce9f52"  # its key starts so
UPSTREAM_TOOLS = {  # apps/mcp/src/server.ts in SamMausberg/KernelIndex, as the issue lists them
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
    "list_models",
    "resolve_serving",
    "get_serving_run",
    "validate_manifest",
    "get_manifest_schema",
}
# data/corpus: the first serving_runs row and its serving_measurements row.
MLPERF_RUN = "sha256:cf776f5ecc9fb9ba277b1d29e9edc322fb8f87d6b5880b9c4cfcc8244cd8d206"


def _json(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, arguments)
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def _exercise(client: Client) -> None:
    """Every tool, called with real arguments, each answer checked against facts from elsewhere."""
    tools = {tool.name for tool in (await client.list_tools()).tools}
    assert tools == set(TOOLS) == UPSTREAM_TOOLS
    at = {"at": SEEDED}

    dossier = _json(await client.call_tool("get_benchmark_evidence", {"idOrDigest": "sol-submission-6709", **at}))
    assert dossier["commit"] == SEEDED
    run = dossier["run"]
    assert (run["digest"], run["rank"], run["primary"]["display"]) == (SEED_000, 2, "144.6 µs")  # the README's query
    assert run["cohort"]["key"].startswith(SEED_000_COHORT)
    assert dossier["permalinks"] == [f"/at/{SEEDED}/runs/{SEED_000}"]
    operation_name = run["operation"]["name"]
    cohort_key = run["cohort"]["key"]

    compared = _json(
        await client.call_tool("compare_runs", {"runs": ["sol-submission-6709", "sol-submission-16043"], **at})
    )
    comparison = compared["comparison"]
    assert comparison["sameCohort"] and comparison["material"] == []  # docs/api.md "Compare": ranks 2 and 1
    assert sorted((e["run"]["name"], e["rank"]) for e in comparison["entries"]) == [
        ("sol-submission-16043", 1),
        ("sol-submission-6709", 2),
    ]

    search = _json(
        await client.call_tool("search_catalog", {"q": "fused_attention_qk_matmul_scale_mask_softmax", **at})
    )
    found = {item["name"]: item for item in search["operations"]["items"]}
    assert operation_name in found
    assert any(c["key"] == cohort_key for c in found[operation_name]["cohorts"]["edges"] for c in [c["node"]])

    request = {"operation": operation_name, "hardware": "NVIDIA B200"}
    decision = _json(await client.call_tool("resolve_kernel", {"request": request, **at}))
    best = {b["cohort"]: b["run"]["name"] for b in decision["decision"]["bestPerCohort"]}
    assert best[cohort_key] == "sol-submission-16043"  # the cohort's #1 (docs/api.md: 144.5 µs)
    assert decision["decision"]["comparableAcrossCohorts"] is False
    assert decision["mode"] == "EXACT" and decision["operations"][0]["how"] == "NAME"
    batch = _json(await client.call_tool("resolve_kernels", {"requests": [request, {"operation": "no-such-op"}], **at}))
    assert [d["found"] for d in batch["decisions"]] == [True, False]
    assert batch["decisions"][1]["error"].startswith(f"operation not found: 'no-such-op' at {SEEDED}")
    # As people type it: `rmsnorm` is the title of Liger-Kernel's RMSNorm (at the head: the Liger commit), and
    # its case (data/sources/liger: hidden 4096, 2048 rows, bf16 on an A100) was measured forward, backward and
    # whole: three cohorts, each with its leader.
    liger = {"operation": "rmsnorm", "hardware": "A100", "dtype": "bf16", "axes": {"hidden": 4096, "rows": 2048}}
    rms = _json(await client.call_tool("resolve_kernel", {"request": liger}))
    assert [(m["how"], m["operation"]["title"]) for m in rms["operations"]] == [("ALIAS", "RMSNorm")]
    assert rms["mode"] == "EXACT" and rms["resolution"]["exact"]["total"] == 3
    assert {b["run"]["name"].split("-nvidia-a100")[0] for b in rms["decision"]["bestPerCohort"]} <= {
        f"liger-rms-norm-{phase}-{impl}"
        for phase in ("forward", "backward", "full")
        for impl in ("liger", "huggingface")
    }
    assert len(rms["decision"]["bestPerCohort"]) == 3
    near = _json(
        await client.call_tool("resolve_kernel", {"request": {**liger, "axes": {"hidden": 3000, "rows": 2048}}})
    )
    assert near["mode"] == "NEAREST" and near["decision"]["bestPerCohort"] == []
    first = near["resolution"]["nearest"]["items"][0]
    assert [(d["facet"], d["axis"], d["requested"]) for d in first["differences"]] == [("AXIS", "hidden", "3000")]
    unknown = await _error(client, "resolve_kernel", {"request": {"operation": "rmsnrom"}})
    assert "operation not found: 'rmsnrom' at " in unknown and "nearest names: RMSNorm" in unknown

    op = _json(await client.call_tool("get_operation", {"idOrSlug": operation_name, **at}))["operation"]
    assert op["name"] == operation_name and op["runCount"] >= 2
    assert any(c["key"] == cohort_key for c in op["cohorts"]["items"])

    implementation = run["implementation"]
    got = _json(
        await client.call_tool(
            "get_implementation", {"idOrSlug": implementation["digest"], "includeSource": True, **at}
        )
    )
    assert got["implementation"]["digest"] == implementation["digest"]
    assert "source" in got["implementation"] and got["implementation"]["manifest"]["permalink"].startswith("/at/")

    records = _json(await client.call_tool("list_records", {"limit": 3, **at}))["records"]
    assert records["total"] == 1829  # docs/api.md "The records ledger" at the seeds' commit
    assert len(records["items"]) == 3 and records["nextCursor"]
    assert records["items"][0]["holder"]["name"] == "sol-submission-36835"  # docs/api.md: the newest holder
    second = _json(await client.call_tool("list_records", {"limit": 3, "cursor": records["nextCursor"], **at}))
    assert {i["cohort"]["key"] for i in second["records"]["items"]}.isdisjoint(
        i["cohort"]["key"] for i in records["items"]
    )

    changes = _json(await client.call_tool("list_changes", {"since": "2026-08-15T00:00:00Z", "limit": 100, **at}))
    assert changes["changes"]["items"] and all(i["since"] > "2026-08-15T00:00:00Z" for i in changes["changes"]["items"])
    assert changes["changes"]["items"][0]["holder"]["name"] == "sol-submission-36835"  # since 2026-08-15T00:18:22Z

    runs = _json(
        await client.call_tool(
            "list_runs", {"operation": operation_name, "hardware": "NVIDIA B200", "status": "passed", "limit": 5, **at}
        )
    )
    assert runs["runs"]["items"] and all(
        r["environment"]["gpu"].startswith("NVIDIA B200") for r in runs["runs"]["items"]
    )
    assert runs["runs"]["total"] >= 2  # at least the two seed-000 cohort runs

    hardware = _json(await client.call_tool("list_hardware", at))["hardware"]
    assert sum(h["kernelRuns"] for h in hardware) == 7857 + 2  # data/corpus/README.md's runs plus the two seeds
    assert hardware[0]["kernelRuns"] >= hardware[-1]["kernelRuns"]

    example = (PROJECT_ROOT / "docs" / "examples" / "my-implementation.yaml").read_text()
    valid = _json(await client.call_tool("validate_manifest", {"content": example, **at}))
    # docs/contributing.md: `kernelindex digest my-implementation.yaml` prints this digest.
    assert (
        valid["valid"]
        and valid["specDigest"] == "sha256:65b9def4e5602f05924cffa7d052115c36d1a7e15a9bea0b712feb449efba5bd"
    )
    assert valid["references"] and all(r["resolves"] for r in valid["references"])
    invalid = _json(
        await client.call_tool(
            "validate_manifest", {"content": '{"kind": "OperationSpec", "spec": {}}', "format": "json"}
        )
    )
    assert invalid["valid"] is False and invalid["errors"]

    schema = _json(await client.call_tool("get_manifest_schema", {"kind": "BenchmarkRun"}))
    assert schema == schema_of("BenchmarkRun")  # the shipped schema: durations constrained

    stored = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "cat-file", "blob", f"{SEEDED}:benchmark-runs/7f/{SEED_000[7:]}.json"],
        capture_output=True,
        check=True,
    ).stdout
    resource = await client.read_resource(f"kernelindex://at/{SEEDED}/manifests/{SEED_000}")
    assert resource.contents[0].text.encode() == stored  # type: ignore[union-attr]

    serving = _json(await client.call_tool("get_serving_run", {"id": MLPERF_RUN, **at}))["servingRun"]
    assert serving["topology"]["acceleratorModel"] == "AMD Instinct MI300X 192GB HBM3"
    assert serving["topology"]["totalAccelerators"] == 8
    assert [(m["metric"], m["value"]) for m in serving["measurements"]] == [("output_token_throughput_tps", 8840.42)]
    assert serving["model"]["name"] == "mlperf-llama2-70b"

    models = _json(await client.call_tool("list_models", at))["models"]
    assert sum(m["servingRuns"] for m in models) == 722  # data/corpus/README.md: serving_runs (722)
    assert len(models) == 6 and "mlperf-llama2-70b" in {m["name"] for m in models}  # model_revisions (6)

    request = {
        "model": "mlperf-llama2-70b",
        "hardware": "MI300X",
        "objective": {"metric": "output_token_throughput_tps"},
    }
    resolved = _json(await client.call_tool("resolve_serving", {"request": request, "limit": 20, **at}))
    assert resolved["found"] and resolved["comparableAcrossCohorts"] is False
    assert any(c["resolve"]["runs"] and c["resolve"]["runs"][0]["run"]["digest"] for c in resolved["cohorts"])
    for cohort in resolved["cohorts"]:
        assert "mi300x" in cohort["topologyKey"].lower() and cohort["model"]["name"] == "mlperf-llama2-70b"
        assert cohort["resolve"]["mode"] == "RANKED"
        values = [r["value"] for r in cohort["resolve"]["runs"]]
        assert values == sorted(values, reverse=True)  # throughput: higher is better
    frontier = _json(await client.call_tool("resolve_serving", {"request": {"model": "mlperf-llama2-70b"}, **at}))
    assert {c["resolve"]["mode"] for c in frontier["cohorts"]} == {"FRONTIER"}  # no objective: never ranked

    # Bad arguments are tool errors that say what is wrong; the server keeps answering.
    assert "revision not found" in await _error(
        client, "get_benchmark_evidence", {"idOrDigest": "x", "at": "no-such-branch"}
    )
    assert "run not found" in await _error(client, "get_benchmark_evidence", {"idOrDigest": "no-such-run", **at})
    assert "at least 2" in await _error(client, "compare_runs", {"runs": ["sol-submission-6709"]})
    assert "less than or equal to 100" in await _error(client, "list_records", {"limit": 101})
    assert "not a run status" in await _error(client, "list_runs", {"status": "fast"})
    assert "not an ISO 8601" in await _error(client, "list_changes", {"since": "yesterday"})
    assert "no schema for kind" in await _error(client, "get_manifest_schema", {"kind": "Nope"})
    assert "Extra inputs" in await _error(client, "resolve_kernel", {"request": {"operation": "x", "gpu": "B200"}})
    bad_operator = {"request": {"constraints": [{"metric": "ttft_ms", "operator": "=", "value": 1}]}}
    assert "operator" in await _error(client, "resolve_serving", bad_operator)
    unknown_metric = {"request": {"constraints": [{"metric": "speed", "operator": ">=", "value": 1}]}, **at}
    assert "UNKNOWN_METRIC" in await _error(client, "resolve_serving", unknown_metric)
    assert "serving run not found" in await _error(client, "get_serving_run", {"id": "no-such-run", **at})
    assert _json(await client.call_tool("get_manifest_schema", {"kind": "OperationSpec"}))


def _run(session: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(session())


def test_every_tool_over_stdio() -> None:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kernelindex.cli", "mcp", "--repo", str(EMBEDDED_REPO)],
        cwd=str(PROJECT_ROOT),
        env={"KERNELINDEX_GRAPH_CACHE": "0"},
    )

    async def session() -> None:
        async with Client(parameters) as client:
            await _exercise(client)

    _run(session)


def test_every_tool_over_streamable_http() -> None:
    with serve(EMBEDDED_REPO) as running:

        async def session() -> None:
            async with Client(f"{running.url}/mcp") as client:
                await _exercise(client)

        _run(session)
        # The server still answers GraphQL afterwards: nothing crashed.
        assert running.graphql("{ commit { id } }").status_code == 200
