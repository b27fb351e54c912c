"""The registry's one verdict on new manifests: the stored form fits, references resolve, a run measures one
operation, names are free, nothing published is overwritten.

`load_manifest` judges one document alone (parse, schema, the refinements); `check_additions` judges what
that leaves, for a set of additions against what a registry already holds at one commit, and is the one
decision every door takes: `kernelindex validate` (against the registry it runs in, or `--repo`), `kernelindex
add` and every `GitStore.add` (`store_plan`), the importers (through `GitStore.add`), a submission bundle
(`bundle.check_bundle`) and the pull-request check (`review.check_range`). Without a registry it judges each
manifest alone: the size of its stored form (a YAML file under the limit whose stored JSON is over it
was ok to `validate` and `add`, then refused by the pull-request check).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol

from kernelindex.registry.canonical import canonical_json
from kernelindex.registry.errors import Problem
from kernelindex.registry.manifest import Manifest
from kernelindex.registry.parse import MAX_DOCUMENT_BYTES
from kernelindex.registry.present import with_article

__all__ = [
    "AtCommit",
    "Existing",
    "Readable",
    "check_additions",
    "conflict_reason",
    "name_problem",
    "operation_found",
    "operation_mismatch",
    "operation_mismatch_digests",
    "operation_of",
    "stored_size_problem",
]


class Existing(Protocol):
    """What a registry already holds, as seen by a check."""

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        """The stored document of `digest` if it exists under one of `kinds`."""
        ...

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        """Whether `find_document` would find it: a reference whose document no check reads needs
        only this (a server answers from its graph, where reading and parsing took ~70% of the reads)."""
        ...

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        """Whether `find_document` would find it, and the operation digest its document names
        (`operation_of`): all a run's check reads of its implementation and workload (a server answers
        from its graph; `operation_found` makes the answer from `find_document`'s)."""
        ...

    def find_named(self, kind: str, name: str) -> str | None:
        """The digest of a manifest of `kind` whose `metadata.name` is `name`, if there is one."""
        ...


def stored_size_problem(source: str, size: int) -> Problem | None:
    """Why a manifest whose stored form (`Manifest.stored_bytes`, the file in git) is `size` bytes may not be
    published, or None: the limit is on that form, whatever the file it was written in (YAML is shorter than
    the stored JSON; a pull request's file is the stored form), so every door refuses the same manifests."""
    if size <= MAX_DOCUMENT_BYTES:
        return None
    return Problem(source, "", f"the stored form is {size:,} bytes; the limit is {MAX_DOCUMENT_BYTES:,} bytes (1 MiB)")


def conflict_reason(digest: str) -> str:
    """Why a manifest may not be published where its digest already is with other metadata (another
    `metadata.name`, say: names are not part of the digest)."""
    return (
        f"{digest} is already published with different metadata "
        "(published files never change; a correction is a new manifest)"
    )


class Readable(Protocol):
    """What `AtCommit` reads of a registry (`GitStore` has both)."""

    def read_document(self, commit: str, digest: str, kinds: Collection[str] | None = None) -> dict[str, Any] | None:
        """The document of `digest` at `commit`, under one of `kinds`."""
        ...

    def names_of_kind(self, commit: str, kind: str) -> Mapping[str, str]:
        """`metadata.name` -> digest of the manifests of `kind` at `commit`."""
        ...


class AtCommit:
    """`Existing` over a registry at one commit (None: an empty registry)."""

    def __init__(self, store: Readable, commit: str | None) -> None:
        self._store = store
        self._commit = commit

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        return self._store.read_document(self._commit, digest, kinds) if self._commit else None

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        return self.find_document(kinds, digest) is not None

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        return operation_found(self.find_document(kinds, digest))

    def find_named(self, kind: str, name: str) -> str | None:
        return self._store.names_of_kind(self._commit, kind).get(name) if self._commit else None


_DIGEST_LIKE = re.compile(r"(?:sha256:)?[0-9a-f]{12,64}")
"""Names the API would read as a digest or a digest prefix (12 hex digits and more)."""


