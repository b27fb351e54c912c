"""Hostile registries for testing the exits alone: every free-text field, URL field and free key of every kind
filled with what an attacker would write, published as git objects directly (the registry's own write path
refuses links that are not http(s) and characters XML cannot carry, but data published before those rules
may hold them, and the pages, badges and feeds must render it inert).

The documents are upstream's 13 examples (`data/kernelindex/examples`, one connected graph of every kind)
enriched with every optional field that holds a link or text a page shows (a run's evidence, its source,
a second run so that a cohort ranks two, an attestation). Which leaves are free text, links or free keys
is found by asking the models themselves (`classify`): a leaf is text when any words validate there, a link
when an http(s) URL does and words do not.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path
from typing import Any

import pygit2
from helpers import EXAMPLES, TEST_TIME

from kernelindex import registry
from kernelindex.registry.canonical import manifest_digest, stored_json
from kernelindex.registry.manifest import manifest_from_document, manifest_path
from kernelindex.registry.normalize import normalize
from kernelindex.registry.parse import load_document

__all__ = [
    "LINKS",
    "PAYLOADS",
    "Built",
    "Leaf",
    "base_documents",
    "build",
    "classify",
    "unsafe_url",
]

PAYLOADS = (
    # The stored payloads of the attack this guards against: markup, attributes, the badge's author.
    '"><img src=x onerror=alert(document.domain)>',
    "'><svg onload=alert(document.domain)>",
    "</title><script>alert(document.domain)</script>",
    'AU" onload="alert(document.domain)" x="',
    "<script>alert(1)</script>",
    "]]><!-- --><?xml?>&amp;&#x26;&lt;",
    "{{7*7}}${alert(1)}{% raw %}",
    # Characters XML 1.0 cannot carry (valid JSON, escaped), and the ones it can but HTML minds.
    "run\x08title",
    "\x00\x01\x0b\x0c\x1b\x1f",
    "\ufffe\uffff",
    "tab\tnew\nline\rreturn",
    "\u2028\u2029\u200b\ufeff\u202e",
)
"""Text an attacker writes into any free-text field."""

LINKS = (
    "javascript:alert(document.domain)//",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "\x01javascript:alert(1)",
    "javascript&colon;alert(1)",
    "javascript:%61lert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+",
    "//evil.example/x",
    "https://ok.example/evidence",  # the 13th: the attestation's evidence, a link that stays one
    "\\\\evil.example\\x",
    "https://user@evil.example/",
    'https://ok.example/"onmouseover="alert(1)',
    "https://ok.example/a b",
    "kernelindex:artifact/sha256:" + "a" * 64,
    "file:///etc/passwd",
)
"""Values an attacker writes into a URL field (one of them a link that may stay a link)."""

_PROBE_TEXT = "zz probe words"
_PROBE_LINK = "https://probe.example/x"
_STRUCTURAL = {"apiVersion", "kind"}


@dataclass(frozen=True, slots=True)
class Leaf:
    """A place in a document: a value (`text` or `link`) or a dict's key (`key`), by its JSON path."""

    path: tuple[str | int, ...]
    role: str


def _load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = load_document((EXAMPLES / name).read_bytes(), name)
    return document


