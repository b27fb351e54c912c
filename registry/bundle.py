"""Several manifests in one file, checked and published as one change: KernelIndex's submission bundle, or a
plain multi-document YAML stream (and a single manifest, the bundle of one).

KernelIndex's pull-request path takes one bundle per submission (its `registry/submissions/*.yaml`):

    projects:        [SoftwareProject, ...]
    operations:      [OperationSpec, ...]
    workloads:       [WorkloadCase or WorkloadSuite, ...]
    implementations: [{projectSlug: <slug of a project>, manifest: ImplementationRevision}, ...]
    runs:            [{run: BenchmarkRun, protocol: BenchmarkProtocol, environment: ExecutionEnvironment}, ...]

Every section is optional; the file holds at least one manifest. Manifests name each other by digest, as
anywhere else (a run's `protocolDigest` is its protocol's digest, whether that protocol is in the bundle or
already published). Two links are the bundle's own: a run's `protocol` and `environment` must be the ones
its `protocolDigest` and `environmentDigest` name, and an implementation's `projectSlug` names a project by
its slug (upstream's kebab case of `metadata.name`), in the bundle or in the registry. The registry records
that project as the implementation's `metadata.labels.project` (its project's `metadata.name`), as the
importer of upstream's export does; metadata is never part of identity.

Every problem names the entry it is in, as a JSON path into the file (`$.runs[0].protocol.spec.harness`);
in a YAML stream, the document by its position (`bundle.yaml (document 2)`). The bundle is one change: all
its manifests are checked together (a reference may point anywhere in it) and written in one commit, or,
if any entry is refused, none is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from kernelindex.registry.errors import InvalidManifest, Problem, RejectedChange
from kernelindex.registry.manifest import Manifest, manifest_from_document
from kernelindex.registry.parse import check_manifest_values, load_documents
from kernelindex.registry.present import with_article
from kernelindex.registry.provenance import CommitMeta
from kernelindex.registry.store import MAIN, AddResult, GitStore
from kernelindex.registry.validate import Existing, check_additions

__all__ = ["SECTIONS", "Bundle", "BundleEntry", "add_bundle", "check_bundle", "project_slug", "read_bundle"]

# Section -> (kinds an entry may be, the keys of a wrapped entry: its manifest's key and the others).
SECTIONS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]] | None]] = {
    "projects": (("SoftwareProject",), None),
    "operations": (("OperationSpec",), None),
    "workloads": (("WorkloadCase", "WorkloadSuite"), None),
    "implementations": (("ImplementationRevision",), {"manifest": ("ImplementationRevision",)}),
    "runs": (
        ("BenchmarkRun",),
        {"run": ("BenchmarkRun",), "protocol": ("BenchmarkProtocol",), "environment": ("ExecutionEnvironment",)},
    ),
}
_WRAPPED_EXTRA = {"implementations": ("projectSlug",), "runs": ()}
_ENVELOPE = ("apiVersion", "kind")


@dataclass(frozen=True, slots=True)
class BundleEntry:
    """One manifest of a bundle and where it is: `runs[0].protocol`, `projects[1]`, `document 2`, or ``
    (a file that is one manifest)."""

    where: str
    manifest: Manifest


@dataclass(frozen=True, slots=True)
class Bundle:
    """The manifests of one file, valid one by one, in the file's order."""

    source: str
    form: Literal["submission", "stream", "manifest"]
    entries: tuple[BundleEntry, ...]

    @property
    def manifests(self) -> tuple[Manifest, ...]:
        return tuple(entry.manifest for entry in self.entries)

    def sourced(self) -> list[tuple[str, Manifest]]:
        """(entry key, manifest) pairs for `validate.check_additions` and `GitStore.add`; `locate` turns
        the problems they report back into places in this file."""
        return [(self._key(entry), entry.manifest) for entry in self.entries]

    def locate(self, problems: Sequence[Problem]) -> list[Problem]:
        """Problems reported against `sourced()` keys, located in the file; others pass unchanged."""
        places = {self._key(entry): entry for entry in self.entries}
        return [self._place(places[p.source], p) if p.source in places else p for p in problems]

    def _key(self, entry: BundleEntry) -> str:
        return f"{self.source}\0{entry.where}"

    def _place(self, entry: BundleEntry, problem: Problem) -> Problem:
        return _placed(self.source, self.form, entry.where, problem)


