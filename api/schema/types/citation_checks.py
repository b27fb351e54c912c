"""`verifyCitation`'s answer: a citation checked against the served registry (`kernelindex.registry.citation_check`),
what `kernelindex verify` prints, for readers without the CLI."""

from __future__ import annotations

import enum

import strawberry

from kernelindex.registry import citation_check as domain
from kernelindex.registry.graph import Graph
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.enums import ManifestKind
from kernelindex.schema.types.manifests import Manifest
from kernelindex.schema.types.provenance import Commit, commit_type
from kernelindex.schema.types.standing import LifecycleFact, RunStandingState

__all__ = ["CitationCheck", "CitationCheckStep", "CitationVerdict"]


@strawberry.enum(description="Whether a citation holds.")
class CitationVerdict(enum.Enum):
    HOLDS = strawberry.enum_value(domain.HOLDS, description="It is true, and the result still stands.")
    NO_LONGER_STANDS = strawberry.enum_value(
        domain.NO_LONGER_STANDS,
        description="It is true (that manifest was published at that commit), but the result has since been "
        "retracted or superseded: `facts` says by which commit.",
    )
    INVALID = strawberry.enum_value(
        domain.INVALID,
        description="It is not true: the commit is not in main's history, the manifest stored there has another "
        "digest or none, or the commit that published it is signed and its signature does not verify. The failed "
        "step says which.",
    )


@strawberry.type(description="One step of a citation's check, in the order made; the check stops at a failed one.")
class CitationCheckStep:
    name: str = strawberry.field(
        description="What was checked: `commit` (in main's history), `manifest` (present at it), `digest` (its "
        "stored bytes hash to the cited digest), `published` (on main) or `signature` (of the publishing commit)."
    )
    passed: bool = strawberry.field(description="Whether it held.")
    detail: str = strawberry.field(description="What was found, in words (commit ids abbreviated to 12 digits).")


@strawberry.type(description="A citation checked against this registry: the verdict, each step, the lifecycle facts.")
class CitationCheck:
    _graph: strawberry.Private[Graph]
    _check: strawberry.Private[domain.CitationCheck]

    @strawberry.field(description="Whether the citation holds (and the result stands).")
    def verdict(self) -> CitationVerdict:
        return CitationVerdict(self._check.verdict)

    @strawberry.field(description="The cited manifest's digest (sha256:<64 hex>), as the citation gives it.")
    def digest(self) -> str:
        return self._check.claim.digest

    @strawberry.field(description="The commit as the citation gives it (a full id or an abbreviation).")
    def cited_commit(self) -> str:
        return self._check.claim.commit

    @strawberry.field(description="The cited commit; null when this registry has no such commit.")
    def commit(self, info: Info) -> Commit | None:
        return commit_type(info.context, self._check.commit) if self._check.commit is not None else None

    @strawberry.field(description="The cited manifest, as stored at the head; null when the check did not find it.")
    def manifest(self) -> Manifest | None:
        node = self._graph.nodes.get(self._check.claim.digest) if self._check.valid else None
        return Manifest(_graph=self._graph, _node=node) if node is not None else None

    @strawberry.field(description="The cited manifest's kind; null when it is not at the cited commit.")
    def kind(self) -> ManifestKind | None:
        return ManifestKind(self._check.kind) if self._check.kind is not None else None

    @strawberry.field(description="The commit of main that first published it; null when the check stopped before.")
    def published_in(self, info: Info) -> Commit | None:
        published = self._check.publishing_commit
        return commit_type(info.context, published) if published is not None else None

    @strawberry.field(description="The steps made, in order; the last failed when the verdict is INVALID.")
    def steps(self) -> list[CitationCheckStep]:
        return [
            CitationCheckStep(name=name, passed=passed, detail=detail) for name, passed, detail in self._check.checks
        ]

    @strawberry.field(
        description="A cited run's standing at the head of main; null for other kinds and when the check failed."
    )
    def state(self) -> RunStandingState | None:
        return RunStandingState(self._check.state) if self._check.state is not None else None

    @strawberry.field(
        description="The lifecycle facts that count for a cited run (retraction, supersession, verifications), "
        "oldest first, each with the commit that published it; empty for other kinds."
    )
    def facts(self) -> list[LifecycleFact]:
        return [LifecycleFact(_graph=self._graph, _fact=fact) for fact in self._check.facts]

    @strawberry.field(description="The commit of main the check read (the served head).")
    def head(self, info: Info) -> Commit:
        return commit_type(info.context, self._check.head)
