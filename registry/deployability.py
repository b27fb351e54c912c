"""Can I ship this kernel? An implementation's licence, install recipes and source, as typed facts,
and upstream's deployability verdict with its reasons.

The rules are KernelIndex's (`server/policy/deployability.ts`, `licensing.ts`, `catalog/publication.ts`):

- **Licence.** Declared and concluded stay apart. The conclusion is the manifest's
  `licensing.concluded`, else its `licensing.declared`, when that text is a valid SPDX expression
  (identifiers case-corrected against the SPDX list: `apache-2.0` concludes `Apache-2.0`); anything
  else concludes nothing, and the licence is unknown. Unknown never silently becomes permissive.
  `permissive` is upstream's reviewed allowlist, for filters; it is not part of the verdict.
- **Install.** Installable when the manifest lists at least one `buildVariants[].install`.
- **Source.** Public when the revision names a repository or the manifest identifies source content.
- **Verdict** (`deployability-v1`): deployable when the source is public, an install recipe exists and
  the licence is known; otherwise not, with every reason in a fixed order: NO_PUBLIC_SOURCE,
  NO_INSTALL_RECIPE, LICENSE_UNKNOWN. A filter and an explanation, never a factor in a rank.

Upstream's policy does not single out licences that forbid commercial use (a known non-commercial
licence passes the verdict); neither does this one, and `permissive` is false for such a licence.

>>> conclude_licence("apache-2.0"), conclude_licence("MIT OR BSD-3-Clause"), conclude_licence("Custom terms")
('Apache-2.0', 'MIT OR BSD-3-Clause', None)
>>> verdict(source_available=True, installable=False, licence_known=False).reasons
('NO_INSTALL_RECIPE', 'LICENSE_UNKNOWN')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kernelindex.registry.nodes import Implementation

__all__ = [
    "DEPLOYABILITY_POLICY",
    "LICENSE_UNKNOWN",
    "NO_INSTALL_RECIPE",
    "NO_PUBLIC_SOURCE",
    "PERMISSIVE_LICENCES",
    "REASONS",
    "Deployability",
    "ImplementationFacts",
    "InstallVariant",
    "Licence",
    "SourceFacts",
    "conclude_licence",
    "facts_of_document",
    "implementation_facts",
    "licence_of",
    "verdict",
]

DEPLOYABILITY_POLICY = "deployability-v1"
NO_PUBLIC_SOURCE = "NO_PUBLIC_SOURCE"
NO_INSTALL_RECIPE = "NO_INSTALL_RECIPE"
LICENSE_UNKNOWN = "LICENSE_UNKNOWN"
REASONS = (NO_PUBLIC_SOURCE, NO_INSTALL_RECIPE, LICENSE_UNKNOWN)
"""Every reason a verdict can give, in the order it gives them."""

PERMISSIVE_LICENCES = frozenset({"Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Zlib", "BSL-1.0"})
"""Upstream's reviewed permissive allowlist (single SPDX identifiers)."""


@dataclass(frozen=True, slots=True)
class Licence:
    """An implementation's licence as its manifest states it, and what that concludes."""

    declared: str | None  # licensing.declared, as written
    stated: str | None  # licensing.concluded, as written
    concluded: str | None  # the SPDX expression concluded (canonical case); None: unknown
    evidence: str | None  # licensing.evidence.path: where the licence text is

    @property
    def known(self) -> bool:
        return self.concluded is not None

    @property
    def permissive(self) -> bool:
        """On upstream's permissive allowlist (an unknown licence never is)."""
        return self.concluded in PERMISSIVE_LICENCES