def project_slug(name: str) -> str:
    """A project's slug, as upstream derives it from `metadata.name` (kebab case, at most 100 characters).

    >>> project_slug("larkspur.kernels_v2")
    'larkspur-kernels-v2'
    """
    return re.sub(r"^-+|-+$", "", re.sub(r"[^a-z0-9]+", "-", name.lower()))[:100]


def read_bundle(data: bytes, source: str, *, projects: Collection[str] | None = None) -> Bundle:
    """Read a file of manifests: a submission bundle, a YAML stream, or one manifest.

    `projects` are the names of the registry's SoftwareProjects, where an implementation's `projectSlug`
    is looked up when the bundle has no such project; None when there is no registry to look in (the
    slugs the bundle cannot resolve are then left for the registry's check).

    Raises:
        InvalidManifest: every problem of every entry, each located in the file.
    """
    documents = load_documents(data, source)
    if len(documents) > 1:
        return _stream(documents, source)
    document = documents[0]
    if isinstance(document, dict) and not any(key in document for key in _ENVELOPE) and document:
        return _submission(document, source, projects)
    return _stream(documents, source, form="manifest")


def check_bundle(bundle: Bundle, existing: Existing) -> list[Problem]:
    """Every problem with adding the bundle to a registry (`existing`), each located in the file:
    references resolve (in the bundle or the registry), a run measures one operation, names are free."""
    return bundle.locate(check_additions(bundle.sourced(), existing))


def add_bundle(
    store: GitStore,
    bundle: Bundle,
    meta: CommitMeta,
    *,
    ref: str = MAIN,
    sign: Callable[[bytes], bytes] | None = None,
) -> AddResult:
    """Publish the whole bundle as one commit on `ref`, through `GitStore.add` (which checks it again
    against the head it writes on).

    Raises:
        RejectedChange: as `GitStore.add`, each problem located in the file; nothing is written.
        StoreBusy: as `GitStore.add`.
    """
    try:
        return store.add(bundle.sourced(), meta, ref=ref, sign=sign)
    except RejectedChange as exc:
        raise RejectedChange(bundle.locate(exc.problems)) from None


# Reading -----------------------------------------------------------------------------------------------


def _stream(documents: list[Any], source: str, form: Literal["stream", "manifest"] = "stream") -> Bundle:
    entries: list[BundleEntry] = []
    problems: list[Problem] = []
    for index, document in enumerate(documents):
        where = f"document {index + 1}" if form == "stream" else ""
        try:
            check_manifest_values(document, source)
            entries.append(BundleEntry(where, manifest_from_document(document, source)))
        except InvalidManifest as exc:
            problems += [_placed(source, form, where, p) for p in exc.problems]
    if problems:
        raise InvalidManifest(problems)
    return Bundle(source, form, tuple(entries))


def _submission(document: dict[str, Any], source: str, projects: Collection[str] | None) -> Bundle:
    reader = _SubmissionReader(source)
    for key, value in document.items():
        if key not in SECTIONS:
            reader.fail(f"$.{key}", f"unknown section {key!r}; a bundle has {', '.join(SECTIONS)}")
        elif not isinstance(value, list):
            reader.fail(f"$.{key}", f"{key} is a list of entries")
        else:
            for index, item in enumerate(value):
                reader.entry(key, index, item)
    reader.link_runs()
    reader.link_projects(projects)
    if not reader.entries and not reader.problems:
        reader.fail("$", "the bundle holds no manifest")
    if reader.problems:
        raise InvalidManifest(reader.problems)
    return Bundle(source, "submission", tuple(reader.entries))


