"""Hostile content stays out (registry/kinds/content.py): links are http(s) with a host, text is what
XML 1.0 can carry, in every new contribution, at every door: `validate`, `add`, the importers and the
pull-request check (files and commit trailers). What is already published is served as it is.

Expected values come from outside the rules: which characters XML allows from expat (the XML parser),
which fields are URLs from the upstream JSON Schemas, and where a refusal must point from the path at
which the test put the payload. Each attack is tallied in the fault and abuse table (tests/probes.py)."""

from __future__ import annotations

import copy
import functools
import json
import operator
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import (
    EXAMPLES,
    basic_scenario,
    commit_manifests,
    make_attestation,
    make_implementation,
    make_project,
    make_run,
    person,
)
from probes import probe_all
from signing import commit_raw
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.canonical import manifest_digest, stored_json
from kernelindex.registry.errors import InvalidCommit, Problem
from kernelindex.registry.importers import ImportPlan
from kernelindex.registry.integrity import check_commit
from kernelindex.registry.kinds.content import LINK_PATTERN, artifact_uri_problem, link_problem, text_problem
from kernelindex.registry.normalize import normalize
from kernelindex.registry.parse import load_document
from kernelindex.registry.review import check_range
from kernelindex.registry.snapshots import Snapshots

SCHEMAS = EXAMPLES.parent / "schemas"
"""Upstream's JSON Schemas, beside its examples."""

HOSTILE_LINKS = [
    "javascript:alert(document.domain)//",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "\x01javascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "//evil.example/x",
    "http:",
    "http://",
    "https:///path",
    "http://:80/",
    "https://user:password@evil.example/",
    "https://good.example@evil.example/",
    "https://evil.example\\@good.example/",
    " https://example.org/",
    "https://example.org/ ",
    "https://example.org/a b",
    "https://exa mple.org/",
    "https://example.org/\n",
    "ftp://example.org/",
    "mailto:someone@example.org",
    "git@github.com:org/repo.git",
    "git+https://github.com/org/repo.git",
    "kernelindex:artifact/sha256:" + "ab" * 32,  # an artifact reference is not a link
]
GOOD_LINKS = [
    "https://x",
    "HTTPS://x",
    "http://example.org",
    "Http://example.org/",
    "https://example.org:8443/a/b?c=d&e=f#g",
    "https://[2001:db8::1]/p",
    "https://127.0.0.1/",
    "https://exämple.org/päth?q=ü",
    "https://example.org/javascript:alert(1)",  # a path, not a scheme
    "https://example.org/%0Aescaped",
]


def _xml_allows(char: str) -> bool:
    """Whether an XML 1.0 parser accepts the character (as a character reference: the same rule)."""
    try:
        ET.fromstring(f"<a>&#x{ord(char):X};</a>")
    except ET.ParseError:
        return False
    return True


# The rules themselves, at their boundaries --------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "allowed"),
    [
        ("\x00", False),
        ("\x08", False),
        ("\x09", True),
        ("\x0a", True),
        ("\x0b", False),
        ("\x0c", False),
        ("\x0d", True),
        ("\x0e", False),
        ("\x1f", False),
        ("\x20", True),
        ("\x7f", True),
        ("\x85", True),
        ("\ud7ff", True),
        (chr(0xD800), False),
        (chr(0xDFFF), False),
        ("\ue000", True),
        ("\ufffd", True),
        ("\ufffe", False),
        ("\uffff", False),
        ("\U00010000", True),
        ("\U0010ffff", True),
    ],
)
def test_a_character_is_refused_exactly_when_xml_refuses_it(char: str, allowed: bool) -> None:
    assert _xml_allows(char) is allowed  # the table agrees with the parser
    assert (text_problem(f"a{char}b") is None) is allowed
    if not allowed:
        assert f"U+{ord(char):04X}" in (text_problem(f"a{char}b") or "")


def test_every_code_point_near_a_boundary_agrees_with_the_xml_parser() -> None:
    edges = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFD, 0x10000, 0x10FFFF]
    points = {c for edge in edges for c in range(max(edge - 40, 0), min(edge + 40, 0x10FFFF) + 1)}
    disagree = [hex(c) for c in sorted(points) if (text_problem(chr(c)) is None) != _xml_allows(chr(c))]
    assert disagree == []


@pytest.mark.slow
def test_every_code_point_agrees_with_the_xml_parser() -> None:
    disagree = [hex(c) for c in range(0x110000) if (text_problem(chr(c)) is None) != _xml_allows(chr(c))]
    assert disagree == []


