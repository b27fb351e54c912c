"""Import a FlashInfer-Bench dataset (`flashinfer-ai/flashinfer-trace`, Apache-2.0) as manifests: its
definitions, solutions and traces, from a clone of the dataset or from files beside the dataset API's
listing (`info.json`: the revision and the file tree).

The mapping is KernelIndex's (`apps/web/src/server/import/flashinfer/`: normalize.ts, reconcile.ts), on
the trace format SOL-ExecBench adopted (`trace_format.py`), so the same input gives the same digests here
and upstream (the tests check them against the corpus):

- a definition is an OperationSpec; each distinct workload a trace measures is a WorkloadCase;
- a solution is an ImplementationRevision pinned to the dataset revision, its entry-point source named
  by digest (the code is Apache-2.0), in the SoftwareProject of its author (`flashinfer-<author>`);
- a trace line is a per-case BenchmarkRun under the `flashinfer-bench-trace` protocol.

Solutions and traces live under per-author directories (`solutions/<author>/<op_type>/<definition>/`):
`baseline` (human and library code) imports by default; a model's directory imports only when named
(`authors`), labelled `role: llm-generated` with the model, so agent output never reads as a baseline.
A solution's directory comes from its path in a clone, else from the listing; one placed in neither
is skipped, never guessed.

Malformed input (a truncated JSON line, a missing or mistyped field, a latency in another unit than
ms, a repeated solution or trace) is refused with its file, line and column.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.importers.fields import BadValue, Located, Record, js_numbers, kebab, lines_of, pruned
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, SourceFileError, json_document
from kernelindex.registry.importers.trace_format import (
    API_VERSION,
    Trace,
    case_document,
    check_definition,
    dtype,
    hardware,
    language,
    operation_document,
    read_trace,
    trace_environment,
    trace_run_document,
)

__all__ = ["BASELINE", "DATASET_URL", "TERMS", "plan_flashinfer"]

DATASET = "flashinfer-ai/flashinfer-trace"
DATASET_URL = f"https://huggingface.co/datasets/{DATASET}"
HARNESS_REPOSITORY = "https://github.com/flashinfer-ai/flashinfer-bench"
BASELINE = "baseline"

TERMS = SourceTerms(
    slug="flashinfer-bench",
    name="FlashInfer-Bench",
    license="Apache-2.0",
    attribution="FlashInfer-Bench (flashinfer-ai/flashinfer-trace)",
    url=DATASET_URL,
)


_REVISION_HEX = frozenset("0123456789abcdef")


def _is_revision(value: str) -> bool:
    return len(value) == 40 and set(value) <= _REVISION_HEX


@dataclass(slots=True)
class _Definition:
    name: str
    record: Record
    located: Located
    where: str
    operation: str | None = None
    cases: dict[str, str] = field(default_factory=dict)  # workload key -> WorkloadCase digest


@dataclass(frozen=True, slots=True)
class _Solution:
    name: str
    author_directory: str
    implementation: str  # digest


def plan_flashinfer(
    path: Path,
    *,
    revision: str | None = None,
    authors: Iterable[str] = (BASELINE,),
    progress: Progress | None = None,
) -> ImportPlan:
    """Read FlashInfer-Bench files under `path` (a directory, searched recursively, or one file) and map
    them to manifests.

    `revision` is the dataset commit the files come from (40 hex digits), needed unless a listing
    (`info.json`) says it; `authors` are the author directories whose solutions and traces import.
    Malformed rows are collected in `plan.problems`; the caller decides.

    Raises:
        SourceFileError: a file is not JSON, no revision is known or two disagree, or there is nothing
            of FlashInfer-Bench's here.
    """
    if revision is not None and not _is_revision(revision):
        raise SourceFileError(InputFile(path, "--revision").at(1, 1, f"not a 40-hex commit id: {revision!r}"))
    plan = ImportPlan(TERMS, [], revision)
    root = path if path.is_dir() else path.parent
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    documents: list[tuple[InputFile, Located, Any]] = []
    traces: list[Path] = []
    listing: tuple[InputFile, list[str]] | None = None
    for file in files:
        if file.suffix == ".jsonl":
            if "workloads" in file.relative_to(root).parts[:-1]:
                # A clone's workloads/ lists the cases to run (traces without evaluations): the
                # traces carry the cases they measured, as upstream reads them.
                plan.skip(f"{file.relative_to(root).as_posix()}:1", "workload list (the traces name their cases)")
            else:
                traces.append(file)
            continue
        if file.suffix != ".json":
            continue
        source = InputFile.of(file, root)
        plan.inputs.append(source)
        value = json_document(source)
        located = Located(source, file.read_bytes())
        if isinstance(value, dict) and "siblings" in value and "sha" in value:
            listing = (source, _listing(located, value))
            listed = value["sha"]
            if plan.revision is not None and plan.revision != listed:
                raise SourceFileError(
                    located.problem(BadValue(("sha",), f"the listing is of {listed}, not --revision {revision}"))
                )
            plan.revision = listed
        else:
            documents.append((source, located, value))
    if plan.revision is None:
        raise SourceFileError(
            InputFile(path, path.name).at(
                1, 1, "no dataset revision: give --revision SHA, or import the dataset API's listing (info.json)"
            )
        )
    mapper = _Mapper(plan, plan.revision, frozenset(authors), listing[1] if listing else [], root)
    solutions = []
    for source, located, value in documents:
        if isinstance(value, dict) and "axes" in value:
            mapper.definition(located, value, source.name)
        elif isinstance(value, dict) and {"definition", "spec", "sources"} & value.keys():
            solutions.append((source, located, value))
        else:
            plan.skip(f"{source.name}:1", "not a FlashInfer-Bench file (no definition, solution or listing)")
    mapper.operations()
    for source, located, value in solutions:
        mapper.solution(located, value, source)
    for file in traces:
        source = InputFile.of(file, root)
        plan.inputs.append(source)
        mapper.trace_file(source, progress)
    if not plan.rows and not plan.problems:
        raise SourceFileError(
            InputFile(path, path.name).at(1, 1, "no FlashInfer-Bench files here (definitions, solutions, traces)")
        )
    return plan


def _listing(located: Located, value: dict[str, Any]) -> list[str]:
    try:
        record = Record(value)
        sha = record.text("sha")
        if not _is_revision(sha):
            raise BadValue(record.at("sha"), f"not a 40-hex commit id: {sha!r}")
        return [sibling.text("rfilename") for sibling in record.records("siblings")]
    except BadValue as exc:
        raise SourceFileError(located.problem(exc)) from None


class _Mapper:
    """FlashInfer-Bench records to manifests, each shared manifest made once."""

    def __init__(self, plan: ImportPlan, revision: str, authors: frozenset[str], listed: list[str], root: Path) -> None:
        self.plan = plan
        self.revision = revision
        self.authors = authors
        self.root = root
        self.definitions: dict[str, _Definition] = {}
        self.solutions: dict[str, _Solution] = {}
        self.left_out: dict[str, str] = {}  # solution name -> why its traces are skipped
        self.seen_traces: dict[tuple[str, str, str], str] = {}
        self.projects: set[str] = set()
        # (definition, solution name) -> the solution's paths in the dataset's listing
        self.listed: dict[tuple[str, str], list[str]] = {}
        for name in listed:
            parts = name.split("/")
            if parts[0] == "solutions" and len(parts) >= 4 and name.endswith(".json"):
                self.listed.setdefault((parts[-2], parts[-1].removesuffix(".json")), []).append(name)

    def _refuse(self, located: Located, error: BadValue) -> None:
        self.plan.refuse(located.problem(error))

    def _add(self, where: str, document: dict[str, Any]) -> str:
        return self.plan.add(where, js_numbers(pruned(document))).digest

    def definition(self, located: Located, value: Any, where: str) -> None:
        try:
            record = Record(value)
            name = record.text("name")
            check_definition(record)
        except BadValue as exc:
            self._refuse(located, exc)
            return
        if name in self.definitions:
            self._refuse(
                located, BadValue(record.at("name"), f"definition {name!r} repeats {self.definitions[name].where}")
            )
            return
        self.definitions[name] = _Definition(name, record, located, where)

    def operations(self) -> None:
        for definition in self.definitions.values():
            document = operation_document(
                definition.name,
                definition.record,
                definition.record.texts("tags", optional=True),
                f"{DATASET_URL}/blob/{self.revision}/definitions",
            )
            try:
                definition.operation = self._add(definition.where, document)
            except InvalidManifest as exc:
                self.plan.problems.extend(exc.problems)
                continue
            self.plan.produced(definition.where, self.plan.manifests[definition.operation][1])

    def _dataset_path(self, source: InputFile, definition: str, name: str) -> str | None:
        """Where the solution sits in the dataset: its own path in a clone, else the listing's."""
        parts = source.path.relative_to(self.root).parts if source.path.is_relative_to(self.root) else ()
        if "solutions" in parts:
            tail = parts[parts.index("solutions") :]
            if len(tail) >= 4:
                return "/".join(tail)
        found = self.listed.get((definition, name), [])
        return found[0] if len(found) == 1 else None

    def solution(self, located: Located, value: Any, source: InputFile) -> None:
        where = source.name
        try:
            record = Record(value)
            name, definition_name = record.text("name"), record.text("definition")
            author = record.maybe_text("author")
            record.maybe_text("description")
            spec = record.record("spec", optional=True)
            if spec is not None:
                spec.maybe_text("language")
                spec.texts("target_hardware", optional=True)
                spec.maybe_text("entry_point")
                spec.texts("dependencies", optional=True)
            for item in record.records("sources", optional=True):
                item.text("path")
                item.text("content")
            if name in self.solutions or name in self.left_out:
                raise BadValue(record.at("name"), f"solution {name!r} appears twice")
        except BadValue as exc:
            self._refuse(located, exc)
            return
        definition = self.definitions.get(definition_name)
        if definition is None or definition.operation is None:
            self.left_out[name] = "trace of a solution skipped (unknown definition)"
            self.plan.skip(where, f"solution of an unknown definition {definition_name!r}")
            return
        dataset_path = self._dataset_path(source, definition_name, name)
        if dataset_path is None:
            self.left_out[name] = "trace of a solution skipped (not placed in the dataset tree)"
            self.plan.skip(
                where,
                "solution not placed in the dataset tree (no solutions/<author>/ path, not in the listing)",
            )
            return
        directory = dataset_path.split("/")[1]
        if directory not in self.authors:
            self.left_out[name] = f"trace of a solution by {directory!r}, an author not selected"
            self.plan.skip(
                where, f"solution by {directory!r}, an author not selected (--include-author {directory} imports it)"
            )
            return
        project = f"flashinfer-{kebab((author or '').strip() or 'unknown')}"
        if project not in self.projects:
            self.projects.add(project)
            self._add(where, _project(author))
        try:
            implementation = self.plan.add(
                where,
                js_numbers(pruned(_implementation(record, definition, self.revision, dataset_path, project))),
            )
        except InvalidManifest as exc:
            self.plan.problems.extend(exc.problems)
            return
        self.solutions[name] = _Solution(name, directory, implementation.digest)
        self.plan.produced(where, implementation)

    def trace_file(self, source: InputFile, progress: Progress | None) -> None:
        for located, where, value in lines_of(source, self.plan.refuse, progress):
            try:
                self._trace(where, Record(value))
            except BadValue as exc:
                self._refuse(located, exc)
            except InvalidManifest as exc:
                self.plan.problems.extend(exc.problems)

    def _trace(self, where: str, record: Record) -> None:
        trace = read_trace(record)
        identity = (trace.definition, trace.solution or "", trace.key)
        if identity in self.seen_traces:
            raise BadValue(
                record.path, f"repeats the trace at {self.seen_traces[identity]} (same definition, solution, case)"
            )
        self.seen_traces[identity] = where
        definition = self.definitions.get(trace.definition)
        if definition is None or definition.operation is None:
            self.plan.skip(where, f"trace of an unknown definition {trace.definition!r}")
            return
        solution = self.solutions.get(trace.solution or "")
        if solution is None:
            why = self.left_out.get(trace.solution or "")
            self.plan.skip(where, why or f"trace of solution {trace.solution or 'none'!r}, which is not in the files")
            return
        self._run(where, trace, definition, solution)

    def _run(self, where: str, trace: Trace, definition: _Definition, solution: _Solution) -> None:
        assert definition.operation is not None
        case = definition.cases.get(trace.key)
        if case is None:
            try:
                document = case_document(definition.name, definition.record, definition.operation, trace.workload)
            except ValueError as exc:
                raise BadValue(trace.workload.path, str(exc)) from None
            case = definition.cases[trace.key] = self._add(where, document)
        protocol = self._add(where, _PROTOCOL)
        environment = self._add(where, trace_environment(trace.hardware, trace.libs))
        document = trace_run_document(trace, TERMS.slug, solution.implementation, case, protocol, environment)
        run = self.plan.add(where, js_numbers(pruned(document)))
        self.plan.imported(where, run)