def base_documents() -> list[dict[str, Any]]:
    """Upstream's examples of the 13 kinds, each optional field that shows a link or text filled, a second
    run and an attestation: the manifests of one registry, dependencies first."""
    names = [
        "operation-spec.yaml",
        "workload-case.yaml",
        "workload-suite.yaml",
        "software-project.yaml",
        "implementation-revision.yaml",
        "benchmark-protocol.yaml",
        "execution-environment.yaml",
        "benchmark-run.yaml",
        "model-revision.yaml",
        "serving-stack-revision.yaml",
        "serving-configuration.yaml",
        "serving-workload.yaml",
        "serving-run.yaml",
    ]
    docs = [_load(name) for name in names]
    project, implementation, run = docs[3], docs[4], docs[7]
    project["spec"]["homepage"] = "https://example.invalid/meridian"
    implementation["metadata"]["labels"] = {"project": project["metadata"]["name"]}
    run["spec"]["sourceNative"] = {"source": "hostile-source", "benchmark": "bench words", "externalId": "ext words"}
    run["spec"]["evidence"] = {
        "logs": {"uri": "https://logs.example/run.log", "digest": "sha256:" + "b" * 64},
        "rawSamples": {"uri": "https://logs.example/samples.json", "digest": "sha256:" + "c" * 64},
        "harness": {"repository": "https://example.invalid/harness", "commit": "d" * 40},
    }
    second = copy.deepcopy(run)
    second["metadata"]["name"] = "example-meridian-rmsnorm-b200-again"
    second["spec"]["timing"]["latencyNs"]["median"] = 8500
    docs.append(second)
    docs.append(
        {
            "apiVersion": "kernelindex.dev/v1alpha1",
            "kind": "Attestation",
            "metadata": {"name": "attestation-of-the-run", "title": "An attestation"},
            "spec": {
                "runDigest": manifest_from_document(copy.deepcopy(run), "run").digest,
                "type": "reproduced",
                "body": "Reproduced words.",
                "evidenceUrl": "https://evidence.example/notebook",
                "environmentSummary": "summary words",
            },
        }
    )
    for document in docs:
        manifest_from_document(copy.deepcopy(document), document["metadata"]["name"])  # each valid as written
    return docs


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any, bool]]:
    """(path, value, is_key) of every string leaf and every key of `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), key, True
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    elif isinstance(value, str):
        yield path, value, False


def _set(document: dict[str, Any], path: Sequence[str | int], value: str) -> None:
    target: Any = document
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _rename(document: dict[str, Any], path: Sequence[str | int], key: str) -> None:
    target: Any = document
    for part in path[:-1]:
        target = target[part]
    target[key] = target.pop(path[-1])


def _valid(document: dict[str, Any]) -> bool:
    try:
        manifest_from_document(document, "probe")
    except registry.InvalidManifest:
        return False
    return True


def classify(document: dict[str, Any]) -> list[Leaf]:
    """The leaves of `document` a contributor writes freely: text (any words validate), links (an http(s)
    URL validates, words do not) and free keys (a dict that takes any key: labels, correctness...)."""
    found: list[Leaf] = []
    for path, value, is_key in _leaves(document):
        if path[-1] in _STRUCTURAL and len(path) == 1:
            continue
        probe = copy.deepcopy(document)
        if is_key:
            _rename(probe, path, "zzprobe")
            if _valid(probe):
                found.append(Leaf(path, "key"))
            continue
        if value.startswith("sha256:"):
            continue  # a digest: a reference, or a measured artifact
        _set(probe, path, _PROBE_TEXT)
        if _valid(probe):
            found.append(Leaf(path, "text"))
            continue
        _set(probe, path, _PROBE_LINK)
        if _valid(probe):
            found.append(Leaf(path, "link"))
    return found


@dataclass(frozen=True)
class Built:
    """A registry written from hostile documents: its main commit and the digests of what the pages show."""

    path: Path
    main: str
    digests: dict[str, str]  # metadata.name -> digest
    kinds: dict[str, str]  # metadata.name -> kind


def _digest(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    normalized = normalize(document, "hostile")
    return str(manifest_digest(normalized)), normalized


def _replace(value: Any, renamed: dict[str, str]) -> Any:
    """`value` with every string that is an old digest replaced by its new one."""
    if isinstance(value, dict):
        return {key: _replace(item, renamed) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, renamed) for item in value]
    if isinstance(value, str):
        return renamed.get(value, value)
    return value


def build(
    path: Path,
    documents: Sequence[dict[str, Any]],
    leaves: Sequence[Sequence[Leaf]],
    texts: Iterable[str],
    links: Iterable[str],
    commit_text: Sequence[str],
    source_url: str,
) -> Built:
    """Write `documents` as one commit of main in a new bare repository at `path`, each text leaf taking the
    next of `texts`, each link the next of `links` and each free key the next text (made unique), without the
    registry's checks; references follow the digests the hostile documents get. The commit's message,
    author and trailers (`Source-Name`, `Source-URL`, `License`, `Attribution`) hold `commit_text` and
    `source_url`."""
    text_values, link_values = cycle(texts), cycle(links)
    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    renamed: dict[str, str] = {}
    digests: dict[str, str] = {}
    kinds: dict[str, str] = {}
    index = pygit2.Index()
    for document, places in zip(documents, leaves, strict=True):
        original, _ = _digest(copy.deepcopy(document))
        hostile = _replace(copy.deepcopy(document), renamed)
        # Keys last, deepest first: renaming a key moves the paths below it.
        for leaf in sorted(places, key=lambda leaf: (leaf.role == "key", -len(leaf.path))):
            if leaf.role == "text":
                _set(hostile, leaf.path, next(text_values))
            elif leaf.role == "link":
                _set(hostile, leaf.path, next(link_values))
            else:
                _rename(hostile, leaf.path, f"{next(text_values)}{len(leaf.path)}{leaf.path[-1]}")
        digest, normalized = _digest(hostile)
        renamed[original] = digest
        name = str(normalized["metadata"]["name"])
        digests[name], kinds[name] = digest, str(normalized["kind"])
        blob = repo.create_blob(stored_json(normalized))
        index.add(pygit2.IndexEntry(manifest_path(normalized["kind"], digest), blob, pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    words = list(commit_text) or ["words"]
    # libgit2 refuses an identity with angle brackets or a line break, or of nothing but its "crud" (controls,
    # punctuation); anything else goes in as given.
    name = "".join(" " if c in "<>\n\r\x00" else c for c in words[0])
    try:
        author = pygit2.Signature(name, "hostile@example.com", TEST_TIME, 0)
    except (pygit2.GitError, ValueError):
        author = pygit2.Signature("someone", "hostile@example.com", TEST_TIME, 0)
    first_line = words[-1].replace("\n", " ").replace("\r", " ")
    trailers = [
        "Source: hostile-source",
        f"Source-Name: {_one_line(words[0])}",
        f"Source-URL: {_one_line(source_url)}",
        f"License: {_one_line(words[-1])}",
        f"Attribution: {_one_line(words[0])}",
    ]
    message = f"{first_line}\n\n{words[0]}\n\n" + "\n".join(trailers) + "\n"
    commit = repo.create_commit("refs/heads/main", author, author, message, tree, [])
    return Built(path, str(commit), digests, kinds)


def _one_line(text: str) -> str:
    return text.replace("\n", " ").replace("\r", " ")


def unsafe_url(value: str) -> str | None:
    """Why an `href`/`src` value (as a parser hands it over, entities decoded) could run or leave the page in a
    way a registry link must not, or None: a browser removes tabs and line breaks anywhere in a URL and
    controls and spaces at its ends, then reads the scheme; only http(s), a fragment, or a path of this
    site (one leading slash) are links the registry makes."""
    cleaned = "".join(c for c in value if c not in "\t\n\r").strip("".join(map(chr, range(0x21))))
    if cleaned.startswith("#"):
        return None
    if cleaned.startswith("/"):
        return None if not cleaned.startswith(("//", "/\\")) else f"a URL of another site: {value!r}"
    scheme, colon, _ = cleaned.partition(":")
    if colon and scheme.lower() in ("http", "https") and cleaned[len(scheme) + 1 :].startswith("//"):
        return None if registry.kinds.content.link_problem(cleaned) is None else f"not a clean link: {value!r}"
    return f"not an http(s) link: {value!r}"
