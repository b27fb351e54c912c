"""Bounded loading of JSON and YAML 1.2 documents into plain JSON values, with located errors.

Every manifest enters the registry through `load_document`. It refuses what a strict
JSON reader would (duplicate keys, NaN, non-UTF-8) and what YAML adds on top (custom
tags, merge keys, non-string keys, alias bombs), so that a YAML file and its JSON
twin produce the same value and therefore the same digest. YAML is read with the 1.2
core schema resolved here, not by a YAML library's defaults: `no` stays a string,
`2026-08-01T12:00:00Z` stays a string, `0o17` is 15.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, Literal

from kernelindex.registry.errors import InvalidManifest, Problem

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_NODES",
    "MAX_STREAM_NODES",
    "Format",
    "JSONValue",
    "check_manifest_values",
    "guess_format",
    "json_path",
    "load_document",
    "load_documents",
]

Format = Literal["json", "yaml"]
JSONValue = Any  # dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None

MAX_DOCUMENT_BYTES = 1024 * 1024
"""A manifest is a few KB; 1 MiB leaves room for the largest workload suites and no more."""
MAX_DEPTH = 64
"""The deepest upstream schema nests 7 levels; 64 refuses pathological input long before Python's stack."""
MAX_NODES = 20_000
"""Values in one document (after YAML alias expansion): the largest upstream manifest holds 543, and
this bounds alias bombs (a few hundred bytes that expand to 10^9 values) and key floods alike."""

MAX_STREAM_NODES = 100_000
"""Values in one file of several manifests (a bundle, or a YAML stream): five times a manifest's budget,
about what the 1 MiB a file may hold can spell; the reader refuses a larger one in under a second."""

_SAFE_INTEGER = 2**53 - 1  # I-JSON (RFC 7493): larger integers do not survive a trip through a double
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _deep(path: tuple[str | int, ...]) -> str:
    """A location too deep to print whole: its start and its depth."""
    return f"{json_path(path[:6])}...(depth {len(path)})"


def json_path(parts: tuple[str | int, ...]) -> str:
    """Render a location as a JSON path.

    >>> json_path(("spec", "inputs", 0, "tensor"))
    '$.spec.inputs[0].tensor'
    >>> json_path(("metadata", "labels", "has space"))
    "$.metadata.labels['has space']"
    """
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part):
            out.append(f".{part}")
        else:
            out.append("[" + repr(part) + "]")
    return "".join(out)


def guess_format(name: str, data: bytes) -> Format:
    """JSON for `.json` files, YAML for `.yaml`/`.yml`; otherwise sniff the first character."""
    lowered = name.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".yaml", ".yml")):
        return "yaml"
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    return "json" if stripped[:1] in (b"{", b"[") else "yaml"


def load_document(data: bytes, source: str, fmt: Format | None = None) -> JSONValue:
    """Parse one JSON or YAML 1.2 document into JSON values, refusing anything ambiguous.

    Raises:
        InvalidManifest: with the source name, a JSON path where one applies, and the reason.
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _fail(source, "", f"document is {len(data):,} bytes; the limit is {MAX_DOCUMENT_BYTES:,} (1 MiB)")
    text = _text(data, source)
    fmt = fmt or guess_format(source, data)
    value = _load_json(text, source) if fmt == "json" else _load_yaml(text, source)[0]
    _check_values(value, source)
    return value


def load_documents(data: bytes, source: str, fmt: Format | None = None) -> list[JSONValue]:
    """Parse a file that may hold several documents (a YAML stream separated by `---`; JSON holds one),
    each as strictly as `load_document` reads one, within `MAX_STREAM_NODES` values in all.
    Empty (null) documents, as a leading or trailing `---` makes, are skipped.

    Raises:
        InvalidManifest: as `load_document`, or the file holds no document.
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _fail(source, "", f"file is {len(data):,} bytes; the limit is {MAX_DOCUMENT_BYTES:,} (1 MiB)")
    text = _text(data, source)
    if (fmt or guess_format(source, data)) == "json":
        values = [_load_json(text, source)]
    else:
        # An empty document reads as null: a leading or trailing `---`, never a manifest.
        values = [value for value in _load_yaml(text, source, stream=True) if value is not None]
    for value in values:
        _check_values(value, source, MAX_STREAM_NODES)
    if not values:
        raise _fail(source, "", "empty document")
    return values


