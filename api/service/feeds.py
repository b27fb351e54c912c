"""Atom feeds (RFC 4287) of one snapshot: record events (new records, retraction hand-overs) for the
whole registry, an operation or a cohort, and the publication record (one entry per commit of main).

Entry ids are `urn:uuid:` ids derived from what the entry is (the same ids the catalog export gives
its `record_events` and `sources` rows), so an entry keeps its id however the feed is served and
whatever comes after it. `updated` is the event's own time (a record's `at`; a commit's time).
Links go to permalinks pinned to the commit that published the run, which never change. Links are
absolute only under a configured base URL (which also becomes the feed's `xml:base`); otherwise they
are relative to the server's root.

Feeds are written by ElementTree (which escapes markup and quotes), and every text and attribute passes
`kernelindex.core.hostile.shown` first: a published value holding a character XML cannot carry (U+0008 in a run's title)
is written as its escape, so a feed always parses.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernelindex import registry
from kernelindex.core.footprint import exact, footprint
from kernelindex.core.hostile import shown
from kernelindex.core.urls import Urls
from kernelindex.registry import read
from kernelindex.registry.cohorts import RecordEvent
from kernelindex.registry.export_ids import row_id
from kernelindex.registry.graph import Cohort, Graph
from kernelindex.registry.nodes import Environment, Operation, Run
from kernelindex.registry.present import format_value
from kernelindex.registry.provenance import utc_instant

if TYPE_CHECKING:  # imported when a feed is first written: a server that never writes one keeps ElementTree out
    import xml.etree.ElementTree as ET

__all__ = ["MAX_ENTRIES", "Feed", "pinned_commit", "publications_feed", "records_feed"]

MAX_ENTRIES = 50
"""Entries per feed: the newest; a reader polls, and the export has the whole history."""

ATOM = "http://www.w3.org/2005/Atom"
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"


@dataclass(slots=True)  # not frozen: the response cache wants a settable `body`
class Feed:
    """A rendered feed: its bytes, and its `updated` instant (for Last-Modified)."""

    body: bytes
    updated: int  # seconds

    def __post_init__(self) -> None:
        self.body = exact(self.body)  # kept in a cache: bytes that hold only their length (`footprint.exact`)

    def weight(self) -> int:
        """The memory it holds, as a cache weighs it (`kernelindex.core.footprint`)."""
        return footprint(self)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    import xml.etree.ElementTree as ET

    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {name: shown(value) for name, value in attrs.items()})
    if text is not None:
        element.text = shown(text)
    return element


def _feed(urls: Urls, name: str, title: str, subtitle: str, updated: int, self_href: str) -> ET.Element:
    import xml.etree.ElementTree as ET

    root = ET.Element(f"{{{ATOM}}}feed")
    if urls.base:
        root.set(_XML_BASE, urls.base + "/")
    _el(root, "id", f"urn:uuid:{row_id('feed:' + name)}")
    _el(root, "title", title)
    _el(root, "subtitle", subtitle)
    _el(root, "updated", utc_instant(updated))
    _el(root, "link", rel="self", type="application/atom+xml", href=self_href)
    _el(root, "link", rel="alternate", href=urls.graphql())  # GraphiQL in a browser
    _el(root, "generator", "KernelIndex registry", uri="https://github.com/SamMausberg/KernelIndex")
    author = _el(root, "author")
    _el(author, "name", "KernelIndex registry")
    return root


def _render(root: ET.Element, updated: int) -> Feed:
    import xml.etree.ElementTree as ET

    ET.register_namespace("", ATOM)  # the feed's elements without a prefix (idempotent)
    return Feed(ET.tostring(root, encoding="utf-8", xml_declaration=True), updated)


def _events(graph: Graph, cohorts: Iterable[Cohort]) -> list[RecordEvent]:
    """The newest record events of `cohorts`, newest first (ties by cohort, then run: stable)."""
    found = [event for cohort in cohorts for event in cohort.events(graph)]
    found.sort(key=lambda e: (-e.at_ns, e.cohort, e.run))
    return found[:MAX_ENTRIES]


def records_feed(
    graph: Graph,
    urls: Urls,
    scope: str = "records",
    cohorts: Iterable[Cohort] | None = None,
    pinned: bool = False,
) -> Feed:
    """Record events at `graph`'s commit: every cohort's (`scope` "records"), or those of `cohorts`
    (an operation's or one cohort's; `scope` names the feed: `operations/<digest>`, `cohorts/<key>`).
    `pinned`: the feed is served at its commit's URL (`/at/<commit>/feeds/...`), which is its `self`."""
    chosen = list(graph.cohorts.values()) if cohorts is None else list(cohorts)
    events = _events(graph, chosen)
    updated = max((e.at_ns // 1_000_000_000 for e in events), default=graph.committed_at)
    what = "every cohort" if cohorts is None else scope.replace("/", " ")
    root = _feed(
        urls,
        scope,
        "KernelIndex records" if cohorts is None else f"KernelIndex records: {scope}",
        f"New records and retraction hand-overs in {what}, newest first; as of commit {graph.commit}.",
        updated,
        urls.feed(scope, graph.commit if pinned else None),
    )
    for event in events:
        _record_entry(root, graph, urls, event)
    return _render(root, updated)


def _record_entry(root: ET.Element, graph: Graph, urls: Urls, event: RecordEvent) -> None:
    run = graph.nodes.get(event.run)
    cohort = graph.cohorts.get(event.cohort)
    assert isinstance(run, Run)
    assert cohort is not None
    operation = graph.nodes.get(cohort.operation)
    environment = graph.nodes.get(cohort.environment)
    where = " · ".join(
        part
        for part in (
            operation.name if isinstance(operation, Operation) else None,
            environment.product if isinstance(environment, Environment) else None,
        )
        if part
    )
    unit = run.primary.unit if run.primary else ""
    value = format_value(event.value, unit)
    entry = _el(root, "entry")
    _el(entry, "id", f"urn:uuid:{row_id(f'{event.cohort}#{event.cause}/{event.run}/{event.at}')}")
    if event.cause == "retraction":
        title = f"Record handed to {run.name} after a retraction ({value}, {where})"
    else:
        title = f"New record: {run.name} ({value}, {where})"
    _el(entry, "title", title)
    _el(entry, "updated", _atom_instant(event.at))
    published = graph.published_at(run)
    if published is not None:
        _el(entry, "published", utc_instant(published))
    # No `type`: the permalink answers JSON today and the run's page when pages land (same URL).
    _el(entry, "link", rel="alternate", href=urls.run(pinned_commit(graph, run.digest), run.digest))
    if event.previous_run is not None:
        href = urls.run(pinned_commit(graph, event.previous_run), event.previous_run)
        _el(entry, "link", rel="related", href=href)
    source = graph.facts[run.digest].source if run.digest in graph.facts else None
    if source:
        author = _el(entry, "author")
        _el(author, "name", source)
    _el(
        entry,
        "category",
        term=event.cause,
        label="retraction hand-over" if event.cause == "retraction" else "new record",
    )
    lines = [
        f"{run.title or run.name}: {value} ({run.primary.statistic if run.primary else 'value'}).",
        f"Cohort {event.cohort}; policy {event.policy_version}.",
    ]
    if event.previous_run is not None and event.previous_value is not None:
        previous = graph.nodes.get(event.previous_run)
        name = previous.name if previous is not None else event.previous_run
        lines.append(f"Previous record: {name}, {format_value(event.previous_value, unit)}.")
    lines.append(f"Run {run.digest}, as of commit {graph.commit}.")
    _el(entry, "content", "\n".join(lines), type="text")


def pinned_commit(graph: Graph, digest: str) -> str:
    """The commit of main that published a manifest (its permalinks never change), else the graph's."""
    position = graph.publication(digest)
    return graph.commit if position is None else graph.mainline.commits[position]


def _atom_instant(text: str) -> str:
    """An RFC 3339 instant as RFC 4287 wants it (the ledger's are already `...Z`)."""
    return text if text.endswith("Z") else text + "Z"


def publications_feed(
    graph: Graph, urls: Urls, commit_info: Callable[[str], registry.CommitInfo], pinned: bool = False
) -> Feed:
    """One entry per commit of main up to `graph`'s, newest first: what it published, by kind."""
    if graph.position is None:
        raise registry.RevisionNotFound(graph.commit, "the publication record is main's history")
    kinds: Counter[tuple[int, str]] = Counter()
    for digest, position in read.publications(graph).items():
        node = graph.nodes.get(digest)
        if node is not None and position <= graph.position:
            kinds[(position, node.kind)] += 1
    positions = list(range(graph.position, max(-1, graph.position - MAX_ENTRIES), -1))
    updated = graph.mainline.times[graph.position]
    root = _feed(
        urls,
        "publications",
        "KernelIndex publications",
        f"Each commit of main and what it published, newest first; up to commit {graph.commit}.",
        updated,
        urls.feed("publications", graph.commit if pinned else None),
    )
    for position in positions:
        commit = graph.mainline.commits[position]
        info = commit_info(commit)
        counts = sorted((kind, n) for (p, kind), n in kinds.items() if p == position)
        entry = _el(root, "entry")
        _el(entry, "id", f"urn:uuid:{row_id(commit)}")
        _el(entry, "title", info.subject)
        _el(entry, "updated", utc_instant(graph.mainline.times[position]))
        _el(entry, "link", rel="enclosure", type="application/zstd", href=urls.export(commit))
        author = _el(entry, "author")
        _el(author, "name", info.author.name)
        source = graph.mainline.sources[position]
        if source:
            _el(entry, "category", term=source)
        published = ", ".join(f"{n:,} {kind}" for kind, n in counts) or "no new manifests"
        licence = info.trailer("License")
        lines = [f"Commit {commit}: {published}."]
        if licence:
            lines.append(f"Licence of the data: {licence}.")
        lines.append(f"Catalog export pinned to it: {urls.export(commit)}")
        _el(entry, "content", "\n".join(lines), type="text")
    return _render(root, updated)
