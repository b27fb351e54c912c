"""Where a value sits in a JSON text: the line and column of a JSON path, found by a scan that
builds nothing (so a located error costs one pass over the text, and only when there is an error).

Values are parsed with orjson; only a refusal needs a position, so positions are computed then,
not kept for every value read.

>>> locate(b'{"a": [1, {"b": "x"}]}', ("a", 1, "b"))
(1, 17)
>>> locate(b'{\\n  "a": 1,\\n  "b": [true]\\n}', ("b", 0))
(3, 9)
>>> locate(b'{"a": {}}', ("a", "missing"))
(1, 7)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

__all__ = ["json_path", "locate"]

_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

PathPart = str | int

_WHITESPACE = " \t\r\n"
_SCALAR_END = ",]}" + _WHITESPACE


def json_path(parts: Sequence[PathPart]) -> str:
    """`$.data.submissions[0].latency_ms` for ("data", "submissions", 0, "latency_ms").

    >>> json_path(("data", "kernels", 2, "id"))
    '$.data.kernels[2].id'
    """
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def locate(data: bytes, path: Sequence[PathPart]) -> tuple[int, int]:
    """The 1-based line and character column where the value at `path` starts; when the path
    goes further than the text (a missing key, an index past the end), where the deepest value
    found starts. A text that is not JSON gives the position the scan stopped at."""
    text = data.decode("utf-8", errors="replace")
    position = _locate(text, path)
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _locate(text: str, path: Sequence[PathPart]) -> int:
    index = _skip_space(text, 0)
    for part in path:
        found = _child(text, index, part)
        if found is None:
            return index
        index = found
    return index


def _child(text: str, index: int, part: PathPart) -> int | None:
    """The start of the member `part` of the object or array starting at `index`."""
    opening = text[index : index + 1]
    if opening not in ("{", "[") or (opening == "{") != isinstance(part, str):
        return None
    cursor = _skip_space(text, index + 1)
    count = 0
    while cursor < len(text) and text[cursor] not in "]}":
        if opening == "{":
            if text[cursor] != '"':
                return None
            key, cursor = _scanstring(text, cursor + 1)
            cursor = _skip_space(text, cursor)
            if text[cursor : cursor + 1] != ":":
                return None
            cursor = _skip_space(text, cursor + 1)
            if key == part:
                return cursor
        elif count == part:
            return cursor
        cursor = _skip_space(text, _skip_value(text, cursor))
        count += 1
        if text[cursor : cursor + 1] == ",":
            cursor = _skip_space(text, cursor + 1)
    return None


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _skip_value(text: str, index: int) -> int:
    """The index just past the value starting at `index`."""
    depth = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            index = _scanstring(text, index + 1)[1]
        elif char in "[{":
            depth += 1
            index += 1
        elif char in "]}":
            depth -= 1
            index += 1
        elif char in _WHITESPACE or char in ",:":
            index += 1
        else:
            while index < len(text) and text[index] not in _SCALAR_END:
                index += 1
        if depth == 0:
            return index
    return index
