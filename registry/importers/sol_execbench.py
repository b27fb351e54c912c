"""Import SOL-ExecBench output as manifests: a dataset directory (`definition.json`, `workload.jsonl`,
`solution_*.json`, `trace.jsonl`) and/or a snapshot of the public leaderboard API (`/api/kernels`,
`/api/kernels/{id}`, `/api/submissions?kernel_id=`, saved as JSON files, recognised by content).

The mapping is KernelIndex's (`apps/web/src/server/import/sol/`: normalize.ts, reconcile.ts), so the
same input gives the same digests here and upstream (the tests check them against the corpus):

- a definition (or a kernel detail) is an OperationSpec; each workload entry a WorkloadCase (keyed by
  its uuid, else by a digest of its axes); a kernel with submissions also gets the WorkloadSuite of
  all its entries, which its leaderboard runs measure (a suite-mean latency);
- a leaderboard submission (correct, not disqualified, not faster than the minimum per-case
  speed-of-light bound) is an ImplementationRevision without source (`sol-submission-<id>`, of the
  user's SoftwareProject) and a BenchmarkRun; a kernel keeps its best `top` submissions by SOL score,
  distinct submitters' personal bests first;
- a trace is a per-case BenchmarkRun of a solution, which is an ImplementationRevision pinned to a
  commit of the examples repository (without `commit`, solutions and their traces are skipped: an
  unpinned source claim is never made).

Malformed input (a truncated JSON line, a missing or mistyped field, a latency unit other than ms,
a repeated submission, case or trace) is refused with its file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.importers.fields import (
    BadValue,
    Located,
    Record,
    js_round,
    kebab,
    lines_of,
    pruned,
    utc_instant,
)
from kernelindex.registry.importers.locate import json_path
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, SourceFileError, json_document
from kernelindex.registry.importers.trace_format import (
    API_VERSION,
    case_document,
    check_definition,
    dtype,
    hardware,
    language,
    operation_document,
    read_trace,
    trace_environment,
    trace_run_document,
    workload_entry_key,
)

__all__ = ["DEFAULT_TOP", "LEADERBOARD_TERMS", "TRACE_TERMS", "plan_sol_execbench", "workload_entry_key"]

LEADERBOARD_BASE = "https://research.nvidia.com/benchmarks/sol-execbench/api"
REPOSITORY = "https://github.com/nvidia/sol-execbench"
DEFAULT_TOP = 3  # upstream's import:sol --top default

LEADERBOARD_TERMS = SourceTerms(
    slug="sol-execbench",
    name="NVIDIA SOL-ExecBench",
    license="NVIDIA website terms (SOL-ExecBench leaderboard results, shown with attribution)",
    attribution="NVIDIA SOL-ExecBench leaderboard",
    url="https://research.nvidia.com/benchmarks/sol-execbench",
)
TRACE_TERMS = SourceTerms(
    slug="sol-execbench",
    name="NVIDIA SOL-ExecBench",
    license="Apache-2.0 (nvidia/sol-execbench definitions, solutions and traces)",
    attribution="NVIDIA SOL-ExecBench (github.com/nvidia/sol-execbench)",
    url=REPOSITORY,
)


# Upstream's reviewed verdicts (reconcile.ts REVIEWED_IMPLAUSIBLE): faster than physics allows.
_REVIEWED_IMPLAUSIBLE = {36950, 6549, 16818}
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(slots=True)
class _Definition:
    name: str
    record: Record
    located: Located
    where: str
    tags: list[str]
    directory: Path | None = None  # a dataset's definition.json: the directory its workload.jsonl sits in
    entries: list[tuple[str, Record, Located]] = field(default_factory=list)
    submissions: list[tuple[str, Record, Located]] = field(default_factory=list)
    operation: str | None = None
    cases: dict[str, str] = field(default_factory=dict)  # entry key -> WorkloadCase digest


class _Sources:
    """The files under the path, sorted, each parsed once and counted as an input."""

    def __init__(self, plan: ImportPlan, root: Path) -> None:
        self.plan = plan
        self.root = root

    def open(self, path: Path) -> InputFile:
        source = InputFile.of(path, self.root if self.root.is_dir() else None)
        self.plan.inputs.append(source)
        return source

    def document(self, path: Path) -> tuple[InputFile, Located, Any]:
        source = self.open(path)
        value = json_document(source)
        return source, Located(source, source.path.read_bytes()), value


def plan_sol_execbench(
    path: Path,
    *,
    commit: str | None = None,
    top: int | None = DEFAULT_TOP,
    stack_version: str | None = None,
    progress: Progress | None = None,
) -> ImportPlan:
    """Read SOL-ExecBench files under `path` (a directory, searched recursively, or one file) and map
    them to manifests.

    `commit` pins the sol-execbench examples tree the solutions come from (40 hex digits); `top` keeps
    that many submissions per kernel (None: all); `stack_version` keeps only submissions evaluated by
    that stack. Malformed rows are collected in `plan.problems`; the caller decides.

    Raises:
        SourceFileError: a file is not JSON, or `commit` is not a full commit id.
    """
    if commit is not None and not _COMMIT.fullmatch(commit):
        raise SourceFileError(InputFile(path, "--commit").at(1, 1, f"not a 40-hex commit id: {commit!r}"))
    plan = ImportPlan(LEADERBOARD_TERMS, [], commit)
    mapper = _Mapper(plan, commit, top, stack_version)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    sources = _Sources(plan, path)
    traces: list[Path] = []
    workloads: list[Path] = []
    solutions: list[Path] = []
    kernel_lists: list[tuple[Located, Any]] = []
    details: list[tuple[Located, Any]] = []
    submission_files: list[tuple[Located, Any]] = []
    for file in files:
        name = file.name
        if name == "definition.json":
            source, located, value = sources.document(file)
            mapper.definition(located, value, source.name, file.parent)
        elif name == "workload.jsonl":
            workloads.append(file)
        elif name.startswith("solution") and name.endswith(".json"):
            solutions.append(file)
        elif "trace" in name and name.endswith((".json", ".jsonl")):
            traces.append(file)
        elif name.endswith(".json"):
            source, located, value = sources.document(file)
            data = value.get("data") if isinstance(value, dict) else None
            if isinstance(data, dict) and "kernels" in data:
                kernel_lists.append((located, value))
            elif isinstance(data, dict) and "submissions" in data:
                submission_files.append((located, value))
            elif isinstance(data, dict) and "axes" in data and "inputs" in data:
                details.append((located, value))
            else:
                plan.skip(f"{source.name}:1", "not a SOL-ExecBench file (no definition, kernel list or submissions)")
    tags = mapper.kernel_tags(kernel_lists)
    for located, value in details:
        mapper.detail(located, value, tags)
    for file in workloads:
        mapper.workload_file(sources.open(file), file.parent)
    for located, value in submission_files:
        mapper.submissions(located, value)
    mapper.operations_and_cases()
    for file in solutions:
        source, located, value = sources.document(file)
        mapper.solution(located, value, source.name, file.parent)
    mapper.leaderboard_runs()
    for file in traces:
        mapper.trace_file(sources.open(file), progress)
    if not plan.rows and not plan.problems:
        raise SourceFileError(
            InputFile(path, path.name).at(1, 1, "no SOL-ExecBench files here (definition.json, workload.jsonl, ...)")
        )
    if not (kernel_lists or details or submission_files):
        plan.terms = TRACE_TERMS
    return plan


class _Mapper:
    """SOL records to manifests, each shared manifest made once."""

    def __init__(self, plan: ImportPlan, commit: str | None, top: int | None, stack_version: str | None) -> None:
        self.plan = plan
        self.commit = commit
        self.top = top
        self.stack_version = stack_version
        self.definitions: dict[str, _Definition] = {}
        self.solutions: dict[str, str] = {}  # solution name -> ImplementationRevision digest
        self.unpinned: set[str] = set()
        self.projects: set[str] = set()
        self.seen_traces: dict[tuple[str, str, str], str] = {}
        self.seen_submissions: dict[int, str] = {}

    # Reading ---------------------------------------------------------------------------------------

    def _refuse(self, located: Located, error: BadValue) -> None:
        self.plan.refuse(located.problem(error))

    def _add(self, where: str, document: dict[str, Any]) -> str:
        return self.plan.add(where, pruned(document)).digest

    def kernel_tags(self, lists: list[tuple[Located, Any]]) -> dict[str, list[str]]:
        tags: dict[str, list[str]] = {}
        for located, value in lists:
            try:
                for kernel in Record(value).need_record("data").records("kernels"):
                    tags.setdefault(kernel.text("name"), kernel.texts("tags", optional=True))
            except BadValue as exc:
                self._refuse(located, exc)
        return tags

    def definition(
        self, located: Located, value: Any, where: str, directory: Path | None, path: tuple[str, ...] = ()
    ) -> None:
        try:
            record = Record(value, path)
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
        self.definitions[name] = _Definition(
            name, record, located, where, record.texts("tags", optional=True), directory
        )

    def detail(self, located: Located, value: Any, tags: dict[str, list[str]]) -> None:
        source = located.source.name
        try:
            data = Record(value).need_record("data")
            unit = data.maybe_text("latency_unit")
            if unit is not None and unit != "ms":
                raise BadValue(data.at("latency_unit"), f"latencies must be in ms, not {unit!r}")
            name = data.text("name")
        except BadValue as exc:
            self._refuse(located, exc)
            return
        before = len(self.definitions)
        self.definition(located, value["data"], f"{source}:$.data", None, ("data",))
        if len(self.definitions) == before:
            return
        definition = self.definitions[name]
        if "tags" not in data:
            definition.tags = tags.get(name, [])
        try:
            entries = data.records("workloads", optional=True)
        except BadValue as exc:
            self._refuse(located, exc)
            return
        for entry in entries:
            self._entry(definition, entry, located, f"{source}:{json_path(entry.path)}")

    def workload_file(self, source: InputFile, directory: Path) -> None:
        owner = next((d for d in self.definitions.values() if d.directory == directory), None)
        if owner is None:
            owner = self.definitions.get(directory.name)
        if owner is None and len(self.definitions) == 1:
            owner = next(iter(self.definitions.values()))
        for located, where, value in lines_of(source, self.plan.refuse):
            if owner is None:
                self.plan.skip(where, "workload with no definition.json beside it")
                continue
            try:
                entry = Record(value)
            except BadValue as exc:
                self._refuse(located, exc)
                continue
            self._entry(owner, entry, located, where)

    def _entry(self, definition: _Definition, entry: Record, located: Located, where: str) -> None:
        try:
            axes = entry.mapping("axes")
            for axis, bound in axes.items():
                if isinstance(bound, bool) or not isinstance(bound, int):
                    raise BadValue((*entry.at("axes"), axis), f"an axis is bound to an integer, not {bound!r}")
            entry.maybe_text("uuid")
            entry.mapping("inputs", optional=True)
            tolerance = entry.record("tolerance", optional=True)
            if tolerance is not None:
                for key in ("max_atol", "max_rtol"):
                    bound = tolerance.maybe_number(key)
                    if bound is not None and bound < 0:
                        raise BadValue(tolerance.at(key), f"a tolerance is not negative: {bound!r}")
            entry.maybe_number("sol_ms")
            key = workload_entry_key(entry.value)
            seen = next(
                (w for k, _, w in ((workload_entry_key(e.value), e, w) for w, e, _ in definition.entries) if k == key),
                None,
            )
            if seen is not None:
                raise BadValue(entry.path, f"repeats the workload case {key} of {seen}")
        except BadValue as exc:
            self._refuse(located, exc)
            return
        definition.entries.append((where, entry, located))

    def submissions(self, located: Located, value: Any) -> None:
        source = located.source.name
        try:
            items = Record(value).need_record("data").records("submissions")
        except BadValue as exc:
            self._refuse(located, exc)
            return
        for item in items:
            where = f"{source}:{json_path(item.path)}"
            try:
                identifier = item.integer("id")
                for key in ("username", "kernel_name", "status", "gpu_type"):
                    item.text(key)
                item.integer("kernel_id")
                for key in ("sol_score", "latency_ms", "avg_speedup"):
                    item.maybe_number(key)
                for key in ("fast_1_count", "fast_1_total"):
                    item.maybe_integer(key)
                for key in ("worker_id", "evaluation_stack_version", "submitted_at", "finished_at"):
                    item.maybe_text(key)
                for key in ("is_correct", "is_disqualified"):
                    item.flag(key)
                if identifier in self.seen_submissions:
                    raise BadValue(
                        item.at("id"), f"repeats submission {identifier} ({self.seen_submissions[identifier]})"
                    )
            except BadValue as exc:
                self._refuse(located, exc)
                continue
            self.seen_submissions[identifier] = where
            definition = self.definitions.get(item.text("kernel_name"))
            if definition is None:
                self.plan.skip(where, f"kernel {item.text('kernel_name')} has no kernel detail in the snapshot")
                continue
            definition.submissions.append((where, item, located))

    # Mapping ---------------------------------------------------------------------------------------

    def operations_and_cases(self) -> None:
        for definition in self.definitions.values():
            try:
                document = _operation(definition)
                definition.operation = self._add(definition.where, document)
            except (BadValue, ValueError) as exc:
                self._refuse(
                    definition.located, exc if isinstance(exc, BadValue) else BadValue(definition.record.path, str(exc))
                )
                continue
            except InvalidManifest as exc:
                self.plan.problems.extend(exc.problems)
                continue
            self.plan.produced(definition.where, self.plan.manifests[definition.operation][1])
            for where, entry, located in definition.entries:
                try:
                    digest = self._add(where, _case(definition, definition.operation, entry))
                except (BadValue, ValueError) as exc:
                    self._refuse(located, exc if isinstance(exc, BadValue) else BadValue(entry.path, str(exc)))
                    continue
                except InvalidManifest as exc:
                    self.plan.problems.extend(exc.problems)
                    continue
                definition.cases[workload_entry_key(entry.value)] = digest
                self.plan.produced(where, self.plan.manifests[digest][1])

    def solution(self, located: Located, value: Any, where: str, directory: Path) -> None:
        try:
            record = Record(value)
            name, definition_name = record.text("name"), record.text("definition")
            spec = record.need_record("spec")
            spec.texts("languages")
            spec.texts("target_hardware", optional=True)
            spec.maybe_text("entry_point")
            spec.maybe_text("binding")
            record.maybe_text("author")
            record.maybe_text("description")
        except BadValue as exc:
            self._refuse(located, exc)
            return
        definition = self.definitions.get(definition_name)
        if definition is None or definition.operation is None:
            self.plan.skip(where, f"solution of an unknown definition {definition_name!r}")
            return
        if self.commit is None:
            self.unpinned.add(name)
            self.plan.skip(where, "solution without a pinned examples commit (--commit SHA): no unpinned source claim")
            return
        if name in self.solutions:
            self._refuse(located, BadValue(record.at("name"), f"solution {name!r} appears twice"))
            return
        example = _example_path(located.source)
        if "nvidia-sol-execbench" not in self.projects:
            self.projects.add("nvidia-sol-execbench")
            self._add(
                where,
                {
                    "apiVersion": API_VERSION,
                    "kind": "SoftwareProject",
                    "metadata": {"name": "nvidia-sol-execbench", "title": "NVIDIA SOL-ExecBench"},
                    "spec": {
                        "name": "NVIDIA SOL-ExecBench",
                        "repository": REPOSITORY,
                        "host": {"kind": "github", "id": "nvidia/sol-execbench"},
                    },
                },
            )
        try:
            digest = self._add(
                where, _solution_implementation(record, definition, definition.operation, self.commit, example)
            )
        except InvalidManifest as exc:
            self.plan.problems.extend(exc.problems)
            return
        self.solutions[name] = digest
        self.plan.produced(where, self.plan.manifests[digest][1])

    def leaderboard_runs(self) -> None:
        for definition in self.definitions.values():
            if not definition.submissions or definition.operation is None:
                continue
            if not definition.entries:
                for where, _, _ in definition.submissions:
                    self.plan.skip(where, f"kernel {definition.name} has no workload suite")
                continue
            suite = self._add(
                definition.where, _suite(definition, definition.operation, [e for _, e, _ in definition.entries])
            )
            for where, item, reason in self._select(definition):
                if reason is not None:
                    self.plan.skip(where, reason)
                    continue
                try:
                    self._submission_run(where, item, definition, suite)
                except BadValue as exc:
                    self._refuse(next(located for w, _, located in definition.submissions if w == where), exc)
                except InvalidManifest as exc:
                    self.plan.problems.extend(exc.problems)

    def _select(self, definition: _Definition) -> list[tuple[str, Record, str | None]]:
        """Upstream's selection: usable submissions by SOL score, distinct submitters' bests first,
        then the rest, cut at `top`; each other submission with the reason it is left out."""
        bound = _sol_bound(definition)
        usable: list[tuple[str, Record]] = []
        outcomes: list[tuple[str, Record, str | None]] = []
        for where, item, _ in definition.submissions:
            latency = item.maybe_number("latency_ms")
            if item.flag("is_disqualified"):
                outcomes.append((where, item, "disqualified on the leaderboard"))
            elif item.text("status") != "COMPLETED" or item.flag("is_correct") is not True:
                outcomes.append((where, item, "not a correct, completed submission"))
            elif self.stack_version is not None and item.maybe_text("evaluation_stack_version") != self.stack_version:
                outcomes.append((where, item, f"evaluated by another stack than {self.stack_version}"))
            elif latency is None or latency <= 0:
                outcomes.append((where, item, "not a correct, completed submission"))
            elif bound is not None and latency < bound:
                reviewed = item.integer("id") in _REVIEWED_IMPLAUSIBLE
                outcomes.append(
                    (
                        where,
                        item,
                        "reviewed upstream as implausible (beats the speed-of-light bound)"
                        if reviewed
                        else f"beats the minimum per-case speed-of-light bound {bound} ms: held for review",
                    )
                )
            else:
                usable.append((where, item))
        usable.sort(key=lambda pair: -(pair[1].maybe_number("sol_score") or 0))
        seen: set[str] = set()
        bests: list[tuple[str, Record]] = []
        rest: list[tuple[str, Record]] = []
        for pair in usable:
            user = pair[1].text("username")
            (rest if user in seen else bests).append(pair)
            seen.add(user)
        ranked = bests + rest
        keep = ranked if self.top is None else ranked[: self.top]
        outcomes.extend((where, item, None) for where, item in keep)
        outcomes.extend(
            (where, item, f"below the best {self.top} of its kernel") for where, item in ranked[len(keep) :]
        )
        return outcomes

    def _submission_run(self, where: str, item: Record, definition: _Definition, suite: str) -> None:
        assert definition.operation is not None
        identifier, user, kernel = item.integer("id"), item.text("username"), item.text("kernel_name")
        gpu = item.text("gpu_type")
        stack = item.maybe_text("evaluation_stack_version") or "unknown"
        finished = item.maybe_text("finished_at") or item.maybe_text("submitted_at")
        if finished is None:
            raise BadValue(item.path, "a submission needs finished_at or submitted_at (when it was observed)")
        observed = utc_instant(finished)
        if observed is None:
            key = "finished_at" if "finished_at" in item else "submitted_at"
            raise BadValue(item.at(key), f"not a timestamp: {finished!r}")
        product = hardware(gpu)
        project = f"sol-user-{kebab(user)}"
        if project not in self.projects:
            self.projects.add(project)
            self._add(
                where,
                {
                    "apiVersion": API_VERSION,
                    "kind": "SoftwareProject",
                    "metadata": {"name": project},
                    "spec": {"name": user, "host": {"kind": "other", "id": f"sol-execbench/user/{user}"}},
                },
            )
        protocol = self._add(where, _leaderboard_protocol(stack))
        environment = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ExecutionEnvironment",
                "metadata": {
                    "name": f"sol-execbench-{kebab(gpu)}-{kebab(stack)}",
                    "title": f"SOL-ExecBench {product['product']}, stack {stack}",
                },
                "spec": {"hardware": product, "software": {"libraries": {"evaluation_stack": stack}}},
            },
        )
        implementation = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "ImplementationRevision",
                "metadata": {
                    "name": f"sol-submission-{identifier}",
                    "title": f"{user} · {kernel}",
                    "authors": [{"name": user}],
                    # Upstream links an implementation to its project outside the manifest; as the
                    # catalog export's import does, the link is a label (metadata, not identity).
                    "labels": {"project": project},
                },
                "spec": {
                    "projectRevision": {"version": f"submission-{identifier}"},
                    "operation": {"specDigest": definition.operation},
                    "callable": {"language": "unknown"},
                    "support": {
                        "hardwareArchitectures": [product["architecture"]],
                        "productsTested": [product["product"]],
                        "dtypes": [dtype(t["dtype"]) for t in definition.record.mapping("inputs").values()],
                    },
                    "licensing": {},
                },
            },
        )
        latency = item.number("latency_ms")
        metrics: dict[str, Any] = {"latency_ms": latency}
        for key in ("sol_score", "avg_speedup", "fast_1_count", "fast_1_total"):
            if item.maybe_number(key) is not None:
                metrics[key] = item.number(key)
        worker = item.maybe_text("worker_id")
        run = self.plan.add(
            where,
            pruned(
                {
                    "apiVersion": API_VERSION,
                    "kind": "BenchmarkRun",
                    "metadata": {
                        "name": f"sol-submission-{identifier}",
                        "title": f"{user} · {kernel} · {gpu}",
                        "labels": {"worker": worker} if worker else None,
                    },
                    "spec": {
                        "implementationDigest": implementation,
                        "workloadDigest": suite,
                        "protocolDigest": protocol,
                        "environmentDigest": environment,
                        "status": "passed",
                        "timing": {"primaryStatistic": "mean", "latencyNs": {"mean": js_round(latency * 1e6)}},
                        "sourceNative": {
                            "source": "sol-execbench",
                            "benchmark": kernel,
                            "externalId": str(identifier),
                            "metrics": metrics,
                        },
                        "observedAt": observed,
                    },
                }
            ),
        )
        self.plan.imported(where, run)

    def trace_file(self, source: InputFile, progress: Progress | None) -> None:
        for located, where, value in lines_of(source, self.plan.refuse, progress):
            try:
                self._trace(where, Record(value), located)
            except BadValue as exc:
                self._refuse(located, exc)
            except InvalidManifest as exc:
                self.plan.problems.extend(exc.problems)

    def _trace(self, where: str, record: Record, located: Located) -> None:
        trace = read_trace(record)
        name, solution, key = trace.definition, trace.solution, trace.key
        identity = (name, solution or "", key)
        if identity in self.seen_traces:
            raise BadValue(
                record.path, f"repeats the trace at {self.seen_traces[identity]} (same definition, solution, case)"
            )
        self.seen_traces[identity] = where
        definition = self.definitions.get(name)
        if definition is None or definition.operation is None:
            self.plan.skip(where, f"trace of an unknown definition {name!r}")
            return
        implementation = self.solutions.get(solution or "")
        if implementation is None:
            if solution in self.unpinned:
                self.plan.skip(where, "trace of a solution without a pinned examples commit (--commit SHA)")
            else:
                self.plan.skip(where, f"trace of solution {solution or 'none'!r}, which is not in the files")
            return
        case = definition.cases.get(key)
        if case is None:
            try:
                case = self._add(where, _case(definition, definition.operation, trace.workload))
            except ValueError as exc:
                raise BadValue(trace.workload.path, str(exc)) from None
            definition.cases[key] = case
        protocol = self._add(
            where,
            {
                "apiVersion": API_VERSION,
                "kind": "BenchmarkProtocol",
                "metadata": {"name": "sol-execbench-trace", "title": "SOL-ExecBench trace harness"},
                "spec": {
                    "harness": {"name": "sol-execbench", "repository": REPOSITORY},
                    "measurement": {"timer": "harness_reported", "primaryStatistic": "mean"},
                    "correctness": {
                        "reference": "definition reference implementation",
                        "comparator": "sol_execbench_eval",
                    },
                    "comparability": {"family": "sol_execbench_trace"},
                },
            },
        )
        environment = self._add(where, trace_environment(trace.hardware, trace.libs))
        run = self.plan.add(
            where, pruned(trace_run_document(trace, "sol-execbench", implementation, case, protocol, environment))
        )
        self.plan.imported(where, run)


def _operation(definition: _Definition) -> dict[str, Any]:
    return operation_document(definition.name, definition.record, definition.tags, f"{LEADERBOARD_BASE}/kernels")


def _case(definition: _Definition, operation: str, entry: Record) -> dict[str, Any]:
    """Raises: ValueError: an axis the shapes need is bound nowhere."""
    return case_document(definition.name, definition.record, operation, entry)


def _suite(definition: _Definition, operation: str, entries: Iterable[Record]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "WorkloadSuite",
        "metadata": {"name": f"{kebab(definition.name)}-suite", "title": f"SOL workload suite: {definition.name}"},
        "spec": {
            "operationSpecDigest": operation,
            "cases": [
                {
                    "externalId": workload_entry_key(entry.value),
                    "axes": {a.lower(): v for a, v in entry.mapping("axes").items()},
                }
                for entry in entries
            ],
            "correctness": {
                "comparator": "sol_execbench_eval",
                "description": "Correctness must pass on every case in the SOL evaluation stack.",
            },
            "aggregation": {"metric": "latency", "statistic": "mean"},
        },
    }


def _sol_bound(definition: _Definition) -> float | None:
    """The minimum per-case speed-of-light latency (ms), None when any case lacks one: no average of
    per-case latencies can beat the fastest case's physical limit."""
    if definition.record.flag("sol_is_dummy") or not definition.entries:
        return None
    bounds = [entry.maybe_number("sol_ms") for _, entry, _ in definition.entries]
    if any(b is None or b <= 0 for b in bounds):
        return None
    return float(min(b for b in bounds if b is not None))


