"""The files crawlers and assistants look for at a site's root: `llms.txt`, `robots.txt`, and the
sitemap: an index of sitemap files, one family of pages at a time (the site's entry points and index pages,
then operations, cohorts, projects, GPUs, models, serving cohorts and run permalinks), each family cut into
files of at most `SITEMAP_CHUNK` URLs.

A sitemap holds absolute URLs only (sitemaps.org), so it exists only under a configured base URL. The
files sit at the root beside the index (`/sitemap-<family>-<n>.xml`): a sitemap may list only URLs under
its own folder. Run permalinks are pinned to the commit that published each run, so they never change;
the other pages are listed at the head of main, as of its commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kernelindex.core.urls import Urls
from kernelindex.registry import catalog, read
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Model, Node, Operation, Project, Run, ServingRun
from kernelindex.registry.provenance import utc_instant
from kernelindex.registry.serving_graph import serving_index
from kernelindex.service.feeds import pinned_commit

if TYPE_CHECKING:  # imported when a sitemap is first written (`kernelindex.service.feeds` says why)
    import xml.etree.ElementTree as ET

__all__ = ["SITEMAP_CHUNK", "SITEMAP_FAMILIES", "llms_txt", "robots_txt", "sitemap_index", "sitemap_part"]

SITEMAP_CHUNK = 10_000
"""URLs per sitemap file (the protocol allows 50,000 and 50 MB; smaller files are cheaper to serve)."""

SITEMAP_FAMILIES = ("operations", "cohorts", "projects", "gpus", "models", "serving-cohorts", "runs")
"""The families of pages listed after the site's own file, in the index's order."""

_SITEMAP = "http://www.sitemaps.org/schemas/sitemap/0.9"
_PART = re.compile(r"([a-z-]+)-([1-9][0-9]{0,8})")

Entry = tuple[str, int | None]  # an absolute URL and when it last changed (seconds), if known


def robots_txt(urls: Urls) -> str:
    """Everything may be crawled except the refresh hook and the MCP endpoint (an API for assistants)."""
    lines = ["User-agent: *", "Disallow: /hooks/", "Disallow: /mcp", "Allow: /"]
    if urls.absolute:
        lines.append(f"Sitemap: {urls.sitemap()}")
    return "\n".join(lines) + "\n"


def _xml(root: ET.Element) -> bytes:
    import xml.etree.ElementTree as ET

    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


def _ident(graph: Graph, node: Node) -> str:
    """How a page names a manifest: its `metadata.name` when no other manifest shares it, else its digest."""
    return node.name if len(graph.named(node.name)) == 1 else node.digest


def _site(graph: Graph, urls: Urls) -> list[Entry]:
    head = graph.committed_at
    locs = (
        urls.home(),
        urls.operations(),
        urls.gpus(),
        urls.models(),
        urls.projects(),
        urls.sources(),
        urls.serving(),
        urls.records(),
        urls.search(),
        urls.graphql(),
        urls.llms_txt(),
        urls.feed("records"),
        urls.feed("publications"),
        urls.latest_export(),
    )
    return [(loc, head) for loc in locs]


def _sorted(graph: Graph, kind: type[Node]) -> list[Node]:
    return sorted((node for node in graph.nodes.values() if type(node) is kind), key=lambda x: (x.name, x.digest))


def _family(graph: Graph, urls: Urls, family: str) -> list[Entry]:
    """Every page of one family, in a stable order for the commit."""
    head = graph.committed_at
    if family == "operations":
        return [(urls.operation(_ident(graph, node)), head) for node in _sorted(graph, Operation)]
    if family == "cohorts":
        return [(urls.cohort(key), head) for key in sorted(graph.cohorts)]
    if family == "projects":
        return [(urls.project(_ident(graph, node)), head) for node in _sorted(graph, Project)]
    if family == "gpus":
        return [(urls.gpu(gpu.slug), head) for gpu in catalog.gpus(graph)]
    if family == "models":
        return [(urls.model(_ident(graph, node)), head) for node in _sorted(graph, Model)]
    if family == "serving-cohorts":
        return [(urls.serving_cohort(key), head) for key in sorted(serving_index(graph).cohorts)]
    assert family == "runs"
    published = read.publications(graph)
    runs = sorted(d for d, node in graph.nodes.items() if type(node) in (Run, ServingRun) and d in published)
    return [(urls.run(pinned_commit(graph, d), d), graph.published_at(graph.nodes[d])) for d in runs]


def _families(graph: Graph, urls: Urls) -> dict[str, list[Entry]]:
    """Each family's pages, made once per graph and base URL (the index counts them, each file cuts them)."""
    key = f"_sitemap {urls.base}"
    found: dict[str, list[Entry]] | None = graph.__dict__.get(key)
    if found is None:
        found = {"site": _site(graph, urls), **{f: _family(graph, urls, f) for f in SITEMAP_FAMILIES}}
        graph.__dict__[key] = found
    return found


