"""A starting YAML manifest of a kind, written from its shipped schema (for `kernelindex new KIND`).

The starter holds every required field, and the few optional ones a useful manifest of its kind carries.
Each required field to fill is a placeholder: an empty value (YAML's null, which no manifest admits, so a
placeholder left in place never passes, even where any text would) with a comment saying what goes there (the
schema's description, vocabulary, bounds). An optional field is a line commented out (`# title:  # ...`), to
uncomment and fill, so that filling in every empty field makes a valid manifest (an optional field
shown empty beside the required ones was refused as `null is not allowed` once the rest were filled). An optional
group (a run's `timing`) is shown with its required fields, as placeholders, and a note that it may go as a
whole. Its first line, `# yaml-language-server: $schema=...`, points an editor at the schema, which then
completes and checks the rest. A starter parses, and fails validation exactly at
its placeholders: `Starter.placeholders` lists their JSON paths, the paths the validator reports.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from kernelindex.registry.parse import json_path
from kernelindex.registry.schemas import get_kind, schema_of

__all__ = ["Starter", "render_starter"]

# Optional fields a starter shows beyond the required ones: what a useful manifest of the kind carries.
_ALSO: dict[str, tuple[str, ...]] = {
    "*": ("metadata.title",),
    "OperationSpec": ("spec.semantics.expression",),
    "ImplementationRevision": (
        "spec.projectRevision.repository",
        "spec.projectRevision.commit",
        "spec.callable.path",
        "spec.callable.symbol",
        "spec.licensing.declared",
    ),
    "BenchmarkProtocol": ("spec.measurement.warmupIterations", "spec.measurement.samples"),
    "BenchmarkRun": ("spec.correctness", "spec.timing", "spec.timing.samples", "spec.evidence", "spec.evidence.logs"),
    "SoftwareProject": ("spec.repository",),
    "ExecutionEnvironment": ("spec.software.driver", "spec.software.cudaToolkit"),
    "ServingStackRevision": ("spec.revision.version",),
    "Attestation": ("spec.evidenceUrl",),
}
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9./_-]*")
_YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


@dataclass(frozen=True, slots=True)
class Starter:
    """A starting manifest: its YAML text and the JSON paths of the placeholders left to fill."""

    kind: str
    text: str
    placeholders: tuple[str, ...]


def render_starter(kind: str, *, schema_ref: str) -> Starter:
    """The starting YAML of a kind (name, slug or folder); `schema_ref` is what the editor line names
    (a URL the registry serves, or the path of a file `kernelindex schema` wrote).

    Raises:
        UnknownKind: no such kind.
    """
    name = get_kind(kind)
    schema = schema_of(name)
    writer = _Writer(schema, frozenset(_ALSO["*"] + _ALSO.get(name, ())))
    lines = [
        f"# yaml-language-server: $schema={schema_ref}",
        f"# A new {name}. Fill in every empty field; the comment beside each says what goes there.",
        "# A line commented out (`# key:`) is optional: uncomment it to give that field, or leave it.",
        "# Other optional fields are left out: an editor that reads the schema above offers them as you type.",
    ]
    lines += writer.object(schema, (), 0)
    return Starter(name, "\n".join(lines) + "\n", tuple(writer.placeholders))


class _Writer:
    def __init__(self, root: dict[str, Any], also: frozenset[str]) -> None:
        self.root = root
        self.also = also
        self.placeholders: list[str] = []

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
        return schema

    def object(self, schema: dict[str, Any], path: tuple[str | int, ...], indent: int) -> list[str]:
        schema = self.resolve(schema)
        required = set(schema.get("required", ()))
        for branches in (schema.get("oneOf"), schema.get("anyOf")):
            if branches:  # "one of these is required": the first branch is the common case
                required.update(branches[0].get("required", ()))
        dotted = ".".join(str(part) for part in path)
        lines: list[str] = []
        for key, child in schema.get("properties", {}).items():
            if key in required:
                lines += self.field(key, self.resolve(child), (*path, key), indent)
            elif f"{dotted}.{key}".lstrip(".") in self.also:
                lines += self.optional(key, self.resolve(child), (*path, key), indent)
        return lines

    def optional(self, key: str, schema: dict[str, Any], path: tuple[str | int, ...], indent: int) -> list[str]:
        """An optional field: a group with its required fields to fill (and a note that it may go as a whole), or a
        value commented out, which is no placeholder."""
        if schema.get("type") == "object" and "properties" in schema:
            first, *rest = self.field(key, schema, path, indent)
            if first.endswith(":"):
                first += "  # optional: delete it with its fields when it does not apply"
            return [first, *rest]
        held = len(self.placeholders)
        lines = self.field(key, schema, path, indent)
        del self.placeholders[held:]
        return [f"{line[:indent]}# {line[indent:]}" for line in lines]

    def field(self, key: str, schema: dict[str, Any], path: tuple[str | int, ...], indent: int) -> list[str]:
        pad = " " * indent
        if "const" in schema:
            return [f"{pad}{key}: {_scalar(schema['const'])}"]
        if schema.get("type") == "object" and "properties" in schema:
            inner = self.object(schema, path, indent + 2)
            if inner and all(line.lstrip().startswith("#") for line in inner):  # only optional fields: {} stands
                return [
                    f"{pad}{key}: {{}}  # every field is optional: to give one, delete the {{}} and uncomment it",
                    *inner,
                ]
            return [f"{pad}{key}:", *inner] if inner else [f"{pad}{key}: {{}}  # every field is optional"]
        if schema.get("type") == "object":
            return [f"{pad}{key}: {{}}  # {_map_hint(self.resolve(schema.get('additionalProperties') or {}))}"]
        if schema.get("type") == "array":
            item = self.resolve(schema.get("prefixItems", [schema.get("items", {})])[0])
            return [f"{pad}{key}:", *self.item(item, (*path, 0), indent + 2)]
        self.placeholders.append(json_path(path))
        return [f"{pad}{key}:  # {_hint(schema)}"]

    def item(self, schema: dict[str, Any], path: tuple[str | int, ...], indent: int) -> list[str]:
        pad = " " * indent
        if schema.get("type") == "object" and "properties" in schema:
            lines = self.object(schema, path, indent + 2)
            return [f"{pad}- {lines[0].lstrip()}", *lines[1:]]
        self.placeholders.append(json_path(path))
        return [f"{pad}-  # {_hint(schema)}"]


def _scalar(value: Any) -> str:
    if isinstance(value, str) and _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


def _hint(schema: dict[str, Any]) -> str:
    """What goes in a field, in a few words, from its schema."""
    parts = []
    if "description" in schema:
        parts.append(schema["description"].rstrip("."))
    if "enum" in schema:
        parts.append("one of: " + ", ".join(str(v) for v in schema["enum"]))
    kind = schema.get("type")
    if kind == "integer" or kind == "number":
        word = "an integer" if kind == "integer" else "a number"
        if "exclusiveMinimum" in schema:
            word += f" > {schema['exclusiveMinimum']}"
        elif "minimum" in schema:
            word += f" >= {schema['minimum']}"
        if "maximum" in schema and schema["maximum"] < 2**53 - 1:
            word += f" and <= {schema['maximum']}"
        parts.append(word)
    elif kind == "boolean":
        parts.append("true or false")
    elif kind == "string" and "maxLength" in schema and not parts:
        parts.append(f"text, at most {schema['maxLength']} characters")
    if "anyOf" in schema and not parts:
        hints = [_hint(branch) for branch in schema["anyOf"]]
        parts.append(" or ".join(hint[:1].lower() + hint[1:] for hint in hints))
    return "; ".join(parts) or "a value"


def _map_hint(values: dict[str, Any]) -> str:
    if values.get("type") == "object" and "properties" in values:
        fields = ", ".join(
            f"{key}{'' if key in values.get('required', ()) else '?'}" for key in values.get("properties", {})
        )
        return f"entries `<name>: {{{fields}}}` (? marks an optional field)"
    return f"entries `<name>: <value>` ({_hint(values)})"
