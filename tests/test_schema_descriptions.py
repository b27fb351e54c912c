"""Every public element of the schema says what it is to a frontend developer: each type, field, argument
and enum value has a description (read through GraphQL introspection, as GraphiQL and codegen read it),
and no description points at the registry's insides (a file path, a module, the design document).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
import strawberry
from graphql import get_introspection_query, graphql_sync

from kernelindex.schema.root import schema

BUILTIN_SCALARS = {"String", "Int", "Float", "Boolean", "ID"}
INTERNAL = re.compile(
    r"\b[\w-]+/[\w./-]*\.(py|md|json|html)\b|(?<!extensions\.)\b(?:api|registry|web)\.[a-z_]|\bDESIGN\b|\bissue \d",
)
"""What a reader of the API cannot open: source files, Python modules, our design document."""


def _introspected(of: strawberry.Schema = schema) -> list[dict[str, Any]]:
    result = graphql_sync(of._schema, get_introspection_query(descriptions=True, input_value_deprecation=True))
    assert result.errors is None and result.data is not None
    types: list[dict[str, Any]] = result.data["__schema"]["types"]
    return [t for t in types if not t["name"].startswith("__") and t["name"] not in BUILTIN_SCALARS]


def elements(of: strawberry.Schema = schema) -> Iterator[tuple[str, str, str | None]]:
    """(kind, path, description) of every public element: types, fields (and input fields), arguments,
    enum values (deprecated ones too)."""
    for kind in _introspected(of):
        name = kind["name"]
        yield "type", name, kind["description"]
        for field in [*(kind.get("fields") or ()), *(kind.get("inputFields") or ())]:
            yield "field", f"{name}.{field['name']}", field["description"]
            for argument in field.get("args") or ():
                yield "argument", f"{name}.{field['name']}({argument['name']})", argument["description"]
        for value in kind.get("enumValues") or ():
            yield "enum value", f"{name}.{value['name']}", value["description"]


def coverage() -> dict[str, tuple[int, int]]:
    """(described, all) by kind of element: the figure the changelog and reports quote."""
    found: dict[str, list[int]] = {}
    for kind, _, description in elements():
        counts = found.setdefault(kind, [0, 0])
        counts[0] += bool((description or "").strip())
        counts[1] += 1
    return {kind: (a, b) for kind, (a, b) in found.items()}


def test_every_public_element_has_a_description() -> None:
    missing = sorted(path for _, path, description in elements() if not (description or "").strip())
    assert not missing, f"{len(missing)} schema elements without a description (say what a frontend needs):\n" + (
        "\n".join(missing[:50])
    )


@pytest.mark.parametrize("kind", ["type", "field", "argument", "enum value"])
def test_coverage_is_counted_per_kind(kind: str) -> None:
    described, total = coverage()[kind]
    assert total > 0 and described == total


def test_no_description_points_at_the_registrys_insides() -> None:
    leaks = [f"{path}: {found.group(0)!r}" for _, path, d in elements() if d and (found := INTERNAL.search(d))]
    assert not leaks, "descriptions a client cannot follow:\n" + "\n".join(leaks)


@pytest.mark.parametrize(
    ("text", "leaks"),
    [
        ("computed in one pass (api/schema/leaderboard.py)", True),
        ("The material fields that differ, in DESIGN order.", True),
        ("as kernelindex.registry.present words it", True),
        ("the `extensions.registry.commit` of an earlier answer", False),
        ("Time in ns; 144.6 µs is 144600.", False),
        ("sha256:<hex> or a unique prefix", False),
        ("e.g. metric:statistic:unit", False),
    ],
)
def test_the_leak_pattern_tells_insides_from_words(text: str, leaks: bool) -> None:
    assert bool(INTERNAL.search(text)) is leaks


@strawberry.enum(description="Described.")
class _Colour(enum.Enum):
    RED = "red"


@strawberry.type
class _Undescribed:
    @strawberry.field(description="Described.")  # type: ignore[untyped-decorator]
    def paint(
        self, colour: _Colour, old: Annotated[int | None, strawberry.argument(deprecation_reason="x")] = None
    ) -> str:
        return str(colour)


def test_the_walk_finds_each_kind_of_element_without_a_description() -> None:
    found = {path for _, path, d in elements(strawberry.Schema(query=_Undescribed)) if not d}
    assert found == {"Undescribed", "Undescribed.paint(colour)", "Undescribed.paint(old)", "_Colour.RED"}
