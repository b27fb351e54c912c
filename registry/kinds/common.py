"""Building blocks shared by every manifest model: the strict base, constrained scalars, metadata.

Patterns are the upstream JSON Schemas' patterns with `\\d` spelled `[0-9]`: the schemas are
ECMAScript regexes, where `\\d` is ASCII only, and pydantic's Rust engine would otherwise
accept any Unicode digit.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "API_VERSION",
    "DIGEST_DESCRIPTION",
    "DIGEST_PATTERN",
    "DURATION_PATTERN",
    "Author",
    "DigestStr",
    "Duration",
    "GitCommit",
    "Identifier",
    "Link",
    "Metadata",
    "MetadataName",
    "NonNegativeFloat",
    "PositiveFloat",
    "PositiveSafeInt",
    "Ratio",
    "SafeInt",
    "SignedSafeInt",
    "Slug",
    "SourceRef",
    "Str50",
    "Str100",
    "Str120",
    "Str200",
    "Str500",
    "Str1000",
    "Str2000",
    "Strict",
    "Timestamp",
    "UriDigest",
]

from kernelindex.registry.kinds import API_VERSION, DIGEST_PATTERN, DURATION_SPACE
from kernelindex.registry.kinds.content import ARTIFACT_URI_PATTERN, LINK_PATTERN, artifact_uri_problem, link_problem

MAX_SAFE_INTEGER = 2**53 - 1
DURATION_PATTERN = r"^[0-9]+(\.[0-9]+)?\s?(ns|us|µs|ms|s)$"
"""As the JSON Schemas write it (ECMAScript: `\\s` is `DURATION_SPACE`); `_DURATION` is its Python twin."""
# RFC 3339 UTC timestamps with a real calendar date (leap years included), `Z` only:
# upstream's pattern, verbatim but for [0-9].
TIMESTAMP_PATTERN = (
    r"^(?:(?:[0-9][0-9][2468][048]|[0-9][0-9][13579][26]|[0-9][0-9]0[48]|[02468][048]00|[13579][26]00)-02-29"
    r"|[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|(?:02)-(?:0[1-9]|1[0-9]|2[0-8])))"
    r"T(?:(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?(?:Z))$"
)


class Strict(BaseModel):
    """Every manifest object: frozen, unknown fields refused, JSON names in camelCase."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        regex_engine="rust-regex",
    )


# Strings of at most N characters (code points, as JSON Schema counts them).
Str50 = Annotated[str, StringConstraints(max_length=50)]
Str100 = Annotated[str, StringConstraints(max_length=100)]
Str120 = Annotated[str, StringConstraints(max_length=120)]
Str200 = Annotated[str, StringConstraints(max_length=200)]
Str500 = Annotated[str, StringConstraints(max_length=500)]
Str1000 = Annotated[str, StringConstraints(max_length=1000)]
Str2000 = Annotated[str, StringConstraints(max_length=2000)]


# The descriptions below reach the JSON Schemas (registry/schemas), where editors show them on hover.
# Identifiers name axes, dtypes, metrics and units, which pages, cards and labels show whole: the longest in the
# embedded corpus has 61 characters; 100 leaves room and keeps a label (an axis per identifier) short.
Identifier = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=100),
    Field(
        description="An identifier: a lower-case letter, then lower-case letters, digits and _, at most 100 characters."
    ),
]
Slug = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=100),
    Field(description="A slug: lower-case letters, digits and -, at most 100 characters."),
]
MetadataName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=200),
    Field(description="A name: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit."),
]
DIGEST_DESCRIPTION = "A digest: sha256: and 64 lower-case hex digits."
DigestStr = Annotated[str, StringConstraints(pattern=DIGEST_PATTERN), Field(description=DIGEST_DESCRIPTION)]
GitCommit = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9a-f]{40}$"),
    Field(description="A full git commit id: 40 lower-case hex digits."),
]
_TIMESTAMP = re.compile(TIMESTAMP_PATTERN)


