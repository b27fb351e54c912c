"""The JSON Schemas (Draft 2020-12) of every manifest kind, shipped with the package for editors and tools.

One file per kind, `<kind-slug>.v1alpha1.schema.json` beside this module (upstream's file names, plus the
four lifecycle kinds). They are generated from the kinds' models (`kernelindex.registry.schemas.generate`, run by
`scripts/generate-schemas`) and committed; a test keeps the two equal, and another checks that the models
and the schemas judge generated documents alike. What a schema cannot say (a duration that does not land
on a whole nanosecond, `2048.0` where an integer goes, references that resolve) the registry still checks; the
invalid examples the schemas accept for that reason are listed, each with why, in docs/contributing.md
("What the schemas cannot say"), and a test holds the list.

Reading a schema needs neither pydantic nor the models: `schema_text` returns the shipped bytes as text.
"""

from __future__ import annotations

import difflib
import json
import re
from importlib import resources
from typing import Any

from kernelindex.registry.errors import UnknownKind
from kernelindex.registry.kinds import KINDS

__all__ = [
    "SCHEMA_DIALECT",
    "find_kind",
    "get_kind",
    "kind_slug",
    "nearest_kind",
    "schema_file_name",
    "schema_id",
    "schema_of",
    "schema_text",
]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_VERSION = "v1alpha1"


def kind_slug(kind: str) -> str:
    """A kind's name in kebab case, as upstream names its schema files.

    >>> kind_slug("ServingStackRevision")
    'serving-stack-revision'
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "-", kind).lower()


def schema_file_name(kind: str) -> str:
    """The name of a kind's schema file, as upstream names it.

    >>> schema_file_name("BenchmarkRun")
    'benchmark-run.v1alpha1.schema.json'
    """
    return f"{kind_slug(kind)}.{_VERSION}.schema.json"


def schema_id(kind: str) -> str:
    """The schema's `$id`: a name, not a location (upstream's schemas, at their own URLs, are not ours; a
    tool that wants a location is given one: a file written by `kernelindex schema`, or a served URL)."""
    return f"urn:kernelindex-registry:schema:{_VERSION}:{kind_slug(kind)}"


def find_kind(text: str) -> str | None:
    """The kind a person means: its name in any case (`benchmarkrun`), its slug (`benchmark-run`) or its
    folder (`benchmark-runs`); None when no kind is meant."""
    wanted = text.strip().lower()
    for name, info in KINDS.items():
        if wanted in (name.lower(), kind_slug(name), info.folder):
            return name
    return None


def nearest_kind(text: str) -> str | None:
    """The kind a misspelt name most likely means (`benchmark-rnu` -> BenchmarkRun), by its name, slug or
    folder; None when nothing is close.

    >>> nearest_kind("benchmark-rnu"), nearest_kind("Enviroment"), nearest_kind("zzz")
    ('BenchmarkRun', 'ExecutionEnvironment', None)
    """
    wanted = text.strip().lower()
    spellings: dict[str, str] = {}
    words: dict[str, str] = {}  # a word of a spelling: `environment` for ExecutionEnvironment (the first kind)
    for name, info in KINDS.items():
        for spelling in (name.lower(), kind_slug(name), info.folder):
            spellings.setdefault(spelling, name)
            for word in spelling.split("-"):
                words.setdefault(word, name)
    close = difflib.get_close_matches(wanted, spellings, n=1, cutoff=0.6)
    if close:
        return spellings[close[0]]
    close = difflib.get_close_matches(wanted, words, n=1, cutoff=0.75)
    return words[close[0]] if close else None


def get_kind(text: str) -> str:
    """As `find_kind`.

    Raises:
        UnknownKind: no kind has that name, slug or folder.
    """
    kind = find_kind(text)
    if kind is None:
        raise UnknownKind(text, tuple(sorted(KINDS)))
    return kind


def schema_text(kind: str) -> str:
    """The shipped JSON Schema of a kind (name, slug or folder), as its file holds it.

    Raises:
        UnknownKind: no such kind.
    """
    name = get_kind(kind)
    return (resources.files(__name__) / schema_file_name(name)).read_text(encoding="utf-8")


def schema_of(kind: str) -> dict[str, Any]:
    """The shipped JSON Schema of a kind, parsed.

    Raises:
        UnknownKind: no such kind.
    """
    parsed: dict[str, Any] = json.loads(schema_text(kind))
    return parsed