@pytest.mark.parametrize("value", HOSTILE_LINKS)
def test_a_hostile_link_is_refused(value: str) -> None:
    assert link_problem(value) is not None


@pytest.mark.parametrize("value", GOOD_LINKS)
def test_an_http_link_with_a_host_is_accepted(value: str) -> None:
    assert link_problem(value) is None
    parts = urlsplit(value)  # the standard library agrees: an http(s) scheme and a host
    assert parts.scheme in ("http", "https") and parts.hostname


def test_an_artifact_uri_is_a_link_or_names_its_own_artifact() -> None:
    digest = "sha256:" + "ab" * 32
    assert artifact_uri_problem("https://example.org/log.txt", digest) is None
    assert artifact_uri_problem("kernelindex:artifact/" + digest, digest) is None
    assert artifact_uri_problem("kernelindex:artifact/" + digest, "sha256:" + "cd" * 32) is not None
    assert artifact_uri_problem("kernelindex:artifact/" + digest.upper(), digest) is not None
    assert artifact_uri_problem("KernelIndex:artifact/" + digest, digest) is not None
    assert artifact_uri_problem("kernelindex:artifact/" + digest + "/x", digest) is not None
    assert artifact_uri_problem("javascript:alert(1)", digest) is not None


# Every URL field of every kind ---------------------------------------------------------------------------

_URL_NAMES = ("uri", "url", "repository", "homepage")
_OURS = {  # the lifecycle kinds are ours: no upstream schema
    "Attestation": {"metadata.sourceRefs[].url", "spec.evidenceUrl"},
    "Retraction": {"metadata.sourceRefs[].url"},
    "Supersession": {"metadata.sourceRefs[].url"},
    "Verification": {"metadata.sourceRefs[].url"},
}


def _schema_paths(schema: dict[str, Any], wanted: Callable[[str, dict[str, Any]], bool]) -> set[str]:
    """Paths (`spec.evidence.logs.uri`, `[]` for items, `*` for map values) of the properties `wanted`."""
    defs = schema.get("$defs", {})
    found: set[str] = set()

    def visit(node: dict[str, Any], path: str, depth: int) -> None:
        if depth > 20:
            return
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        for branch in node.get("anyOf", []):
            visit(branch, path, depth + 1)
        for name, child in node.get("properties", {}).items():
            child_path = f"{path}.{name}" if path else name
            if wanted(name, child):
                found.add(child_path)
            visit(child, child_path, depth + 1)
        if isinstance(node.get("items"), dict):
            visit(node["items"], path + "[]", depth + 1)
        values = [node.get("additionalProperties"), *node.get("patternProperties", {}).values()]
        for child in values:
            if isinstance(child, dict):
                visit(child, path + ".*", depth + 1)

    visit(schema, "", 0)
    return found


def _is_link(schema: dict[str, Any]) -> bool:
    branches = [schema, *schema.get("anyOf", [])]
    return any(b.get("pattern") == LINK_PATTERN or _is_link(b) for b in branches if b is not schema)


def test_every_url_field_of_every_kind_takes_only_links() -> None:
    """The fields upstream's schemas name uri, url, repository or homepage (strings), and ours, are exactly
    the fields our models check as links."""
    upstream: dict[str, set[str]] = dict(_OURS)
    for file in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(file.read_text())
        kind = schema["properties"]["kind"]["const"]
        upstream[kind] = _schema_paths(schema, lambda name, node: name in _URL_NAMES and node.get("type") == "string")
    ours = {
        name: _schema_paths(
            info.model.model_json_schema(by_alias=True),
            lambda _, node: _is_link(node) or node.get("pattern") == LINK_PATTERN,
        )
        for name, info in registry.KINDS.items()
    }
    assert set(upstream) == set(registry.KINDS)
    assert ours == upstream
    assert sum(len(paths) for paths in ours.values()) == 30  # 17 kinds' metadata.sourceRefs[].url, 13 more


