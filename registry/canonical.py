"""Identity: RFC 8785 canonical JSON, the `Digest` type, and the one function that names a manifest.

A manifest's digest is `sha256:` + hex(sha256(JCS({apiVersion, kind, spec}))) of its
normalized form. JCS sorts keys by UTF-16 code units and prints numbers the way
ECMAScript does, which `json.dumps(sort_keys=True)` does not:

>>> canonical_json({"b": 1.0, "a": [1e21, 0.1, 1e-7]})
b'{"a":[1e+21,0.1,1e-7],"b":1}'
>>> json_digest({})
'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'
>>> manifest_digest({"apiVersion": "v", "kind": "K", "metadata": {"name": "ignored"}, "spec": {}})
'sha256:863a919f31acb988ae1ec8927936eac61e8d6f64f5a83bf715423e68ff1518c2'
>>> parse_digest("sha256:" + "0" * 63)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: not a digest: 'sha256:000...' (expected sha256: and 64 lowercase hex digits)
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NewType

import orjson
import rfc8785

__all__ = [
    "Digest",
    "canonical_json",
    "json_digest",
    "manifest_digest",
    "parse_digest",
    "pretty_json",
    "stored_json",
]

Digest = NewType("Digest", str)
"""`sha256:<64 lowercase hex>`; made only by `_digest`, so holding one means it is well formed."""

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _digest(text: str) -> Digest:
    return Digest(text)


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a JSON value.

    Raises:
        ValueError: the value holds something JSON cannot carry exactly (NaN, an integer past 2^53).
    """
    fast = _fast_canonical(value)
    if fast is not None:
        return fast
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeError) as exc:  # a lone surrogate in a key: UnicodeError
        raise ValueError(f"cannot canonicalize: {exc}") from exc


# The fast path: orjson's compact, key-sorted output is RFC 8785 already, except where the two
# differ, and each difference is either repaired here or sent to the exact (pure-Python) path:
# - numbers: orjson prints floats in its own style (`1.0`, `1e+16`, `-0.0`); each float token is
#   reprinted the way ECMAScript does (`_ecmascript`). Integers past 2^53 make orjson raise
#   (OPT_STRICT_INTEGER), as RFC 8785 refuses them: the exact path says why.
# - key order: orjson sorts by code point, RFC 8785 by UTF-16 code unit; they differ only for
#   characters past U+FFFF, whose UTF-8 form starts with a byte 0xF0-0xF4: any such byte in the
#   output sends the value to the exact path.
# - non-finite floats: orjson writes NaN and infinities as `null`; any `null` in the output (even
#   inside a string) sends the value to the exact path, which refuses them.
# - strings: both escape exactly `"`, `\\` and the C0 controls, with the same short forms and
#   lowercase hex; lone surrogates make orjson raise, and the exact path says why.
# tests/test_canonical.py checks every corpus manifest and the edge vectors against `rfc8785`.
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_STORED_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
_PAST_BMP = re.compile(rb"[\xf0-\xf4]")  # the lead byte of a character past U+FFFF in UTF-8
_STRINGS = re.compile(rb'("[^"\\]*+(?:\\.[^"\\]*+)*+")')  # a JSON string as orjson prints it
_NUMBER = re.compile(rb"-?[0-9]++(?:\.[0-9]++)?+(?:[eE][-+]?[0-9]++)?+")
_FLOAT = re.compile(rb"(?<![0-9])-?[0-9]++(?:\.[0-9]++(?:[eE][-+]?[0-9]++)?+|[eE][-+]?[0-9]++)")
# Floats are found with bytes methods (C loops), not a regex over the output (~15 ns a byte).
# Which of them RFC 8785 prints otherwise: orjson and ECMAScript both write the shortest digits that
# read back to the same double (the closest such), and orjson writes a point without an exponent
# only inside ECMAScript's own range for that (1e-6 <= |x| < 1e21), so a float differs only when it
# has an exponent, is integral (`2.0` is `2`; `-0.0` is `0`), or is below 1e-6 (`0.0000001`: a guard).
_EXPONENTS = (b"e+", b"e-")  # orjson writes no `E` (every corpus float and random doubles are tested)
_DIGIT_BYTES = frozenset(b"0123456789")
_COMPACT_STARTS = (b":", b",", b"[")  # what precedes a number in orjson's compact output
_INDENTED_STARTS = (b" ",)  # ... and in its indented output (`"key": 1.5` or an array's indent)


