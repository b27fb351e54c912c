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
import re
from collections.abc import Mapping
from typing import Any, NewType

import rfc8785

__all__ = [
    "Digest",
    "canonical_json",
    "json_digest",
    "manifest_digest",
    "parse_digest",
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
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(f"cannot canonicalize: {exc}") from exc


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


def stored_json(document: Mapping[str, Any]) -> bytes:
    """The bytes of a manifest file in git: sorted keys, 2-space indent, UTF-8, trailing newline.

    Deterministic, so the same manifest always makes the same blob and re-adding it is a no-op.

    >>> stored_json({"b": [1, 2], "a": "µ"})
    b'{\\n  "a": "\\xc2\\xb5",\\n  "b": [\\n    1,\\n    2\\n  ]\\n}\\n'
    """
    return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
