"""RFC 8785 canonical JSON and the digest built on it: known vectors, refusals, and round-trip properties."""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex import registry
from kernelindex.registry.canonical import (
    canonical_json,
    json_digest,
    manifest_digest,
    parse_digest,
    pretty_json,
    stored_json,
)

# RFC 8785 appendix B: IEEE 754 bit patterns and their ECMAScript serialization.
IEEE_VECTORS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),  # minus zero
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), IEEE_VECTORS, ids=[b for b, _ in IEEE_VECTORS])
def test_numbers_print_as_ecmascript_does(bits: str, expected: str) -> None:
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (4.50, "4.5"),
        (2e-3, "0.002"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1e30, "1e+30"),
        (1e-27, "1e-27"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-1.5, "-1.5"),
        (8120, "8120"),
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
    ],
    ids=repr,
)
def test_python_numbers(value: float, expected: str) -> None:
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("€", '"€"'),  # no \u escapes for non-ASCII: UTF-8 bytes
        ("é", '"é"'),
        ("\u2028", '"\u2028"'),  # ECMAScript JSON.stringify leaves line separators alone
        ("\x7f", '"\x7f"'),
        ("\x0f", '"\\u000f"'),  # control characters: lowercase hex
        ("\x1f", '"\\u001f"'),
        ("\n\r\t\b\f", '"\\n\\r\\t\\b\\f"'),
        ('"\\', '"\\"\\\\"'),
        ("/", '"/"'),  # the solidus is not escaped
        ("\U0001f600", '"\U0001f600"'),
    ],
    ids=repr,
)
def test_strings(value: str, expected: str) -> None:
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": 2}, '{"a":2,"b":1}'),
        # UTF-16 code units: the emoji (a surrogate pair, 0xD83D...) sorts before U+E000,
        # although its code point is larger; a code-point sort gets this backwards.
        ({"\ue000": 1, "\U0001f600": 2}, '{"\U0001f600":2,"\ue000":1}'),
        # RFC 8785 section 3.2.3's sorting example.
        (
            {"€": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\x80": 6, "ö": 7},
            '{"\\r":2,"1":4,"\x80":6,"ö":7,"€":1,"\U0001f600":5,"\ufb33":3}',
        ),
        ({"a": {"d": [3, {"z": 0, "y": 1}], "c": None}}, '{"a":{"c":null,"d":[3,{"y":1,"z":0}]}}'),
        ([None, True, False, [], {}], "[null,true,false,[],{}]"),
        ({"b": [], "a": {}}, '{"a":{},"b":[]}'),
        ([3, 1, 2], "[3,1,2]"),  # arrays keep their order
        # RFC 8785 section 3.2.2's sample input.
        (
            {
                "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
                "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
                "literals": [None, True, False],
            },
            '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
            '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
        ),
    ],
    ids=[
        "sorted",
        "utf16-order",
        "rfc-sort-example",
        "nested",
        "literals",
        "empty",
        "array-order",
        "rfc-sample",
    ],
)
def test_structures(value: Any, expected: str) -> None:
    assert canonical_json(value) == expected.encode()


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), float("-inf"), 2**53, -(2**53), {"a": [float("nan")]}],
    ids=repr,
)
def test_values_json_cannot_carry_exactly_are_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="cannot canonicalize"):
        canonical_json(value)


def test_sort_keys_is_not_jcs() -> None:
    """The reason the project uses RFC 8785: Python's own sorted dump differs on floats and key order."""
    value = {"\ue000": 1.0, "\U0001f600": 1e21}
    assert json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() != (
        canonical_json(value)
    )


# Digests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [{}, [], "x", 0, {"a": [1, 2.5, "µ"]}, {"apiVersion": "v", "kind": "K", "spec": {}}],
    ids=repr,
)
def test_json_digest_is_sha256_of_the_canonical_bytes(value: Any) -> None:
    expected = "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()
    assert json_digest(value) == expected
    assert parse_digest(expected) == expected


def test_empty_object_digest() -> None:
    assert json_digest({}) == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


def test_manifest_digest_covers_api_version_kind_and_spec_only() -> None:
    document = {"apiVersion": "v", "kind": "K", "metadata": {"name": "a"}, "spec": {"x": 1}}
    expected = json_digest({"apiVersion": "v", "kind": "K", "spec": {"x": 1}})
    assert manifest_digest(document) == expected
    assert manifest_digest({**document, "metadata": {"name": "b", "title": "other"}}) == expected
    assert manifest_digest({**document, "kind": "L"}) != expected
    assert manifest_digest({**document, "apiVersion": "w"}) != expected
    assert manifest_digest({**document, "spec": {"x": 2}}) != expected


@pytest.mark.parametrize(
    "text",
    [
        "sha256:" + "A" * 64,  # uppercase hex
        "sha256:" + "a" * 63,  # short
        "sha256:" + "a" * 65,  # long
        "a" * 64,  # missing prefix
        "sha512:" + "a" * 64,
        "SHA256:" + "a" * 64,
        "sha256:" + "g" * 64,
        " sha256:" + "a" * 64,
        "sha256:" + "a" * 64 + "\n",
        "",
    ],
    ids=repr,
)
def test_parse_digest_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="not a digest"):
        parse_digest(text)