def _at(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    node: Any = changed
    for key in path[:-1]:
        node = node[key] if isinstance(key, int) else node.setdefault(key, {})
    node[path[-1]] = value
    return changed


def _example(name: str) -> dict[str, Any]:
    document: dict[str, Any] = load_document((EXAMPLES / name).read_bytes(), name)
    return document


_SCENARIO = basic_scenario()
_RUN = make_run(*_SCENARIO.implementations[:1], _SCENARIO.workload, _SCENARIO.protocol, _SCENARIO.environment, 7777)
_IMPLEMENTATION = make_implementation(_SCENARIO.operation, "kernel-z")
_ARTIFACT = "sha256:" + "ab" * 32


def _artifact(uri: str) -> dict[str, str]:
    return {"uri": uri, "digest": _ARTIFACT}


LINK_SITES: dict[str, Callable[[str], dict[str, Any]]] = {
    "$.metadata.sourceRefs[0].url": lambda u: _at(_RUN, ("metadata", "sourceRefs"), [{"url": u}]),
    "$.spec.reference.artifact.uri": lambda u: _at(
        _SCENARIO.operation, ("spec", "reference"), {"language": "python", "artifact": _artifact(u)}
    ),
    "$.spec.tensors.input.data.artifact.uri": lambda u: _at(
        _SCENARIO.workload, ("spec", "tensors", "input", "data", "artifact"), _artifact(u)
    ),
    "$.spec.repository": lambda u: _at(make_project("p"), ("spec", "repository"), u),
    "$.spec.homepage": lambda u: _at(make_project("p"), ("spec", "homepage"), u),
    "$.spec.projectRevision.repository": lambda u: _at(_IMPLEMENTATION, ("spec", "projectRevision", "repository"), u),
    "$.spec.buildVariants[0].install.repository": lambda u: _at(
        _IMPLEMENTATION, ("spec", "buildVariants"), [{"name": "src", "install": {"kind": "git", "repository": u}}]
    ),
    "$.spec.harness.repository": lambda u: _at(_SCENARIO.protocol, ("spec", "harness", "repository"), u),
    "$.spec.timing.rawSamples.uri": lambda u: _at(_RUN, ("spec", "timing", "rawSamples"), _artifact(u)),
    "$.spec.evidence.logs.uri": lambda u: _at(_RUN, ("spec", "evidence"), {"logs": _artifact(u)}),
    "$.spec.evidence.rawSamples.uri": lambda u: _at(_RUN, ("spec", "evidence"), {"rawSamples": _artifact(u)}),
    "$.spec.evidence.harness.repository": lambda u: _at(
        _RUN, ("spec", "evidence"), {"harness": {"repository": u, "commit": "a" * 40}}
    ),
    "$.spec.project.repository": lambda u: _at(
        _example("serving-stack-revision.yaml"), ("spec", "project", "repository"), u
    ),
    "$.spec.evidenceUrl": lambda u: _at(make_attestation(_SCENARIO.runs[0]), ("spec", "evidenceUrl"), u),
}
TEXT_SITES: dict[str, Callable[[str], dict[str, Any]]] = {
    "$.metadata.title": lambda c: _at(_RUN, ("metadata", "title"), f"fast{c}run"),
    "$.metadata.description": lambda c: _at(_RUN, ("metadata", "description"), f"d{c}"),
    "$.metadata.labels.note": lambda c: _at(_RUN, ("metadata", "labels"), {"note": f"a{c}"}),
    "$.metadata.authors[0].name": lambda c: _at(_IMPLEMENTATION, ("metadata", "authors"), [{"name": f"A{c}"}]),
    "$.spec.settings.environmentVariables": lambda c: _at(
        _SCENARIO.environment, ("spec", "settings"), {"environmentVariables": {f"K{c}": "v"}}
    ),
    "$.spec.settings.environmentVariables.K": lambda c: _at(
        _SCENARIO.environment, ("spec", "settings"), {"environmentVariables": {"K": f"v{c}"}}
    ),
    "$.spec.body": lambda c: _at(make_attestation(_SCENARIO.runs[0]), ("spec", "body"), f"body{c}"),
    "$.spec.callable.path": lambda c: _at(_IMPLEMENTATION, ("spec", "callable", "path"), f"a{c}.py"),
    "$.spec.caveats[0]": lambda c: _at(_example("serving-run.yaml"), ("spec", "caveats"), [f"c{c}"]),
}
Case = tuple[str, Callable[[], bool]]
FORBIDDEN = ["\x00", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "\ufffe", "\uffff"]
ALLOWED = ["\x09", "\x0a", "\x0d", "\x20", "\x7f", "\ufffd", "\U0001f600"]


def _refused(where: str, reason: str, act: Callable[..., object], *args: Any) -> bool:
    """Whether `act(*args)` is refused with a problem at `where` whose reason mentions `reason`."""
    try:
        act(*args)
    except (registry.InvalidManifest, registry.RejectedChange) as exc:
        return any(p.path == where and reason in p.reason for p in exc.problems)
    return False


def _validate(document: dict[str, Any]) -> registry.Manifest:
    """What `kernelindex validate` and `add` do with a file: bytes in, a manifest out."""
    return registry.load_manifest(json.dumps(document).encode(), "contribution.json")


def _validate_made(make: Callable[[str], dict[str, Any]], value: str) -> registry.Manifest:
    return _validate(make(value))


def _load_bytes(make: Callable[[str], dict[str, Any]], value: str) -> registry.Manifest:
    return registry.load_manifest(json.dumps(make(value)).encode(), "c.json")


def _load_document(make: Callable[[str], dict[str, Any]], value: str) -> registry.Manifest:
    return registry.manifest_from_document(make(value), "c.json")


def test_each_url_field_refuses_each_hostile_link_where_it_is() -> None:
    for make in LINK_SITES.values():
        assert _validate(make("https://example.org/x")).kind  # the site itself is valid
    cases: list[Case] = [
        (f"{where} = {value!r}", functools.partial(_refused, where, "", _validate_made, make, value))
        for where, make in LINK_SITES.items()
        for value in HOSTILE_LINKS
        if not (value.startswith("kernelindex:artifact/") and where.endswith(".uri"))
    ]
    assert probe_all("content: links in manifests", cases) == []


def test_an_artifact_field_takes_kernelindex_artifacts_of_its_own_digest() -> None:
    make = LINK_SITES["$.spec.evidence.logs.uri"]
    assert _validate(make("kernelindex:artifact/" + _ARTIFACT)).kind == "BenchmarkRun"
    other = "kernelindex:artifact/sha256:" + "cd" * 32
    assert _refused("$.spec.evidence.logs.uri", "its own digest", _validate_made, make, other)
    artifact = "kernelindex:artifact/" + _ARTIFACT
    assert _refused(
        "$.spec.repository", "not an http(s) link", _validate_made, LINK_SITES["$.spec.repository"], artifact
    )


def test_each_text_refuses_each_character_xml_cannot_carry_where_it_is() -> None:
    for char in ALLOWED:
        for make in TEXT_SITES.values():
            assert _validate(make(char)).kind
    cases: list[Case] = [
        (
            f"{where} with U+{ord(char):04X}",
            functools.partial(_refused, where, f"U+{ord(char):04X}", _validate_made, make, char),
        )
        for where, make in TEXT_SITES.items()
        for char in FORBIDDEN
    ]
    # An unpaired surrogate: JSON can escape one; the parser refuses it, and so does a document from a
    # reader that lets it through (an importer's).
    for where, make in TEXT_SITES.items():
        cases.append(
            (f"{where} unpaired (bytes)", functools.partial(_refused, where, "surrogate", _load_bytes, make, "\ud800"))
        )
        cases.append(
            (
                f"{where} unpaired (document)",
                functools.partial(_refused, where, "U+D800", _load_document, make, "\ud800"),
            )
        )
    assert probe_all("content: XML characters in manifests", cases) == []


def test_a_problem_names_the_file_the_path_and_the_reason(tmp_path: Path, runner: CliRunner) -> None:
    file = tmp_path / "run.json"
    file.write_text(json.dumps(LINK_SITES["$.spec.evidence.harness.repository"]("javascript:alert(1)//")))
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{file}: $.spec.evidence.harness.repository: not an http(s) link: a link starts with http:// or https:// "
        "and a host (got 'javascript:alert(1)//')"
    ]
    file.write_text(json.dumps(TEXT_SITES["$.metadata.title"]("\x08")))
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{file}: $.metadata.title: holds U+0008, a character XML 1.0 does not allow")


