"""One verdict from every door: `kernelindex validate`, `kernelindex add`, the pull-request check and
the importers' door judge the same input alike, and refuse it with the same located messages.

Each input is a file (JSON, or YAML for the examples as written) given to all four against one real registry:
docs/examples/kinds published on main. `validate --repo` and `add --branch` run through the CLI; the PR check
(`review.check_range`, signatures aside: who may publish an overlay is not the manifest's verdict) judges a
commit that writes the file's stored form where a contributor would put it; the importers' door is
`ImportPlan.add` then `reconcile` against main, on the document the file holds (a source's own reader yields
documents). A door's verdict is its set of (JSON path, reason): the file each names is its own (a path in git
for the PR check), so sources are left out.

Families (`test_every_door_agrees`): a kind's example with a fresh name and one leaf of its spec mutated
(a neighbouring value, or a hostile one); a published example under a new name (same digest, other metadata);
a published example as published; one with a name another manifest of its kind holds (the importers rename
instead, by design: upstream repeats names; so that door sits this family out); a value nested 60 to 70 levels
deep; an integer at and beyond 2^53; a duration in a bad unit. `test_the_size_limit_is_on_the_stored_form`
holds the stored form at 1 MiB exactly and one byte over, from a file well under 1 MiB.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import DOC_EXAMPLES, commit_manifests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from signing import commit_raw

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.canonical import stored_json
from kernelindex.registry.importers.plan import ImportPlan, SourceTerms, reconcile
from kernelindex.registry.parse import MAX_DOCUMENT_BYTES, load_document
from kernelindex.registry.review import check_range

Verdict = frozenset[tuple[str, str]]
"""A door's problems as (JSON path, reason); empty: accepted."""

EXAMPLES = {path.stem: path for path in sorted((DOC_EXAMPLES / "kinds").glob("*.yaml"))}
DOCUMENTS = {stem: load_document(path.read_bytes(), path.name) for stem, path in EXAMPLES.items()}
TERMS = SourceTerms("example", "Example", "CC-BY-4.0", "Example", "https://example.org")
_counter = itertools.count()


