"""The project cites itself: CITATION.cff is valid Citation File Format 1.2.0 (its published JSON Schema, kept in
tests/data/cff) and says what pyproject.toml says of the version and licence."""

from __future__ import annotations

import json
import tomllib

import jsonschema
from helpers import PROJECT_ROOT
from ruamel.yaml import YAML

SCHEMA = PROJECT_ROOT / "tests" / "data" / "cff" / "schema-1.2.0.json"


def _cff() -> dict[str, object]:
    loaded: dict[str, object] = YAML(typ="safe").load((PROJECT_ROOT / "CITATION.cff").read_text())
    return loaded


def test_citation_cff_is_valid_citation_file_format() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER).validate(_cff())
    broken = {key: value for key, value in _cff().items() if key != "authors"}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))  # the schema does refuse what is wrong


def test_citation_cff_agrees_with_the_package() -> None:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    cff = _cff()
    assert (cff["version"], cff["license"], cff["cff-version"]) == (project["version"], project["license"], "1.2.0")
