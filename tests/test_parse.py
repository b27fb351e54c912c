"""Bounded loading: JSON and YAML 1.2 core give the same plain values, and nothing ambiguous passes."""

from __future__ import annotations

from typing import Any

import pytest

from kernelindex import registry
from kernelindex.registry.parse import MAX_DEPTH, MAX_DOCUMENT_BYTES, guess_format, json_path, load_document


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML 1.2 core schema, not 1.1: these stay strings
        ("no", "no"),
        ("yes", "yes"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("2026-08-01T12:00:00Z", "2026-08-01T12:00:00Z"),
        ("2026-08-01", "2026-08-01"),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("12:30:00", "12:30:00"),  # sexagesimal in 1.1
        ("017", 17),  # decimal in 1.2 (octal in 1.1)
        # and these are the core schema's values
        ("true", True),
        ("False", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("0o17", 15),
        ("0x1F", 31),
        ("-42", -42),
        ("+7", 7),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        ('"true"', "true"),
        ("'0x1F'", "0x1F"),
        ("8.12 us", "8.12 us"),
    ],
    ids=repr,
)
def test_yaml_scalars_follow_the_core_schema(text: str, expected: Any) -> None:
    value = load_document(f"v: {text}\n".encode(), "doc.yaml")
    assert value == {"v": expected}
    assert type(value["v"]) is type(expected)


def test_yaml_and_json_give_the_same_value() -> None:
    yaml = b"a: [1, 2.5, 'x', null, true]\nb: {c: no, d: 2026-08-01T12:00:00Z}\n"
    json_text = b'{"b": {"d": "2026-08-01T12:00:00Z", "c": "no"}, "a": [1, 2.5, "x", null, true]}'
    assert load_document(yaml, "x.yaml") == load_document(json_text, "x.json")


def test_yaml_anchors_within_bounds_are_fine() -> None:
    assert load_document(b"a: &x [1, 2]\nb: *x\n", "x.yaml") == {"a": [1, 2], "b": [1, 2]}


def test_explicit_core_tags_are_allowed() -> None:
    value = load_document(b"a: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !!bool true\ne: !!null ''\n", "x.yaml")
    assert value == {"a": "12", "b": 7, "c": 1.0, "d": True, "e": None}


def test_a_byte_order_mark_is_skipped() -> None:
    assert load_document(b'\xef\xbb\xbf{"a": 1}', "x.json") == {"a": 1}


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("a.json", b"a: 1", "json"),
        ("a.YAML", b"{}", "yaml"),
        ("a.yml", b"{}", "yaml"),
        ("a", b"  {", "json"),
        ("a", b"[1]", "json"),
        ("a", b"a: 1", "yaml"),
        ("-", b"\xef\xbb\xbf{}", "json"),
    ],
)
def test_guess_format(name: str, data: bytes, expected: str) -> None:
    assert guess_format(name, data) == expected


def test_size_limit_is_exactly_one_mebibyte() -> None:
    padding = MAX_DOCUMENT_BYTES - len(b'{"a": ""}')
    at_limit = b'{"a": "' + b"x" * padding + b'"}'
    assert len(at_limit) == MAX_DOCUMENT_BYTES
    assert load_document(at_limit, "big.json") == {"a": "x" * padding}
    with pytest.raises(registry.InvalidManifest, match="1,048,577 bytes; the limit is 1,048,576"):
        load_document(at_limit.replace(b'"}', b'x"}'), "big.json")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_nesting_limit(fmt: str) -> None:
    def nested(depth: int) -> bytes:
        """An array whose innermost value sits `depth` steps below the root (a JSON path that long)."""
        return b"[" * (depth + 1) + b"]" * (depth + 1)

    ok = load_document(nested(MAX_DEPTH), f"x.{fmt}")
    assert isinstance(ok, list)
    with pytest.raises(registry.InvalidManifest, match=rf"\(depth {MAX_DEPTH + 1}\): nesting deeper than {MAX_DEPTH}"):
        load_document(nested(MAX_DEPTH + 1), f"x.{fmt}")
    with pytest.raises(registry.InvalidManifest, match="nesting deeper"):
        load_document(nested(200_000), f"x.{fmt}")  # far past Python's recursion limit: no crash


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ((), "$"),
        (("spec", "inputs", 0, "tensor"), "$.spec.inputs[0].tensor"),
        (("metadata", "labels", "has space"), "$.metadata.labels['has space']"),
        (("a-b",), "$['a-b']"),
        (("_x1",), "$._x1"),
    ],
)
def test_json_path(parts: tuple[str | int, ...], expected: str) -> None:
    assert json_path(parts) == expected


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        (b'{"a": [1, {"b": -Infinity}], "c": NaN}', "$.a[1].b", "-Infinity is not JSON"),
        (b'{"a": {"b": NaN}}', "$.a.b", "NaN is not JSON"),
        (b'{"a": {"b": 1, "b": 2}}', "$.a", "duplicate key 'b'"),
        (b'{"a": [{"x": 1}, {"x": 1, "x": 1}]}', "$.a[1]", "duplicate key 'x'"),
        (b'{"a": 9007199254740992}', "$.a", "outside ±(2^53-1)"),
        (b'{"a": -9007199254740992}', "$.a", "outside ±(2^53-1)"),
        (b'{"a": 1e400}', "$.a", "not finite"),
        (b'{"a": "\\udc00"}', "$.a", "unpaired surrogate"),
        (b'{"\\ud800": 1}', "$", "unpaired surrogate"),
    ],
    ids=repr,
)
def test_json_refusals_are_located(data: bytes, path: str, reason: str) -> None:
    with pytest.raises(registry.InvalidManifest) as caught:
        load_document(data, "doc.json")
    assert (caught.value.source, caught.value.path) == ("doc.json", path)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        (b"a: {b: 1, b: 2}\n", "$.a", "duplicate key 'b'"),
        (b"a: !foo 1\n", "$.a", "tag !foo is not allowed"),
        (b"a: !!binary aGVsbG8=\n", "$.a", "tag !!binary is not allowed"),
        (b"a: !!timestamp 2026-08-01\n", "$.a", "tag !!timestamp is not allowed"),
        (b"a: !!set {x: null}\n", "$.a", "tag !!set is not allowed"),
        (b"a: !!python/object:os.system {}\n", "$.a", "is not allowed"),
        (b"a: !!int abc\n", "$.a", "tag !!int is not allowed"),
        (b"a: .nan\n", "$.a", ".nan is not JSON"),
        (b"a: -.inf\n", "$.a", "-.inf is not JSON"),
        (b"a: 9007199254740993\n", "$.a", "outside ±(2^53-1)"),
        (b"a: 1e999\n", "$.a", "not finite"),
        (b"a: &x {b: 1}\nc:\n  <<: *x\n", "$.c", "merge keys"),
        (b"? [1, 2]\n: x\n", "$", "mapping keys must be strings"),
        (b"1: x\n", "$", "mapping key '1' must be a string"),
        (b"a: &a [*a]\n", "$.a[0]", "recursive alias"),
    ],
    ids=repr,
)
def test_yaml_refusals_are_located(data: bytes, path: str, reason: str) -> None:
    with pytest.raises(registry.InvalidManifest) as caught:
        load_document(data, "doc.yaml")
    assert (caught.value.source, caught.value.path) == ("doc.yaml", path)
    assert reason in caught.value.reason