class Registry:
    """docs/examples/kinds published on main of a bare registry, and the four doors onto it."""

    def __init__(self, path: Path, files: Path) -> None:
        self.path = path
        self.files = files
        self.store = registry.GitStore.init(path)
        self.main = commit_manifests(
            self.store, [registry.load_manifest(p.read_bytes(), p.name) for p in EXAMPLES.values()]
        )
        self.cli = typer.main.get_command(app)  # built once (typer's CliRunner builds it on every invoke: 0.3 s)

    def verdicts(self, data: bytes, suffix: str = ".json") -> dict[str, Verdict]:
        """Each door's verdict on one file."""
        number = next(_counter)
        file = self.files / f"input-{number}{suffix}"
        file.write_bytes(data)
        return {
            "validate": self._validate(file),
            "add": self._add(file, f"try-{number}"),
            "pr": self._pull_request(data, file.name),
            "import": self._import(data, file.name),
        }

    def _run(self, *args: str) -> tuple[int, str, str]:
        """The command's exit status, standard output and standard error."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = self.cli.main(list(args), prog_name="kernelindex", standalone_mode=False)
        return status or 0, out.getvalue(), err.getvalue()

    def _validate(self, file: Path) -> Verdict:
        status, out, _ = self._run("validate", "--repo", str(self.path), "--format", "json", str(file))
        answer = json.loads(out)
        assert (status == 0) == answer["ok"], out
        return frozenset((p["path"], p["reason"]) for p in answer["problems"])

    def _add(self, file: Path, branch: str) -> Verdict:
        author = "T <t@example.com>"
        status, out, err = self._run("add", "--repo", str(self.path), "--branch", branch, "--author", author, str(file))
        if status == 0:
            assert self.store.head() == self.main  # on its own branch: main stays as published
            return frozenset()
        assert status == 1, out + err
        return frozenset(_located(line, str(file)) for line in err.splitlines())

    def _pull_request(self, data: bytes, name: str) -> Verdict:
        """The file's stored form at its digest path (a file that is no manifest: at a path of its kind's folder)."""
        try:
            manifest = registry.load_manifest(data, name)
            path, content = manifest.path, manifest.stored_bytes()
        except registry.InvalidManifest:
            document = json.loads(data)
            folder = registry.KINDS[document["kind"]].folder if document.get("kind") in registry.KINDS else "x"
            path, content = f"{folder}/ab/{'ab' * 32}.json", stored_json(document)
        head = commit_raw(self.store, self.main, {path: content})
        report = check_range(self.store, self.main, head, signatures=False)
        assert all(p.source == path for p in report.problems), report.problems
        return frozenset((p.path, p.reason) for p in report.problems)

    def _import(self, data: bytes, name: str) -> Verdict:
        plan = ImportPlan(TERMS)
        try:  # a source's reader yields documents: JSON's as read, YAML's through the registry's YAML 1.2 reader
            plan.add(name, json.loads(data) if name.endswith(".json") else load_document(data, name))
        except registry.InvalidManifest as exc:
            return frozenset((p.path, p.reason) for p in exc.problems)
        reconciled = reconcile(plan, self.store, self.main)
        refused = {("$.metadata", why) for _, _, why in reconciled.conflicting}
        return frozenset(refused | {(p.path, p.reason) for p in reconciled.problems})


def _located(line: str, source: str) -> tuple[str, str]:
    """A problem line (`file: $.path: reason`, or `file: reason`) as (path, reason)."""
    assert line.startswith(f"{source}: "), line
    rest = line.removeprefix(f"{source}: ")
    if rest.startswith("$"):
        path, _, reason = rest.partition(": ")
        return path, reason
    return "", rest


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    root = tmp_path_factory.mktemp("one-verdict")
    (root / "files").mkdir()
    return Registry(root / "manifests.git", root / "files")


def _agree(verdicts: dict[str, Verdict], *, without: tuple[str, ...] = ()) -> Verdict:
    compared = {door: v for door, v in verdicts.items() if door not in without}
    assert len(set(compared.values())) == 1, json.dumps({d: sorted(v) for d, v in compared.items()}, indent=1)
    return next(iter(compared.values()))


# Inputs -----------------------------------------------------------------------------------------------------

_STEMS = sorted(EXAMPLES)
_HOSTILE: list[Any] = [None, "", -1, 0, 1.5, 100.0, 2**53, "148 parsecs", {"a": 1}, [], True]


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaves(child, (*path, index))
    else:
        yield path, value


def _set(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    target: Any = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def _neighbour(value: Any, draw: st.DrawFn) -> Any:
    """A value of the same type a step away: most stay valid, some cross a bound."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + draw(st.sampled_from([-1, 1, 1000]))
    if isinstance(value, float):
        return value * draw(st.sampled_from([0.5, 1.5, 2.0]))
    if isinstance(value, str):
        return value + draw(st.sampled_from(["-x", "1", " ", "Z"]))
    return value


