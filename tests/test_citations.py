"""`kernelindex.registry.citations`: a leaderboard at a commit and the dataset (an export at a commit), cited in the
three formats; BibTeX read back with pybtex, CSL-JSON with json, export bytes measured independently."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import orjson
import pytest
import zstandard
from governed import Governed, build_governed
from helpers import EMBEDDED_REPO
from pybtex.database import parse_string
from signing import Key

from kernelindex import registry
from kernelindex.registry.citations import (
    cite_dataset,
    cite_leaderboard,
    dataset_citation,
    export_digest,
    leaderboard_citation,
)
from kernelindex.registry.export import plan_export, write_export
from kernelindex.registry.snapshots import Snapshots

PERMALINK = "https://registry.example.org/at/{commit}/cohorts/{key}"


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> Governed:
    return build_governed(store, keys["alice"])


@pytest.fixture
def snapshots(store: registry.GitStore, governed: Governed) -> Snapshots:
    loaded = Snapshots(store.path)
    loaded.load()
    return loaded


def test_a_leaderboard_at_a_commit(snapshots: Snapshots, governed: Governed, store: registry.GitStore) -> None:
    graph = snapshots.at(governed.commits[1])  # before c1's retraction: c1 leads at 7 µs
    key = graph.facts[governed.runs["c1"]].cohort
    assert key is not None
    link = PERMALINK.format(commit=graph.commit, key=key)
    citation = leaderboard_citation(graph, key, lambda oid: orjson.loads(store.read_blob(oid)), link, "2026-12-01")
    assert citation is not None
    # The workload's axes as its stored JSON orders them (sorted keys).
    assert (
        citation.title == "Operation rmsnorm-h4096 · hidden = 4096 · tokens = 2048 · bf16 · NVIDIA B200 · test-protocol"
    )
    assert (citation.size, citation.leader, citation.leader_label) == (4, governed.runs["c1"], "kernel-b: 7.00 µs")
    assert (citation.commit, citation.date) == (governed.commits[1], "2026-09-21")
    assert cite_leaderboard(citation) == (
        f"KernelIndex registry. Leaderboard: {citation.title} (2026-09-21). 4 ranked runs; leader kernel-b: 7.00 µs. "
        f"Cohort {key}, ranking-v1 at commit {governed.commits[1]}. {link}. Accessed 2026-12-01."
    )
    bib = parse_string(cite_leaderboard(citation, "BIBTEX"), "bibtex")
    (entry,) = bib.entries.values()
    assert entry.type == "misc" and entry.fields["url"] == link and entry.fields["urldate"] == "2026-12-01"
    assert entry.fields["version"] == governed.commits[1] and entry.fields["year"] == "2026"
    assert key in entry.fields["note"]
    csl = json.loads(cite_leaderboard(citation, "CSL_JSON"))
    assert csl["URL"] == link and csl["version"] == governed.commits[1] and csl["type"] == "dataset"
    assert csl["issued"] == {"date-parts": [[2026, 9, 21]]} and csl["accessed"] == {"date-parts": [[2026, 12, 1]]}
    # At the head, after the retraction, the same cohort has another leader: a citation is of a commit.
    head = leaderboard_citation(snapshots.head, key, lambda oid: orjson.loads(store.read_blob(oid)), None)
    # a1, a2, d1 and e1 rank at the head (b1 is superseded, c1 retracted).
    assert head is not None and head.leader == governed.runs["a2"] and head.size == 4


def test_without_a_permalink_the_citation_says_so(
    snapshots: Snapshots, governed: Governed, store: registry.GitStore
) -> None:
    key = snapshots.head.facts[governed.runs["a2"]].cohort or ""
    citation = leaderboard_citation(
        snapshots.head, key, lambda oid: orjson.loads(store.read_blob(oid)), None, "2026-12-01"
    )
    assert citation is not None
    text = cite_leaderboard(citation)
    assert "http" not in text and text.endswith(
        "No permalink: this registry has no public base URL configured. Accessed 2026-12-01."
    )
    (entry,) = parse_string(cite_leaderboard(citation, "BIBTEX"), "bibtex").entries.values()
    assert "url" not in entry.fields and "urldate" not in entry.fields and "no public base URL" in entry.fields["note"]
    csl = json.loads(cite_leaderboard(citation, "CSL_JSON"))
    assert "URL" not in csl and "accessed" not in csl
    assert leaderboard_citation(snapshots.head, "sha256:" + "0" * 64, lambda oid: {}, None) is None
    with pytest.raises(ValueError, match="unknown citation format 'MLA'"):
        cite_leaderboard(citation, "MLA")


def _tables(path: Path) -> Counter[str]:
    with path.open("rb") as raw:
        lines = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw))
        return Counter(orjson.loads(line)["table"] for line in lines)


def test_the_dataset_is_the_export_of_a_commit(
    snapshots: Snapshots, governed: Governed, store: registry.GitStore, tmp_path: Path
) -> None:
    graph = snapshots.head
    plan = plan_export(store, graph)
    measured = export_digest(plan)
    written = write_export(plan_export(store, graph), tmp_path / "export.jsonl.zst")
    data = written.path.read_bytes()
    assert measured.sha256 == hashlib.sha256(data).hexdigest() and measured.size == len(data)
    assert dict(measured.tables) == _tables(written.path)
    assert measured.rows("benchmark_runs") == 6 and measured.rows("no-such-table") == 0
    assert measured.name == f"catalog-2026-09-21-{graph.commit[:8]}.jsonl.zst"
    link = f"https://registry.example.org/exports/{graph.commit}.jsonl.zst"
    citation = dataset_citation(plan, measured, link, "2026-12-01")
    assert (citation.commit, citation.date, citation.sources) == (graph.commit, "2026-09-21", ("governed",))
    assert citation.manifests == 9 + 2 + 1 + 4  # C0 to C3 (tests/governed.py)
    text = cite_dataset(citation)
    assert f"sha256:{measured.sha256}" in text and f"{measured.size} bytes" in text and link in text
    (entry,) = parse_string(cite_dataset(citation, "BIBTEX"), "bibtex").entries.values()
    assert entry.fields["url"] == link and measured.sha256 in entry.fields["note"]
    csl = json.loads(cite_dataset(citation, "CSL_JSON"))
    assert csl["version"] == graph.commit and csl["title"] == f"Catalog export {measured.name}"


@pytest.mark.slow
def test_the_embedded_seed_cohorts_leaderboard() -> None:
    """Seed 000's cohort (key 92bc0be5b5ce9f52, two runs, led by a run of 144,537 ns;
    the seed page's workload label "suite of 16 cases · mean latency")."""
    snapshots = Snapshots(EMBEDDED_REPO)
    snapshots.load()
    store = snapshots.store()
    cohort = snapshots.head.find_cohort("92bc0be5b5ce9f52")
    assert cohort is not None
    citation = leaderboard_citation(snapshots.head, cohort.key, lambda oid: orjson.loads(store.read_blob(oid)), None)
    assert citation is not None and citation.size == 2
    assert "suite of 16 cases · mean latency" in citation.title and "NVIDIA B200" in citation.title
    assert citation.leader_label is not None and citation.leader_label.endswith(": 144.5 µs")
    assert len(parse_string(cite_leaderboard(citation, "BIBTEX"), "bibtex").entries) == 1