def _text(data: bytes, source: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(source, "", f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise _fail(source, "", "empty document")
    return text


def _fail(source: str, path: str, reason: str) -> InvalidManifest:
    return InvalidManifest([Problem(source, path, reason)])


# JSON ---------------------------------------------------------------------------------------------


class _Refused(Exception):
    """Raised from inside json hooks; carries a reason out of the C scanner."""


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"duplicate key {key!r}")
        result[key] = value
    return result


class _RefusedConstant(_Refused):
    """NaN, Infinity or -Infinity: Python's reader accepts them, JSON does not."""


def _refuse_constant(name: str) -> Any:
    raise _RefusedConstant(f"{name} is not JSON (numbers must be finite)")


def _load_json(text: str, source: str) -> JSONValue:
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs_without_duplicates,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise _fail(source, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except _RefusedConstant as exc:
        raise _fail(source, _locate_constant(text) or "", str(exc)) from None
    except _Refused as exc:
        # The hooks do not know where they are; duplicate keys are rare enough to find again.
        raise _fail(source, _locate_duplicate(text) or "", str(exc)) from None
    except RecursionError:
        path, where = _locate_deep(text)
        raise _fail(source, path, f"nesting deeper than {MAX_DEPTH} levels{where}") from None
    except ValueError:
        # Python's reader refuses an integer of more digits than it converts (4,300 by default) with a bare
        # ValueError; read again, keeping such integers as their digits, to say where it is.
        found = _locate_long_integer(text)
        if found is None:
            raise
        raise _fail(source, found[0], _integer_problem(found[1])) from None


def _locate_deep(text: str) -> tuple[str, str]:
    """Where JSON text first nests deeper than `MAX_DEPTH` (the reader gave up far deeper): the path of indexes
    and keys down to it, and its line and column. Brackets inside strings are skipped; anything else opens or
    closes a value."""
    path: list[str | int] = []
    key: str | None = None
    line, start, index, length = 1, 0, 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            key = text[index + 1 : end]
            index = end
        elif char in "[{":
            if path and isinstance(path[-1], str):
                path[-1] = key or ""
            path.append(0 if char == "[" else "")
            if len(path) > MAX_DEPTH + 1:
                return _deep(tuple(path[:-1])), f" (line {line}, column {index - start + 1})"
        elif char in "]}" and path:
            path.pop()
        elif char == "," and path and isinstance(path[-1], int):
            path[-1] += 1
        elif char == "\n":
            line, start = line + 1, index + 1
        index += 1
    return "", ""


def _locate_duplicate(text: str) -> str | None:
    """Find the JSON path of the first object holding a duplicate key, for the error message."""
    found: list[str] = []

    def visit(value: Any, path: tuple[str | int, ...]) -> None:
        if found:
            return
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            keys = [k for k, _ in value]
            if len(set(keys)) != len(keys):
                found.append(json_path(path))
                return
            for k, v in value:
                visit(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                visit(v, (*path, i))

    try:
        visit(json.loads(text, object_pairs_hook=lambda pairs: pairs), ())
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


class _Constant:
    """Stands for a NaN/Infinity literal while `_locate_constant` looks for it."""


def _locate_constant(text: str) -> str | None:
    """The JSON path of the first NaN/Infinity literal, for the error message."""
    stack: list[tuple[Any, tuple[str | int, ...]]]
    try:
        stack = [(json.loads(text, parse_constant=lambda _: _Constant()), ())]
    except (ValueError, RecursionError):
        return None
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Constant):
            return json_path(path)
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(value))))
    return None


class _Digits(str):
    """An integer literal kept as its digits while `_locate_long_integer` looks for a long one."""


def _locate_long_integer(text: str) -> tuple[str, int] | None:
    """The JSON path and digit count of the first integer literal Python will not convert, for the error."""
    stack: list[tuple[Any, tuple[str | int, ...]]]
    try:
        stack = [(json.loads(text, parse_int=_Digits, parse_constant=lambda _: None), ())]
    except (ValueError, RecursionError):
        return None
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Digits) and len(value.lstrip("-")) > _MAX_DIGITS:
            return json_path(path), len(value.lstrip("-"))
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(value))))
    return None


_MAX_DIGITS = 30
"""Digits of an integer literal read as a number at all: 2^53-1 has 16, so a longer one is refused by its
count, never converted (Python converts at most 4,300 decimal digits, and prints no more)."""


def _integer_problem(digits: int, base: str = "") -> str:
    return f"an integer of {digits:,} {base}digits is outside ±(2^53-1) and cannot be represented exactly"


# YAML ---------------------------------------------------------------------------------------------

