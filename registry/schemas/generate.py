"""Generate the shipped JSON Schemas from the kinds' pydantic models (`scripts/generate-schemas` writes them).

pydantic's own output is close, but not what a manifest allows, so the generator differs from it in four ways:
- an optional field is simply not required: no `anyOf: [X, {type: null}]` and no `default: null`, since no
  manifest admits null (`kinds.validate_document` refuses it);
- a map with constrained keys says so with `propertyNames` and types its values with `additionalProperties`
  (pydantic's `patternProperties` would let any other key through with any value);
- durations and timestamps carry the schemas their annotations state (`kinds.common.Duration`: an integer of
  nanoseconds or a `"<n> <unit>"` string, as upstream) instead of the `{}` a plain validator leaves;
- no per-field titles (`Implementationdigest`): descriptions say what a field is;
- a string with no pattern of its own (free text, map keys) carries `kinds.content.XML_TEXT_PATTERN`, the
  characters XML 1.0 forbids being refused by the models in every string and key.
The refinements JSON Schema can express (a constant axis has a value, an argument is a tensor or a scalar,
`latencyNs` has a median or a mean, `confidence95` is a pair) are in the models' `json_schema_extra`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from kernelindex.registry.kinds import KINDS
from kernelindex.registry.kinds.common import DIGEST_DESCRIPTION
from kernelindex.registry.kinds.content import XML_TEXT_PATTERN
from kernelindex.registry.schemas import SCHEMA_DIALECT, schema_file_name, schema_id

__all__ = ["generate_schema", "generated_text", "write_schemas"]

_COMMENT = "Generated from the registry's models by scripts/generate-schemas; do not edit by hand."
_SUBSCHEMA_MAPS = ("properties", "$defs", "patternProperties")
_SUBSCHEMA = ("items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


class _ManifestSchema(GenerateJsonSchema):
    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if json_schema.get("default", ...) is None:
            del json_schema["default"]
        return json_schema

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def str_schema(self, schema: core_schema.StringSchema) -> JsonSchemaValue:
        json_schema = super().str_schema(schema)
        json_schema.setdefault("pattern", XML_TEXT_PATTERN)
        return json_schema

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        keys = self.generate_inner(schema["keys_schema"]) if "keys_schema" in schema else {}
        values = self.generate_inner(schema["values_schema"]) if "values_schema" in schema else {}
        json_schema: JsonSchemaValue = {"type": "object"}
        if keys:
            json_schema["propertyNames"] = keys
        json_schema["additionalProperties"] = values or True
        return json_schema


def generate_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a kind, from its model."""
    info = KINDS[kind]
    generated = info.model.model_json_schema(by_alias=True, schema_generator=_ManifestSchema)
    _strip_titles(generated)
    for reference in info.references:
        field = _field(generated, reference.path)
        if field.get("description") == DIGEST_DESCRIPTION:  # a field's own (lifecycle kinds) says more
            named = " or ".join(reference.targets)
            field["description"] = f"The digest of the {named} this {kind} names (sha256: and 64 hex digits)."
    description = generated.pop("description", None)
    head: dict[str, Any] = {
        "$schema": SCHEMA_DIALECT,
        "$id": schema_id(kind),
        "$comment": _COMMENT,
        "title": kind,
    }
    if description:
        head["description"] = description
    return head | generated


def generated_text(kind: str) -> str:
    """The bytes of a kind's schema file, as text: 2-space indented JSON, µ as itself, a final newline."""
    return json.dumps(generate_schema(kind), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    """Write every kind's schema into `directory`; return the files written."""
    written = []
    for kind in KINDS:
        path = directory / schema_file_name(kind)
        path.write_text(generated_text(kind), encoding="utf-8")
        written.append(path)
    return written


def _field(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The subschema of the property at `path`, through `$ref`s into `$defs` (the defs are per field
    here: a reference's description is written on the spec object that holds it)."""
    node = schema
    for key in path:
        node = node["properties"][key]
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _strip_titles(schema: Any) -> None:
    """Remove the `title` keyword from every subschema (not properties that happen to be named title)."""
    if not isinstance(schema, dict):
        return
    schema.pop("title", None)
    for key in _SUBSCHEMA_MAPS:
        for child in schema.get(key, {}).values():
            _strip_titles(child)
    for key in _SUBSCHEMA:
        _strip_titles(schema.get(key))
    for key in _SUBSCHEMA_LISTS:
        for child in schema.get(key, []):
            _strip_titles(child)