def _check_timestamp(value: str) -> str:
    # A plain pattern error would print the 300-character regex as the reason; say what it means.
    if not _TIMESTAMP.fullmatch(value):
        raise ValueError(
            "not an RFC 3339 UTC timestamp: expected YYYY-MM-DDTHH:MM[:SS[.fraction]]Z on a real calendar "
            "date, with Z (offsets such as +01:00 are not allowed)"
        )
    return value


Timestamp = Annotated[
    str,
    AfterValidator(_check_timestamp),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "pattern": TIMESTAMP_PATTERN,
            "description": "An RFC 3339 UTC timestamp ending in Z, e.g. 2026-08-01T12:00:00Z.",
        }
    ),
]

SafeInt = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
PositiveSafeInt = Annotated[int, Field(gt=0, le=MAX_SAFE_INTEGER)]
SignedSafeInt = Annotated[int, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Ratio = Annotated[float, Field(ge=0, le=1)]

_DURATION = re.compile(DURATION_PATTERN.removeprefix("^").removesuffix("$").replace(r"\s", DURATION_SPACE))


def _check_duration(value: object) -> int | str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 8120.0 is the number 8120 (JSON does not tell them apart; JCS prints 8120)
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= MAX_SAFE_INTEGER:
            return value
        raise ValueError("a duration in nanoseconds must be between 0 and 2^53-1")
    if isinstance(value, float):
        raise ValueError("not a whole number of nanoseconds")
    if isinstance(value, str) and _DURATION.fullmatch(value):
        return value
    raise ValueError('a duration is whole nanoseconds (8120) or a string with a unit ("8.12 us", "0.008 ms")')


# A duration as authored: integer nanoseconds, or a string such as "0.008 ms".
# normalize.py turns both into integer nanoseconds before hashing. The JSON Schema is upstream's.
Duration = Annotated[
    int | str,
    PlainValidator(_check_duration),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER},
                {"type": "string", "pattern": DURATION_PATTERN},
            ],
            "description": "A duration: whole nanoseconds (8120), or a number and a unit: ns, us, µs, ms or s "
            '("8.12 us", "0.008 ms").',
        }
    ),
]


def _check_link(value: str) -> str:
    problem = link_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


# A URL the registry publishes as a link: http(s) with a host (kernelindex.registry.kinds.content says exactly what).
Link = Annotated[
    str,
    StringConstraints(max_length=2000),
    AfterValidator(_check_link),
    WithJsonSchema({"type": "string", "maxLength": 2000, "pattern": LINK_PATTERN}),
]


class UriDigest(Strict):
    """An external artifact: where it is and what its bytes hash to."""

    # `digest` first: the check of `uri` reads it (a kernelindex:artifact/ uri repeats it).
    digest: DigestStr
    uri: Annotated[
        Str2000,
        WithJsonSchema(
            {
                "type": "string",
                "maxLength": 2000,
                "anyOf": [{"pattern": LINK_PATTERN}, {"pattern": ARTIFACT_URI_PATTERN}],
            }
        ),
    ]

    @field_validator("uri")
    @classmethod
    def _a_link_or_this_artifact(cls, value: str, info: ValidationInfo) -> str:  # refinement (kinds.content)
        problem = artifact_uri_problem(value, info.data.get("digest"))
        if problem is not None:
            raise ValueError(problem)
        return value


class Author(Strict):
    name: Str200 | None = None
    github: Str100 | None = None


class SourceRef(Strict):
    url: Link


class Metadata(Strict):
    """Editorial facts about a manifest. Never part of its identity."""

    name: MetadataName
    title: Str200 | None = None
    description: Str2000 | None = None
    labels: dict[Identifier, Str200] | None = None
    authors: tuple[Author, ...] | None = None
    source_refs: tuple[SourceRef, ...] | None = None
