"""How the registry words its facts: latencies, source-native metrics, workload labels, citations.

Plain functions of plain values, following upstream's run pages so that a frontend built on
the API shows what KernelIndex shows:

>>> format_value(144571, "ns")
'144.6 µs'
>>> format_value(7810, "ns"), format_value(984, "ns"), format_value(1_420_000, "ns")
('7.81 µs', '984 ns', '1.42 ms')
>>> format_value(1e40, "ns"), format_value(1e308, "s")
('1.0000000000000001e+31 s', '1e+308 s')
>>> source_native_summary({"sol_score": 0.694123, "latency_ms": 0.144571, "avg_speedup": 1.9338,
...                        "fast_1_count": 16, "fast_1_total": 16})
'SOL 0.6941 · 1.93× reference · 16/16 cases faster'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

__all__ = [
    "CITATION_FORMATS",
    "NO_PERMALINK",
    "Citation",
    "bibtex_entry",
    "bibtex_value",
    "cite",
    "date_parts",
    "format_value",
    "source_native_summary",
    "with_article",
    "workload_label",
]

CITATION_FORMATS = ("TEXT", "BIBTEX", "CSL_JSON")
NO_PERMALINK = "No permalink: this registry has no public base URL configured."
"""What a citation says instead of a URL when the registry has none that works beyond one machine."""


def _fixed(value: float, places: int) -> str:
    """JavaScript's toFixed (half away from zero on the decimal expansion of the double).

    Python's `%.Nf` rounds the exact value of the double correctly, half to even: it can differ only on an
    exact tie, and a double is one only if it is a multiple of 2**-(places + 1) (`_HALVES`). Ties, and values
    `Decimal`'s default context cannot quantize (too many digits), go to `_fixed_decimal`: the same
    text, a negative zero's sign included, at a third of the cost (a leaderboard formats 20 values).
    From 10^21 on, and for NaN and the infinities, toFixed is the number's shortest text, as here.

    >>> [_fixed(v, 2) for v in (0.125, 2.675, -0.004, -0.0, 9.995, 1e14)]
    ['0.13', '2.67', '-0.00', '-0.00', '9.99', '100000000000000.00']
    >>> [_fixed(v, 1) for v in (1e20, 1e21, -1.5e31, float("inf"), float("nan"))]
    ['100000000000000000000.0', '1e+21', '-1.5e+31', 'Infinity', 'NaN']
    """
    if 0 <= places <= _MAX_PLACES and -1e15 < value < 1e15:  # false for NaN too
        number = float(value)  # exact: an int here has fewer than 2**53
        if not (number * _HALVES[places]).is_integer():
            return f"{number:.{places}f}"
    if not -1e21 < value < 1e21:  # ECMAScript's Number.prototype.toFixed, step 9: ToString(x)
        return _shortest(float(value))
    return _fixed_decimal(value, places)


def _shortest(number: float) -> str:
    """ECMAScript's ToString of a number at or beyond ±10^21: Python's shortest repr spells it the same."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return repr(number)


_MAX_PLACES = 6
_HALVES = [float(2 ** (places + 1)) for places in range(_MAX_PLACES + 1)]
"""Per number of places, what a tie at that many places is a whole multiple of the inverse of."""


def _fixed_decimal(value: float, places: int) -> str:
    # Below 10^21 a double has at most 21 digits before the point: 28 of precision always hold it and `places`.
    exact = Decimal(value)
    return str(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=_EXACT))


_EXACT = Context(prec=64)


def format_value(value: float, unit: str) -> str:
    """A measurement as a reader wants it: latencies scaled to ns/µs/ms/s, 2 decimals below 10, 1 above."""
    if unit not in ("ns", "s"):
        return f"{_number(value)} {unit}"
    ns = value * 1e9 if unit == "s" else value
    if math.isinf(ns) and math.isfinite(value):  # seconds beyond a double's range of nanoseconds
        return f"{_fixed(value, 1)} s"
    if abs(ns) < 1e3:
        return f"{round(ns)} ns"
    for scale, name in ((1e3, "µs"), (1e6, "ms"), (1e9, "s")):
        scaled = ns / scale
        if abs(scaled) < 1e3 or name == "s":
            return f"{_fixed(scaled, 2 if abs(scaled) < 10 else 1)} {name}"
    raise AssertionError("unreachable")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