_CORE = "tag:yaml.org,2002:"
_PLAIN = "tag:kernelindex.dev,2026:plain"  # what our resolver answers for an untagged plain scalar
_NULL = re.compile(r"null|Null|NULL|~|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?(\.inf|\.Inf|\.INF)")
_NAN = re.compile(r"\.nan|\.NaN|\.NAN")


def _yaml_loader() -> Any:
    # Imported here: ruamel costs ~60 ms to import and only YAML input needs it.
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
    from ruamel.yaml.resolver import VersionedResolver
    from ruamel.yaml.tag import Tag

    class CoreResolver(VersionedResolver):
        """Leaves every untagged plain scalar for `_scalar` to resolve with the 1.2 core schema."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is ScalarNode:
                return Tag(suffix=_PLAIN if implicit[0] else _CORE + "str")
            if kind is SequenceNode:
                return Tag(suffix=_CORE + "seq")
            assert kind is MappingNode
            return Tag(suffix=_CORE + "map")

    class BoundedComposer(Composer):
        """Stops composing at the first value nested deeper than `MAX_DEPTH`, saying where it starts: the
        composer recurses once per level, and a document of nothing but `[` would otherwise recurse until
        Python's limit (seconds of CPU, then a RecursionError that says nowhere)."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            path: list[str | int] = self.__dict__.setdefault("_path", [])
            path.append(index if isinstance(index, int) else getattr(index, "value", "?"))
            try:
                if len(path) > MAX_DEPTH + 1:  # the root is the first: MAX_DEPTH levels below it
                    raise _TooDeep(tuple(path[1:]), self.parser.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                path.pop()

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Resolver = CoreResolver
    yaml.Composer = BoundedComposer
    return yaml


class _TooDeep(Exception):
    """A YAML value nested deeper than `MAX_DEPTH`: its path (keys and indexes) and where it starts in the text."""

    def __init__(self, path: tuple[str | int, ...], mark: Any) -> None:
        super().__init__(path)
        self.path = path
        self.where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _scalar(tag: str, value: str, style: str | None) -> tuple[bool, Any]:
    """Resolve a scalar node per the YAML 1.2 core schema; (False, reason) when refused."""
    if tag == _CORE + "str" or (tag == _PLAIN and style is not None):
        return True, value
    if tag == _PLAIN:
        if _NULL.fullmatch(value):
            return True, None
        if value in _BOOL:
            return True, _BOOL[value]
        if _INT10.fullmatch(value) or _INT8.fullmatch(value) or _INT16.fullmatch(value):
            base = {"0o": "octal ", "0x": "hexadecimal "}.get(value[:2], "")
            digits = len(value.lstrip("+-")) - (2 if base else 0)
            if digits > _MAX_DIGITS:
                return False, _integer_problem(digits, base)
            return True, int(value[2:], 8 if value[1] == "o" else 16) if value[:2] in ("0o", "0x") else int(value)
        if _FLOAT.fullmatch(value):
            return True, float(value)
        if _INF.fullmatch(value) or _NAN.fullmatch(value):
            return False, f"{value} is not JSON (numbers must be finite)"
        return True, value
    if tag == _CORE + "int" and (_INT10.fullmatch(value) or _INT8.fullmatch(value) or _INT16.fullmatch(value)):
        return _scalar(_PLAIN, value, None)
    if tag == _CORE + "float" and (_FLOAT.fullmatch(value) or _INT10.fullmatch(value)):
        return True, float(value)
    if tag == _CORE + "bool" and value in _BOOL:
        return True, _BOOL[value]
    if tag == _CORE + "null" and _NULL.fullmatch(value):
        return True, None
    shown = tag.replace(_CORE, "!!")
    return False, f"tag {shown} is not allowed (manifests use plain JSON values)"


def _load_yaml(text: str, source: str, *, stream: bool = False) -> list[JSONValue]:
    """The documents of a YAML text: exactly one (refusing a second), or with `stream`, every non-empty one."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    limit = MAX_STREAM_NODES if stream else MAX_NODES
    # The pure-Python composer costs ~90 µs a token: a 600 KB file of 60k keys took 5.5 s to refuse.
    # Lines plus flow separators bound the values a document can hold without aliases: refuse first.
    items = text.count("\n") + text.count(",")
    if items > limit:
        what = "a file of manifests" if stream else "a manifest"
        raise _fail(source, "", f"{items:,} lines and flow items; {what} holds at most {limit:,} values")

    try:
        loader = _yaml_loader()
        roots = [node for node in loader.compose_all(text) if node is not None] if stream else [loader.compose(text)]
    except _TooDeep as exc:
        raise _fail(source, _deep(exc.path), f"nesting deeper than {MAX_DEPTH} levels{exc.where}") from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise _fail(source, "", f"invalid YAML{where}: {exc.problem or exc.context}") from None
    except YAMLError as exc:
        raise _fail(source, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise _fail(source, "", f"nesting deeper than {MAX_DEPTH} levels") from None
    if not stream and roots[0] is None:
        raise _fail(source, "", "empty document")

    budget = [limit]
    active: set[int] = set()

    def build(node: Any, path: tuple[str | int, ...]) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise _fail(source, json_path(path), f"more than {limit:,} values after expanding aliases")
        if len(path) > MAX_DEPTH:
            raise _fail(source, _deep(path), f"nesting deeper than {MAX_DEPTH} levels")
        if id(node) in active:
            raise _fail(source, json_path(path), "recursive alias")
        tag = str(node.tag)
        if isinstance(node, ScalarNode):
            ok, value = _scalar(tag, node.value, node.style)
            if not ok:
                raise _fail(source, json_path(path), value)
            return value
        active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                if tag != _CORE + "seq":
                    raise _fail(source, json_path(path), f"tag {tag.replace(_CORE, '!!')} is not allowed")
                return [build(item, (*path, i)) for i, item in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            if tag != _CORE + "map":
                raise _fail(source, json_path(path), f"tag {tag.replace(_CORE, '!!')} is not allowed")
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = _mapping_key(key_node, source, path)
                if key in result:
                    raise _fail(source, json_path(path), f"duplicate key {key!r}")
                result[key] = build(value_node, (*path, key))
            return result
        finally:
            active.discard(id(node))

    return [build(root, ()) for root in roots]


def _mapping_key(node: Any, source: str, path: tuple[str | int, ...]) -> str:
    from ruamel.yaml.nodes import ScalarNode

    if not isinstance(node, ScalarNode):
        raise _fail(source, json_path(path), "mapping keys must be strings, not collections")
    if str(node.tag) == _PLAIN and node.style is None and node.value == "<<":
        raise _fail(source, json_path(path), "merge keys (<<) are YAML 1.1 and not allowed")
    ok, key = _scalar(str(node.tag), node.value, node.style)
    if not ok or not isinstance(key, str):
        raise _fail(source, json_path(path), f"mapping key {node.value!r} must be a string (quote it)")
    return key


# Both formats -------------------------------------------------------------------------------------


def check_manifest_values(value: JSONValue, source: str) -> None:
    """Refuse one manifest of a file of several (a bundle's entry, a stream's document) as a file of one is
    refused: within a manifest's `MAX_NODES` values (a file of several has `MAX_STREAM_NODES` in all), so that
    nothing is added that the check of its stored file (`load_document`) would refuse.

    Raises:
        InvalidManifest: as `load_document` does for values, with a JSON path into the manifest.
    """
    _check_values(value, source, MAX_NODES)


def _check_values(value: JSONValue, source: str, limit: int = MAX_NODES) -> None:
    """Refuse what JSON cannot carry exactly: deep nesting, unsafe integers, non-finite numbers,
    lone surrogates. Iterative, so hostile input cannot exhaust the stack."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    reason: Callable[[Any], str | None] = _scalar_problem
    budget = limit
    while stack:
        item, path = stack.pop()
        budget -= 1
        if budget < 0:
            raise _fail(source, json_path(path), f"more than {limit:,} values")
        if len(path) > MAX_DEPTH:
            raise _fail(source, _deep(path), f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                if _has_surrogate(key):
                    raise _fail(source, json_path(path), "key contains an unpaired surrogate (not valid Unicode)")
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
        else:
            problem = reason(item)
            if problem:
                raise _fail(source, json_path(path), problem)


def _scalar_problem(item: Any) -> str | None:
    if isinstance(item, bool) or item is None:
        return None
    if isinstance(item, int):
        if abs(item) > _SAFE_INTEGER:
            if item.bit_length() > 100:  # counted, not printed: it may have more digits than str() converts
                return f"an integer of about {item.bit_length() * 0.30103:,.0f} digits is outside ±(2^53-1)"
            return f"integer {item} is outside ±(2^53-1) and cannot be represented exactly"
        return None
    if isinstance(item, float):
        return None if math.isfinite(item) else "number is not finite (overflows a double)"
    if isinstance(item, str):
        return "string contains an unpaired surrogate (not valid Unicode)" if _has_surrogate(item) else None
    return f"unsupported value of type {type(item).__name__}"


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