def _files(graph: Graph, urls: Urls, chunk: int) -> Iterable[str]:
    yield "site"
    for family, entries in _families(graph, urls).items():
        if family != "site":
            yield from (f"{family}-{i}" for i in range(1, (len(entries) + chunk - 1) // chunk + 1))


def sitemap_index(graph: Graph, urls: Urls, chunk: int = SITEMAP_CHUNK) -> bytes:
    """The index: the site's own sitemap, then each family's files of at most `chunk` URLs."""
    import xml.etree.ElementTree as ET

    assert urls.absolute, "a sitemap needs the configured base URL"
    root = ET.Element(f"{{{_SITEMAP}}}sitemapindex")
    for name in _files(graph, urls, chunk):
        entry = ET.SubElement(root, f"{{{_SITEMAP}}}sitemap")
        ET.SubElement(entry, f"{{{_SITEMAP}}}loc").text = urls.sitemap_part(name)
        ET.SubElement(entry, f"{{{_SITEMAP}}}lastmod").text = utc_instant(graph.committed_at)
    return _xml(root)


def sitemap_part(graph: Graph, urls: Urls, name: str, chunk: int = SITEMAP_CHUNK) -> bytes | None:
    """One sitemap file: `site`, or `<family>-<n>` (the n-th, from 1, of a family's files); None for any
    other name or past a family's last file."""
    import xml.etree.ElementTree as ET

    families = _families(graph, urls)
    if name == "site":
        entries = families["site"]
    else:
        match = _PART.fullmatch(name)
        if match is None or match.group(1) not in SITEMAP_FAMILIES:
            return None
        number = int(match.group(2))
        entries = families[match.group(1)][(number - 1) * chunk : number * chunk]
        if not entries:
            return None
    root = ET.Element(f"{{{_SITEMAP}}}urlset")
    for loc, changed in entries:
        entry = ET.SubElement(root, f"{{{_SITEMAP}}}url")
        ET.SubElement(entry, f"{{{_SITEMAP}}}loc").text = loc
        if changed is not None:
            ET.SubElement(entry, f"{{{_SITEMAP}}}lastmod").text = utc_instant(changed)
    return _xml(root)


_DOCUMENTS = """\
```graphql
# A run dossier (value, rank, cohort, trust, provenance, citation), pinned to a commit
query Run($at: String, $id: String!) { registry(at: $at) { commit { id } run(id: $id) {
  digest name status observedAt publishedAt rank trust eligible ineligibilityReasons warnings
  primary { metric statistic unit value display } cohort { key size } leader { name primary { display } }
  implementation { displayName } workload { label } environment { gpu } permalink citation } } }

# A leaderboard: runs rank only inside their cohort (same operation, workload, protocol, environment,
# correctness policy and metric)
query Leaderboard($key: String!) { cohort(key: $key) { key size leader { name }
  entries(first: 20) { totalCount pageInfo { hasNextPage endCursor }
    edges { node { rank tiedWithPrevious run { name trust primary { display } } } } } } }

# Search: operations by name, runs by operation / GPU / source
{ operations(search: "attention", first: 10) { edges { node { digest name family runCount } } } }
{ runs(filter: {gpu: "NVIDIA B200", eligibleOnly: true}, first: 10) {
    edges { node { name rank primary { display } } } } }

# The records ledger (current holder of every cohort, newest first) and a side-by-side comparison
{ records(first: 10) { edges { node { since cohort { key } holder { name primary { display } } } } } }
{ compare(runs: ["<run id>", "<run id>"]) { sameCohort material entries { rank run { name } } } }
```
"""


def llms_txt(graph: Graph, urls: Urls) -> str:
    """What the registry is, how to ask it, and the GraphQL documents worth knowing (llmstxt.org)."""
    runs = len(graph.facts)
    return f"""# KernelIndex registry

> A public registry of GPU-kernel benchmark results: content-addressed manifests (the KernelIndex
> format) in a git repository, served over GraphQL with rankings inside comparable cohorts, a records
> ledger and evidence levels. Every answer is pinned to a commit. Serving commit {graph.commit}
> ({utc_instant(graph.committed_at)}): {len(graph.nodes):,} manifests, {runs:,} kernel runs,
> {len(graph.cohorts):,} cohorts.

Runs are ranked only against runs of the same cohort; a rank without its cohort means nothing. Lower
values are better (latencies). Trust is REPORTED < REPRODUCIBLE < VERIFIED < REPLICATED. Ids take a
digest (`sha256:<hex>`), a unique hex prefix of at least 12 digits, or a `metadata.name`.

## How to query

- [GraphQL]({urls.graphql()}): POST `{{"query": ..., "variables": ...}}` (or GET `?query=`). The
  response's `extensions.registry.commit` says which commit answered; `registry(at: "<commit>")` pins a
  query to any commit of main, and answers pinned to a full commit id are immutable.
- [MCP server]({urls.mcp()}): streamable HTTP; the same tools run locally with `kernelindex mcp` (stdio).
- [Run permalinks]({urls.run(graph.commit, "sha256:")}<hex>): a run's dossier as JSON, pinned to a commit.
- [Catalog export]({urls.latest_export()}): the whole registry as KernelIndex's catalog export
  (`catalog-<date>-<sha8>.jsonl.zst`), pinned to main's head; `/at/<commit>/export.jsonl.zst` for any commit.
- [Records feed]({urls.feed("records")}) and [publications feed]({urls.feed("publications")}): Atom.

## Key GraphQL documents

{_DOCUMENTS}
## Optional

- [Sitemap]({urls.sitemap()}): every page: operations, cohorts, projects, GPUs, models, serving cohorts and
  run permalinks (with a configured base URL).
"""