# The stored form ---------------------------------------------------------------------------------------


def test_stored_json_layout() -> None:
    document = {"spec": {"b": [1, 2.5], "a": "µ"}, "kind": "K"}
    assert (
        stored_json(document)
        == ('{\n  "kind": "K",\n  "spec": {\n    "a": "µ",\n    "b": [\n      1,\n      2.5\n    ]\n  }\n}\n').encode()
    )


def test_stored_json_is_deterministic_and_parses_back() -> None:
    document = {"z": {"y": [3, 2, 1], "x": None}, "a": True}
    reordered = {"a": True, "z": {"x": None, "y": [3, 2, 1]}}
    assert stored_json(document) == stored_json(reordered)
    assert json.loads(stored_json(document)) == document


def test_stored_json_refuses_nan() -> None:
    with pytest.raises(ValueError, match="JSON"):
        stored_json({"x": float("nan")})


# Properties ------------------------------------------------------------------------------------------

_SAFE = 2**53 - 1
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-_SAFE, max_value=_SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


def _as_doubles(value: Any) -> Any:
    """Every number as the double it denotes: JCS prints 1e16 as `10000000000000000`, which Python
    reads back as an int, while a JSON reader in ECMAScript (the reference) reads one double."""
    if isinstance(value, dict):
        return {key: _as_doubles(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_doubles(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


def _reversed_keys(value: Any) -> Any:
    """The same value with every object's keys inserted in the opposite order."""
    if isinstance(value, dict):
        return {key: _reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(item) for item in value]
    return value


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_canonical_json_round_trips(value: Any) -> None:
    data = canonical_json(value)
    parsed = json.loads(data, parse_int=float)
    assert _as_doubles(parsed) == _as_doubles(value)
    assert canonical_json(parsed) == data  # idempotent: canonical bytes are a fixed point


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_canonical_json_ignores_key_order(value: Any) -> None:
    assert canonical_json(_reversed_keys(value)) == canonical_json(value)
    assert json_digest(_reversed_keys(value)) == json_digest(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.integers(0, 9), min_size=2, max_size=8))
def test_keys_sort_by_utf16_code_units(value: dict[str, int]) -> None:
    keys = list(json.loads(canonical_json(value)))
    assert keys == sorted(value, key=lambda key: key.encode("utf-16-be"))


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_round_trip_exactly(value: float) -> None:
    assert float(json.loads(canonical_json(value))) == value


def test_public_surface() -> None:
    assert registry.canonical_json is canonical_json
    assert registry.json_digest is json_digest


# The fast path (orjson, repaired) against the reference implementation --------------------------------
#
# `canonical_json` serializes through orjson when the value holds nothing orjson prints otherwise
# than RFC 8785, and through the `rfc8785` package when it does. Every expected value below comes
# from `rfc8785` (or RFC 8785's own examples above), never from the code under test.

EDGE_VALUES: list[Any] = [
    1e21,
    1e-7,
    1e-6,
    1e20,
    1e16,
    -0.0,
    0.0,
    5e-324,
    -5e-324,
    1.7976931348623157e308,
    1.0,
    100.0,
    -1.5,
    0.1 + 0.2,
    123456789012345680000.0,
    9007199254740991,
    -9007199254740991,
    [1.5, "1.5", "a:1.0,b", 2e-9, "x1.0e+5", 3],  # float-like text inside strings stays text
    {"v": "1.2.3", "w": 1.25e-5, "x": [0.5, {"y": 7e22}]},
    {"\ue000": 1, "\U0001f600": 2},  # UTF-16 order differs from code point order
    {"\ufb01": 1.0, "\U0001f600": [1e21]},
    {"€": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\x80": 6, "ö": 7},
    "\U0001f600",
    '"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u2029',
    {'a"1.5': '\\"2.5', "b": 2.5},  # escapes and floats together
    {"null": None, "nullable": "null", "n": 1.5},
    [True, False, None, [], {}],
    {"d": "sha256:" + "0123456789" * 6 + "0e+1", "e": 0e5},  # digits then e+ inside a digest-like string
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_edge_values_match_the_reference(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), [float("-inf")], 2**53, -(2**53), {"a": 2**64}, "\ud800", {"\udfff": 1}],
    ids=repr,
)
def test_what_the_reference_refuses_is_refused(value: Any) -> None:
    with pytest.raises((rfc8785.CanonicalizationError, UnicodeError)):
        rfc8785.dumps(value)
    with pytest.raises(ValueError, match="cannot canonicalize"):
        canonical_json(value)


def test_integers_at_the_safe_limit() -> None:
    """2^53 - 1 is the largest integer RFC 8785 prints; one past it is refused."""
    assert canonical_json(2**53 - 1) == rfc8785.dumps(2**53 - 1) == b"9007199254740991"
    with pytest.raises(ValueError, match="cannot canonicalize"):
        canonical_json(2**53)


json_text = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from('"\\.e+-0123456789'), max_size=10)
wide_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-_SAFE, max_value=_SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(json_text, children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(wide_values)
def test_any_value_matches_the_reference(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=1000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_double_prints_as_the_reference_does(value: float) -> None:
    assert canonical_json([value, {"x": value}]) == rfc8785.dumps([value, {"x": value}])


@pytest.mark.slow
def test_every_embedded_manifest_matches_the_references(embedded: registry.GitStore) -> None:
    """Each manifest of the embedded registry (the real corpus): its digest input byte for byte as
    `rfc8785` prints it, and its stored form as the standard library does (and as it is stored:
    each blob was written by that definition)."""
    head = embedded.head()
    assert head is not None
    entries = list(embedded.entries(head))
    with_floats = 0
    for data in embedded.read_blobs([e.oid for e in entries]):
        document = orjson.loads(data)
        value = {"apiVersion": document["apiVersion"], "kind": document["kind"], "spec": document["spec"]}
        assert canonical_json(value) == rfc8785.dumps(value), document["metadata"]["name"]
        assert stored_json(document) == data == _stored_reference(document), document["metadata"]["name"]
        assert pretty_json(document) == _pretty_reference(document), document["metadata"]["name"]
        with_floats += _has_float(value)
    assert len(entries) > 20_000
    assert with_floats > 8_000  # the corpus's floats are the risky part; they must be there to be checked


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_float(item) for item in value)
    return False


def _stored_reference(value: Any) -> bytes:
    """The stored form's definition, from the standard library."""
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _pretty_reference(value: Any) -> str:
    """What a page shows of a value, from the standard library (keys in their own order)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_stored_form_of_edge_values_matches_its_definition(value: Any) -> None:
    assert stored_json({"v": value}) == _stored_reference({"v": value})


# `stored_json` reprints only the floats orjson may print unlike repr (below 1e-4): the boundary
# on both sides, exponents on both sides of 1e16, and marks that fall inside strings or keys.
STORED_FLOATS: list[Any] = [
    1e-4,
    -1e-4,
    0.0001,
    1.0000000000000002e-4,
    9.999999999999999e-5,
    -9.999999999999999e-5,
    9.99e-5,
    2.5e-5,
    1e-5,
    1.5e-6,
    1e-7,
    1e-9,
    1e-10,
    1.5e-300,
    2.2250738585072014e-308,
    5e-324,
    1.00001,
    10.00001,
    0.00012,
    1e15,
    9999999999999998.0,
    1e16,
    1.5e16,
    1e21,
    1e22,
    1.7976931348623157e308,
    -0.0,
    0.0,
    123.456,
    [1e-5, "1e-5", "0.00001", 1e-05, {"0.00001e-7": 2e-7}],
    {"a.00001": 1.00001, "b": "x.0000e-1", "c": [0.1, 1e-5, 0.5]},
    {'k"1e-5': "\\0.00001", "v": 3e-6},  # escapes and small floats together
]


@pytest.mark.parametrize("value", STORED_FLOATS, ids=repr)
def test_stored_form_of_floats_at_the_boundary_matches_its_definition(value: Any) -> None:
    assert stored_json({"v": value}) == _stored_reference({"v": value})
    assert stored_json({"v": [value, value]}) == _stored_reference({"v": [value, value]})


@pytest.mark.parametrize(
    "value",
    [
        *EDGE_VALUES,
        *STORED_FLOATS,
        {"z": 1, "a": [None, True, {}], "m": []},  # keys in their order; a null: the standard library writes it
        {1: "an integer key", "b": 2},  # orjson refuses it; the standard library writes "1"
        {"big": 2**70, "small": -(2**64)},  # past orjson's integers
        {"text": '\u0000\u001f\u007f\u2028 "quoted" \\ é 𝄞'},
    ],
    ids=repr,
)
def test_shown_json_is_the_standard_librarys(value: Any) -> None:
    assert pretty_json({"v": value}) == _pretty_reference({"v": value})
    assert pretty_json([value, {"x": value}]) == _pretty_reference([value, {"x": value}])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(json_text, wide_values, max_size=5), st.floats(allow_nan=False, allow_infinity=False))
def test_shown_json_of_any_value_is_the_standard_librarys(value: dict[str, Any], double: float) -> None:
    assert pretty_json({**value, "double": double}) == _pretty_reference({**value, "double": double})


def test_the_boundary_table_holds_floats_orjson_prints_unlike_repr() -> None:
    """The table above must reach the floats that need reprinting, or it proves nothing."""
    differ = [v for v in STORED_FLOATS if isinstance(v, float) and orjson.dumps(v).decode() != repr(v)]
    assert len(differ) >= 8
    assert all(abs(v) < 1e-4 for v in differ)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_stored_form_of_any_double_matches_its_definition(value: float) -> None:
    assert stored_json({"v": [value, {"x": value}]}) == _stored_reference({"v": [value, {"x": value}]})


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(json_text, wide_values, max_size=5))
def test_stored_form_of_any_value_matches_its_definition(value: dict[str, Any]) -> None:
    assert stored_json(value) == _stored_reference(value)
