"""Can I ship this kernel? An implementation's licence, install variants, source code and its verdict under
deployability-v1 (`kernelindex.registry.deployability`), as typed fields; and the facts the filters read.

The facts are a function of the implementation's manifest, which its digest names, so they are kept across
requests and commits (`facts_of`): a filter over every run reads each implementation's manifest once per
process, not once per query.
"""

from __future__ import annotations

import enum
import threading

import orjson
import strawberry

from kernelindex.core.context import StoredObjects
from kernelindex.registry import deployability as policy
from kernelindex.registry import nodes as n

__all__ = [
    "Deployability",
    "DeploymentBlocker",
    "InstallKind",
    "InstallRequirement",
    "InstallVariant",
    "License",
    "SourceCode",
    "deployability_of",
    "facts_of",
    "install_variants_of",
    "license_of",
    "source_code_of",
]

_KEPT = 65_536
"""Implementations whose facts are kept (oldest forgotten first): about 10 MB at most."""
_FACTS: dict[str, policy.ImplementationFacts] = {}
_LOCK = threading.Lock()


def facts_of(objects: StoredObjects, node: n.Implementation) -> policy.ImplementationFacts:
    """The facts of an implementation, read from its stored manifest the first time they are asked for."""
    found = _FACTS.get(node.digest)
    if found is None:
        # The raw bytes, not the parsed-document LRU: a filter reads thousands of manifests once.
        found = policy.facts_of_document(node.digest, orjson.loads(objects.raw(node.oid)))
        with _LOCK:
            _FACTS[node.digest] = found
            while len(_FACTS) > _KEPT:
                _FACTS.pop(next(iter(_FACTS)))
    return found


@strawberry.type(
    description="An implementation's licence as its manifest states it, and what that concludes. Declared and "
    "concluded stay apart; an unknown licence never counts as permissive."
)
class License:
    declared: str | None = strawberry.field(
        description="The licence the implementation's authors declare (`licensing.declared`), as written; null "
        "when the manifest declares none."
    )
    stated: str | None = strawberry.field(
        description="The conclusion the manifest itself states (`licensing.concluded`), as written; null when it "
        "states none."
    )
    concluded: str | None = strawberry.field(
        description="The SPDX licence expression concluded, identifiers in their canonical case ('Apache-2.0', "
        "'MIT OR BSD-3-Clause'): the stated conclusion when there is one, else the declaration, when that text is "
        "a valid SPDX expression. Null means unknown: neither is an SPDX expression."
    )
    known: bool = strawberry.field(description="Whether a licence was concluded (`concluded` is not null).")
    permissive: bool = strawberry.field(
        description="Whether the concluded licence is on KernelIndex's reviewed permissive list (Apache-2.0, MIT, "
        "BSD-2-Clause, BSD-3-Clause, ISC, Zlib, BSL-1.0): for filters; it is not part of the deployability verdict. "
        "False when the licence is unknown."
    )
    evidence_path: str | None = strawberry.field(
        description="Where the licence text is in the implementation's source (`licensing.evidence.path`); null "
        "when the manifest does not say."
    )


@strawberry.enum(description="How an install variant installs the implementation.")
class InstallKind(enum.Enum):
    GIT = strawberry.enum_value("git", description="Clone a git repository (at `commit` when given).")
    PIP = strawberry.enum_value("pip", description="Install a Python package with pip (`package`, `version`).")
    PACKAGE = strawberry.enum_value("package", description="Install a package of another package manager.")
    CONTAINER = strawberry.enum_value("container", description="Run a container image (`command` names it).")
    SOURCE = strawberry.enum_value("source", description="Build from a source tree (at `commit` when given).")


@strawberry.type(description="A requirement of an install variant: what it needs and the version it needs.")
class InstallRequirement:
    name: str = strawberry.field(description="What is required, as the manifest names it ('cuda', 'torch').")
    constraint: str = strawberry.field(description="The version it needs, as written ('>=12.4', '2.5.1').")


@strawberry.type(description="One way to install the implementation (a build variant of its manifest).")
class InstallVariant:
    name: str = strawberry.field(description="The variant's name, as the manifest gives it.")
    kind: InstallKind = strawberry.field(description="How it installs.")
    package: str | None = strawberry.field(description="The package installed; null for git, container, source.")
    version: str | None = strawberry.field(description="The package version installed; null when not pinned so.")
    repository: str | None = strawberry.field(description="The repository cloned or built; null when none.")
    commit: str | None = strawberry.field(description="The commit cloned or built; null when not pinned so.")
    command: str | None = strawberry.field(description="The install command, as written; null when none is given.")
    requirements: list[InstallRequirement] = strawberry.field(description="What it requires, by name.")
    pinned: bool = strawberry.field(
        description="Whether installing it gets the measured code rather than whatever is newest: a package with "
        "a version, git or source at a commit, or a command that pins one (`==` or `@` for pip, `@ref` for git, "
        "an image `:tag` for a container)."
    )