def _fast_canonical(value: Any) -> bytes | None:
    """RFC 8785 bytes through orjson, or None when only the exact path can tell."""
    try:
        data = orjson.dumps(value, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if b"null" in data or (not data.isascii() and _PAST_BMP.search(data) is not None):
        return None
    return _reprint_floats(data, _COMPACT_STARTS, _ecmascript, _differing_floats)


def _floats_unlike_repr(data: bytes) -> list[int]:
    """Where orjson's indented output holds a float that Python's repr prints otherwise (or may).

    Both write the shortest digits that read back to the same double (the closest such) and
    switch to an exponent from 1e16 on alike (`1e+16`); below 1e-4 they part: repr writes
    `1e-05` and `9.99e-05` where orjson writes `0.00001`, `0.0000999` or `1e-7`. Every such
    token has `.0000` or a digit then `e-`; marking more (`1.00001`, `1.5e-300`) only reprints
    a float as repr would, which is what the stored form is (tests/test_canonical.py compares
    with `json.dumps` at each boundary)."""
    marks = _find_all(data, (b".0000",))
    at = data.find(b"e-")
    while at >= 0:
        if data[at - 1] in _DIGIT_BYTES:
            marks.append(at)
        at = data.find(b"e-", at + 2)
    return marks


def _differing_floats(data: bytes) -> list[int]:
    marks = []
    at = data.find(b".0")
    while at >= 0:
        after = data[at + 2 : at + 3]
        if after in (b",", b"]", b"}", b"") or data[at + 2 : at + 7] == b"00000":  # `2.0`, or below 1e-6
            marks.append(at)
        at = data.find(b".0", at + 2)
    for exponent in _EXPONENTS:
        at = data.find(exponent)
        while at >= 0:
            if data[at - 1] in _DIGIT_BYTES:
                marks.append(at)
            at = data.find(exponent, at + 2)
    return marks


def _find_all(data: bytes, needles: tuple[bytes, ...]) -> list[int]:
    found: list[int] = []
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            found.append(at)
            at = data.find(needle, at + 2)
    return found


def _reprint_floats(
    data: bytes, starts: tuple[bytes, ...], render: Callable[[float], str], marked: Callable[[bytes], list[int]]
) -> bytes:
    """orjson's output with the float tokens outside strings that `marked` points into printed by
    `render` instead."""
    if b"\\" in data:
        parts = _STRINGS.split(data)  # even indexes: between strings (structure and numbers)
        for index in range(0, len(parts), 2):
            parts[index] = _FLOAT.sub(lambda match: render(float(match.group())).encode(), parts[index])
        return b"".join(parts)
    marks = marked(data)
    if not marks:
        return data
    marks.sort()
    # No backslash anywhere, so every `"` opens or closes a string: a mark is in a number when an
    # even count of quotes precedes it. Outside strings, a number starts right after one of `starts`.
    pieces = []
    done = counted = quotes = 0
    for at in marks:
        if at < done:
            continue  # in the number just reprinted (`1.5e+20` has two marks)
        quotes += data.count(b'"', counted, at)
        counted = at
        if quotes % 2:
            continue
        start = max(data.rfind(delimiter, done, at) for delimiter in starts) + 1
        number = _NUMBER.match(data, start)
        assert number is not None, "a float mark outside strings is in a number"
        assert number.end() > at, "a float mark outside strings is in a number"
        pieces.append(data[done:start])
        pieces.append(render(float(number.group())).encode())
        done = counted = number.end()
    pieces.append(data[done:])
    return b"".join(pieces)


def _ecmascript(number: float) -> str:
    """A finite double as ECMAScript's Number.prototype.toString prints it (RFC 8785 section 3.2.2.3).

    Python's repr has the same digits (the shortest that read back to the same double, the
    closest of them); only where the decimal point goes and how the exponent is written differ.

    >>> [_ecmascript(x) for x in (1.0, -0.0, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 123.456, 1.5e300)]
    ['1', '0', '1e+21', '100000000000000000000', '1e-7', '0.000001', '5e-324', '123.456', '1.5e+300']
    """
    if number == 0:
        return "0"
    if not math.isfinite(number):
        raise ValueError(f"cannot canonicalize: {number!r} is not a JSON number")
    sign = "-" if number < 0 else ""
    mantissa, _, exponent = repr(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    every = whole + fraction
    significant = every.lstrip("0")
    # value = 0.<digits> x 10^point
    point = len(whole) + (int(exponent) if exponent else 0) - (len(every) - len(significant))
    digits = significant.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    power = point - 1
    written = f"e+{power}" if power >= 0 else f"e{power}"
    return sign + (digits if count == 1 else digits[0] + "." + digits[1:]) + written


def json_digest(value: Any) -> Digest:
    """The digest of any JSON value; the cohort keys are made with it too."""
    return _digest("sha256:" + hashlib.sha256(canonical_json(value)).hexdigest())


def manifest_digest(document: Mapping[str, Any]) -> Digest:
    """The identity of a normalized manifest: metadata never takes part.

    This is the only function that hashes manifests.
    """
    return json_digest({"apiVersion": document["apiVersion"], "kind": document["kind"], "spec": document["spec"]})


def parse_digest(text: str) -> Digest:
    """Accept a digest written by someone else.

    Raises:
        ValueError: not `sha256:` followed by 64 lowercase hex digits.
    """
    if not _DIGEST.fullmatch(text):
        raise ValueError(f"not a digest: {text!r} (expected sha256: and 64 lowercase hex digits)")
    return _digest(text)


def pretty_json(value: Any) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`: a value shown to a reader as the standard library
    writes it (keys in their order), through orjson as `stored_json` is (floats below 1e-4 reprinted as
    repr), or `json.dumps` itself for what orjson cannot write or writes as `null`. A run page shows its
    manifests so: `json.dumps` took ~0.1 ms of every first-time run page, orjson ~10 us.

    >>> print(pretty_json({"b": [1e-07, 2.5], "a": "µ"}))
    {
      "b": [
        1e-07,
        2.5
      ],
      "a": "µ"
    }
    """
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (orjson.JSONEncodeError, TypeError):
        data = b"null"
    if b"null" in data:
        return json.dumps(value, indent=2, ensure_ascii=False)
    return _reprint_floats(data, _INDENTED_STARTS, repr, _floats_unlike_repr).decode()


def stored_json(document: Mapping[str, Any]) -> bytes:
    """The bytes of a manifest file in git: sorted keys, 2-space indent, UTF-8, trailing newline.

    Deterministic, so the same manifest always makes the same blob and re-adding it is a no-op.
    The definition is `json.dumps(sort_keys=True, indent=2, ensure_ascii=False)` plus a newline.
    orjson writes the same bytes (layout, escapes, and key order: both sort by code point) but
    for floats below 1e-4, reprinted here as Python's repr (`1e-07`, not `1e-7`); a value it cannot write
    or writes as `null` (NaN, maybe) goes through `json.dumps` itself.

    >>> stored_json({"b": [1, 2], "a": "µ"})
    b'{\\n  "a": "\\xc2\\xb5",\\n  "b": [\\n    1,\\n    2\\n  ]\\n}\\n'
    >>> stored_json({"x": 1e-07, "y": [1e16, -0.0]})
    b'{\\n  "x": 1e-07,\\n  "y": [\\n    1e+16,\\n    -0.0\\n  ]\\n}\\n'
    """
    try:
        data = orjson.dumps(document, option=_STORED_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        data = b"null"
    if b"null" in data:
        return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
    return _reprint_floats(data, _INDENTED_STARTS, repr, _floats_unlike_repr)
