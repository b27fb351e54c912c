"""The shipped JSON Schemas: generated from the models, valid Draft 2020-12, judging upstream's examples and
the whole corpus valid, and equal to upstream's schemas field by field but for the differences listed here."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import regress
from helpers import EXAMPLES, EXPORT, PROJECT_ROOT, UPSTREAM_SCHEMAS
from jsonschemas import ecma_validator, errors_of

from kernelindex import registry
from kernelindex.registry.errors import UnknownKind
from kernelindex.registry.kinds.content import XML_TEXT_PATTERN
from kernelindex.registry.parse import load_document
from kernelindex.registry.schemas import (
    find_kind,
    get_kind,
    kind_slug,
    schema_file_name,
    schema_id,
    schema_of,
    schema_text,
)
from kernelindex.registry.schemas.generate import generated_text

SCHEMA_DIR = Path(registry.__file__).parent / "schemas"
UPSTREAM_KINDS = [name for name, info in registry.KINDS.items() if not info.lifecycle]


def test_one_shipped_schema_per_kind_and_nothing_else() -> None:
    shipped = sorted(path.name for path in SCHEMA_DIR.glob("*.schema.json"))
    assert shipped == sorted(schema_file_name(kind) for kind in registry.KINDS)
    assert len(shipped) == 17  # 13 upstream kinds, 4 lifecycle kinds


def test_the_wheel_carries_every_schema() -> None:
    """pyproject's package-data for `kernelindex.registry` matches each shipped file (a wheel built from it holds 17)."""
    globs = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "kernelindex.registry"
    ]
    shipped = [f"schemas/{path.name}" for path in SCHEMA_DIR.glob("*.schema.json")]
    assert shipped and all(any(fnmatch.fnmatch(name, g) for g in globs) for name in shipped)


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_each_shipped_schema_is_what_the_models_generate(kind: str) -> None:
    """A model change without `scripts/generate-schemas` fails here, naming the kind."""
    assert schema_text(kind) == generated_text(kind), f"run scripts/generate-schemas ({schema_file_name(kind)})"


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_each_schema_is_draft_2020_12_with_ecmascript_patterns(kind: str) -> None:
    schema = schema_of(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schema_id(kind) and schema["title"] == kind
    ecma_validator(schema)  # checks the schema against the metaschema
    for pattern in _patterns(schema):
        regress.Regex(pattern, flags="u")  # editors compile patterns as ECMAScript with the u flag


def test_durations_are_constrained_as_upstream_and_never_unconstrained() -> None:
    """The MCP tool's schema used to leave durations as `anyOf: [{}, null]`."""
    run = schema_of("BenchmarkRun")
    text = json.dumps(run)
    assert "{}" not in text.replace('"properties": {}', "") and '"null"' not in text
    median = run["$defs"]["LatencyNs"]["properties"]["median"]
    assert median["anyOf"] == [
        {"type": "integer", "minimum": 0, "maximum": 2**53 - 1},
        {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)?\s?(ns|us|µs|ms|s)$"},
    ]
    warmup = schema_of("BenchmarkProtocol")["$defs"]["Measurement"]["properties"]["warmupDuration"]
    assert warmup["anyOf"] == median["anyOf"]


@pytest.mark.parametrize("kind", list(registry.KINDS))
def test_every_object_forbids_unknown_fields(kind: str) -> None:
    """As the models do (extra="forbid"): every object with properties says additionalProperties false."""
    schema = schema_of(kind)
    objects = [s for s in _subschemas(schema) if s.get("type") == "object" and "properties" in s]
    assert objects and all(s.get("additionalProperties") is False for s in objects)


def test_kinds_are_found_by_name_slug_or_folder() -> None:
    assert [find_kind(t) for t in ("BenchmarkRun", "benchmarkrun", " benchmark-run ", "benchmark-runs")] == [
        "BenchmarkRun"
    ] * 4
    assert find_kind("benchmark") is None and find_kind("") is None
    assert kind_slug("ExecutionEnvironment") == "execution-environment"
    with pytest.raises(UnknownKind, match=r"unknown kind: 'Benchmark'; expected one of Attestation, BenchmarkProtocol"):
        get_kind("Benchmark")
    with pytest.raises(LookupError):
        schema_text("nope")
    assert schema_text("verifications") == (SCHEMA_DIR / "verification.v1alpha1.schema.json").read_text()


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_upstream_examples_are_valid_under_ours(path: Path) -> None:
    document = load_document(path.read_bytes(), path.name)
    assert errors_of(ecma_validator(schema_of(document["kind"])), document) == []


@pytest.mark.slow
def test_every_corpus_manifest_is_valid_under_ours() -> None:
    """All 19,765 manifests of the upstream export, as the registry publishes them."""
    from kernelindex.registry.importers.kernelindex_export import plan_import, read_export

    manifests = {m.digest: m for batch in plan_import(read_export(EXPORT)) for _, m in batch.manifests}
    assert len(manifests) == 19_765
    validators = {kind: ecma_validator(schema_of(kind)) for kind in registry.KINDS}
    invalid = {d: errors_of(validators[m.kind], m.document) for d, m in manifests.items()}
    assert {d: e for d, e in invalid.items() if e} == {}
    assert len({m.kind for m in manifests.values()}) == 13


# Ours against upstream's, kind by kind and field by field ----------------------------------------------

# Every way a shipped schema differs from upstream's (keywords compared: types, patterns with \d read as
# [0-9], lengths, bounds, enums, consts, item counts, required, additionalProperties, format, and the
# combinators), with the reason. Everything else (each kind's fields, which are required, every constraint)
# is upstream's. Descriptions, $id and $comment are ours and not compared.
EXPECTED_DIFFERENCES = {
    ("OperationSpec", "$.spec.axes.additionalProperties", "allOf"): "a constant axis needs a value, a derived one "
    "an expression: upstream's validator refines this after the schema; ours says it to editors too",
    ("OperationSpec", "$.spec.inputs.items", "oneOf"): "an argument is exactly one of tensor or scalar (refinement)",
    ("OperationSpec", "$.spec.outputs.items", "oneOf"): "an argument is exactly one of tensor or scalar (refinement)",
    ("BenchmarkRun", "$.spec.timing.latencyNs", "anyOf"): "latencyNs needs a median or a mean (refinement)",
    ("BenchmarkRun", "$.spec.timing.latencyNs.confidence95", "minItems"): "a confidence interval is a pair "
    "[low, high]: upstream's tuple type has two prefixItems but lets arrays of any length through",
    ("BenchmarkRun", "$.spec.timing.latencyNs.confidence95", "maxItems"): "the same pair, from above",
}

# Links are stricter than upstream's plain strings: http(s) with a host (`kernelindex.registry.kinds.content`), and an
# artifact's `uri` may also name the artifact itself (`kernelindex:artifact/<digest>`), so each such field
# differs by a `pattern` (an `anyOf` for artifact URIs). test_content.py checks that exactly upstream's URL
# fields carry the rule; here they are told apart from every other difference by name.
_LINK_NAMES = {"url", "repository", "homepage"}


_IDENTIFIER = "^[a-z][a-z0-9_]*$"


def _is_link_rule(path: str, keyword: str) -> bool:
    name = path.rsplit(".", 1)[-1]
    return (keyword == "pattern" and name in _LINK_NAMES) or (keyword == "anyOf" and name == "uri")


_COMPARED = (
    "type",
    "pattern",
    "maxLength",
    "minLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "enum",
    "const",
    "minItems",
    "maxItems",
    "required",
    "additionalProperties",
    "format",
)


def test_ours_differ_from_upstreams_only_as_listed() -> None:
    found: set[tuple[str, str, str]] = set()
    for kind in UPSTREAM_KINDS:
        upstream = json.loads((UPSTREAM_SCHEMAS / schema_file_name(kind)).read_text())
        for path, keyword in _differences(upstream, upstream, schema_of(kind), schema_of(kind), "$"):
            found.add((kind, path, keyword))
    links = {f for f in found if _is_link_rule(f[1], f[2])}
    assert found - links == set(EXPECTED_DIFFERENCES)
    # Every kind has metadata.sourceRefs[].url; a link rule lost from the generator would empty this.
    assert {kind for kind, path, _ in links if path == "$.metadata.sourceRefs.items.url"} == set(UPSTREAM_KINDS)


def test_the_comparison_sees_a_difference_in_any_compared_keyword() -> None:
    """The walk is not blind: a changed bound, a dropped field, an extra combinator are each found."""
    upstream = json.loads((UPSTREAM_SCHEMAS / schema_file_name("BenchmarkRun")).read_text())
    ours = schema_of("BenchmarkRun")
    ours["$defs"]["Timing"]["properties"]["samples"]["maximum"] = 10
    del ours["$defs"]["Evidence"]["properties"]["harness"]
    ours["$defs"]["RunCorrectness"]["anyOf"] = [{"required": ["matchedRatio"]}]
    found = _differences(upstream, upstream, ours, ours, "$")
    assert {f for f in found if not _is_link_rule(*f)} == {
        ("$.spec.timing.samples", "maximum"),
        ("$.spec.evidence.harness", "property"),
        ("$.spec.correctness", "anyOf"),
        ("$.spec.timing.latencyNs", "anyOf"),
        ("$.spec.timing.latencyNs.confidence95", "minItems"),
        ("$.spec.timing.latencyNs.confidence95", "maxItems"),
    }


def _differences(
    up_root: dict[str, Any], up: dict[str, Any], our_root: dict[str, Any], ours: dict[str, Any], path: str
) -> list[tuple[str, str]]:
    up, ours = _resolve(up_root, up), _resolve(our_root, ours)
    found = []
    for keyword in _COMPARED:
        theirs, mine = up.get(keyword), ours.get(keyword)
        if isinstance(theirs, dict) or isinstance(mine, dict):
            continue  # a subschema: compared below
        if keyword == "pattern" and theirs is None and mine == XML_TEXT_PATTERN:
            continue  # free text refuses what XML cannot carry, in ours only (kernelindex.registry.kinds.content)
        if keyword == "maxLength" and theirs is None and mine == 100 and ours.get("pattern") == _IDENTIFIER:
            continue  # an identifier has at most 100 characters, in ours only (kinds.common.Identifier)
        if keyword == "pattern" and isinstance(theirs, str):
            theirs = theirs.replace(r"\d", "[0-9]")  # the same in ECMAScript; Python's \d takes any digit
        if keyword == "required":
            theirs, mine = sorted(theirs or []), sorted(mine or [])
        if theirs != mine:
            found.append((path, keyword))
    for keyword in ("anyOf", "oneOf", "allOf", "prefixItems"):
        theirs, mine = up.get(keyword), ours.get(keyword)
        if theirs is None and mine is None:
            continue
        if theirs is None or mine is None or len(theirs) != len(mine):
            found.append((path, keyword))
            continue
        for index, (a, b) in enumerate(zip(theirs, mine, strict=True)):
            found += _differences(up_root, a, our_root, b, f"{path}.{keyword}[{index}]")
    theirs_props, my_props = up.get("properties", {}), ours.get("properties", {})
    for name in sorted(set(theirs_props) | set(my_props)):
        if name not in theirs_props or name not in my_props:
            found.append((f"{path}.{name}", "property"))
        else:
            found += _differences(up_root, theirs_props[name], our_root, my_props[name], f"{path}.{name}")
    for keyword in ("items", "additionalProperties", "propertyNames"):
        theirs, mine = up.get(keyword), ours.get(keyword)
        if isinstance(theirs, dict) and isinstance(mine, dict):
            found += _differences(up_root, theirs, our_root, mine, f"{path}.{keyword}")
        elif isinstance(theirs, dict) or isinstance(mine, dict):
            found.append((path, keyword))
    return found


def _resolve(root: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    return schema


def _subschemas(schema: Any) -> list[dict[str, Any]]:
    if isinstance(schema, list):
        return [s for item in schema for s in _subschemas(item)]
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            found += [s for child in value.values() for s in _subschemas(child)]
        elif key not in ("enum", "const", "required", "default"):
            found += _subschemas(value)
    return found


def _patterns(schema: dict[str, Any]) -> list[str]:
    return [s["pattern"] for s in _subschemas(schema) if isinstance(s.get("pattern"), str)]