# The other doors: add, its Source-URL, the pull-request check ----------------------------------------------


def _raw(document: dict[str, Any]) -> tuple[str, bytes]:
    """The path and stored bytes of a document, without judging it (what a pull request can hold)."""
    normalized = normalize(copy.deepcopy(document), "raw")
    digest = manifest_digest(normalized)
    return registry.manifest_path(document["kind"], digest), stored_json(normalized)


def _pull_request(store: registry.GitStore, files: dict[str, bytes], message: str) -> str:
    base = store.head()
    assert base is not None
    return commit_raw(store, base, dict(files), message=message)


def test_add_refuses_a_hostile_file_and_writes_nothing(
    basic_store: registry.GitStore, runner: CliRunner, tmp_path: Path
) -> None:
    head = basic_store.head()
    file = tmp_path / "attestation.json"
    file.write_text(json.dumps(LINK_SITES["$.spec.evidenceUrl"]("javascript:alert(document.domain)//")))
    result = runner.invoke(app, ["add", str(file), "--repo", str(basic_store.path), "--author", "A <a@example.com>"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{file}: $.spec.evidenceUrl: not an http(s) link")
    assert registry.GitStore(basic_store.path).head() == head


@pytest.mark.parametrize("value", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:,x", "//evil", "http:"])
def test_add_refuses_a_hostile_source_url(
    basic_store: registry.GitStore, runner: CliRunner, tmp_path: Path, value: str
) -> None:
    head = basic_store.head()
    file = tmp_path / "attestation.json"
    file.write_text(json.dumps(make_attestation(_SCENARIO.runs[0])))
    args = ["add", str(file), "--repo", str(basic_store.path), "--source-url", value, "--author", "A <a@example.com>"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.stderr.startswith("commit: Source-URL: not an http(s) link"), result.stderr
    assert registry.GitStore(basic_store.path).head() == head
    good = runner.invoke(app, [*args[:5], "https://example.org/evidence", *args[6:]])
    assert good.exit_code == 0, good.stderr


def test_a_new_commit_refuses_hostile_trailers_and_text() -> None:
    def meta(**changes: Any) -> registry.CommitMeta:
        fields: dict[str, Any] = {"author": person(), "committer": person(), "subject": "Add", "trailers": ()}
        fields.update(changes)
        return registry.CommitMeta(**fields)

    def refused(part: str, reason: str, **changes: Any) -> bool:
        return _refused(part, reason, functools.partial(meta, **changes))

    hostile = registry.Person("A\x08", "a@example.com", 0)
    # git strips a trailer's value: " https://example.org/" is written, and judged, without its space.
    cases: list[Case] = [
        (f"Source-URL {v!r}", functools.partial(refused, "Source-URL", "", trailers=(("Source-URL", v),)))
        for v in HOSTILE_LINKS
        if v.strip(" ") != "https://example.org/"
    ]
    cases += [
        ("subject", functools.partial(refused, "subject", "U+001F", subject="Add\x1f")),
        ("body", functools.partial(refused, "body", "U+FFFE", body="why\ufffe")),
        ("trailer", functools.partial(refused, "License", "U+000B", trailers=(("License", "MIT\x0b"),))),
        ("author", functools.partial(refused, "author", "U+0008", author=hostile)),
        ("committer", functools.partial(refused, "committer", "U+0008", committer=hostile)),
    ]
    assert probe_all("content: commit trailers and text", cases) == []
    with pytest.raises(InvalidCommit) as refusal:
        meta(trailers=(("source-url", "javascript:x"),))  # trailer keys compare as git compares them
    assert refusal.value.problems == (Problem("commit", "source-url", refusal.value.problems[0].reason),)
    assert "not an http(s) link" in refusal.value.reason
    written = meta(trailers=(("Source-URL", " https://example.org/ "),))
    assert written.message.endswith("\nSource-URL: https://example.org/\n")


def test_the_pull_request_check_refuses_hostile_files_and_trailers(basic_store: registry.GitStore) -> None:
    base = basic_store.head()
    assert base is not None

    def refused_file(where: str, document: dict[str, Any], reason: str) -> bool:
        document = _at(document, ("metadata", "name"), f"pr-{len(reason)}-{abs(hash(json.dumps(document)))}")
        path, data = _raw(document)
        head = _pull_request(basic_store, {path: data}, "Add a run\n\nSource: community\n")
        problems = check_range(basic_store, base, head, signatures=False).problems
        return any(p.source == path and p.path == where and reason in p.reason for p in problems)

    def refused_commit(message: str, part: str, reason: str) -> bool:
        path, data = _raw(make_attestation(_SCENARIO.runs[0], body="fine"))
        head = _pull_request(basic_store, {path: data}, message)
        problems = check_range(basic_store, base, head, signatures=False).problems
        return any(p.source == f"commit {head[:12]}" and p.path == part and reason in p.reason for p in problems)

    cases: list[Case] = [
        (f"{where} = {value!r}", functools.partial(refused_file, where, make(value), "link"))
        for where, make in LINK_SITES.items()
        for value in HOSTILE_LINKS[:8]
    ]
    cases += [
        (f"{where} U+{ord(c):04X}", functools.partial(refused_file, where, make(c), f"U+{ord(c):04X}"))
        for where, make in TEXT_SITES.items()
        for c in FORBIDDEN[:4]
    ]
    trailer = "Add\n\nSource: community\nSource-URL: {}\n"
    cases += [
        (f"Source-URL {v!r}", functools.partial(refused_commit, trailer.format(v), "Source-URL", "link"))
        for v in HOSTILE_LINKS
        if "\n" not in v and "\t" not in v and not v.startswith((" ", "\x01")) and not v.endswith(" ")
    ]
    cases += [
        ("subject U+0008", functools.partial(refused_commit, "Add\x08\n\nSource: community\n", "message", "U+0008")),
        ("trailer U+001B", functools.partial(refused_commit, "Add\n\nSource: community\x1b\n", "Source", "U+001B")),
    ]
    assert probe_all("content: pull-request check", cases) == []
    path, data = _raw(make_attestation(_SCENARIO.runs[0], body="fine"))
    fine = _pull_request(basic_store, {path: data}, "Add\n\nSource: community\nSource-URL: HTTPS://example.org/x\n")
    assert check_range(basic_store, base, fine, signatures=False).ok


def test_validate_base_head_lists_each_problem(basic_store: registry.GitStore, runner: CliRunner) -> None:
    base = basic_store.head()
    assert base is not None
    run = _at(
        LINK_SITES["$.spec.evidence.logs.uri"]("javascript:alert(document.domain)//"), ("metadata", "title"), "a\x08"
    )
    path, data = _raw(run)
    commit_raw(
        basic_store,
        base,
        {path: data},
        ref="refs/heads/pr",
        message="Add\n\nSource: community\nSource-URL: javascript:x\n",
    )
    args = ["validate", "--base", "main", "--head", "pr", "--repo", str(basic_store.path), "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    found = {
        (p["file"], p["path"], p["reason"].split(" (")[0].split(",")[0]) for p in json.loads(result.stdout)["problems"]
    }
    head = basic_store.head("refs/heads/pr") or ""
    assert found == {
        (path, "$.metadata.title", "holds U+0008"),
        (path, "$.spec.evidence.logs.uri", "not an http(s) link: a link starts with http:// or https:// and a host"),
        (f"commit {head[:12]}", "Source-URL", "not an http(s) link: a link starts with http:// or https:// and a host"),
    }


# Importers ----------------------------------------------------------------------------------------------


def test_the_export_importer_refuses_a_hostile_source_and_rows() -> None:
    from kernelindex.registry.importers.kernelindex_export import Export, plan_import

    def export(policy_url: str, repository: str, name: str = "Src") -> Export:
        implementation = _at(_IMPLEMENTATION, ("spec", "projectRevision", "repository"), repository)
        source: dict[str, Any] = {"id": "s", "slug": "src", "name": name, "createdAt": "2026-01-01T00:00:00Z"}
        source["policy"] = {"url": policy_url, "license": "MIT"}
        row = {"id": "i", "sourceId": "s", "manifest": implementation, "createdAt": "2026-01-02T00:00:00Z"}
        return Export("e.jsonl.zst", "0" * 64, {"sources": [source], "implementations": [row]})

    def refused(where: str, path: str, reason: str, given: Export) -> bool:
        try:
            plan_import(given)
        except registry.InvalidManifest as exc:
            return any(p.source == where and p.path == path and reason in p.reason for p in exc.problems)
        return False

    good = "https://example.org/"
    source, row = "e.jsonl.zst: sources[0]", "e.jsonl.zst: implementations[0].manifest"
    cases: list[Case] = [
        (f"policy.url {v!r}", functools.partial(refused, source, "$.policy.url", "link", export(v, good)))
        for v in HOSTILE_LINKS
    ]
    cases += [
        (f"row {v!r}", functools.partial(refused, row, "$.spec.projectRevision.repository", "link", export(good, v)))
        for v in HOSTILE_LINKS
    ]
    cases.append(("source name", functools.partial(refused, source, "$.name", "U+0008", export(good, good, "S\x08"))))
    assert probe_all("content: export importer", cases) == []
    assert plan_import(export(good, good))


def _strings(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _strings(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _strings(child, (*path, index))


def _set(value: Any, path: tuple[str | int, ...], new: str) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _fuzz_json(
    family: str,
    source: Path,
    copy_to: Path,
    file: str,
    select: Callable[[Any], Any],
    plan: Callable[[Path], ImportPlan],
) -> tuple[int, int]:
    """Put U+0008 into each string of the selected part of one input file, one at a time, and plan the
    import: the character never reaches a manifest, and when it would, the row is refused with a located
    problem. Returns (values that reached a manifest's text, refused cleanly)."""
    import shutil

    reached = refused = 0
    original = json.loads((source / file).read_text())
    for path, text in list(_strings(select(original))):
        if copy_to.exists():
            shutil.rmtree(copy_to)
        shutil.copytree(source, copy_to)
        data = copy.deepcopy(original)
        _set(select(data), path, text[:1] + "\x08" + text[1:])
        (copy_to / file).write_text(json.dumps(data))
        planned: ImportPlan | None = None
        try:
            planned = plan(copy_to)
        except registry.InvalidManifest as exc:
            problems: list[Problem] = list(exc.problems)
        else:
            problems = planned.problems
        leaked = planned is not None and any("\x08" in json.dumps(m.document) for _, m in planned.manifests.values())
        located = [p for p in problems if "U+0008" in p.reason and p.source and p.path]
        if located or leaked:
            reached += 1
            refused += bool(located) and not leaked
    return reached, refused


IMPORTERS: list[tuple[str, str, str, Callable[[Any], Any], str]] = [
    (
        "mlperf",
        "mlperf",
        "summary-v6.0-slice.json",
        lambda rows: rows[0],
        "kernelindex.registry.importers.mlperf:plan_mlperf",
    ),
    (
        "gpumode",
        "gpumode",
        "api/fp8-mm-top.json",
        lambda data: data["rows"][0]["row"],
        "kernelindex.registry.importers.gpumode:plan_gpumode",
    ),
    (
        "flashinfer",
        "flashinfer/dataset",
        "solution.json",
        lambda data: data,
        "kernelindex.registry.importers.flashinfer:plan_flashinfer",
    ),
    (
        "sol",
        "sol/api",
        "kernel-4.json",
        lambda data: data,
        "kernelindex.registry.importers.sol_execbench:plan_sol_execbench",
    ),
]


@pytest.mark.parametrize(("name", "folder", "file", "select", "planner"), IMPORTERS, ids=[i[0] for i in IMPORTERS])
def test_no_importer_lets_a_forbidden_character_through(
    tmp_path: Path, name: str, folder: str, file: str, select: Callable[[Any], Any], planner: str
) -> None:
    import importlib

    module, _, function = planner.partition(":")
    plan = getattr(importlib.import_module(module), function)
    from importing import FIXTURES

    reached, refused = _fuzz_json(name, FIXTURES / folder, tmp_path / "variant", file, select, plan)
    family = "content: importers (fixtures, U+0008)"
    # Tallied: each mutation that reached a manifest's text, and whether its row was refused where it is.
    outcomes = [(f"{name} {i}", functools.partial(operator.lt, i, refused)) for i in range(reached)]
    assert probe_all(family, outcomes) == []
    assert reached > 0  # the fuzzed part does reach manifests


def test_the_liger_importer_lets_no_forbidden_character_through(tmp_path: Path, store: registry.GitStore) -> None:
    """Each cell of a CSV row in turn: refused where it is, or it never reaches a manifest. A skipped row's
    reason quotes the cell, escaped, in the import's commit message."""
    import csv
    import io

    from importing import FIXTURES

    from kernelindex.registry.importers import commit_plan
    from kernelindex.registry.importers.liger import plan_liger

    lines = (FIXTURES / "liger" / "all-benchmark-data-slice.csv").read_text().splitlines(keepends=True)
    row = next(csv.reader(io.StringIO(lines[1])))
    variant = tmp_path / "slice.csv"
    reached = refused = 0
    plans = []
    for index, cell in enumerate(row):
        cells = [*row[:index], cell[:1] + "\x08" + cell[1:], *row[index + 1 :]]
        written = io.StringIO()
        csv.writer(written, lineterminator="\n").writerow(cells)
        variant.write_text("".join([lines[0], written.getvalue(), *lines[2:]]))
        plan = plan_liger(variant)
        plans.append(plan)
        leaked = any("\x08" in json.dumps(m.document) for _, m in plan.manifests.values())
        located = [
            p
            for p in plan.problems
            if p.source.startswith("slice.csv:2") and ("U+0008" in p.reason or "\\x08" in p.reason)
        ]
        if located or leaked:
            reached += 1
            refused += bool(located) and not leaked
    outcomes = [(f"liger {i}", functools.partial(operator.lt, i, refused)) for i in range(reached)]
    assert probe_all("content: importers (fixtures, U+0008)", outcomes) == []
    assert reached > 0
    skipping = next(p for p in plans if any(r.skipped and "\x08" in r.skipped for r in p.rows))
    _, added = commit_plan(store, skipping)
    assert added is not None and added.commit is not None
    message = store.commit_info(added.commit).message
    assert "\x08" not in message and "\\x08" in message


# What is already published stays served ----------------------------------------------------------------


def _published_hostile(store: registry.GitStore) -> tuple[str, str, str]:
    """main with a commit made before these rules: a run whose harness link is javascript: and whose title
    holds U+0008, under a `Source-URL: javascript:` trailer. Returns (before, hostile commit, run digest)."""
    commit_manifests(store, _SCENARIO.docs)
    before = store.head()
    assert before is not None
    run = _at(
        LINK_SITES["$.spec.evidence.harness.repository"]("javascript:alert(document.domain)//"),
        ("metadata", "title"),
        "t\x08",
    )
    path, data = _raw(run)
    hostile = commit_raw(
        store,
        before,
        {path: data},
        ref="refs/heads/main",
        message="Add\n\nSource: community\nSource-URL: javascript:alert(1)\n",
    )
    return before, hostile, "sha256:" + path.rsplit("/", 1)[-1].removesuffix(".json")


def test_published_hostile_values_stay_served_and_are_not_judged_again(
    store: registry.GitStore, tmp_path: Path
) -> None:
    before, hostile, run = _published_hostile(store)
    assert check_commit(store, hostile) == []  # intact: the integrity check reads, it does not judge content
    snapshots = Snapshots(store.path)
    snapshots.load()
    assert snapshots.head.commit == hostile and run in snapshots.head.facts
    # The next contribution is judged alone: the published run is not a problem of its.
    later = commit_manifests(store, [make_attestation(_SCENARIO.runs[0], body="a note")], TEST_LATER)
    assert check_range(store, hostile, later, signatures=False).ok
    assert snapshots.refresh().serving == later
    # A server that had not yet served it judges the hostile commit as new, and keeps what it served.
    assert {p.path for p in check_range(store, before, hostile, signatures=False).problems} == {
        "$.metadata.title",
        "$.spec.evidence.harness.repository",
        "Source-URL",
    }


TEST_LATER = 1_700_100_000


def test_a_server_keeps_serving_the_last_good_head_when_main_adds_hostile_content(store: registry.GitStore) -> None:
    commit_manifests(store, _SCENARIO.docs)
    snapshots = Snapshots(store.path)
    snapshots.load()
    good = snapshots.head.commit
    path, data = _raw(LINK_SITES["$.spec.evidenceUrl"]("javascript:alert(1)"))
    pushed = commit_raw(store, good, {path: data}, ref="refs/heads/main")
    status = snapshots.refresh()
    assert status.serving == good and status.main == pushed
    assert status.reason is not None and "$.spec.evidenceUrl: not an http(s) link" in status.reason


# The published corpus --------------------------------------------------------------------------------------


def _link_values(document: dict[str, Any], paths: set[str]) -> Iterator[tuple[str, str]]:
    """(path, value) of each link field of a document, `paths` as `_schema_paths` writes them."""
    for path, value in _strings(document):
        spelled = ".".join("[]" if isinstance(p, int) else str(p) for p in path).replace(".[]", "[]")
        if spelled in paths or any(_matches(spelled, p) for p in paths if "*" in p):
            yield spelled, value


def _matches(spelled: str, pattern: str) -> bool:
    head, _, tail = pattern.partition(".*")
    return spelled.startswith(head + ".") and spelled.endswith(tail) and spelled.count(".") == pattern.count(".")


@pytest.mark.slow
def test_the_published_corpus_holds_only_links_and_xml_text(embedded: registry.GitStore) -> None:
    """What the embedded registry publishes already meets the rules: 0 characters XML cannot carry,
    175 kernelindex:artifact/ references (run logs, each naming its own digest), every other link https.
    Rebuilding it through the importers (tests/test_embedded.py) therefore yields the same commits."""
    from xml.sax.saxutils import escape

    head = embedded.head()
    assert head is not None
    paths = {
        name: _schema_paths(
            info.model.model_json_schema(by_alias=True),
            lambda _, node: _is_link(node) or node.get("pattern") == LINK_PATTERN,
        )
        for name, info in registry.KINDS.items()
    }
    schemes: dict[str, int] = {}
    unreadable = 0
    entries = list(embedded.entries(head))
    for entry, data in zip(entries, embedded.read_blobs([e.oid for e in entries]), strict=True):
        document = json.loads(data)
        text = " ".join(s for _, s in _strings(document)) + " ".join(_keys(document))
        try:
            ET.fromstring(f"<a>{escape(text)}</a>")  # the XML parser, not our rule, judges the text
        except ET.ParseError:
            unreadable += 1
        for _, value in _link_values(document, paths[entry.kind]):
            scheme = urlsplit(value).scheme
            schemes[scheme] = schemes.get(scheme, 0) + 1
            assert (artifact_uri_problem(value, None) if scheme == "kernelindex" else link_problem(value)) is None
    trailers = [embedded.commit_info(c).trailer("Source-URL") for c in embedded.first_parents(head)]
    assert unreadable == 0
    assert schemes == {"https": 4_989, "kernelindex": 175}
    assert sorted(urlsplit(t).scheme for t in trailers if t) == ["https"] * 4


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield key
            yield from _keys(child)
    elif isinstance(value, list):
        for child in value:
            yield from _keys(child)