def name_problem(kind: str, name: str, existing: Existing, digest: str) -> str | None:
    """Why a new manifest may not take `name`: it looks like a digest, or another manifest of
    its kind has it (names are how people and citations find a manifest: first come, first served)."""
    if _DIGEST_LIKE.fullmatch(name.strip().lower()):
        return f"{name!r} looks like a digest prefix; a name must not (ids take digests, prefixes and names)"
    if name != name.strip():
        return f"{name!r} has leading or trailing whitespace"
    taken = existing.find_named(kind, name)
    if taken is not None and taken != digest:
        return f"{name!r} already names the {kind} {taken}; names are unique within a kind"
    return None


def operation_of(document: dict[str, Any]) -> str | None:
    """The operation digest an implementation or a workload names."""
    spec = document.get("spec", {})
    if document.get("kind") == "ImplementationRevision":
        return spec.get("operation", {}).get("specDigest")  # type: ignore[no-any-return]
    return spec.get("operationSpecDigest")  # type: ignore[no-any-return]


def operation_found(document: dict[str, Any] | None) -> tuple[bool, str | None]:
    """`Existing.find_operation` from what `find_document` found."""
    return (False, None) if document is None else (True, operation_of(document))


def operation_mismatch(implementation: dict[str, Any], workload: dict[str, Any]) -> str | None:
    """Why a run of this implementation on this workload compares two different operations, or None."""
    return operation_mismatch_digests(operation_of(implementation), operation_of(workload))


def operation_mismatch_digests(implementation_op: str | None, workload_op: str | None) -> str | None:
    """The same, from the two operation digests."""
    if implementation_op is None or workload_op is None or implementation_op == workload_op:
        return None
    return f"implementation is for operation {implementation_op} but workload is for operation {workload_op}"


_READ = {
    "Verification": frozenset({"$.spec.runDigest", "$.spec.rerunDigest"}),  # their cohorts
}
"""The references whose documents a check reads, by kind of the manifest naming them: every other
reference needs only to resolve, but for a run's implementation and workload, whose operations are
read (`_OPERATIONS`)."""
_IMPLEMENTATION, _WORKLOAD = "$.spec.implementationDigest", "$.spec.workloadDigest"
_OPERATIONS = {"BenchmarkRun": frozenset({_IMPLEMENTATION, _WORKLOAD})}


def _lifecycle_problems(
    source: str,
    manifest: Manifest,
    resolved: dict[str, dict[str, Any]],
    lookup: Callable[[tuple[str, ...], str], dict[str, Any] | None],
) -> list[Problem]:
    """A verification reruns the same comparison; a run never verifies or supersedes itself."""
    spec = manifest.document["spec"]
    if manifest.kind == "Supersession" and spec["runDigest"] == spec["supersedesDigest"]:
        return [Problem(source, "$.spec.supersedesDigest", "a run cannot supersede itself")]
    if manifest.kind != "Verification":
        return []
    if spec["runDigest"] == spec["rerunDigest"]:
        return [Problem(source, "$.spec.rerunDigest", "the rerun must be a new run, not the run itself")]
    run, rerun = resolved.get("$.spec.runDigest"), resolved.get("$.spec.rerunDigest")
    if run is None or rerun is None:
        return []  # already reported as a dangling reference
    from kernelindex.registry.cohorts import cohort_key_of

    keys = []
    for document in (run, rerun):
        workload = lookup(("WorkloadCase", "WorkloadSuite"), document["spec"]["workloadDigest"])
        keys.append(cohort_key_of(document["spec"], workload) if workload else None)
    if keys[0] != keys[1]:
        return [
            Problem(
                source,
                "$.spec.rerunDigest",
                f"the rerun is in cohort {keys[1]} but the run in {keys[0]}: a verification reruns the same "
                "comparison (operation, workload, protocol, environment, correctness, metric)",
            )
        ]
    return []


