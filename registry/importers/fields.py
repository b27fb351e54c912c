"""Reading a source's JSON records field by field: typed accessors that refuse a missing or
mistyped value with its JSON path, and the conversions KernelIndex's importers apply on the way
(slug casing, UTC instants, JavaScript rounding, derived axes), so that the same input gives the
same manifest here and upstream.

An importer turns a `BadValue` into a located problem (`Located.problem`): file, line and column
of the value, found in the raw text only when something is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from kernelindex.registry.errors import Problem
from kernelindex.registry.importers.locate import PathPart, json_path, locate
from kernelindex.registry.importers.sourcefiles import InputFile, Progress, column_of

__all__ = [
    "BadValue",
    "Located",
    "Record",
    "collation_key",
    "evaluate_axis",
    "js_numbers",
    "js_round",
    "kebab",
    "lines_of",
    "pruned",
    "utc_instant",
]


class BadValue(Exception):
    """A value a mapping cannot use: where (a JSON path) and why."""

    def __init__(self, path: Sequence[PathPart], reason: str) -> None:
        self.path = tuple(path)
        self.reason = reason
        super().__init__(f"{json_path(self.path)}: {reason}")


@dataclass(frozen=True, slots=True)
class Located:
    """A JSON text (a whole file, or one line of a JSON-lines file) that problems can point into."""

    source: InputFile
    data: bytes
    first_line: int = 1

    def problem(self, error: BadValue) -> Problem:
        line, column = locate(self.data, error.path)
        return self.source.at(self.first_line + line - 1, column, error.reason, json_path(error.path))


def lines_of(
    source: InputFile, refuse: Callable[[Problem], None], progress: Progress | None = None
) -> Iterator[tuple[Located, str, Any]]:
    """Each non-blank line of a JSON-lines file: where it is, its `file:line` name and its JSON value.

    A line that is not JSON (a truncated line included) goes to `refuse` as a located problem, and
    reading goes on: the file is streamed and read to the end. `progress` hears of every 200th line read as JSON.
    """
    for number, raw in source.lines():
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            refuse(source.at(number, column_of(raw, exc.pos), f"invalid JSON: {exc.msg}"))
            continue
        if progress and number % 200 == 0:
            progress("read " + source.name, number, 0)
        yield Located(source, raw, number), f"{source.name}:{number}", value


class Record:
    """A JSON object read at a path: each accessor returns the typed value or raises `BadValue`."""

    __slots__ = ("path", "value")

    def __init__(self, value: Any, path: Sequence[PathPart] = ()) -> None:
        if not isinstance(value, dict):
            raise BadValue(path, f"expected an object, found {_kind(value)}")
        self.value: dict[str, Any] = value
        self.path = tuple(path)

    def __contains__(self, key: str) -> bool:
        return self.value.get(key) is not None

    def at(self, key: str) -> tuple[PathPart, ...]:
        return (*self.path, key)

    def raw(self, key: str) -> Any:
        return self.value.get(key)

    def _get(self, key: str, optional: bool) -> Any:
        value = self.value.get(key)
        if value is None and not optional:
            said = "is null" if key in self.value else "is missing"
            raise BadValue(self.at(key) if key in self.value else self.path, f"{key} {said}")
        return value

    def record(self, key: str, optional: bool = False) -> Record | None:
        value = self._get(key, optional)
        return None if value is None else Record(value, self.at(key))

    def need_record(self, key: str) -> Record:
        found = self.record(key)
        assert found is not None
        return found

    def records(self, key: str, optional: bool = False) -> list[Record]:
        value = self._get(key, optional)
        if value is None:
            return []
        if not isinstance(value, list):
            raise BadValue(self.at(key), f"expected a list, found {_kind(value)}")
        return [Record(item, (*self.at(key), index)) for index, item in enumerate(value)]

    def mapping(self, key: str, optional: bool = False) -> dict[str, Any]:
        value = self._get(key, optional)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise BadValue(self.at(key), f"expected an object, found {_kind(value)}")
        return value

    def text(self, key: str) -> str:
        value = self._get(key, False)
        if not isinstance(value, str):
            raise BadValue(self.at(key), f"expected a string, found {_kind(value)}")
        return value

    def maybe_text(self, key: str) -> str | None:
        value = self._get(key, True)
        if value is not None and not isinstance(value, str):
            raise BadValue(self.at(key), f"expected a string, found {_kind(value)}")
        return value

    def texts(self, key: str, optional: bool = False) -> list[str]:
        value = self._get(key, optional)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise BadValue(self.at(key), f"expected a list of strings, found {_kind(value)}")
        return value

    def number(self, key: str) -> float | int:
        found = self.maybe_number(key, optional=False)
        assert found is not None
        return found

    def maybe_number(self, key: str, optional: bool = True) -> float | int | None:
        value = self._get(key, optional)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise BadValue(self.at(key), f"not a number: {value!r}")
        return value

    def integer(self, key: str) -> int:
        found = self.maybe_integer(key, optional=False)
        assert found is not None
        return found

    def maybe_integer(self, key: str, optional: bool = True) -> int | None:
        value = self.maybe_number(key, optional)
        if value is None:
            return None
        if isinstance(value, float):
            if not value.is_integer():
                raise BadValue(self.at(key), f"not an integer: {value!r}")
            return int(value)
        return value

    def flag(self, key: str) -> bool | None:
        value = self._get(key, True)
        if value is not None and not isinstance(value, bool):
            raise BadValue(self.at(key), f"expected true or false, found {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    return "a list" if isinstance(value, list) else "an object"


def collation_key(name: str) -> tuple[tuple[int, int], ...]:
    """An ASCII approximation of JavaScript's `localeCompare` (ICU root collation), by which upstream
    sorts axis names: punctuation before digits before letters, letters case-insensitively.

    >>> sorted(["n_heads", "nexperts", "b2", "b_1", "B3"], key=collation_key)
    ['b_1', 'b2', 'B3', 'n_heads', 'nexperts']
    """

    def weight(char: str) -> tuple[int, int]:
        if char.isdigit():
            return (1, ord(char))
        if char.isalpha():
            return (2, ord(char.lower()))
        return (0, ord(char))

    return tuple(weight(c) for c in name)


def kebab(value: str) -> str:
    """Upstream's slug casing: lower case, runs of other characters to one `-`, at most 100 characters.

    >>> kebab("004_attention_output_projection")
    '004-attention-output-projection'
    """
    return re.sub(r"^-+|-+$", "", re.sub(r"[^a-z0-9]+", "-", value.lower()))[:100]


_INSTANT = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(:\d{2})?)(?P<fraction>\.\d+)?(?P<zone>[zZ]|[+-]\d\d:\d\d)?"
)


def utc_instant(value: str) -> str | None:
    """A source timestamp as JavaScript's `toISOString` writes it (UTC, milliseconds truncated);
    a timestamp without a zone is UTC by the sources' convention. None when it is not one.

    >>> utc_instant("2026-08-14T05:38:44.902912")
    '2026-08-14T05:38:44.902Z'
    >>> utc_instant("2025-06-27T14:45:00+02:00")
    '2025-06-27T12:45:00.000Z'
    """
    match = _INSTANT.fullmatch(value.strip())
    if match is None:
        return None
    fraction = (match["fraction"] or ".0")[1:]
    zone = match["zone"] or "Z"
    stamp = f"{match['date']}T{match['time']}{'' if match.group(3) else ':00'}"
    try:
        moment = datetime.fromisoformat(stamp + ("+00:00" if zone in "zZ" else zone))
    except ValueError:
        return None
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{fraction[:3]:0<3}Z"


def js_round(value: float) -> int:
    """JavaScript's Math.round (halves toward +infinity).

    >>> js_round(2.5), js_round(-2.5), js_round(39351.00000000001)
    (3, -2, 39351)
    """
    floor = math.floor(value)
    return int(floor + 1 if value - floor >= 0.5 else floor)


_TOKEN = re.compile(r"\d+|[a-z_][a-z0-9_]*|//|[+\-*%()]")


def evaluate_axis(expression: str, bindings: Mapping[str, int]) -> int:
    """Upstream's derived-axis grammar: integers, axis names, + - * % // and parentheses.

    >>> evaluate_axis("num_heads * head_dim", {"num_heads": 32, "head_dim": 64})
    2048
    >>> evaluate_axis("(seq + 1) // 2", {"seq": 4})
    2

    Raises:
        ValueError: an unbound axis or a malformed expression.
    """
    tokens: list[str] = _TOKEN.findall(expression)
    position = 0

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ValueError(f"unexpected end of {expression!r}")
        position += 1
        return tokens[position - 1]

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def factor() -> int:
        token = take()
        if token == "(":
            value = total()
            if take() != ")":
                raise ValueError(f"missing ')' in {expression!r}")
            return value
        if token.isdigit():
            return int(token)
        if token not in bindings:
            raise ValueError(f"unbound axis {token!r} in {expression!r}")
        return int(bindings[token])

    def product() -> int:
        value = factor()
        while peek() in ("*", "//", "%"):
            op, rhs = take(), factor()
            if op != "*" and rhs == 0:
                raise ValueError(f"division by zero in {expression!r}")
            value = value * rhs if op == "*" else int(math.fmod(value, rhs)) if op == "%" else value // rhs
        return value

    def total() -> int:
        value = product()
        while peek() in ("+", "-"):
            op, rhs = take(), product()
            value = value + rhs if op == "+" else value - rhs
        return value

    result = total()
    if position != len(tokens):
        raise ValueError(f"trailing tokens in {expression!r}")
    return result


def pruned(value: Any) -> Any:
    """A document with every None-valued member left out, recursively: upstream builds documents
    with `undefined` for what a source does not say, and JSON drops those members."""
    if isinstance(value, dict):
        return {k: pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def js_numbers(value: Any) -> Any:
    """A document with every integral float written as an integer, as JavaScript (which has one number
    type) writes it: upstream's manifests say `0` where a source said `0.0`. Identity never changes
    (RFC 8785 writes both alike); the stored bytes then equal upstream's, so a re-import is unchanged.

    >>> js_numbers({"a": [0.0, 1.5, 7.0], "b": True, "c": 2**60 * 1.0})
    {'a': [0, 1.5, 7], 'b': True, 'c': 1.152921504606847e+18}
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [js_numbers(v) for v in value]
    return value
