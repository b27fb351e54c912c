"""JSON Schema validation as an editor does it: Draft 2020-12, with ECMAScript regular expressions.

The `jsonschema` library runs `pattern` through Python's `re`, which differs from ECMA-262 where it matters
here: `$` also matches before a final newline, and `\\d`/`\\s` take other characters. Editors (and
check-jsonschema, whose default this copies) run patterns as ECMAScript with the `u` flag, through `regress`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import regress
from jsonschema.protocols import Validator

__all__ = ["ecma_validator", "errors_of"]


@cache
def _regex(pattern: str) -> regress.Regex:
    return regress.Regex(pattern, flags="u")


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and _regex(pattern).find(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, properties: dict[str, Any], instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _regex(pattern).find(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


_Ecma = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties},
)


def ecma_validator(schema: dict[str, Any]) -> Validator:
    """A validator of `schema` (itself checked against the 2020-12 metaschema first)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    validator: Validator = _Ecma(schema)
    return validator


def errors_of(validator: Validator, document: Any) -> list[str]:
    """Every error, as `<JSON path>: <message>`, in a stable order."""
    found = sorted(validator.iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [f"{e.json_path}: {e.message}" for e in found]
