"""Who published what: commits, their people, trailers and signatures, sources and their terms."""

from __future__ import annotations

import strawberry

from kernelindex import registry
from kernelindex.core.context import Context
from kernelindex.registry import catalog
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import Graph
from kernelindex.registry.merges import introducing_commit
from kernelindex.schema.types.base import Info
from kernelindex.schema.types.identity import Node
from kernelindex.schema.types.scalars import DateTime

__all__ = [
    "Commit",
    "Person",
    "Provenance",
    "Signature",
    "Source",
    "Trailer",
    "commit_type",
    "provenance_of",
    "source_type",
]


@strawberry.type(description="A person named by a commit.")
class Person:
    name: str = strawberry.field(description="Their name, as the commit gives it.")
    email: str = strawberry.field(description="Their email address, as the commit gives it.")


@strawberry.type(description="One trailer of a commit message (`Key: value`).")
class Trailer:
    key: str = strawberry.field(description="The trailer's key (Source, License, Source-URL, Signed-off-by...).")
    value: str = strawberry.field(description="Its value, as written.")


@strawberry.type(description="An SSH signature on a commit, checked against policy/maintainers.")
class Signature:
    signed: bool = strawberry.field(
        description="Whether the commit carries a signature (always true here: an unsigned commit has none)."
    )
    verified: bool = strawberry.field(
        description="Whether it verifies against a key of the maintainers policy in force (`policy/maintainers` of "
        "the parent commit)."
    )
    signer: str | None = strawberry.field(
        description="Whose key signed it (the principal the policy names); null when it does not verify."
    )
    reason: str | None = strawberry.field(description="Why it does not verify; null when it does.")


@strawberry.type(description="A commit of the manifests repository.")
class Commit(Node):
    _info: strawberry.Private[registry.CommitInfo]
    _verified: strawberry.Private[bool]

    @strawberry.field(description="The commit's sha: a commit never changes, so its id names no snapshot.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self._info.id)

    @strawberry.field(description="Its first 12 hex digits, for display.")
    def short_id(self) -> str:
        return self._info.id[:12]

    @strawberry.field(description="Committer time, ISO 8601 UTC.")
    def committed_at(self) -> DateTime:
        return self._info.committer.when_utc

    @strawberry.field(description="When its author wrote it.")
    def authored_at(self) -> DateTime:
        return self._info.author.when_utc

    @strawberry.field(description="Who wrote the change (the contributor).")
    def author(self) -> Person:
        return Person(name=self._info.author.name, email=self._info.author.email)

    @strawberry.field(description="Who merged it.")
    def committer(self) -> Person:
        return Person(name=self._info.committer.name, email=self._info.committer.email)

    @strawberry.field(description="Its whole message, trailers included.")
    def message(self) -> str:
        return self._info.message

    @strawberry.field(description="Its message's first line.")
    def subject(self) -> str:
        return self._info.subject

    @strawberry.field(description="Its trailers (`Source:`, `License:`...), in order.")
    def trailers(self) -> list[Trailer]:
        return [Trailer(key=k, value=v) for k, v in self._info.trailers]

    @strawberry.field(description="Its SSH signature, checked; null when unsigned.")
    def signature(self, info: Info) -> Signature | None:
        if self._info.signature is None:
            return None
        check = info.context.snapshots.signature(self._info.id)
        return Signature(signed=True, verified=check.verified, signer=check.signer, reason=check.reason or None)


def commit_type(context: Context, commit: str) -> Commit:
    info = context.objects.commit(commit)
    return Commit(_info=info, _verified=False)


@strawberry.type(description="Where results come from, and the terms of their data.")
class Source:
    slug: str = strawberry.field(description="Its short name (sol-execbench, kernelbot, community...).")
    name: str | None = strawberry.field(description="Its display name (`Source-Name:`); null when no commit gives one.")
    license: str | None = strawberry.field(
        description="The licence of its data (`License:`, an SPDX expression); null when no commit gives one."
    )
    attribution: str | None = strawberry.field(
        description="How it asks to be credited (`Attribution:`); null when it does not say."
    )
    url: str | None = strawberry.field(
        description="Where its data comes from (`Source-URL:`); null when no commit gives one."
    )
    _graph: strawberry.Private[Graph | None] = None

    def _tally(self) -> catalog.SourceTally | None:
        return catalog.source_tally(self._graph, self.slug) if self._graph is not None else None

    @strawberry.field(
        description="Manifests of any kind that its commits first published on main, up to this snapshot's commit."
    )
    def manifest_count(self) -> int:
        tally = self._tally()
        return tally.manifests if tally else 0

    @strawberry.field(description="Kernel runs from it (its own `sourceNative.source`, else its commit's `Source:`).")
    def run_count(self) -> int:
        tally = self._tally()
        return tally.runs if tally else 0

    @strawberry.field(description="Serving runs from it (counted as kernel runs are).")
    def serving_run_count(self) -> int:
        tally = self._tally()
        return tally.serving_runs if tally else 0

    @strawberry.field(description="Commits of main, up to this snapshot's, whose `Source:` trailer names it.")
    def commit_count(self) -> int:
        tally = self._tally()
        return tally.commits if tally else 0

    @strawberry.field(
        description="The newest commit of main, up to this snapshot's, whose `Source:` trailer names it: when its "
        "data last came in. Null when no commit names it (its runs name it themselves)."
    )
    def latest_commit(self, info: Info) -> Commit | None:
        tally = self._tally()
        return commit_type(info.context, tally.latest_commit) if tally and tally.latest_commit else None


def source_type(context: Context, graph: Graph, slug: str | None) -> Source | None:
    if slug is None:
        return None
    found = context.snapshots.source_terms(graph.mainline, slug)
    return Source(
        slug=slug,
        name=found.get("Source-Name"),
        license=found.get("License"),
        attribution=found.get("Attribution"),
        url=found.get("Source-URL"),
        _graph=graph,
    )


@strawberry.type(description="Who published a manifest, when, from where, under which terms.")
class Provenance:
    commit: Commit = strawberry.field(description="The commit of main that first published it.")
    source: Source | None = strawberry.field(
        description="Where the data comes from; null when the commit names no source."
    )
    license: str | None = strawberry.field(
        description="The licence of its data (`License:`); null when the commit names none."
    )
    attribution: str | None = strawberry.field(
        description="How its source asks to be credited; null when it does not say."
    )
    source_url: str | None = strawberry.field(
        description="Where it was imported from (`Source-URL:`); null for a direct contribution."
    )
    snapshot: str | None = strawberry.field(description="Source-Snapshot: sha256 of the upstream bytes.")


def provenance_of(context: Context, graph: Graph, node: n.Node, source: str | None) -> Provenance | None:
    commit = _publishing_commit(graph, node)
    if commit is None:
        return None
    info = context.objects.commit(commit)
    # A merge's trailers are its pull request's: the commit that brought this manifest in (`registry.merges`).
    trailers = introducing_commit(context.snapshots.store(), info, node.digest).first_trailers()
    return Provenance(
        commit=Commit(_info=info, _verified=False),
        source=source_type(context, graph, source or trailers.get("source")),
        license=trailers.get("license"),
        attribution=trailers.get("attribution"),
        source_url=trailers.get("source-url"),
        snapshot=trailers.get("source-snapshot"),
    )


def _publishing_commit(graph: Graph, node: n.Node) -> str | None:
    position = graph.publication(node.digest)
    return None if position is None else graph.mainline.commits[position]