def _fresh(document: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    copied = copy.deepcopy(document)
    copied["metadata"]["name"] = f"fresh-{draw(st.integers(0, 10**6))}"
    return copied


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    stem = draw(st.sampled_from(_STEMS))
    document = _fresh(DOCUMENTS[stem], draw)
    leaves = list(_leaves(document["spec"], ("spec",)))
    path, value = draw(st.sampled_from(leaves))
    _set(document, path, draw(st.one_of(st.just(_neighbour(value, draw)), st.sampled_from(_HOSTILE))))
    return "mutated", document


@st.composite
def renamed_duplicate(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    return "published spec, new name", _fresh(DOCUMENTS[draw(st.sampled_from(_STEMS))], draw)


@st.composite
def republished(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    return "published as published", copy.deepcopy(DOCUMENTS[draw(st.sampled_from(_STEMS))])


@st.composite
def taken_name(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    document = copy.deepcopy(DOCUMENTS["benchmark-run"])
    document["spec"]["timing"]["samples"] += draw(st.integers(1, 1000))  # a new run, named as the published one
    return "taken name", document


@st.composite
def deep(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    depth = draw(st.integers(60, 70))
    nested: Any = "leaf"
    for _ in range(depth):
        nested = {"n": nested}
    document = _fresh(DOCUMENTS[draw(st.sampled_from(_STEMS))], draw)
    where = draw(st.sampled_from(["spec", "metadata"]))
    document[where]["nested"] = nested
    return "deep nesting", document


@st.composite
def huge_integer(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    document = _fresh(DOCUMENTS["benchmark-run"], draw)
    value = draw(st.sampled_from([2**53 - 1, 2**53, 2**63, -(2**53), 10**30]))
    field = draw(st.sampled_from(["samples", "latency"]))
    if field == "samples":
        document["spec"]["timing"]["samples"] = value
    else:
        document["spec"]["timing"]["latencyNs"]["median"] = value
    return "huge integer", document


@st.composite
def bad_unit(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    document = _fresh(DOCUMENTS["benchmark-run"], draw)
    unit = draw(st.sampled_from(["148 parsecs", "148 US", "148us ", "41.2345 us", "9007200 s", "148 µs", "-1 ns"]))
    document["spec"]["timing"]["latencyNs"]["median"] = unit
    return "bad unit", document


FAMILIES = st.one_of(
    mutated(), mutated(), renamed_duplicate(), republished(), taken_name(), deep(), huge_integer(), bad_unit()
)
SEEN: dict[str, list[int]] = {}  # family -> [accepted, refused]: what the run covered (`-s` prints it)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(FAMILIES)
def test_every_door_agrees(published: Registry, case: tuple[str, dict[str, Any]]) -> None:
    family, document = case
    data = json.dumps(document, indent=1).encode()
    verdicts = published.verdicts(data)
    if family == "taken name":
        verdict = _agree(verdicts, without=("import",))
        assert verdict and all(path == "$.metadata.name" for path, _ in verdict)
        assert verdicts["import"] == frozenset()  # renamed `<name>-<digest prefix>`, as upstream's repeats are
    else:
        verdict = _agree(verdicts)
    if family == "published spec, new name":
        assert any(path == "$.metadata" and "already published with different metadata" in why for path, why in verdict)
    if family == "published as published":
        assert verdict == frozenset()
    SEEN.setdefault(family, [0, 0])[bool(verdict)] += 1


@pytest.mark.parametrize("stem", ["benchmark-run", "workload-suite", "implementation-revision"])
def test_the_examples_as_written_re_published_under_a_new_name(published: Registry, stem: str) -> None:
    """The issue's first reproduction, from YAML as a contributor writes it."""
    text = EXAMPLES[stem].read_text()
    name = DOCUMENTS[stem]["metadata"]["name"]
    verdicts = published.verdicts(text.replace(f"name: {name}\n", "name: a-brand-new-name\n", 1).encode(), ".yaml")
    digest = registry.load_manifest(EXAMPLES[stem].read_bytes(), "x.yaml").digest
    assert _agree(verdicts) == {
        (
            "$.metadata",
            f"{digest} is already published with different metadata "
            "(published files never change; a correction is a new manifest)",
        )
    }


def _suite_of_stored_size(size: int) -> dict[str, Any]:
    """A workload suite whose stored form is exactly `size` bytes: long case ids, padded a byte at a time."""
    document: dict[str, Any] = copy.deepcopy(DOCUMENTS["workload-suite"])
    document["metadata"]["name"] = f"suite-of-{size}-bytes"
    cases: list[dict[str, Any]] = [
        {"externalId": f"case-{i:05d}-", "axes": {"rows": i + 1, "width": 8192, "elements": (i + 1) * 8192}}
        for i in range(3200)
    ]
    document["spec"]["cases"] = cases
    missing = size - len(stored_json(document))  # each id may take 188 more characters (200 at most)
    assert 0 <= missing <= 3200 * 188, missing
    for case in cases:
        step = min(missing, 188)
        case["externalId"] += "x" * step
        missing -= step
    assert len(stored_json(document)) == size
    return document


@pytest.mark.parametrize("over", [0, 1], ids=["at", "over"])
def test_the_size_limit_is_on_the_stored_form(published: Registry, over: int) -> None:
    """The issue's second reproduction: a file well under 1 MiB whose stored form is at the limit or past it."""
    document = _suite_of_stored_size(MAX_DOCUMENT_BYTES + over)
    data = json.dumps(document, separators=(",", ":")).encode()
    assert len(data) < 0.9 * MAX_DOCUMENT_BYTES
    verdict = _agree(published.verdicts(data))
    if over <= 0:
        assert verdict == frozenset()
    else:
        size = MAX_DOCUMENT_BYTES + over
        assert verdict == {("", f"the stored form is {size:,} bytes; the limit is 1,048,576 bytes (1 MiB)")}
