"""Import MLPerf Inference results (`summary_results.json` of MLCommons' per-round result repositories,
Apache-2.0) as serving manifests: ModelRevision, SoftwareProject (the submitter), ServingStackRevision,
ServingConfiguration, ServingWorkload and ServingRun.

The mapping is KernelIndex's (`apps/web/src/server/import/mlperf/`: discover.ts, normalize.ts, types.ts),
so the same rows give the same digests here and upstream (the tests check them against the corpus). The
scope is upstream's: the closed division, the datacenter suite, token-throughput LLM benchmarks; any
other row is skipped with its reason (open division, another suite, a non-LLM benchmark, a result that
is not a token throughput, a CPU-only system). A benchmark's -99/-99.9 suffix is an accuracy target: it
is the run's quality policy, never its model. Declared TTFT/TPOT bounds ride the workload, citing the
inference rules. Results are imported unmodified: never per accelerator, never a universal score.

A row's round is its `version` (each round's publication date is a pinned fact: the creation of its
result repository). Malformed in-scope rows (a missing or mistyped field, a token throughput in another
unit than tokens/s, a repeated row) are refused with file, line and column, as is a file that is not JSON.

One deliberate difference: the submitter's SoftwareProject is the one upstream published (the corpus),
without the `kind: vendor` upstream's code added later, which would fork every submitter's project
under a new digest (upstream keys projects by slug, so it does not see the change; a registry keyed by
digest would).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.importers.fields import BadValue, Located, Record, js_numbers, kebab, pruned
from kernelindex.registry.importers.locate import json_path
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, SourceFileError, json_document

__all__ = ["BENCHMARKS", "ROUNDS", "TERMS", "plan_mlperf"]

API_VERSION = "kernelindex.dev/v1alpha1"
RESULTS_URL = "https://mlcommons.org/benchmarks/inference-datacenter/"
RULES_URL = "https://github.com/mlcommons/inference_policies/blob/master/inference_rules.adoc"

TERMS = SourceTerms(
    slug="mlperf-inference",
    name="MLPerf Inference",
    license="Apache-2.0",
    attribution="MLPerf™ Inference results by MLCommons; MLPerf™ is a trademark of MLCommons",
    url=RESULTS_URL,
)


@dataclass(frozen=True, slots=True)
class Round:
    repository: str
    ref: str
    published_at: str  # the result repository's creation: a verifiable publication fact


ROUNDS = {
    "v5.1": Round(
        "mlcommons/inference_results_v5.1", "5ea4f62ef62536e6bf4d78a9b440fb9035ddfb4a", "2025-09-04T19:30:14Z"
    ),
    "v6.0": Round(
        "mlcommons/inference_results_v6.0", "4d3916ac9cf474b679cdfcf492d43a0559418ad1", "2026-03-26T19:39:54Z"
    ),
}


@dataclass(frozen=True, slots=True)
class Benchmark:
    model: str
    dataset: str
    quality: str
    slo: dict[str, tuple[int, int]]  # scenario -> (TTFT p99 ms, TPOT p99 ms), from the inference rules


_LLAMA2 = ("Llama-2-70B (MLPerf reference)", "OpenOrca (max_seq_len=1024)")
_LLAMA2_SLO = {"Server": (2000, 200), "Interactive": (450, 40)}
BENCHMARKS = {
    "llama2-70b-99": Benchmark(*_LLAMA2, "mlperf-closed-99", _LLAMA2_SLO),
    "llama2-70b-99.9": Benchmark(*_LLAMA2, "mlperf-closed-99.9", _LLAMA2_SLO),
    "llama3.1-8b": Benchmark(
        "Llama-3.1-8B (MLPerf reference)",
        "CNN DailyMail v3.0.0 (max_seq_len=2048)",
        "mlperf-closed-99",
        {"Server": (2000, 100), "Interactive": (500, 30)},
    ),
    "llama3.1-405b": Benchmark(
        "Llama-3.1-405B (MLPerf reference)",
        "LongBench/LongDataCollections/Ruler/GovReport subset",
        "mlperf-closed-99",
        {"Server": (6000, 175), "Interactive": (4500, 80)},
    ),
    "mixtral-8x7b": Benchmark(
        "Mixtral-8x7B (MLPerf reference)",
        "OpenOrca + GSM8K + MBXP (5k each)",
        "mlperf-closed-99",
        {"Server": (2000, 200)},
    ),
    "deepseek-r1": Benchmark(
        "DeepSeek-R1 (MLPerf reference)",
        "mlperf_deepseek_r1",
        "mlperf-closed-99",
        {"Server": (2000, 80), "Interactive": (1500, 15)},
    ),
    "gpt-oss-120b": Benchmark(
        "GPT-OSS-120B (MLPerf reference)",
        "AIME25 + GPQA Diamond + LiveCodeBench v6",
        "mlperf-closed-99",
        {"Server": (3000, 80), "Interactive": (2000, 20)},
    ),
}
_KNOWN_VENDORS = {"nvidia", "amd", "intel", "google", "cerebras"}
_PLACEHOLDERS = {"todo", "n/a", "tbd", "-", "none"}
TOKENS_PER_SECOND = "Tokens/s"


def _tokenize(value: str) -> str:
    """Upstream's identifier form: lower case, other runs to `_`, no leading non-letters.

    >>> _tokenize("mlperf-closed-99.9"), _tokenize("Interactive"), _tokenize("fp4")
    ('mlperf_closed_99_9', 'interactive', 'fp4')
    """
    token = re.sub(r"[^a-z0-9]+", "_", value.lower())
    token = re.sub(r"_+$", "", re.sub(r"^[^a-z]+", "", token))
    return token or "unknown"


def model_slug(benchmark: str) -> str:
    """The base model's slug: the -99/-99.9 suffix is an accuracy target, not a model.

    >>> model_slug("llama2-70b-99.9"), model_slug("gpt-oss-120b")
    ('mlperf-llama2-70b', 'mlperf-gpt-oss-120b')
    """
    base = re.sub(r"-99(\.9)?$", "", benchmark)
    return f"mlperf-{kebab(base)}"


def accelerator(raw: str) -> tuple[str | None, str]:
    """Vendor and model of an accelerator, without the count suffix.

    >>> accelerator("AMD Instinct MI355X 288GB HBM3e (x87)")
    ('amd', 'AMD Instinct MI355X 288GB HBM3e')
    """
    model = re.sub(r"\s*\(x\d+\)\s*$", "", raw).strip()
    first = model.split()[0].lower() if model.split() else ""
    return (first if first in _KNOWN_VENDORS else None), model


def plan_mlperf(path: Path, *, progress: Progress | None = None) -> ImportPlan:
    """Read MLPerf Inference summaries under `path` (a `summary_results.json`, or a directory searched
    recursively for JSON arrays of result rows) and map the in-scope rows to serving manifests.

    Malformed rows are collected in `plan.problems`; the caller decides.

    Raises:
        SourceFileError: a file is not JSON, or there is no summary here.
    """
    plan = ImportPlan(TERMS, [])
    files = sorted(p for p in path.rglob("*.json") if p.is_file()) if path.is_dir() else [path]
    mapper = _Mapper(plan)
    for file in files:
        source = InputFile.of(file, path if path.is_dir() else None)
        value = json_document(source)
        if not isinstance(value, list):
            plan.inputs.append(source)
            plan.skip(f"{source.name}:1", "not an MLPerf summary (a JSON array of result rows)")
            continue
        plan.inputs.append(source)
        located = Located(source, file.read_bytes())
        for index, row in enumerate(value):
            if progress and index % 200 == 0:
                progress("read " + source.name, index, len(value))
            mapper.row(located, index, row)
    if not plan.rows and not plan.problems:
        raise SourceFileError(InputFile(path, path.name).at(1, 1, "no MLPerf summary here (summary_results.json)"))
    rounds = sorted({key.split("/")[0] for key in mapper.seen})
    plan.revision = ", ".join(f"{r} {ROUNDS[r].repository}@{ROUNDS[r].ref}" for r in rounds) or None
    return plan


class _Mapper:
    def __init__(self, plan: ImportPlan) -> None:
        self.plan = plan
        self.seen: dict[str, str] = {}  # round/ID/model/scenario -> where

    def _add(self, where: str, document: dict[str, Any]) -> str:
        return self.plan.add(where, js_numbers(pruned(document))).digest

    def row(self, located: Located, index: int, value: Any) -> None:
        where = f"{located.source.name}:{json_path((index,))}"
        try:
            row = Record(value, (index,))
            skipped = _out_of_scope(row)
            if skipped is not None:
                self.plan.skip(where, skipped)
                return
            version = _check(row)
            if version not in ROUNDS:
                self.plan.skip(where, f"round {version} is not a pinned round ({', '.join(ROUNDS)})")
                return
            identity = "/".join((version, row.text("ID"), row.text("Model"), row.text("Scenario")))
            if identity in self.seen:
                raise BadValue(row.path, f"repeats the row at {self.seen[identity]} (same round, ID, model, scenario)")
            self.seen[identity] = where
            self._map(where, row, version)
        except BadValue as exc:
            self.plan.refuse(located.problem(exc))
        except InvalidManifest as exc:
            self.plan.problems.extend(exc.problems)

    def _map(self, where: str, row: Record, version: str) -> None:
        benchmark = row.text("Model")
        spec = BENCHMARKS[benchmark]
        submitter, software, scenario = row.text("Submitter"), row.text("Software"), row.text("Scenario")
        model = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ModelRevision",
                "metadata": {"name": model_slug(benchmark), "title": spec.model, "sourceRefs": [{"url": RULES_URL}]},
                "spec": {"model": spec.model},
            },
        )
        self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "SoftwareProject",
                "metadata": {"name": f"mlperf-{kebab(submitter)}"},
                "spec": {"name": f"{submitter} (MLPerf submitter)", "repository": RESULTS_URL},
            },
        )
        name = software.strip()[:200]
        placeholder = len(name) < 3 or name.lower() in _PLACEHOLDERS
        stack = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ServingStackRevision",
                "metadata": {
                    "name": kebab(f"mlperf-stack-{submitter}-{name}")[:200],
                    "title": f"{submitter} submission (software not stated)" if placeholder else name,
                },
                "spec": {
                    "project": {"name": f"{submitter} (MLPerf submitter)"},
                    "revision": {"version": software.strip()[:120]},
                    "apiProtocol": "loadgen_sut",
                },
            },
        )
        options = {
            "system": row.text("System")[:500],
            "software": software[:500],
            "availability": row.text("Availability")[:500],
            "notes": (row.maybe_text("Notes") or "")[:500] or None,
        }
        dtypes = row.maybe_text("weight_data_types")
        configuration = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ServingConfiguration",
                "metadata": {"name": kebab(f"mlperf-{submitter}-{row.text('System')}")[:200]},
                "spec": {"stackDigest": stack, "dtype": _tokenize(dtypes) if dtypes else None, "options": options},
            },
        )
        slo = spec.slo.get(scenario)
        offline = scenario == "Offline"
        workload = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ServingWorkload",
                "metadata": {
                    "name": kebab(f"mlperf-{benchmark}-{scenario}"),
                    "title": f"{benchmark} · {scenario}",
                    "sourceRefs": [{"url": RULES_URL}],
                },
                "spec": {
                    "dataset": {"name": spec.dataset},
                    "streaming": not offline,
                    "loadGeneration": "offline" if offline else "open_loop",
                    "arrival": None if offline else "poisson",
                    "slo": [
                        {"metric": "ttft_ms", "statistic": "p99", "operator": "<=", "value": slo[0], "unit": "ms"},
                        {"metric": "tpot_ms", "statistic": "p99", "operator": "<=", "value": slo[1], "unit": "ms"},
                    ]
                    if slo
                    else None,
                },
            },
        )
        vendor, accelerator_model = accelerator(row.text("Accelerator"))
        result = row.number("Performance_Result")
        availability = row.text("Availability")
        identifier = row.text("ID")
        details = row.maybe_text("Details")
        run = self.plan.add(
            where,
            js_numbers(
                pruned(
                    {
                        "apiVersion": API_VERSION,
                        "kind": "ServingRun",
                        "metadata": {
                            "name": kebab(f"mlperf-{version}-{identifier}"),
                            "title": f"{submitter} · {benchmark} · {scenario}",
                            "sourceRefs": [{"url": details}] if details else None,
                        },
                        "spec": {
                            "modelDigest": model,
                            "configurationDigest": configuration,
                            "workloadDigest": workload,
                            "topology": {
                                "acceleratorVendor": vendor,
                                "acceleratorModel": accelerator_model,
                                "acceleratorsPerNode": row.integer("a#"),
                                "nodeCount": row.integer("Nodes"),
                            },
                            "harness": {"name": "mlperf_loadgen", "version": version},
                            "qualityPolicy": _tokenize(spec.quality),
                            "status": "valid",
                            "measurements": [
                                {
                                    "metric": "output_token_throughput_tps",
                                    "unit": "tokens_s",
                                    "statistic": "reported",
                                    "value": result,
                                }
                            ],
                            "sourceNative": {
                                "source": TERMS.slug,
                                "benchmark": benchmark,
                                "scenario": _tokenize(scenario),
                                "division": "closed",
                                "category": "datacenter",
                                "externalId": f"{version}/{identifier}",
                                "metrics": {
                                    "performance_result": result,
                                    "performance_units": row.text("Performance_Units"),
                                },
                            },
                            "caveats": [f"Availability: {availability}"] if availability != "available" else None,
                            "observedAt": ROUNDS[version].published_at,
                        },
                    }
                )
            ),
        )
        self.plan.imported(where, run)


def _out_of_scope(row: Record) -> str | None:
    """Upstream's scope, in its order: why a row is not imported, or None."""
    if row.raw("Category") != "closed":
        return "open or network division (closed only)"
    if row.raw("Suite") != "datacenter":
        return "not the datacenter suite"
    if row.raw("Model") not in BENCHMARKS:
        return "not a token-throughput LLM benchmark"
    units = row.raw("Performance_Units")
    if units != TOKENS_PER_SECOND:
        if isinstance(units, str) and units.lower().startswith("tokens/"):
            # A token throughput in another unit is in scope and wrong, not out of scope.
            raise BadValue(row.at("Performance_Units"), f"token throughput is in {TOKENS_PER_SECOND}, not {units!r}")
        return "not a token throughput"
    if row.raw("Accelerator") == "" or row.raw("a#") == "":
        return "no accelerator (a CPU-only system)"
    return None


def _check(row: Record) -> str:
    """Every field the mapping reads, typed; the row's round.

    Raises:
        BadValue: a missing or mistyped field.
    """
    for key in ("ID", "Submitter", "Availability", "System", "Model", "Scenario", "Accelerator", "Software"):
        row.text(key)
    for key in ("Nodes", "a#"):
        if row.integer(key) <= 0:
            raise BadValue(row.at(key), f"{key} is a positive integer, not {row.raw(key)!r}")
    for key in ("weight_data_types", "Notes", "Details"):
        row.maybe_text(key)
    if row.number("Performance_Result") <= 0:
        raise BadValue(row.at("Performance_Result"), f"a throughput is positive, not {row.raw('Performance_Result')!r}")
    return row.text("version")
