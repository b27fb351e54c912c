"""A validated manifest and the one entry point that makes one from bytes.

`load_manifest` is the only way in: bounded parsing, the envelope, the strict model of the
kind, normalization, then the digest. A `Manifest` therefore always holds a normalized,
schema-valid document whose digest is correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.canonical import Digest, manifest_digest, stored_json
from registry.kinds import KINDS, KindInfo, validate_document
from registry.normalize import normalize
from registry.parse import Format, load_document

__all__ = ["Manifest", "load_manifest", "manifest_from_document", "manifest_path"]


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
