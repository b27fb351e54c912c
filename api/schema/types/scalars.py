"""The schema's own scalars: `DateTime`, every timestamp the API answers or takes.

A `DateTime` is an RFC 3339 instant in UTC written with `Z`: `2026-08-01T12:00:00Z`, with the fraction of
a second a manifest gave (`2026-06-07T12:03:35.566Z`), never an offset. Manifests may write an instant
without seconds (`2026-08-01T12:00Z`): it is answered with them (`:00`), which RFC 3339 requires.
As input, an RFC 3339 instant with an offset (`+02:00`) is accepted and read as the UTC instant it
names; a date alone, a time without a zone, or anything else is refused with what was expected.
Resolvers return the text (`str`): the scalar only checks and normalizes it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, NewType, TypeAlias

import strawberry
from strawberry.types.scalar import ScalarDefinition

__all__ = ["SCALAR_MAP", "DateTime", "as_datetime", "parse_datetime"]

_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
EXPECTED = "an RFC 3339 date and time with a zone, e.g. 2026-08-01T12:00:00Z (UTC) or 2026-08-01T14:00:00+02:00"


def as_datetime(text: str) -> str:
    """An instant the registry holds (RFC 3339 UTC, seconds optional) as the scalar answers it.

    >>> as_datetime("2026-08-01T12:00Z")
    '2026-08-01T12:00:00Z'
    >>> as_datetime("2026-06-07T12:03:35.566Z")
    '2026-06-07T12:03:35.566Z'
    """
    if not _UTC.fullmatch(text):
        raise ValueError(f"not an RFC 3339 UTC instant: {text[:60]!r}")
    if len(text) == 17:  # YYYY-MM-DDTHH:MMZ
        return text[:16] + ":00Z"
    return text


def parse_datetime(value: object) -> str:
    """A client's instant, in UTC with `Z` (an offset is converted; the fraction is kept as given).

    >>> parse_datetime("2026-08-01T14:00:00+02:00")
    '2026-08-01T12:00:00Z'
    >>> parse_datetime("2026-08-01T12:00:00.5Z")
    '2026-08-01T12:00:00.5Z'

    Raises:
        ValueError: anything else (graphql-core reports it as the argument's or variable's error).
    """
    if not isinstance(value, str):
        raise ValueError(f"expected {EXPECTED} (a string)")
    text = value.strip()
    found = _RFC3339.fullmatch(text)
    if found is None:
        raise ValueError(f"expected {EXPECTED}, not {value[:60]!r}")
    fraction = found.group(1) or ""
    try:
        moment = dt.datetime.fromisoformat(text.replace(fraction, "", 1).upper().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"expected {EXPECTED}, not {value[:60]!r} (no such date or time)") from None
    utc = moment.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def _serialize(value: object) -> str:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise ValueError("a DateTime needs a time zone")
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return as_datetime(str(value))


if TYPE_CHECKING:  # to mypy, the text a resolver returns
    DateTime: TypeAlias = str
else:
    DateTime = NewType("DateTime", str)

SCALAR_MAP: dict[object, ScalarDefinition] = {
    DateTime: strawberry.scalar(
        name="DateTime",
        description="An instant: an RFC 3339 date and time in UTC, written with `Z` (`2026-08-01T12:00:00Z`), "
        "with a fraction of a second when the source gave one (`2026-06-07T12:03:35.566Z`). As an argument, an "
        "offset such as `+02:00` is also accepted and read as the same instant in UTC. Sort them as instants, "
        "not as text: fractions have varying length. In TypeScript, map it to `string` (or parse it with "
        "`new Date(value)`).",
        specified_by_url="https://www.rfc-editor.org/rfc/rfc3339#section-5.6",
        serialize=_serialize,
        parse_value=parse_datetime,
    )
}
"""The schema's `StrawberryConfig.scalar_map`: annotate with `DateTime`, the schema answers the scalar."""