def source_native_summary(metrics: Mapping[str, Any] | None) -> str | None:
    """Upstream's one-line summary of a source's own metrics (SOL score, speedup, cases faster)."""
    if not metrics:
        return None
    numbers = {k: v for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    if not numbers:
        return None
    parts = []
    used = {"latency_ms", "reference_latency_ms"}
    if "sol_score" in numbers:
        parts.append(f"SOL {_fixed(numbers['sol_score'], 4)}")
        used.add("sol_score")
    speedup = numbers.get("avg_speedup", numbers.get("speedup_factor"))
    if speedup is not None:
        parts.append(f"{_fixed(speedup, 2)}× reference")
        used.update(("avg_speedup", "speedup_factor"))
    if "fast_1_count" in numbers and "fast_1_total" in numbers:
        parts.append(f"{_number(numbers['fast_1_count'])}/{_number(numbers['fast_1_total'])} cases faster")
        used.update(("fast_1_count", "fast_1_total"))
    parts.extend(f"{key.replace('_', ' ')} {_number(value)}" for key, value in numbers.items() if key not in used)
    return " · ".join(parts) or None


def workload_label(document: Mapping[str, Any]) -> str:
    """`suite of 16 cases · mean latency` for a suite; `tokens = 2048 · hidden = 4096` for a case."""
    spec = document["spec"]
    if document["kind"] == "WorkloadSuite":
        aggregation = spec.get("aggregation", {})
        words = " ".join(
            w for w in (aggregation.get("statistic"), aggregation.get("metric")) if w and w != "unspecified"
        )
        return " · ".join(p for p in (f"suite of {len(spec['cases'])} cases", words) if p)
    axes = " · ".join(f"{axis} = {value}" for axis, value in spec.get("axes", {}).items())
    dtypes = sorted({t["dtype"] for t in spec.get("tensors", {}).values()})
    return " · ".join(p for p in (axes, "/".join(dtypes)) if p) or document["metadata"]["name"]


@dataclass(frozen=True, slots=True)
class Citation:
    """What a citation of a run says."""

    implementation: str
    workload: str
    value: str
    statistic: str
    source: str
    digest: str
    permalink: str | None  # None: no absolute URL exists (no base URL configured); the citation says so
    accessed: str | None  # YYYY-MM-DD, the reader's; None: no access date (an answer that never changes)
    published: str | None  # YYYY-MM-DD
    title: str


def cite(citation: Citation, fmt: str = "TEXT") -> str:
    """A run's citation as TEXT, BIBTEX or CSL_JSON.

    Raises:
        ValueError: an unknown format.
    """
    c = citation
    if fmt == "TEXT":
        accessed = f" Accessed {c.accessed}." if c.accessed else ""
        link = f"{c.permalink}." if c.permalink else NO_PERMALINK
        return (
            f"{c.implementation}, {c.workload}. {c.value} ({c.statistic}). Reported by {c.source}. "
            f"Run {c.digest}. {link}{accessed}"
        )
    key = "kernelindex-" + c.digest.removeprefix("sha256:")[:12]
    if fmt == "BIBTEX":
        year = c.published or c.accessed
        fields = {
            "title": f"{c.implementation}, {c.workload}: {c.value} ({c.statistic})",
            "author": c.source,
            "year": year[:4] if year else None,
            "howpublished": f"\\url{{{c.permalink}}}" if c.permalink else None,
            "url": c.permalink,
            "urldate": c.accessed if c.permalink else None,
            "note": f"KernelIndex registry, run {c.digest}"
            + (f". Accessed {c.accessed}" if c.accessed else "")
            + ("" if c.permalink else f". {NO_PERMALINK}"),
        }
        return bibtex_entry(key, fields)
    if fmt == "CSL_JSON":
        record: dict[str, Any] = {
            "id": key,
            "type": "dataset",
            "title": f"{c.implementation}, {c.workload}: {c.value} ({c.statistic})",
            "author": [{"literal": c.source}],
            "publisher": "KernelIndex registry",
            "note": f"Run {c.digest}" + ("" if c.permalink else f". {NO_PERMALINK}"),
        }
        if c.permalink:
            record["URL"] = c.permalink
        if c.accessed:
            record["accessed"] = {"date-parts": [date_parts(c.accessed)]}
        if c.published:
            record["issued"] = {"date-parts": [date_parts(c.published)]}
        return json.dumps(record, ensure_ascii=False, sort_keys=True)
    raise ValueError(f"unknown citation format {fmt!r}; expected one of {', '.join(CITATION_FORMATS)}")


def bibtex_entry(key: str, fields: Mapping[str, str | None]) -> str:
    """A BibTeX `@misc` entry of the fields that have a value, in order. Every author here is a corporate
    one (a source such as NVIDIA SOL-ExecBench, or the registry): it is braced once more, so that BibTeX
    reads it as one name, not as given and family names (`author = {{NVIDIA SOL-ExecBench}}`).

    >>> print(bibtex_entry("k", {"title": "A & B", "author": "NVIDIA SOL-ExecBench", "year": None}))
    @misc{k,
      title = {A \\& B},
      author = {{NVIDIA SOL-ExecBench}}
    }
    """
    lines = []
    for name, value in fields.items():
        if value is None:
            continue
        text = bibtex_value(value, name)
        if name == "author":
            text = "{" + text + "}"
        lines.append(f"  {name} = {{{text}}}")
    body = ",\n".join(lines)
    return f"@misc{{{key},\n{body}\n}}"


def bibtex_value(value: str, name: str) -> str:
    """A BibTeX field's value: LaTeX specials escaped, except in URL fields (which BibTeX keeps verbatim).
    (`bibtex_entry` braces authors once more.)

    >>> bibtex_value("50% of A_B", "title"), bibtex_value("https://x.example/a_b", "url")
    ('50\\\\% of A\\\\_B', 'https://x.example/a_b')
    """
    if name in ("url", "howpublished"):
        return value
    escaped = "".join("\\" + ch if ch in "&%$#_{}" else ch for ch in value)
    return escaped.replace("~", "\\textasciitilde{}").replace("^", "\\textasciicircum{}")


def date_parts(day: str) -> list[int]:
    """CSL-JSON's `date-parts` of a `YYYY-MM-DD` day."""
    year, month, date = day.split("-")
    return [int(year), int(month), int(date)]


def with_article(noun: str) -> str:
    """A noun after its indefinite article, chosen by the noun's first letter: the registry's nouns are kind and
    type names, which are said as written ("an ImplementationRevision", "a WorkloadCase or WorkloadSuite"). Every
    message that names "a <kind>" says it through this one function (messages once said "a ImplementationRevision").

    >>> with_article("ImplementationRevision"), with_article("OperationSpec"), with_article("BenchmarkRun")
    ('an ImplementationRevision', 'an OperationSpec', 'a BenchmarkRun')
    >>> with_article("WorkloadCase or WorkloadSuite"), with_article("ExecutionEnvironment")
    ('a WorkloadCase or WorkloadSuite', 'an ExecutionEnvironment')
    """
    return f"{'an' if noun[:1].upper() in 'AEIOU' else 'a'} {noun}"
