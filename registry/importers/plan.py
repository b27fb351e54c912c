"""What an importer proposes and what it would do: the one report type every source importer shares.

An importer (one module per source) parses its native files and normalizes each row to manifests,
adding them to an `ImportPlan` together with what happened to every row: imported (the run it
made), skipped with a reason, or refused with a located problem. `reconcile` then compares the
plan with a registry, by digest: each manifest is new, unchanged (already there, same bytes), or
conflicting (the same identity already published with other metadata: the published one stands).
Finally the plan is written: as one commit (`commit_meta` makes its message and trailers,
deterministically from the data), or as files in a directory for review.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.canonical import stored_json
from kernelindex.registry.errors import Problem, RegistryError
from kernelindex.registry.importers.sourcefiles import InputFile
from kernelindex.registry.kinds.content import escape_forbidden
from kernelindex.registry.manifest import Manifest, manifest_from_document
from kernelindex.registry.nodes import instant_ns
from kernelindex.registry.parse import check_manifest_values
from kernelindex.registry.provenance import CommitMeta, Person, trailer_pairs
from kernelindex.registry.store import MAIN, AddResult, GitStore
from kernelindex.registry.validate import AtCommit, check_additions, conflict_reason

__all__ = [
    "IMPORTER",
    "ImportPlan",
    "Reconciled",
    "RowOutcome",
    "SourceTerms",
    "commit_meta",
    "commit_plan",
    "reconcile",
    "write_directory",
]

IMPORTER = Person("KernelIndex registry importer", "importer@registry.kernelindex.invalid", 0)


@dataclass(frozen=True, slots=True)
class SourceTerms:
    """Who published the data and on what terms: the commit's trailers."""

    slug: str
    name: str
    license: str
    attribution: str
    url: str


@dataclass(frozen=True, slots=True)
class RowOutcome:
    """What one input row became: a run (its digest), another manifest (a row that defines a
    workload, say), or skipped with a reason."""

    where: str  # file:line[:column]
    run: str | None = None
    skipped: str | None = None
    manifest: str | None = None


@dataclass(slots=True)
class ImportPlan:
    """The manifests a source's files map to, and the fate of every row."""

    terms: SourceTerms
    inputs: list[InputFile] = field(default_factory=list)
    revision: str | None = None  # the upstream revision the files come from, when known
    manifests: dict[str, tuple[str, Manifest]] = field(default_factory=dict)  # digest -> (first where, manifest)
    rows: list[RowOutcome] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # rows refused (malformed)
    latest_observation: int | None = None  # ns; dates the commit
    # digest -> (where it was first made, the other metadata.name, where that was made): same spec twice
    merged: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def add(self, where: str, document: dict[str, Any]) -> Manifest:
        """Validate a document and keep it, once per digest. Two documents with one identity (spec) and
        different metadata are one manifest: the first one's metadata is kept and the merge is noted
        (upstream's catalog, content-addressed too, keeps one row per digest the same way).

        Raises:
            InvalidManifest: the document is not a valid manifest, or holds what a manifest's file may not
                (an integer beyond 2^53-1, nesting past 64 levels: `parse.check_manifest_values`), refused as
                `validate` and the PR check refuse it.
        """
        check_manifest_values(document, where)
        manifest = manifest_from_document(document, where)
        found = self.manifests.get(manifest.digest)
        if found is None:
            self.manifests[manifest.digest] = (where, manifest)
        elif found[1].document != manifest.document:
            if manifest.digest not in self.merged:
                self.merged[manifest.digest] = (found[0], manifest.name, where)
            manifest = found[1]
        if manifest.kind in ("BenchmarkRun", "ServingRun"):
            observed = manifest.document["spec"].get("observedAt")
            if isinstance(observed, str):
                stamp = instant_ns(observed)
                if self.latest_observation is None or stamp > self.latest_observation:
                    self.latest_observation = stamp
        return manifest

    def imported(self, where: str, run: Manifest) -> None:
        self.rows.append(RowOutcome(where, run=run.digest))

    def produced(self, where: str, manifest: Manifest) -> None:
        """A row that made a manifest other than a run (a workload case, an implementation)."""
        self.rows.append(RowOutcome(where, manifest=manifest.digest))

    def skip(self, where: str, reason: str) -> None:
        self.rows.append(RowOutcome(where, skipped=reason))

    def refuse(self, problem: Problem) -> None:
        self.problems.append(problem)

    @property
    def skipped(self) -> Counter[str]:
        return Counter(row.skipped for row in self.rows if row.skipped is not None)

    @property
    def runs(self) -> int:
        return sum(1 for _, m in self.manifests.values() if m.kind in ("BenchmarkRun", "ServingRun"))

    def kinds(self) -> Counter[str]:
        return Counter(m.kind for _, m in self.manifests.values())


