"""What a valid manifest is: each kind's strict model, its folder in git, and the digests it references (each
kind declared once, in `kernelindex.registry.kind_specs`)."""

from __future__ import annotations

from typing import Any

import orjson

from kernelindex.registry.errors import InvalidManifest, Problem
from kernelindex.registry.kind_specs import KIND_BY_FOLDER, KINDS, KindInfo, KindSpec, NodeField, Reference, register
from kernelindex.registry.parse import json_path

__all__ = [
    "API_VERSION",
    "DIGEST_PATTERN",
    "DURATION_SPACE",
    "KINDS",
    "KIND_BY_FOLDER",
    "KindInfo",
    "KindSpec",
    "NodeField",
    "Reference",
    "register",
    "validate_document",
]


API_VERSION = "kernelindex.dev/v1alpha1"  # kernelindex.registry.kinds.common checks that its own is the same
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
DURATION_SPACE = "[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
"""The optional space between a duration's number and its unit: ECMAScript's `\\s`, which upstream's
pattern (and an editor checking our JSON Schema) means. Python's `\\s` differs (it takes U+001C-U+001F
and U+0085, and not U+FEFF), so the class is spelled out."""


_ENVELOPE = ("apiVersion", "kind", "metadata", "spec")


def validate_document(document: Any, source: str, *, clean: bool = False, encoded: bytes | None = None) -> KindInfo:
    """Check a parsed document against the model of its kind; return that kind.

    Every problem is reported at once, each with its JSON path. `clean`: the caller has proven
    that no value is null and no string or key holds a character XML forbids
    (`kernelindex.registry.manifest.stored_manifest` proves both from the stored bytes), so the values are not
    visited one by one for them. `encoded`: `orjson.dumps(document)`, when the caller has made it.

    Raises:
        InvalidManifest: the envelope is wrong, the kind or apiVersion unknown, or the
            document breaks its kind's schema or refinements.
    """
    if not isinstance(document, dict):
        raise InvalidManifest([Problem(source, "$", f"a manifest is a JSON object, not {_type_name(document)}")])
    problems = [Problem(source, "$", f"missing required field {key!r}") for key in _ENVELOPE if key not in document]
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if "apiVersion" in document and api_version != API_VERSION:
        problems.append(
            Problem(source, "$.apiVersion", f"unknown apiVersion {api_version!r}; expected {API_VERSION!r}")
        )
    info = KINDS.get(kind) if isinstance(kind, str) else None
    if "kind" in document and info is None:
        known = ", ".join(sorted(KINDS))
        problems.append(Problem(source, "$.kind", f"unknown kind {kind!r}; expected one of {known}"))
    if problems or info is None:
        raise InvalidManifest(problems or [Problem(source, "$", "not a manifest")])
    nulls = [] if clean else _nulls(document)
    found = [] if clean else _text_problems(document, source)
    problems.extend(found)
    import pydantic  # with the models, when a manifest is first validated

    errors: list[Any] = []
    try:
        # JSON mode: tuples accept arrays, floats accept integers, nothing else is coerced.
        info.model.model_validate_json(orjson.dumps(document) if encoded is None else encoded)
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False)
    except orjson.JSONEncodeError as exc:
        # From a reader more lenient than kernelindex.registry.parse: an unpaired surrogate (reported above), or an
        # integer past 64 bits.
        if not found:
            problems.append(Problem(source, "$", f"not representable as JSON: {exc}"))
    problems.extend(_located(source, nulls, errors))
    if problems:
        raise InvalidManifest(_merge(problems))
    return info


def _located(source: str, nulls: list[tuple[str | int, ...]], errors: list[Any]) -> list[Problem]:
    """The problems of a document from its nulls and the model's errors, each said once, where it is.

    The model reads a null as an absent optional field, so a null is reported here, as one problem: a
    value is required (the model also refused it), or the field should be left out. Errors the model
    derived from reading null as absent (a refinement of the object holding it) are dropped, and so
    is a list's "too short" when its items were refused (pydantic counts only the valid ones).
    """
    found = [(_clean_loc(error["loc"]), error) for error in errors]
    refused = {loc for loc, _ in found}
    problems = [
        Problem(
            source,
            json_path(loc),
            "a value is required here (it is empty or null)"
            if loc in refused
            else "null is not allowed (omit the field instead)",
        )
        for loc in nulls
    ]
    null_set, holders = set(nulls), {loc[:-1] for loc in nulls}
    for loc, error in found:
        if loc in null_set or (error["type"] == "value_error" and loc in holders):
            continue
        if error["type"] == "too_short" and any(len(o) > len(loc) and o[: len(loc)] == loc for o in refused):
            continue
        problems.append(_problem(source, error))
    return problems


