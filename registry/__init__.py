"""The KernelIndex registry domain: manifests, identity, the git store. No HTTP, no GraphQL."""

from __future__ import annotations

from kernelindex.registry.canonical import (
    Digest,
    canonical_json,
    json_digest,
    manifest_digest,
    parse_digest,
    stored_json,
)
from kernelindex.registry.errors import (
    AmbiguousName,
    InvalidManifest,
    ManifestNotFound,
    Problem,
    RegistryError,
    RejectedChange,
    RevisionNotFound,
    StoreBusy,
    StoreCorrupt,
    StoreNotFound,
    StoreNotOwned,
    UnknownKind,
)
from kernelindex.registry.kinds import KINDS, KindInfo
from kernelindex.registry.manifest import Manifest, load_manifest, manifest_from_document, manifest_path
from kernelindex.registry.provenance import CommitInfo, CommitMeta, Person, SignatureCheck
from kernelindex.registry.store import AddResult, Entry, GitStore
from kernelindex.registry.trust import TrustChain

__all__ = [
    "KINDS",
    "AddResult",
    "AmbiguousName",
    "CommitInfo",
    "CommitMeta",
    "Digest",
    "Entry",
    "GitStore",
    "InvalidManifest",
    "KindInfo",
    "Manifest",
    "ManifestNotFound",
    "Person",
    "Problem",
    "RegistryError",
    "RejectedChange",
    "RevisionNotFound",
    "SignatureCheck",
    "StoreBusy",
    "StoreCorrupt",
    "StoreNotFound",
    "StoreNotOwned",
    "TrustChain",
    "UnknownKind",
    "canonical_json",
    "json_digest",
    "load_manifest",
    "manifest_digest",
    "manifest_from_document",
    "manifest_path",
    "parse_digest",
    "stored_json",
]
