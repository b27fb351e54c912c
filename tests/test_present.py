"""kernelindex.registry.present's fixed-point formatting: `_fixed` words a double as `Decimal(value).quantize(...)` with
ROUND_HALF_UP words it (the exact decimal expansion of the double, ties away from zero), on a table of known
vectors (ties, doubles just below a tie, negative zero, the limits) and on any double or integer."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

import pytest
from helpers import PROJECT_ROOT
from hypothesis import given
from hypothesis import strategies as st

from kernelindex import registry
from kernelindex.registry.present import _fixed, format_value, source_native_summary, with_article


def _quantized(value: float, places: int) -> str:
    """The reference: the decimal module's own rounding of the double's exact value."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (0.125, 2, "0.13"),  # an exact tie: away from zero (Python's %.2f says 0.12)
        (-0.125, 2, "-0.13"),
        (0.375, 2, "0.38"),
        (2.5, 0, "3"),
        (-2.5, 0, "-3"),
        (2.675, 2, "2.67"),  # the double is 2.67499999...
        (9.995, 2, "9.99"),  # the double is 9.99499999...
        (999.95, 1, "1000.0"),  # the double is 999.95000000000004547...: above the tie, and a digit more
        (0.694123, 4, "0.6941"),
        (-0.004, 2, "-0.00"),  # the sign of a negative value rounded to zero stays
        (-0.0, 2, "-0.00"),
        (0.0, 1, "0.0"),
        (7, 2, "7.00"),
        (-(10**14), 1, "-100000000000000.0"),
        (999999999999999.9, 1, "999999999999999.9"),
        (5e-324, 6, "0.000000"),
    ],
)
def test_known_values(value: float, places: int, expected: str) -> None:
    assert _fixed(value, places) == _quantized(value, places) == expected


@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**20), 10**20)), st.integers(0, 8))
def test_any_number_is_worded_as_decimal_words_it(value: float, places: int) -> None:
    if -1e21 < value < 1e21:
        with localcontext(Context(prec=400)):  # every digit of a double below 10^21 and `places` more
            assert _fixed(value, places) == _quantized(value, places)
    else:  # toFixed's ToString: the shortest text that reads back as the same double
        assert float(_fixed(value, places)) == value


# Beyond 10^21 (and for NaN and the infinities) toFixed answers the number's ToString (ECMAScript 2024,
# 21.1.3.3 step 9; a browser's console gives these). A measurement of 1e40 ns once made the run page 500
# (decimal.InvalidOperation).
@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (1e21, 2, "1e+21"),
        (-1e21, 2, "-1e+21"),
        (1.5e300, 1, "1.5e+300"),
        (1.7976931348623157e308, 1, "1.7976931348623157e+308"),
        (999999999999999900000.0, 1, "999999999999999868928.0"),
        (1e31, 1, "1e+31"),
        (float("inf"), 2, "Infinity"),
        (float("-inf"), 2, "-Infinity"),
        (float("nan"), 2, "NaN"),
    ],
)
def test_numbers_beyond_ten_to_the_21_are_worded_as_ecmascript_does(value: float, places: int, expected: str) -> None:
    assert _fixed(value, places) == expected


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (1e40, "ns", "1.0000000000000001e+31 s"),  # 1e40 / 1e9 in doubles, as a browser divides it
        (1e308, "s", "1e+308 s"),  # its nanoseconds overflow a double: worded in seconds as given
        (-1e40, "ns", "-1.0000000000000001e+31 s"),
        (1e300, "tflops", "1e+300 tflops"),
        (5e-324, "ns", "0 ns"),
    ],
)
def test_every_finite_measurement_formats(value: float, unit: str, expected: str) -> None:
    assert format_value(value, unit) == expected


@given(st.floats(-1e6, 1e6).map(lambda x: round(x * 8) / 8), st.integers(0, 3))
def test_ties_are_rounded_away_from_zero(value: float, places: int) -> None:
    assert _fixed(value, places) == _quantized(value, places)


def test_the_formatted_measurements_are_upstreams() -> None:
    assert [format_value(v, "ns") for v in (144571, 7810, 984, 1_420_000, 9995, 0.5e9)] == [
        "144.6 µs",
        "7.81 µs",
        "984 ns",
        "1.42 ms",
        "9.99 µs",
        "500.0 ms",
    ]
    summary = source_native_summary(
        {"sol_score": 0.694123, "avg_speedup": 1.9338, "fast_1_count": 16, "fast_1_total": 16}
    )
    assert summary == "SOL 0.6941 · 1.93× reference · 16/16 cases faster"


@pytest.mark.parametrize(
    ("noun", "said"),
    [(kind, ("an " if kind[0] in "AEIOU" else "a ") + kind) for kind in sorted(registry.KINDS)]
    + [("WorkloadCase or WorkloadSuite", "a WorkloadCase or WorkloadSuite"), ("Operation", "an Operation")],
)
def test_a_kind_takes_the_article_its_first_letter_asks_for(noun: str, said: str) -> None:
    assert with_article(noun) == said


def test_no_message_writes_its_article_before_a_placeholder() -> None:
    """Every "a <kind>" is said by `with_article` (messages once said "a ImplementationRevision", "a OperationSpec"): no
    source line writes `a {` or `an {` in a string of its own."""
    written = re.compile(r"""["'][^"'\n]*\ban? \{""")
    found = [
        f"{path.relative_to(PROJECT_ROOT)}:{number}"
        for folder in ("registry", "api", "web")
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if written.search(line)
    ]
    assert found == []