def check_additions(
    additions: Sequence[tuple[str, Manifest]],
    existing: Existing | None,
    *,
    allowed_mismatches: Collection[str] = (),
    unique_names: bool = True,
    stored_sizes: Mapping[str, int] | None = None,
) -> list[Problem]:
    """Every problem with adding these manifests (each paired with the name of its source file).

    - the stored form of each is at most `MAX_DOCUMENT_BYTES` (`stored_size_problem`; `stored_sizes`
      gives the sizes a caller has already read, by source: a pull request's files are their stored form);

    and, against `existing` (a registry at one commit; None: there is none, and the rest is not judged):

    - a manifest whose digest is published may be added again only with the same value (a no-op);
      with other metadata it is refused (`conflict_reason`);
    - a reference must resolve, to a manifest of a kind it may name, in the additions or
      in the registry;
    - a new BenchmarkRun's implementation and workload must name the same operation
      (except the runs in `allowed_mismatches`: upstream's 43 known data errors);
    - two additions with one digest must be the same file;
    - with `unique_names`, a new manifest's `metadata.name` is not taken by another manifest of
      its kind (in the registry or the same change) and does not look like a digest.
    """
    problems: list[Problem] = []
    for source, manifest in additions:
        size = stored_sizes.get(source) if stored_sizes is not None else None
        problem = stored_size_problem(source, len(manifest.stored_bytes()) if size is None else size)
        if problem is not None:
            problems.append(problem)
    if existing is None:
        return problems
    batch: dict[str, tuple[str, Manifest]] = {}
    for source, manifest in additions:
        if existing.holds((manifest.kind,), manifest.digest):
            published = existing.find_document((manifest.kind,), manifest.digest)
            if published is not None and canonical_json(published) != canonical_json(manifest.document):
                problems.append(Problem(source, "$.metadata", conflict_reason(manifest.digest)))
        previous = batch.get(manifest.digest)
        if previous is None:
            batch[manifest.digest] = (source, manifest)
        elif previous[1].document != manifest.document:
            problems.append(
                Problem(
                    source,
                    "$.metadata",
                    f"same digest as {previous[0]} ({manifest.digest}) but different metadata; a digest names one file",
                )
            )

    def lookup(kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        found = batch.get(digest)
        if found is not None:
            return found[1].document if found[1].kind in kinds else None
        return existing.find_document(kinds, digest)

    def holds(kinds: tuple[str, ...], digest: str) -> bool:
        found = batch.get(digest)
        if found is not None:
            return found[1].kind in kinds
        return existing.holds(kinds, digest)

    def find_operation(kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        found = batch.get(digest)
        if found is not None:
            return operation_found(found[1].document if found[1].kind in kinds else None)
        return existing.find_operation(kinds, digest)

    if unique_names:
        problems.extend(_name_problems(list(batch.values()), existing))
    for source, manifest in batch.values():
        resolved: dict[str, dict[str, Any]] = {}
        operations: dict[str, str | None] = {}
        read = _READ.get(manifest.kind, frozenset())
        with_operation = _OPERATIONS.get(manifest.kind, frozenset())
        for path, kinds, digest in manifest.references():
            if path in read:
                document = lookup(kinds, digest)
                if document is not None:
                    resolved[path] = document
                    continue
            elif path in with_operation:
                there, operations[path] = find_operation(kinds, digest)
                if there:
                    continue
            elif holds(kinds, digest):
                continue
            wanted = " or ".join(kinds)
            problems.append(Problem(source, path, f"{digest} does not resolve to {with_article(wanted)}"))
        problems.extend(_lifecycle_problems(source, manifest, resolved, lookup))
        if manifest.kind == "BenchmarkRun" and manifest.digest not in allowed_mismatches:
            reason = operation_mismatch_digests(operations.get(_IMPLEMENTATION), operations.get(_WORKLOAD))
            if reason:
                problems.append(Problem(source, "$.spec.workloadDigest", f"{reason}; a run measures one operation"))
    return problems


def _name_problems(additions: Sequence[tuple[str, Manifest]], existing: Existing) -> list[Problem]:
    problems = []
    claimed: dict[tuple[str, str], tuple[str, Manifest]] = {}
    for source, manifest in additions:
        name = manifest.document["metadata"]["name"]
        reason = name_problem(manifest.kind, name, existing, manifest.digest)
        first = claimed.setdefault((manifest.kind, name), (source, manifest))
        if reason is None and first[1].digest != manifest.digest:
            reason = f"{name!r} is also the name of {first[0]} ({first[1].digest}) in this change"
        if reason is not None:
            problems.append(Problem(source, "$.metadata.name", reason))
    return problems