def _leaderboard_protocol(stack: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "BenchmarkProtocol",
        "metadata": {
            "name": f"sol-execbench-leaderboard-{kebab(stack)}",
            "title": f"SOL-ExecBench evaluation stack {stack}",
        },
        "spec": {
            "harness": {"name": "SOL-ExecBench evaluation stack", "version": stack},
            "measurement": {"timer": "harness_reported", "primaryStatistic": "mean"},
            "correctness": {"reference": "definition reference implementation", "comparator": "sol_execbench_eval"},
            "comparability": {
                "family": "sol_execbench_leaderboard",
                "notes": "Suite-mean latency and SOL-Score as published by the SOL-ExecBench leaderboard. Comparable "
                "only within one definition, GPU type, and evaluation stack version.",
            },
        },
    }


def _example_path(source: InputFile) -> str:
    """The solution's directory relative to the import's root, as upstream's discovery names it
    (`.` for a solution at the root): import the examples tree's root to get repository paths."""
    name = source.name
    return name.rsplit("/", 1)[0] if "/" in name else "."


def _solution_implementation(
    record: Record, definition: _Definition, operation: str, commit: str, example: str
) -> dict[str, Any]:
    spec = record.need_record("spec")
    languages = spec.texts("languages")
    products = [hardware(n) for n in spec.texts("target_hardware", optional=True) if n != "LOCAL"]
    name = record.text("name")
    author = record.maybe_text("author")
    return {
        "apiVersion": API_VERSION,
        "kind": "ImplementationRevision",
        "metadata": {
            "name": kebab(name),
            "title": name,
            "description": record.maybe_text("description") or None,
            "authors": [{"name": author}] if author else None,
            "labels": {"project": "nvidia-sol-execbench"},
            "sourceRefs": [{"url": f"{REPOSITORY}/tree/{commit}/{example}"}],
        },
        "spec": {
            "projectRevision": {"repository": REPOSITORY, "commit": commit},
            "operation": {"specDigest": operation},
            "callable": {
                "language": language(languages[0] if languages else "unknown"),
                "path": example,
                "symbol": spec.maybe_text("entry_point"),
                "interface": "pytorch" if spec.maybe_text("binding") == "torch" else None,
            },
            "support": {
                "hardwareArchitectures": [p["architecture"] for p in products] or ["unknown"],
                "productsTested": [p["product"] for p in products],
                "dtypes": [dtype(t["dtype"]) for t in definition.record.mapping("inputs").values()],
            },
            "buildVariants": [
                {"name": "source", "install": {"kind": "git", "repository": REPOSITORY, "commit": commit}}
            ],
            "licensing": {"declared": "Apache-2.0", "concluded": "Apache-2.0", "evidence": {"path": "LICENSE"}},
        },
    }
