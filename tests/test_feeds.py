"""Atom feeds (api/service/feeds.py, served by api/http/publishing.py): valid per feedparser, the ledger's newest
events in order, stable ids, conditional GET, links from the configured base URL only."""

from __future__ import annotations

import email.utils
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import feedparser
import pytest
import zstandard
from helpers import EMBEDDED_REPO, TEST_DATA, basic_scenario, commit_meta, digest_of, make_retraction, to_manifest
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.registry.export import row_id
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.service.feeds import MAX_ENTRIES

BASE = "https://registry.example.org"
SEEDED = "e775d39b6768675ff8eb086da76420493425c1a4"  # the embedded registry's commit with the seed records
SEED_COHORT = "92bc0be5b5ce9f52"  # seed 000's cohort (docs/api.md, "The records ledger")


def _parse(body: bytes) -> Any:
    feed = feedparser.parse(body)
    assert not feed.bozo, feed.get("bozo_exception")
    return feed


@pytest.fixture(scope="module")
def embedded() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(repo_path=EMBEDDED_REPO, graph_cache=False, base_url=BASE))) as client:
        yield client


@pytest.fixture(scope="module")
def upstream_events() -> list[list[Any]]:
    raw = (TEST_DATA / "upstream" / "expectations.json.zst").read_bytes()
    events: list[list[Any]] = json.loads(zstandard.ZstdDecompressor().stream_reader(raw).read())["recordEvents"]
    return events


def _run_digest(entry: Any) -> str:
    return str(entry.link).rsplit("/", 1)[1]


@pytest.mark.slow
def test_the_records_feed_lists_the_ledgers_newest_events_newest_first(
    embedded: TestClient, upstream_events: list[list[Any]]
) -> None:
    # Pinned to the seeds' commit: a later import (another source) adds newer events at the head.
    response = embedded.get(f"/at/{SEEDED}/feeds/records.atom")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    feed = _parse(response.content)
    assert feed.version == "atom10"
    # Upstream's ledger (the corpus's 2,948 events; the seeds' runs were observed earlier than these),
    # newest first: the same runs at the same instants, in the same order.
    newest = sorted(upstream_events, key=lambda e: (e[4], e[0], e[1]), reverse=True)[:MAX_ENTRIES]
    assert len(feed.entries) == MAX_ENTRIES
    assert [(_run_digest(e), e.updated) for e in feed.entries] == [(e[1], e[4]) for e in newest]
    first = feed.entries[0]
    cohort, run, _, cause, at = newest[0]
    assert first.id == f"urn:uuid:{row_id(f'{cohort}#{cause}/{run}/{at}')}"
    assert first.link.startswith(f"{BASE}/at/")  # absolute from the configured base
    assert feed.feed.updated == newest[0][4].split(".")[0] + "Z"
    assert feed.feed.id.startswith("urn:uuid:")
    assert any(link.rel == "self" and link.href == f"{BASE}/at/{SEEDED}/feeds/records.atom" for link in feed.feed.links)


@pytest.mark.slow
def test_pinned_feeds_take_full_commits_of_main_only(embedded: TestClient) -> None:
    short = embedded.get(f"/at/{SEEDED[:12]}/feeds/publications.atom", follow_redirects=False)
    assert short.status_code == 307
    assert short.headers["location"] == f"{BASE}/at/{SEEDED}/feeds/publications.atom"
    unknown = embedded.get(f"/at/{'f' * 40}/feeds/records.atom")
    assert unknown.status_code == 404
    assert unknown.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    # At the seeds' commit the publication record ends with the seeds.
    feed = _parse(embedded.get(f"/at/{SEEDED}/feeds/publications.atom").content)
    assert feed.entries[0].id == f"urn:uuid:{row_id(SEEDED)}"
    assert len(feed.entries) == 5  # docs/data.md: the corpus's four sources, then the seeds


@pytest.mark.slow
def test_a_cohort_feed_is_its_history_and_an_operation_feed_its_cohorts(embedded: TestClient) -> None:
    feed = _parse(embedded.get(f"/feeds/cohorts/{SEED_COHORT}.atom").content)
    # docs/api.md: sol-submission-6709 (2026-06-07, 144.6 µs), then sol-submission-16043 (2026-06-30, 144.5 µs).
    assert [(e.title.split(" (")[0], e.updated) for e in feed.entries] == [
        ("New record: sol-submission-16043", "2026-06-30T18:04:39.080Z"),
        ("New record: sol-submission-6709", "2026-06-07T12:03:35.566Z"),
    ]
    assert "144.5 µs" in feed.entries[0].title
    assert "Previous record: sol-submission-6709, 144.6 µs." in feed.entries[0].summary
    operation = embedded.post(
        "/graphql", json={"query": f'{{ cohort(key: "{SEED_COHORT}") {{ operation {{ name }} }} }}'}
    )
    name = operation.json()["data"]["cohort"]["operation"]["name"]
    by_operation = _parse(embedded.get(f"/feeds/operations/{name}.atom").content)
    assert {e.id for e in feed.entries} <= {e.id for e in by_operation.entries}


