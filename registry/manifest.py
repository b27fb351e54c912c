"""A validated manifest and the one entry point that makes one from bytes.

`load_manifest` is the only way in: bounded parsing, the envelope, the strict model of the
kind, normalization, then the digest. A `Manifest` therefore always holds a normalized,
schema-valid document whose digest is correct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from kernelindex.registry.canonical import Digest, manifest_digest, stored_json
from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.kinds import KINDS, KindInfo, validate_document
from kernelindex.registry.normalize import normalize
from kernelindex.registry.parse import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_NODES,
    Format,
    check_manifest_values,
    load_document,
)

__all__ = ["Manifest", "load_manifest", "manifest_from_document", "manifest_path", "stored_manifest"]


@dataclass(frozen=True, slots=True)
class Manifest:
    """A normalized, valid manifest with its digest. Build it with `load_manifest`."""

    kind: str
    digest: Digest
    document: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.document["metadata"]["name"])

    @property
    def info(self) -> KindInfo:
        return KINDS[self.kind]

    @property
    def path(self) -> str:
        """Where the manifest lives in git: `<kind-folder>/<hh>/<hex>.json`."""
        return manifest_path(self.kind, self.digest)

    def stored_bytes(self) -> bytes:
        return stored_json(self.document)

    def references(self) -> list[tuple[str, tuple[str, ...], str]]:
        """(JSON path, target kinds, digest) of every manifest this one names."""
        found = []
        for reference in self.info.references:
            value = reference.read(self.document)
            if value is not None:
                found.append(("$." + ".".join(reference.path), reference.targets, value))
        return found


def manifest_path(kind: str, digest: str) -> str:
    hexdigest = digest.removeprefix("sha256:")
    return f"{KINDS[kind].folder}/{hexdigest[:2]}/{hexdigest}.json"


def load_manifest(data: bytes, source: str, fmt: Format | None = None) -> Manifest:
    """Parse, validate, normalize and name one manifest.

    Raises:
        InvalidManifest: every problem found, each with `source`, a JSON path and a reason.
    """
    return manifest_from_document(load_document(data, source, fmt), source)


def manifest_from_document(document: Any, source: str) -> Manifest:
    """The same as `load_manifest` for a document already parsed (by `parse.load_document`
    or from trusted JSON such as the upstream export).

    Raises:
        InvalidManifest: as `load_manifest`.
    """
    info = validate_document(document, source)
    normalized = normalize(document, source)
    return Manifest(info.name, manifest_digest(normalized), normalized)


# What `stored_manifest` reads from bytes in the stored form (2-space indent: every member and
# element on a line of its own, indented two spaces a level; strings escape every C0 control,
# as `\\uXXXX`, `\\b` or `\\f` where XML forbids it, and hold U+FFFE and U+FFFF as UTF-8; a
# null is the token `null`):
_UNCLEAN = (b"null", b"\\u00", b"\\b", b"\\f", "\ufffe".encode(), "\uffff".encode())
_TOO_DEEP = b"\n" + b" " * (2 * MAX_DEPTH + 1)  # a value nested deeper than MAX_DEPTH starts a line so
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_SIXTEEN = b"0" * 16  # 16 digits in a row in the digits-to-zeros shape: a number from 10^15 on, maybe
_LONG_NUMBER = re.compile(rb"(?:: |\n *)-?[0-9]{16}")  # ... where a number starts (near 2^53: a guard)


def stored_manifest(data: bytes, source: str) -> Manifest | None:
    """The manifest of a file in git, when its bytes prove it is in the stored form and most of
    what `load_manifest` checks value by value; None when they do not (then `load_manifest` and
    the stored-form check judge it, and say why).

    Never weaker than those two: the same document is judged by the same rules, and what is
    skipped is proven from the bytes first, each proof sending anything doubtful to the full
    check. The bytes must be exactly `stored_json` of what orjson reads from them (so: valid UTF-8
    without a BOM, no duplicate key, no lone surrogate, finite numbers). Then, from the layout:
    at most `MAX_NODES` values (one a line at most), none deeper than `MAX_DEPTH` (a line
    indented more says so), no integer of 16 digits or more (else every value is visited as
    `load_document` does), and no null and no string or key with a character XML forbids (else
    every value is visited for them). The normalized document must be the same JSON as the one
    read (same types too: `8000.0` normalized to `8000` is not), so its stored bytes are these.
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        return None
    try:
        document = orjson.loads(data)
        if stored_json(document) != data:
            return None
        if (
            data.count(b"\n") > MAX_NODES
            or _TOO_DEEP in data
            or (_SIXTEEN in data.translate(_DIGITS) and _LONG_NUMBER.search(data))
        ):
            check_manifest_values(document, source)
        encoded = orjson.dumps(document)
        info = validate_document(document, source, clean=not any(mark in data for mark in _UNCLEAN), encoded=encoded)
        # Normalized in place once validated: the JSON read is kept as `encoded` (a second parse of the
        # bytes for a copy to normalize, and a second dump of the document, were ~9 us a manifest).
        normalized = normalize(document, source, in_place=True)
        if orjson.dumps(normalized) != encoded:
            return None
    except (InvalidManifest, orjson.JSONDecodeError, orjson.JSONEncodeError, ValueError, TypeError, RecursionError):
        return None
    return Manifest(info.name, manifest_digest(normalized), normalized)