class _SubmissionReader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.entries: list[BundleEntry] = []
        self.problems: list[Problem] = []
        self.runs: dict[int, dict[str, BundleEntry]] = {}
        self.slugs: dict[int, tuple[str, BundleEntry]] = {}

    def fail(self, path: str, reason: str) -> None:
        self.problems.append(Problem(self.source, path, reason))

    def entry(self, section: str, index: int, item: Any) -> None:
        kinds, wrapped = SECTIONS[section]
        where = f"{section}[{index}]"
        if wrapped is None:
            self.manifest(where, item, kinds)
            return
        allowed = (*_WRAPPED_EXTRA[section], *wrapped)
        shape = "{" + ", ".join(allowed) + "}"
        if not isinstance(item, dict) or any(key in item for key in _ENVELOPE):
            self.fail(f"$.{where}", f"an entry of {section} is a mapping {shape}, not a manifest itself")
            return
        for key in item:
            if key not in allowed:
                self.fail(f"$.{where}.{key}", f"unknown field {key!r}; an entry of {section} has {', '.join(allowed)}")
        found: dict[str, BundleEntry] = {}
        for key, key_kinds in wrapped.items():
            if key not in item:
                self.fail(f"$.{where}", f"missing required field {key!r}")
                continue
            entry = self.manifest(f"{where}.{key}", item[key], key_kinds)
            if entry is not None:
                found[key] = entry
        if section == "runs":
            self.runs[index] = found
        elif "manifest" in found:
            slug = item.get("projectSlug")
            if not isinstance(slug, str) or not slug.strip():
                self.fail(f"$.{where}.projectSlug", "projectSlug is required: the slug of the implementation's project")
            else:
                self.slugs[index] = (slug, found["manifest"])

    def manifest(self, where: str, document: Any, kinds: tuple[str, ...]) -> BundleEntry | None:
        kind = document.get("kind") if isinstance(document, dict) else None
        if isinstance(kind, str) and kind not in kinds:
            self.fail(f"$.{where}.kind", f"{with_article(' or '.join(kinds))} goes here, not {with_article(kind)}")
            return None
        try:
            check_manifest_values(document, self.source)
            entry = BundleEntry(where, manifest_from_document(document, self.source))
        except InvalidManifest as exc:
            self.problems += [_placed(self.source, "submission", where, p) for p in exc.problems]
            return None
        self.entries.append(entry)
        return entry

    def link_runs(self) -> None:
        """A run's protocol and environment are the ones it names."""
        for index, found in self.runs.items():
            run = found.get("run")
            if run is None:
                continue
            for key, field in (("protocol", "protocolDigest"), ("environment", "environmentDigest")):
                named, given = run.manifest.document["spec"][field], found.get(key)
                if given is not None and given.manifest.digest != named:
                    self.fail(
                        f"$.runs[{index}].run.spec.{field}",
                        f"{named} is not runs[{index}].{key}, whose digest is {given.manifest.digest}",
                    )

    def link_projects(self, registered: Collection[str] | None) -> None:
        """Record each implementation's project (by `projectSlug`) as its `metadata.labels.project`."""
        names: dict[str, str] = {}
        for registered_name in registered or ():
            names.setdefault(project_slug(registered_name), registered_name)
        for entry in self.entries:
            if entry.manifest.kind == "SoftwareProject":
                names[project_slug(entry.manifest.name)] = entry.manifest.name  # the bundle's own come first
        for index, (slug, entry) in self.slugs.items():
            project = names.get(slug)
            if project is None:
                if registered is not None:  # without a registry to look in, the registry's check decides
                    self.fail(
                        f"$.implementations[{index}].projectSlug",
                        f"no project {slug!r} in this bundle or the registry (a project's slug is its "
                        "metadata.name in kebab case)",
                    )
                continue
            labels = entry.manifest.document["metadata"].get("labels", {})
            if labels.get("project", project) != project:
                self.fail(
                    f"$.implementations[{index}].manifest.metadata.labels.project",
                    f"{labels['project']!r} is not the project {slug!r} names ({project!r})",
                )
                continue
            position = self.entries.index(entry)
            self.entries[position] = replace(entry, manifest=self.labelled(entry.manifest, project))

    def labelled(self, manifest: Manifest, project: str) -> Manifest:
        document = dict(manifest.document)
        metadata = dict(document["metadata"])
        metadata["labels"] = {**metadata.get("labels", {}), "project": project}
        document["metadata"] = metadata
        return manifest_from_document(document, self.source)  # metadata is not identity: the same digest


def _placed(source: str, form: str, where: str, problem: Problem) -> Problem:
    """A problem of one entry's manifest, as a place in the file."""
    if form == "submission":
        rest = problem.path.removeprefix("$")
        return Problem(source, f"$.{where}{rest}", problem.reason)
    if form == "stream":
        return Problem(f"{source} ({where})", problem.path, problem.reason)
    return Problem(source, problem.path, problem.reason)