_PROTOCOL: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": "BenchmarkProtocol",
    "metadata": {"name": "flashinfer-bench-trace", "title": "FlashInfer-Bench trace harness"},
    "spec": {
        "harness": {"name": "flashinfer-bench", "repository": HARNESS_REPOSITORY},
        "measurement": {"timer": "harness_reported", "primaryStatistic": "mean"},
        "correctness": {"reference": "definition reference implementation", "comparator": "flashinfer_bench_eval"},
        "comparability": {"family": "flashinfer_bench_trace"},
    },
}


def _project(author: str | None) -> dict[str, Any]:
    label = (author or "").strip() or "unknown"
    return {
        "apiVersion": API_VERSION,
        "kind": "SoftwareProject",
        "metadata": {"name": f"flashinfer-{kebab(label)}"},
        "spec": {
            "name": "FlashInfer-Bench baselines" if label == BASELINE else label,
            "repository": DATASET_URL,
            "host": {"kind": "huggingface", "id": DATASET},
        },
    }


def _labels(directory: str, author: str | None, project: str) -> dict[str, str]:
    """The dataset's author directory is upstream's curation: a baseline stays one; a model's directory
    is labelled llm-generated with the model. The project link is a label, as for every importer."""
    if directory != BASELINE:
        return {"project": project, "role": "llm-generated", "author": directory}
    if (author or BASELINE) == BASELINE:
        return {"project": project, "role": "baseline"}
    return {"project": project}