@dataclass(frozen=True, slots=True)
class Reconciled:
    """A plan against a registry at one commit. `problems`: why the new manifests would be refused there, as
    every door refuses them (`validate.check_additions`); empty when the plan was not checked (a commit is
    checked by `GitStore.add` as it is written)."""

    commit: str | None
    new: tuple[tuple[str, Manifest], ...]
    unchanged: tuple[Manifest, ...]
    conflicting: tuple[tuple[str, Manifest, str], ...]  # (where, manifest, why)
    problems: tuple[Problem, ...] = ()

    def statuses(self) -> dict[str, str]:
        """digest -> new, unchanged or conflicting."""
        found: dict[str, str] = {m.digest: "unchanged" for m in self.unchanged}
        found.update((m.digest, "new") for _, m in self.new)
        found.update((m.digest, "conflicting") for _, m, _ in self.conflicting)
        return found


def reconcile(plan: ImportPlan, store: GitStore | None, commit: str | None, *, check: bool = True) -> Reconciled:
    """Sort the plan's manifests by what the registry at `commit` already holds (nothing, when no store), and
    with `check`, judge the new ones there as `GitStore.add` will (`problems`: the stored form's size always;
    references, operations and names when there is a registry)."""
    new: list[tuple[str, Manifest]] = []
    unchanged: list[Manifest] = []
    conflicting: list[tuple[str, Manifest, str]] = []
    for where, manifest in plan.manifests.values():
        entry = store.find_path(commit, manifest.path) if store is not None and commit is not None else None
        if entry is None:
            new.append((where, manifest))
            continue
        assert store is not None
        data = store.read_blob(entry[0])
        if data == manifest.stored_bytes() or _same_but_renamed(data, manifest):
            unchanged.append(manifest)
        else:
            conflicting.append(
                (
                    where,
                    manifest,
                    conflict_reason(manifest.digest),  # the published one stands
                )
            )
    named = tuple(_unique_names(new, store, commit))
    problems: tuple[Problem, ...] = ()
    if check:
        existing = AtCommit(store, commit) if store is not None else None
        problems = tuple(check_additions(named, existing))
    return Reconciled(commit, named, tuple(unchanged), tuple(conflicting), problems)


def _unique_name(manifest: Manifest) -> str:
    return f"{manifest.name[:190].rstrip('-._')}-{manifest.digest[7:15]}"


def _same_but_renamed(data: bytes, manifest: Manifest) -> bool:
    """The published file is this manifest under the name `_unique_names` gave it (a re-import)."""
    published = orjson.loads(data)
    if published.get("metadata", {}).get("name") != _unique_name(manifest):
        return False
    published["metadata"]["name"] = manifest.name
    return stored_json(published) == manifest.stored_bytes()


def _unique_names(
    new: list[tuple[str, Manifest]], store: GitStore | None, commit: str | None
) -> list[tuple[str, Manifest]]:
    """Names are unique within a kind (the PR check and `GitStore.add` refuse squatting); a source's
    own naming can repeat one (upstream's names are cut at 100 characters). A new manifest whose name
    is taken, in the registry or earlier in this import, gets its digest's first 8 hex digits
    appended: names are metadata, so its digest (upstream's) stays the same."""
    taken: dict[str, set[str]] = {}
    unique = []
    for where, manifest in new:
        names = taken.get(manifest.kind)
        if names is None:
            existing = store.names_of_kind(commit, manifest.kind) if store is not None and commit else {}
            names = taken[manifest.kind] = set(existing)
        name = manifest.name
        if name in names:
            name = _unique_name(manifest)
            document = dict(manifest.document)
            document["metadata"] = {**document["metadata"], "name": name}
            manifest = manifest_from_document(document, where)
        names.add(name)
        unique.append((where, manifest))
    return unique