@strawberry.type(description="Where the implementation's code is, if anywhere public.")
class SourceCode:
    available: bool = strawberry.field(
        description="Whether the source is public: the revision names a repository, or the manifest identifies "
        "the exact source file measured."
    )
    repository: str | None = strawberry.field(description="The project's repository URL; null when not named.")
    commit: str | None = strawberry.field(description="The commit of the revision measured; null when not given.")
    version: str | None = strawberry.field(description="The release of the revision measured; null when not given.")
    content_digest: str | None = strawberry.field(
        description="The digest of the exact source file measured (`sha256:<hex>`); null when not given."
    )
    file_name: str | None = strawberry.field(description="That file's name; null when not given.")
    size_bytes: int | None = strawberry.field(description="That file's size in bytes; null when not given.")


@strawberry.enum(description="Why an implementation is not deployable under deployability-v1, in the order given.")
class DeploymentBlocker(enum.Enum):
    NO_PUBLIC_SOURCE = strawberry.enum_value(
        policy.NO_PUBLIC_SOURCE, description="Its source is not public (no repository, no identified source file)."
    )
    NO_INSTALL_RECIPE = strawberry.enum_value(
        policy.NO_INSTALL_RECIPE, description="Its manifest gives no way to install it (no build variant installs)."
    )
    LICENSE_UNKNOWN = strawberry.enum_value(
        policy.LICENSE_UNKNOWN, description="No licence could be concluded: its terms of use are unknown."
    )


_BLOCKER_WORDS = {
    DeploymentBlocker.NO_PUBLIC_SOURCE: "its source is not public",
    DeploymentBlocker.NO_INSTALL_RECIPE: "no install recipe is given",
    DeploymentBlocker.LICENSE_UNKNOWN: "its licence is unknown",
}


@strawberry.type(
    description="Whether the implementation can be shipped under deployability-v1 (KernelIndex's policy): public "
    "source, an install recipe and a known licence. A filter and an explanation, never a factor in a rank."
)
class Deployability:
    deployable: bool = strawberry.field(description="Whether nothing blocks it (`reasons` is empty).")
    reasons: list[DeploymentBlocker] = strawberry.field(
        description="Every reason it is not deployable, in the policy's order; empty when it is."
    )
    policy: str = strawberry.field(description="The policy's version: 'deployability-v1'.")
    explanation: str = strawberry.field(
        description="The verdict in one sentence, as the pages say it ('Deployable: public source, an install "
        "recipe and a known licence.')."
    )


def license_of(facts: policy.ImplementationFacts) -> License:
    licence = facts.licence
    return License(
        declared=licence.declared,
        stated=licence.stated,
        concluded=licence.concluded,
        known=licence.known,
        permissive=licence.permissive,
        evidence_path=licence.evidence,
    )


def install_variants_of(facts: policy.ImplementationFacts) -> list[InstallVariant]:
    return [
        InstallVariant(
            name=variant.name,
            kind=InstallKind(variant.kind),
            package=variant.package,
            version=variant.version,
            repository=variant.repository,
            commit=variant.commit,
            command=variant.command,
            requirements=[InstallRequirement(name=k, constraint=str(v)) for k, v in variant.requirements],
            pinned=variant.pinned,
        )
        for variant in facts.variants
    ]


def source_code_of(facts: policy.ImplementationFacts) -> SourceCode:
    source = facts.source
    return SourceCode(
        available=source.available,
        repository=source.repository,
        commit=source.commit,
        version=source.version,
        content_digest=source.content_digest,
        file_name=source.file_name,
        size_bytes=source.size_bytes,
    )


def deployability_of(facts: policy.ImplementationFacts) -> Deployability:
    reasons = [DeploymentBlocker(reason) for reason in facts.deployability.reasons]
    if reasons:
        words = [_BLOCKER_WORDS[reason] for reason in reasons]
        listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        explanation = f"Not deployable: {listed}."
    else:
        explanation = "Deployable: public source, an install recipe and a known licence."
    return Deployability(
        deployable=not reasons, reasons=reasons, policy=facts.deployability.policy, explanation=explanation
    )
