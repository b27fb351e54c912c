"""The files crawlers and assistants look for at a site's root: `llms.txt`, `robots.txt`, and the
sitemap (an index of sitemap files: the site's entry points, then every run's permalink).

A sitemap holds absolute URLs only (sitemaps.org), so it exists only under a configured base URL;
run permalinks in it are pinned to the commit that published each run, so they never change.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from api.feeds import pinned_commit
from api.urls import Urls
from registry.graph import Graph
from registry.nodes import Run
from registry.provenance import utc_instant

__all__ = ["SITEMAP_CHUNK", "llms_txt", "robots_txt", "sitemap_index", "sitemap_runs", "sitemap_site"]

SITEMAP_CHUNK = 10_000
"""URLs per sitemap file (the protocol allows 50,000 and 50 MB; smaller files are cheaper to serve)."""

_SITEMAP = "http://www.sitemaps.org/schemas/sitemap/0.9"


def robots_txt(urls: Urls) -> str:
    """Everything may be crawled except the refresh hook and the MCP endpoint (an API for assistants)."""
    lines = ["User-agent: *", "Disallow: /hooks/", "Disallow: /mcp", "Allow: /"]
    if urls.absolute:
        lines.append(f"Sitemap: {urls.sitemap()}")
    return "\n".join(lines) + "\n"


def _run_ids(graph: Graph) -> list[str]:
    ids: list[str] | None = graph.__dict__.get("_sitemap_runs")
    if ids is None:
        ids = sorted(d for d, node in graph.nodes.items() if isinstance(node, Run) and d in graph.published_in)
        graph.__dict__["_sitemap_runs"] = ids
    return ids


def _xml(root: ET.Element) -> bytes:
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


def sitemap_index(graph: Graph, urls: Urls) -> bytes:
    """The index: the site's own sitemap, then one sitemap per 10,000 runs."""
    assert urls.absolute, "a sitemap needs the configured base URL"
    root = ET.Element(f"{{{_SITEMAP}}}sitemapindex")
    chunks = (len(_run_ids(graph)) + SITEMAP_CHUNK - 1) // SITEMAP_CHUNK
    for name in ["site", *(f"runs-{i}" for i in range(1, chunks + 1))]:
        entry = ET.SubElement(root, f"{{{_SITEMAP}}}sitemap")
        ET.SubElement(entry, f"{{{_SITEMAP}}}loc").text = urls.sitemap_part(name)
        ET.SubElement(entry, f"{{{_SITEMAP}}}lastmod").text = utc_instant(graph.committed_at)
    return _xml(root)


def sitemap_site(graph: Graph, urls: Urls) -> bytes:
    """The entry points: the API, the feeds, llms.txt, the latest export."""
    root = ET.Element(f"{{{_SITEMAP}}}urlset")
    for loc in (
        urls.home(),
        urls.graphql(),
        urls.llms_txt(),
        urls.feed("records"),
        urls.feed("publications"),
        urls.latest_export(),
    ):
        entry = ET.SubElement(root, f"{{{_SITEMAP}}}url")
        ET.SubElement(entry, f"{{{_SITEMAP}}}loc").text = loc
        ET.SubElement(entry, f"{{{_SITEMAP}}}lastmod").text = utc_instant(graph.committed_at)
    return _xml(root)


def sitemap_runs(graph: Graph, urls: Urls, number: int) -> bytes | None:
    """The `number`th (from 1) sitemap of run permalinks; None past the last."""
    ids = _run_ids(graph)
    chunk = ids[(number - 1) * SITEMAP_CHUNK : number * SITEMAP_CHUNK] if number >= 1 else []
    if not chunk:
        return None
    root = ET.Element(f"{{{_SITEMAP}}}urlset")
    for digest in chunk:
        entry = ET.SubElement(root, f"{{{_SITEMAP}}}url")
        ET.SubElement(entry, f"{{{_SITEMAP}}}loc").text = urls.run(pinned_commit(graph, digest), digest)
        published = graph.published_at(graph.nodes[digest])
        if published is not None:
            ET.SubElement(entry, f"{{{_SITEMAP}}}lastmod").text = utc_instant(published)
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

- [Sitemap]({urls.sitemap()}): every run permalink (with a configured base URL).
"""