@dataclass(frozen=True, slots=True)
class InstallVariant:
    """One way to install the implementation (`buildVariants[]`)."""

    name: str
    kind: str  # git | pip | package | container | source
    package: str | None
    version: str | None
    repository: str | None
    commit: str | None
    command: str | None
    requirements: tuple[tuple[str, str], ...]  # (what, constraint), by what

    @property
    def pinned(self) -> bool:
        """Whether installing it gets the measured code, not whatever is newest: a package with a
        version, git or source at a commit, or a command that pins (upstream's textual test: `==` or
        `@` for pip, `@ref` at the end for git, an image `:tag` for a container)."""
        if self.kind in ("pip", "package") and self.version:
            return True
        if self.kind in ("git", "source") and self.commit:
            return True
        command = self.command or ""
        if self.kind == "pip":
            return "==" in command or "@" in command
        if self.kind == "git":
            return re.search(r"@[^/\s]+$", command) is not None
        if self.kind == "container":
            return re.search(r":[^/\s]+$", command) is not None
        return False


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """Where the implementation's code is, if anywhere public."""

    repository: str | None  # projectRevision.repository
    commit: str | None  # projectRevision.commit
    version: str | None  # projectRevision.version
    content_digest: str | None  # source.contentDigest: the exact file measured
    file_name: str | None
    size_bytes: int | None

    @property
    def available(self) -> bool:
        return self.repository is not None or self.content_digest is not None


@dataclass(frozen=True, slots=True)
class Deployability:
    """The verdict: deployable, or why not (every reason, in `REASONS` order)."""

    reasons: tuple[str, ...]
    policy: str = DEPLOYABILITY_POLICY

    @property
    def deployable(self) -> bool:
        return not self.reasons


@dataclass(frozen=True, slots=True)
class ImplementationFacts:
    """What someone who wants to ship an implementation needs to know about it."""

    digest: str
    licence: Licence
    variants: tuple[InstallVariant, ...]
    source: SourceFacts
    deployability: Deployability

    @property
    def installable(self) -> bool:
        return bool(self.variants)


def conclude_licence(text: str | None) -> str | None:
    """The SPDX expression `text` is, with identifiers in their canonical case; None when it is none."""
    if text is None or not text.strip():
        return None
    # Here: packaging's SPDX tables are held only by a process that has read a licence.
    from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

    try:
        return str(canonicalize_license_expression(text.strip()))
    except InvalidLicenseExpression:
        return None


def licence_of(licensing: Mapping[str, Any]) -> Licence:
    """The licence facts of an ImplementationRevision's `spec.licensing`."""
    declared = licensing.get("declared")
    stated = licensing.get("concluded")
    evidence = licensing.get("evidence") or {}
    # Upstream concludes from the stated conclusion when there is one, else from the declaration.
    return Licence(declared, stated, conclude_licence(stated if stated is not None else declared), evidence.get("path"))


def verdict(*, source_available: bool, installable: bool, licence_known: bool) -> Deployability:
    """deployability-v1: public source, an install recipe and a known licence."""
    reasons = []
    if not source_available:
        reasons.append(NO_PUBLIC_SOURCE)
    if not installable:
        reasons.append(NO_INSTALL_RECIPE)
    if not licence_known:
        reasons.append(LICENSE_UNKNOWN)
    return Deployability(tuple(reasons))


def facts_of_document(digest: str, document: Mapping[str, Any]) -> ImplementationFacts:
    """The facts of an ImplementationRevision from its stored JSON (valid: the store checked it)."""
    spec = document["spec"]
    revision = spec.get("projectRevision") or {}
    content = spec.get("source") or {}
    source = SourceFacts(
        revision.get("repository"),
        revision.get("commit"),
        revision.get("version"),
        content.get("contentDigest"),
        content.get("fileName"),
        content.get("sizeBytes"),
    )
    variants = tuple(
        InstallVariant(
            variant["name"],
            variant["install"]["kind"],
            variant["install"].get("package"),
            variant["install"].get("version"),
            variant["install"].get("repository"),
            variant["install"].get("commit"),
            variant["install"].get("command"),
            tuple(sorted((variant.get("requirements") or {}).items())),
        )
        for variant in spec.get("buildVariants") or ()
    )
    licence = licence_of(spec.get("licensing") or {})
    return ImplementationFacts(
        digest,
        licence,
        variants,
        source,
        verdict(source_available=source.available, installable=bool(variants), licence_known=licence.known),
    )


def implementation_facts(node: Implementation, document: Callable[[str], Mapping[str, Any]]) -> ImplementationFacts:
    """The facts of an implementation node; `document(oid)` reads a stored manifest (a graph keeps
    only what ranking needs, so licences and recipes are read from the manifest itself)."""
    return facts_of_document(node.digest, document(node.oid))