def test_yaml_syntax_errors_say_where() -> None:
    with pytest.raises(registry.InvalidManifest, match=r"invalid YAML at line 2, column \d+"):
        load_document(b"a: [1, 2\nb: }\n", "doc.yaml")


def test_several_yaml_documents_are_refused() -> None:
    with pytest.raises(registry.InvalidManifest, match="invalid YAML"):
        load_document(b"a: 1\n---\nb: 2\n", "doc.yaml")


def test_billion_laughs_is_bounded() -> None:
    """Nine levels of nine aliases: a few hundred bytes that would expand to 9^9 values."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) < 1000
    with pytest.raises(registry.InvalidManifest, match="more than 20,000 values after expanding aliases"):
        load_document(data, "laughs.yaml")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_value_count_limit_sits_at_20000(fmt: str) -> None:
    """The largest upstream manifest holds 543 values; a document of exactly MAX_NODES (20,000)
    values loads, one more is refused: {"a": [0 x n]} holds n + 2 values (the object, the list)."""
    from kernelindex.registry.parse import MAX_NODES

    def document(values: int) -> bytes:
        items = ", ".join(["0"] * (values - 2))
        return (f'{{"a": [{items}]}}' if fmt == "json" else f"a: [{items}]\n").encode()

    assert MAX_NODES == 20_000
    assert len(load_document(document(20_000), f"x.{fmt}")["a"]) == 19_998
    with pytest.raises(registry.InvalidManifest, match="20,000"):
        load_document(document(20_001), f"x.{fmt}")


def test_a_yaml_key_flood_is_refused_before_it_is_parsed() -> None:
    """60k keys in 600 KB took 5.5 s to refuse; the line count refuses it before the composer runs."""
    data = "".join(f"k{i}: 1\n" for i in range(60_000)).encode()
    assert len(data) < 1024 * 1024
    with pytest.raises(registry.InvalidManifest, match="60,000 lines and flow items"):
        load_document(data, "flood.yaml")


# Python converts at most 4,300 decimal digits to an int (sys.get_int_max_str_digits) and raised a bare
# ValueError past it: "internal error: ValueError" from `validate` and `digest`. Every length is
# a located refusal: the longest integer that converts, the first that does not, and far beyond.
_LONG = [17, 31, 4300, 4301, 5000]


@pytest.mark.parametrize("digits", _LONG)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_long_integer_is_refused_where_it_is(fmt: str, digits: int) -> None:
    number = "9" * digits
    data = f'{{"a": [1, {{"b": {number}}}]}}' if fmt == "json" else f"a: [1, {{b: {number}}}]\n"
    with pytest.raises(registry.InvalidManifest) as caught:
        load_document(data.encode(), f"doc.{fmt}")
    assert (caught.value.source, caught.value.path) == (f"doc.{fmt}", "$.a[1].b")
    assert "outside ±(2^53-1)" in caught.value.reason
    assert digits <= 30 or number not in caught.value.reason  # a long one's digits are counted, not printed


@pytest.mark.parametrize(("prefix", "digits"), [("0x", 31), ("0x", 5000), ("0o", 5000), ("-", 5000)])
def test_a_long_yaml_integer_of_any_base_is_refused_where_it_is(prefix: str, digits: int) -> None:
    with pytest.raises(registry.InvalidManifest) as caught:
        load_document(f"a:\n  b: {prefix}{'7' * digits}\n".encode(), "doc.yaml")
    assert caught.value.path == "$.a.b" and "outside ±(2^53-1)" in caught.value.reason