@pytest.mark.slow
def test_the_publications_feed_is_mains_history_with_what_each_commit_published(embedded: TestClient) -> None:
    feed = _parse(embedded.get("/feeds/publications.atom").content)
    log = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "log", "--first-parent", "--format=%H%x00%s%x00%cI", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    commits = [line.split("\0") for line in log]
    assert [e.title for e in feed.entries] == [subject for _, subject, _ in commits]
    assert [e.id for e in feed.entries] == [f"urn:uuid:{row_id(commit)}" for commit, _, _ in commits]
    assert [e.updated for e in feed.entries] == [when.replace("+00:00", "Z") for _, _, when in commits]
    flashinfer = next(e for e in feed.entries if e.title.startswith("Import FlashInfer-Bench"))
    # Its commit message: "3,674 manifests ...: 1 BenchmarkProtocol, 1,937 BenchmarkRun, ..."
    assert "1,937 BenchmarkRun" in flashinfer.summary and "1,425 WorkloadCase" in flashinfer.summary
    assert any(link.rel == "enclosure" and link.href.endswith("/export.jsonl.zst") for link in flashinfer.links)


@pytest.mark.slow
def test_conditional_get_answers_304(embedded: TestClient) -> None:
    first = embedded.get("/feeds/records.atom")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert embedded.get("/feeds/records.atom", headers={"if-none-match": etag}).status_code == 304
    assert embedded.get("/feeds/records.atom", headers={"if-none-match": '"other"'}).status_code == 200
    assert embedded.get("/feeds/records.atom", headers={"if-modified-since": modified}).status_code == 304
    earlier = email.utils.format_datetime(email.utils.parsedate_to_datetime(modified).replace(year=2020), usegmt=True)
    assert embedded.get("/feeds/records.atom", headers={"if-modified-since": earlier}).status_code == 200
    assert embedded.get("/feeds/records.atom", headers={"if-modified-since": "not a date"}).status_code == 200


@pytest.mark.slow
def test_unknown_feeds_are_404_with_the_error_shape(embedded: TestClient) -> None:
    for path in ("/feeds/operations/no-such-operation.atom", "/feeds/cohorts/0123456789ab.atom"):
        response = embedded.get(path)
        assert response.status_code == 404
        assert response.json()["errors"][0]["extensions"]["code"] == "MANIFEST_NOT_FOUND"
    short = embedded.get("/feeds/cohorts/92bc.atom")  # under 12 hex digits is not a cohort id
    assert short.status_code == 404


def test_without_a_base_url_links_are_relative_and_there_is_no_xml_base(basic_store: registry.GitStore) -> None:
    with TestClient(create_app(Settings(repo_path=basic_store.path, graph_cache=False))) as client:
        response = client.get("/feeds/records.atom", headers={"host": "evil.example"})
    assert b"xml:base" not in response.content and b"evil.example" not in response.content
    feed = _parse(response.content)
    assert all(link.href.startswith("/") for e in feed.entries for link in e.links)


def test_a_retraction_hand_over_is_an_entry_of_its_own(store: registry.GitStore, tmp_path: Path) -> None:
    key = tmp_path / "alice"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True)
    public = key.with_suffix(".pub").read_text().split()
    scenario = basic_scenario()
    store.add(
        [to_manifest(d) for d in scenario.docs],
        commit_meta(1_700_000_000, subject="Initial policy and data"),
        extra_files={POLICY_PATH: f'alice namespaces="git" {public[0]} {public[1]}\n'.encode()},
        sign=ssh_signer(key),
    )
    retracted_at = 1_790_000_000  # `date -u -d @1790000000`: 2026-09-21T14:13:20Z
    store.add(
        [to_manifest(make_retraction(scenario.runs[1], "timer was wrong"))],
        commit_meta(retracted_at, subject="Retract run-a2"),
        sign=ssh_signer(key),
    )
    with TestClient(create_app(Settings(repo_path=store.path, graph_cache=False, base_url=BASE))) as client:
        feed = _parse(client.get("/feeds/records.atom").content)
    # The scenario: run-a1 (8120 ns, 08-01) then run-a2 (7.9 µs, 08-02) took the record; the signed
    # retraction of run-a2 hands it back to run-a1 when it is published.
    assert [(e.title.split(" (")[0], e.updated) for e in feed.entries] == [
        ("Record handed to run-a1 after a retraction", "2026-09-21T14:13:20Z"),
        ("New record: run-a2", "2026-08-02T12:00:00Z"),
        ("New record: run-a1", "2026-08-01T12:00:00Z"),
    ]
    assert feed.entries[0].tags[0].term == "retraction"
    related = [link.href for link in feed.entries[0].links if link.rel == "related"]
    assert related and related[0].endswith(digest_of(scenario.runs[1]))