def _implementation(
    record: Record, definition: _Definition, revision: str, dataset_path: str, project: str
) -> dict[str, Any]:
    name = record.text("name")
    author = record.maybe_text("author")
    spec = record.record("spec", optional=True)
    targets = spec.texts("target_hardware", optional=True) if spec is not None else []
    products = [hardware(n) for n in targets if n != "LOCAL"]
    entry = (spec.maybe_text("entry_point") if spec is not None else None) or ""
    entry_path, _, entry_symbol = entry.partition("::")
    sources = record.records("sources", optional=True)
    primary = next((s for s in sources if s.text("path") == entry_path), sources[0] if sources else None)
    code = primary.text("content") if primary is not None else ""
    data = code.encode("utf-8")
    source = (
        {
            "contentDigest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "fileName": primary.text("path"),
            "sizeBytes": len(data),
        }
        if primary is not None and code
        else None
    )
    directory = dataset_path.split("/")[1]
    return {
        "apiVersion": API_VERSION,
        "kind": "ImplementationRevision",
        "metadata": {
            "name": kebab(name),
            "title": name,
            "description": record.maybe_text("description") or None,
            "labels": _labels(directory, author, project),
            "authors": [{"name": author}] if author else None,
            "sourceRefs": [{"url": f"{DATASET_URL}/blob/{revision}/{dataset_path}"}],
        },
        "spec": {
            "projectRevision": {"repository": DATASET_URL, "commit": revision},
            "operation": {"specDigest": definition.operation},
            "callable": {
                "language": language((spec.maybe_text("language") if spec is not None else None) or "unknown"),
                "path": primary.text("path") if primary is not None else None,
                "symbol": entry_symbol or None,
            },
            "support": {
                "hardwareArchitectures": [p["architecture"] for p in products] or ["unknown"],
                "productsTested": [p["product"] for p in products],
                "dtypes": [dtype(t["dtype"]) for t in definition.record.mapping("inputs").values()],
            },
            "source": source,
            "licensing": {"declared": "Apache-2.0", "concluded": "Apache-2.0"},
        },
    }
