"""A batch of manifests planned against a branch's tree before it is written: what is new, what is already there.

Published files never change. A manifest whose file is already in the tree with the same value is left out of the
commit; one whose digest is published with other metadata is refused; every new one is checked as a pull request's
additions are (`kernelindex.registry.validate`), against the tree it will be added to.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import orjson

from kernelindex.registry.canonical import canonical_json
from kernelindex.registry.errors import Problem
from kernelindex.registry.git_binding import pygit2
from kernelindex.registry.manifest import Manifest, manifest_path
from kernelindex.registry.store_objects import ObjectReader, tree_lookup
from kernelindex.registry.validate import check_additions, operation_found

__all__ = ["plan_batch"]


def plan_batch(
    objects: ObjectReader,
    sourced: Sequence[tuple[str, Manifest]],
    parent: str | None,
    allowed_mismatches: Collection[str],
    unique_names: bool,
) -> tuple[list[Manifest], list[Manifest], list[Problem]]:
    """(new manifests, those already published, problems) of a batch against the tree of `parent` (None: an
    empty registry). A manifest already published with the same value, however spelled, is unchanged; with other
    metadata, a problem. The new ones are checked as `validate.check_additions` checks a change."""
    new: dict[str, Manifest] = {}
    unchanged: list[Manifest] = []
    problems: list[Problem] = []
    tree = objects.commit(parent).tree if parent else None
    for source, manifest in sourced:
        if manifest.digest in new:
            continue
        existing = tree_lookup(tree, manifest.path)
        if existing is None:
            new[manifest.digest] = manifest
        elif str(existing.id) == str(pygit2.hash(manifest.stored_bytes())) or _same_value(
            objects, str(existing.id), manifest
        ):
            unchanged.append(manifest)
        else:
            problems.append(
                Problem(
                    source,
                    "$.metadata",
                    f"{manifest.digest} is already published with different metadata "
                    "(published files never change; a correction is a new manifest)",
                )
            )
    # Every new file goes to the check, not only the first of each digest: a second file with the
    # same digest and other metadata is a conflict to report, not a duplicate to drop.
    additions = [(source, m) for source, m in sourced if m.digest in new]
    problems.extend(
        check_additions(
            additions,
            _TreeLookup(objects, tree, parent),
            allowed_mismatches=allowed_mismatches,
            unique_names=unique_names,
        )
    )
    return list(new.values()), unchanged, problems


def _same_value(objects: ObjectReader, oid: str, manifest: Manifest) -> bool:
    """The published file holds the same JSON value, spelled otherwise (`1.0` for `1`: the YAML and
    JSON forms of one manifest); re-adding it is a no-op, not a conflict."""
    return canonical_json(orjson.loads(objects.read_blob(oid))) == canonical_json(manifest.document)


class _TreeLookup:
    """`validate.Existing` over one tree of a repository."""

    def __init__(self, objects: ObjectReader, tree: Any, commit: str | None) -> None:
        self._objects = objects
        self._tree = tree
        self._commit = commit

    def find_named(self, kind: str, name: str) -> str | None:
        if self._commit is None:
            return None
        return self._objects.names_of_kind(self._commit, kind).get(name)

    def find_document(self, kinds: tuple[str, ...], digest: str) -> dict[str, Any] | None:
        for kind in kinds:
            entry = tree_lookup(self._tree, manifest_path(kind, digest))
            if entry is not None:
                return orjson.loads(self._objects.read_blob(str(entry.id)))  # type: ignore[no-any-return]
        return None

    def holds(self, kinds: tuple[str, ...], digest: str) -> bool:
        return self.find_document(kinds, digest) is not None

    def find_operation(self, kinds: tuple[str, ...], digest: str) -> tuple[bool, str | None]:
        return operation_found(self.find_document(kinds, digest))