def _nulls(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Where the nulls are. No upstream schema admits null: an absent field is omitted, never null."""
    if value is None:
        return [path]
    found: list[tuple[str | int, ...]] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_nulls(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_nulls(child, (*path, index)))
    return found


def _text_problems(value: Any, source: str, path: tuple[str | int, ...] = ()) -> list[Problem]:
    """Where a string or key holds a character XML cannot carry (`kernelindex.registry.kinds.content`)."""
    from kernelindex.registry.kinds.content import text_problem  # with validation, as the models (a server reads only)

    if isinstance(value, str):
        reason = text_problem(value)
        return [] if reason is None else [Problem(source, json_path(path), reason)]
    found: list[Problem] = []
    if isinstance(value, dict):
        for key, child in value.items():
            reason = text_problem(key) if isinstance(key, str) else None
            if reason is not None:
                found.append(Problem(source, json_path(path), f"the key {key!r} {reason}"))
            found.extend(_text_problems(child, source, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_text_problems(child, source, (*path, index)))
    return found


def _clean_loc(raw: Any) -> tuple[str | int, ...]:
    """An error's location without the union branch labels (`int`, `constrained-str`) pydantic adds to
    it, which mean nothing to authors."""
    return tuple(part for part in raw if not (isinstance(part, str) and _is_branch_label(part)))


def _problem(source: str, error: Any) -> Problem:
    loc = _clean_loc(error["loc"])
    kind = error["type"]
    # A bad key of a map (`labels`, `axes`...) comes as (..., "<key>", "[key]"): point at the key.
    key_problem = bool(loc) and loc[-1] == "[key]"
    if key_problem:
        loc = loc[:-1]
        if isinstance(loc[-1], str) and len(loc[-1]) > _SHOWN:  # a key too long to print whole: its start
            loc = (*loc[:-1], f"{loc[-1][:60]}... ({len(loc[-1]):,} characters)")
    if kind == "extra_forbidden":
        return Problem(source, json_path(loc[:-1]), f"unknown field {loc[-1]!r}")
    if kind == "missing":
        return Problem(source, json_path(loc[:-1]), f"missing required field {loc[-1]!r}")
    message = str(error["msg"])
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
    if "input" in error and kind not in ("model_type", "dict_type") and not isinstance(error["input"], dict | list):
        got = error["input"]
        message = f"{message} (got {_brief(got) if isinstance(got, str) else repr(got)})"
    if key_problem:
        message = f"invalid key: {message}"
    return Problem(source, json_path(loc), message)


_SHOWN = 100
"""Characters of a refused value or key an error repeats: a longer one is shown by its start and its length."""


def _brief(text: str) -> str:
    """`text` as an error repeats it: whole if short, else its start and how long it is.

    >>> print(_brief("a" * 3), _brief("a" * 101)[-24:])
    'aaa' aaa'... (101 characters)
    """
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:60]!r}... ({len(text):,} characters)"


def _is_branch_label(part: str) -> bool:
    return part in {
        "int",
        "str",
        "float",
        "bool",
        "constrained-str",
        "constrained-int",
        "function-after",
    } or (part.startswith(("function-", "constrained-", "tagged-union[")))


def _merge(problems: list[Problem]) -> list[Problem]:
    """One line per location: a union's branches each report the same spot, so say "or"."""
    reasons: dict[tuple[str, str], list[str]] = {}
    for problem in problems:
        found = reasons.setdefault((problem.source, problem.path), [])
        if problem.reason not in found:
            found.append(problem.reason)
    return [Problem(source, path, "; or ".join(found)) for (source, path), found in reasons.items()]


def _type_name(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null"
    )