def commit_meta(
    plan: ImportPlan,
    reconciled: Reconciled,
    parent_time: int | None,
    author: Person | None = None,
) -> CommitMeta:
    """The message, trailers and dates of the commit an import makes, all from the data: the author
    date is the latest observation, the commit date that or the parent's, whichever is later (so
    main's dates never go backwards and a rebuild gives the same commit id)."""
    terms = plan.terms
    latest = -(-plan.latest_observation // 1_000_000_000) if plan.latest_observation is not None else parent_time or 0
    committed = max(latest, parent_time or 0)
    kinds = Counter(m.kind for _, m in reconciled.new)
    counts = ", ".join(f"{n:,} {kind}" for kind, n in sorted(kinds.items()))
    runs = sum(n for kind, n in kinds.items() if kind in ("BenchmarkRun", "ServingRun"))
    skipped = plan.skipped
    body = f"{len(reconciled.new):,} manifests from {', '.join(f.name for f in plan.inputs)}: {counts}."
    if reconciled.unchanged:
        body += f" {len(reconciled.unchanged):,} more were already in the registry."
    if skipped:
        # A reason may quote the row's own text: quoted with escapes, as a new commit holds only XML text.
        body += f"\n\nSkipped {sum(skipped.values()):,} rows: " + "; ".join(
            f"{n:,} {escape_forbidden(reason)}"
            for reason, n in sorted(skipped.items(), key=lambda item: (-item[1], item[0]))
        )
        body += "."
    body += f"\n\nThe data keeps its upstream licence: {terms.license.rstrip('.')}."
    signer = author or IMPORTER
    trailers = trailer_pairs(
        [
            ("Source", terms.slug),
            ("Source-Name", terms.name),
            ("Source-URL", terms.url),
            ("Source-Revision", plan.revision),
            *(("Source-Snapshot", f"sha256:{f.sha256} {f.name}") for f in plan.inputs),
            ("License", terms.license),
            ("Attribution", terms.attribution),
            ("Signed-off-by", f"{signer.name} <{signer.email}>"),
        ]
    )
    source_person = Person(f"{terms.name} (via KernelIndex importer)", f"{terms.slug}@sources.kernelindex.invalid", 0)
    who = author or source_person
    return CommitMeta(
        author=Person(who.name, who.email, latest),
        committer=Person((author or IMPORTER).name, (author or IMPORTER).email, committed),
        subject=f"Import {terms.name} ({runs:,} runs)",
        body=body,
        trailers=trailers,
    )


def commit_plan(
    store: GitStore,
    plan: ImportPlan,
    ref: str = MAIN,
    author: Person | None = None,
    sign: Callable[[bytes], bytes] | None = None,
) -> tuple[Reconciled, AddResult | None]:
    """Reconcile the plan with `ref` (a branch that does not exist yet starts from main) and commit
    what is new there, in one commit; None when nothing is new (a second import changes nothing).
    `sign` signs the commit (a maintainer's import of a registered source).

    Raises:
        RegistryError: the registry is empty and `ref` is not main.
        RejectedChange: the new manifests do not fit the registry (a reference that resolves nowhere).
    """
    if store.head(ref) is None and ref != MAIN:
        start = store.head()
        if start is None:
            raise RegistryError("the registry is empty: a branch needs a commit to start from")
        store.create_branch(ref, start)
    parent = store.head(ref)
    reconciled = reconcile(plan, store, parent, check=False)  # `store.add` judges what it writes
    if not reconciled.new:
        return reconciled, None
    parent_time = store.commit_info(parent).committer.time if parent else None
    meta = commit_meta(plan, reconciled, parent_time, author)
    return reconciled, store.add(list(reconciled.new), meta, ref=ref, sign=sign)


def write_directory(reconciled: Reconciled, directory: Path) -> list[Path]:
    """Write the new manifests at their digest paths under `directory` (stored form); returns the
    files written. Files already there with the same bytes are left alone."""
    written = []
    for _, manifest in reconciled.new:
        target = directory / manifest.path
        data = manifest.stored_bytes()
        if target.exists() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(".tmp")
        temporary.write_bytes(data)
        temporary.replace(target)
        written.append(target)
    return written
