"""The serving tables of the catalog export: upstream's row shapes, filled from the serving manifests.

Columns are what the manifests say, and for a serving run the serving-v1 identity the graph derives
(`cohortKey`, `protocolKey`, `metricSetKey`: registry/serving_graph.py), which never mixes with kernel
cohorts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kernelindex.registry.export_ids import row_id
from kernelindex.registry.serving_graph import ServingFacts

__all__ = ["SERVING_TABLES", "serving_measurements", "serving_row"]

SERVING_TABLES = (
    ("model_revisions", "ModelRevision"),
    ("serving_stack_revisions", "ServingStackRevision"),
    ("serving_configurations", "ServingConfiguration"),
    ("serving_workloads", "ServingWorkload"),
    ("serving_runs", "ServingRun"),
)


def _ref(spec: dict[str, Any], key: str) -> str | None:
    digest = spec.get(key)
    return row_id(digest) if isinstance(digest, str) else None


def serving_row(
    table: str,
    document: dict[str, Any],
    digest: str,
    projects: dict[str, str],
    facts: ServingFacts | None = None,
) -> dict[str, Any]:
    """The columns of one serving manifest's row (besides id, sourceId, createdAt and manifest).
    `projects` maps a SoftwareProject's spec name to its digest (a stack names its project so);
    `facts` are a serving run's derived facts."""
    spec = document["spec"]
    metadata = document["metadata"]
    common = {"slug": metadata["name"], "schemaVersion": document["apiVersion"]}
    if table == "model_revisions":
        return common | {
            "modelDigest": digest,
            "name": spec.get("model") or metadata.get("title") or metadata["name"],
            "parameterCount": spec.get("parameterCount"),
            "contextLength": spec.get("contextLength"),
            "tokenizer": spec.get("tokenizer"),
            "license": spec.get("license"),
        }
    if table == "serving_stack_revisions":
        version = (spec.get("revision") or {}).get("version")
        project = projects.get((spec.get("project") or {}).get("name", ""))
        return common | {
            "projectId": row_id(project) if project else None,
            "stackDigest": digest,
            "name": version or metadata.get("title") or metadata["name"],
            "version": version,
        }
    if table == "serving_configurations":
        return {"schemaVersion": document["apiVersion"]} | {
            "stackRevisionId": _ref(spec, "stackDigest"),
            "configurationDigest": digest,
            "dtype": spec.get("dtype"),
            "quantization": spec.get("quantization"),
            "tensorParallel": (spec.get("parallelism") or {}).get("tensorParallel"),
            "summary": metadata.get("title"),
        }
    if table == "serving_workloads":
        return common | {
            "workloadDigest": digest,
            "name": metadata.get("title") or metadata["name"],
            "streaming": spec.get("streaming"),
            "loadGeneration": spec.get("loadGeneration"),
        }
    topology = spec.get("topology") or {}
    nodes, per_node = topology.get("nodeCount"), topology.get("acceleratorsPerNode")
    return {"schemaVersion": document["apiVersion"]} | {
        "runDigest": digest,
        "modelRevisionId": _ref(spec, "modelDigest"),
        "configurationId": _ref(spec, "configurationDigest"),
        "workloadId": _ref(spec, "workloadDigest"),
        "status": spec.get("status"),
        "observedAt": spec.get("observedAt"),
        "cohortKey": facts.cohort if facts else None,
        "protocolKey": facts.parts.protocol_key if facts and facts.parts else None,
        "qualityPolicy": spec.get("qualityPolicy"),
        "metricSetKey": facts.parts.metric_set_key if facts and facts.parts else None,
        "scenario": (spec.get("sourceNative") or {}).get("scenario"),
        "acceleratorVendor": topology.get("acceleratorVendor"),
        "acceleratorModel": topology.get("acceleratorModel"),
        "acceleratorCount": per_node,
        "nodeCount": nodes,
        "totalAccelerators": nodes * per_node if isinstance(nodes, int) and isinstance(per_node, int) else None,
        "reported": True,
        "supersedesId": None,
        "retractedAt": None,
        "retractionReason": None,
    }


def serving_measurements(document: dict[str, Any], digest: str) -> Iterator[dict[str, Any]]:
    for index, m in enumerate(document["spec"].get("measurements") or ()):
        yield {
            "id": row_id(f"{digest}#measurement/{index}"),
            "runId": row_id(digest),
            "metric": m["metric"],
            "statistic": m["statistic"],
            "unit": m["unit"],
            "value": m["value"],
            "sampleCount": m.get("sampleCount"),
        }
