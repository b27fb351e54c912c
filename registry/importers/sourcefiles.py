"""A source's native files read with locations: CSV records and JSON documents and lines, each value
with the file, line and column it came from, and the sha256 of every file read (the commit's
`Source-Snapshot:` trailers).

Files are streamed: a CSV or JSON-lines file is never held whole in memory, so a large input costs
one record at a time. A structural error (an unterminated quote, a truncated JSON line, bytes that
are not UTF-8) is a `Problem` located at `file:line:column`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kernelindex.registry.errors import Problem

__all__ = [
    "CsvRecord",
    "InputFile",
    "Progress",
    "SourceFileError",
    "column_of",
    "csv_records",
    "json_document",
]

Progress = Callable[[str, int, int], None]
"""An importer's progress callback: (what it is doing, items done, items in all or 0 when unknown)."""

MAX_LINE_BYTES = 8 * 1024 * 1024
"""A single CSV record or JSON line larger than this is refused (bounded memory)."""


class SourceFileError(Exception):
    """A file cannot be read further: `problem` says where and why."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


@dataclass(slots=True)
class InputFile:
    """One input file: its name as reports show it, and the sha256 of its bytes once read."""

    path: Path
    name: str
    size: int = 0
    _hash: Any = field(default_factory=hashlib.sha256, repr=False)

    @classmethod
    def of(cls, path: Path, root: Path | None = None) -> InputFile:
        name = path.relative_to(root).as_posix() if root is not None and path != root else path.name
        return cls(path, name, path.stat().st_size)

    @property
    def sha256(self) -> str:
        return str(self._hash.hexdigest())

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(1-based line number, raw line with its end) for the whole file, hashing as it goes."""
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                self._hash.update(line)
                if len(line) > MAX_LINE_BYTES:
                    raise SourceFileError(self.at(number, 1, f"line longer than {MAX_LINE_BYTES:,} bytes"))
                yield number, line

    def read(self) -> bytes:
        data = self.path.read_bytes()
        self._hash.update(data)
        return data

    def at(self, line: int, column: int, reason: str, path: str = "") -> Problem:
        return Problem(f"{self.name}:{line}:{column}", path, reason)


@dataclass(frozen=True, slots=True)
class CsvRecord:
    """One CSV record: its fields, the line it starts on, and the 1-based column each field starts at."""

    line: int
    fields: tuple[str, ...]
    columns: tuple[int, ...]


def csv_records(source: InputFile) -> Iterator[CsvRecord]:
    """RFC 4180 records (quoted fields, doubled quotes, CRLF or LF, quoted line breaks); blank lines skipped.

    Raises:
        SourceFileError: bytes that are not UTF-8, or a quote left open at the end of the file.
    """
    fields: list[str] = []
    columns: list[int] = []
    text: list[str] = []
    quoted = False
    opened = (0, 0)  # line and column of the quote that opened the current quoted field
    start_line = 0
    field_column = 1
    for number, raw in source.lines():
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceFileError(source.at(number, exc.start + 1, "not UTF-8")) from None
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if not quoted:
            start_line, field_column = number, 1
            if not line.strip("\r\n"):
                continue
        index, end = 0, len(line)
        while index < end:
            char = line[index]
            if quoted:
                if char == '"':
                    if index + 1 < end and line[index + 1] == '"':
                        text.append('"')
                        index += 1
                    else:
                        quoted = False
                else:
                    text.append(char)
            elif char == '"':
                quoted = True
                opened = (number, index + 1)
            elif char == ",":
                fields.append("".join(text))
                columns.append(field_column)
                text, field_column = [], index + 2
            elif char in "\r\n":
                break
            else:
                text.append(char)
            index += 1
        if quoted:
            continue
        fields.append("".join(text))
        columns.append(field_column)
        yield CsvRecord(start_line, tuple(fields), tuple(columns))
        fields, columns, text = [], [], []
    if quoted:
        raise SourceFileError(source.at(*opened, "a quoted field is never closed"))


def json_document(source: InputFile) -> Any:
    """A whole-file JSON document.

    Raises:
        SourceFileError: not JSON, located at its line and column.
    """
    data = source.read()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        line = data.count(b"\n", 0, exc.pos) + 1
        start = data.rfind(b"\n", 0, exc.pos) + 1
        raise SourceFileError(
            source.at(line, column_of(data[start:], exc.pos - start), f"invalid JSON: {exc.msg}")
        ) from None


def column_of(line: bytes, byte_offset: int) -> int:
    """The 1-based character column of a byte offset into a line."""
    return len(line[: max(byte_offset, 0)].decode("utf-8", errors="replace")) + 1
