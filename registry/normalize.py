"""Normalization before hashing: durations become integer nanoseconds, set-like lists become sorted sets.

These are the conveniences upstream grants authors ("0.008 ms" for 8000, support lists
in any order), resolved so that they never change a digest. Nothing else is touched:
ordered lists (inputs, outputs, cases, measurements, shapes) keep their order, and
timestamps stay the string as written.

>>> duration_ns("0.008 ms", "$.x")
8000
>>> duration_ns("1.5 ns", "$.x")
Traceback (most recent call last):
...
ValueError: 1.5 ns is not a whole number of nanoseconds
"""

from __future__ import annotations

import copy
import re
from decimal import Decimal
from typing import Any

from kernelindex.registry.errors import InvalidManifest, Problem
from kernelindex.registry.kinds import DURATION_SPACE
from kernelindex.registry.parse import json_path

__all__ = ["SET_LIKE_SUPPORT_FIELDS", "duration_ns", "normalize"]

_MAX_SAFE_INTEGER = 2**53 - 1
_DURATION = re.compile(rf"([0-9]+(?:\.[0-9]+)?){DURATION_SPACE}?(ns|us|µs|ms|s)")
_NS_PER_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}

SET_LIKE_SUPPORT_FIELDS = ("hardwareArchitectures", "productsTested", "axes", "dtypes", "layouts")
_LATENCY_FIELDS = ("median", "mean", "p05", "p95", "minimum", "maximum", "mad")


def duration_ns(value: Any, where: str) -> int:
    """Integer nanoseconds of a duration written as an integer or as `<number> <unit>`.

    Raises:
        ValueError: the value is not a duration, or does not land on a whole safe integer of ns.
    """
    if isinstance(value, float) and value.is_integer():
        ns = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        ns = value
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value)):
        exact = Decimal(match.group(1)) * _NS_PER_UNIT[match.group(2)]
        if exact != exact.to_integral_value():
            raise ValueError(f"{value} is not a whole number of nanoseconds")
        ns = int(exact)
    else:
        raise ValueError(f"{value!r} at {where} is not a duration")
    if not 0 <= ns <= _MAX_SAFE_INTEGER:
        raise ValueError(f"{value} is outside 0..2^53-1 nanoseconds")
    return ns


def normalize(document: dict[str, Any], source: str, *, in_place: bool = False) -> dict[str, Any]:
    """Return the normalized copy of a schema-valid manifest (the input is not modified), or with
    `in_place` the document itself normalized (a copy the caller made: parsing the same bytes
    again costs a fraction of a deep copy).

    Raises:
        InvalidManifest: a duration is ambiguous (not a whole number of ns), or a
            confidence interval is upside down.
    """
    kind = document["kind"]
    spec = document["spec"]
    problems: list[Problem] = []
    result = document if in_place else copy.deepcopy(document)
    out_spec = result["spec"]

    def fix_duration(container: dict[str, Any], key: str, path: tuple[str | int, ...]) -> None:
        try:
            container[key] = duration_ns(container[key], json_path(path))
        except ValueError as exc:
            problems.append(Problem(source, json_path(path), str(exc)))

    if kind == "BenchmarkRun" and "timing" in spec:
        latency = out_spec["timing"]["latencyNs"]
        base = ("spec", "timing", "latencyNs")
        for key in _LATENCY_FIELDS:
            if key in latency:
                fix_duration(latency, key, (*base, key))
        if "confidence95" in latency:
            interval = latency["confidence95"]
            for index in (0, 1):
                fix_duration(interval, index, (*base, "confidence95", index))  # type: ignore[arg-type]
            if not problems and interval[0] > interval[1]:
                problems.append(
                    Problem(
                        source,
                        json_path((*base, "confidence95")),
                        "confidence95 is [low, high]: low exceeds high",
                    )
                )
    elif kind == "BenchmarkProtocol" and "warmupDuration" in spec["measurement"]:
        fix_duration(out_spec["measurement"], "warmupDuration", ("spec", "measurement", "warmupDuration"))
    elif kind == "Attestation" and "observedNs" in spec:
        fix_duration(out_spec, "observedNs", ("spec", "observedNs"))
    elif kind == "ImplementationRevision":
        support = out_spec["support"]
        for key in SET_LIKE_SUPPORT_FIELDS:
            if key in support:
                # Sorted by UTF-16 code units, as upstream (JavaScript) sorts: the sets agree byte for byte.
                support[key] = sorted(set(support[key]), key=lambda text: text.encode("utf-16-be"))
    if problems:
        raise InvalidManifest(problems)
    return result
