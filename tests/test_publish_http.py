"""Exports over HTTP (streamed, immutable, `latest.json`) and the root files (llms.txt, robots.txt, the
sitemap), against a small registry and the embedded one."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
import zstandard
from helpers import EMBEDDED_REPO, basic_scenario, commit_manifests, digest_of, make_operation
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.registry.citations import export_digest
from kernelindex.registry.export import plan_export, write_export
from kernelindex.registry.snapshots import Snapshots

BASE = "https://registry.example.org"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@pytest.fixture
def client(basic_store: registry.GitStore) -> Iterator[TestClient]:
    # Not following main: a test moves main and back, and a refresh in between would publish the commit.
    settings = Settings(repo_path=basic_store.path, graph_cache=False, base_url=BASE, watch=False, poll_seconds=3600)
    with TestClient(create_app(settings)) as c:
        yield c


def test_the_http_export_is_the_cli_export_byte_for_byte(
    client: TestClient, basic_store: registry.GitStore, tmp_path_factory: pytest.TempPathFactory
) -> None:
    head = basic_store.head()
    assert head is not None
    response = client.get(f"/at/{head}/export.jsonl.zst")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zstd"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    snapshots = Snapshots(basic_store.path)
    snapshots.load()
    plan = plan_export(snapshots.store(), snapshots.head)
    assert response.headers["content-disposition"] == f'attachment; filename="{plan.name}"'
    written = write_export(plan, tmp_path_factory.mktemp("cli") / plan.name)
    assert hashlib.sha256(response.content).hexdigest() == written.sha256
    # Served with its size and digest (RFC 9530), the bytes a citation of the dataset names.
    assert int(response.headers["content-length"]) == written.size == export_digest(plan).size
    assert response.headers["repr-digest"] == f"sha-256=:{base64.b64encode(bytes.fromhex(written.sha256)).decode()}:"
    lines = zstandard.ZstdDecompressor().stream_reader(response.content).read().splitlines()
    assert len(lines) > len(basic_scenario().docs)
    again = client.get(f"/at/{head}/export.jsonl.zst", headers={"if-none-match": response.headers["etag"]})
    assert again.status_code == 304


def test_export_addresses_a_full_commit_of_main(client: TestClient, basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    short = client.get(f"/at/{head[:12]}/export.jsonl.zst", follow_redirects=False)
    assert short.status_code == 307
    assert short.headers["location"] == f"{BASE}/at/{head}/export.jsonl.zst"
    missing = client.get(f"/at/{'0' * 40}/export.jsonl.zst")
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    proposal = commit_manifests(basic_store, [make_operation("later-op")])  # moves main...
    assert basic_store._compare_and_swap(registry.store.MAIN, proposal, head)  # ...and back: now off main
    off_main = client.get(f"/at/{proposal}/export.jsonl.zst")
    assert off_main.status_code == 404
    assert "not on main" in off_main.json()["errors"][0]["message"]


def test_latest_points_at_the_served_head(client: TestClient, basic_store: registry.GitStore) -> None:
    head = basic_store.head()
    assert head is not None
    latest = client.get("/exports/latest.json")
    body = latest.json()
    assert body["commit"] == head
    assert body["url"] == f"{BASE}/at/{head}/export.jsonl.zst"
    assert body["name"] == f"catalog-2023-11-14-{head[:8]}.jsonl.zst"  # TEST_TIME is 2023-11-14T22:13:20Z
    served = client.get(f"/at/{head}/export.jsonl.zst").content
    assert (body["sha256"], body["size"]) == (hashlib.sha256(served).hexdigest(), len(served))
    assert latest.headers["cache-control"] == "public, max-age=60"
    assert client.get("/exports/latest.json", headers={"if-none-match": latest.headers["etag"]}).status_code == 304


def test_robots_and_sitemap_with_a_base_url(client: TestClient, basic_store: registry.GitStore) -> None:
    robots = client.get("/robots.txt").text
    assert "Disallow: /hooks/" in robots and f"Sitemap: {BASE}/sitemap.xml" in robots
    index = ET.fromstring(client.get("/sitemap.xml").content)
    locs = [e.text for e in index.iter(f"{SITEMAP}loc")]
    families = ["site", "operations-1", "cohorts-1", "gpus-1", "runs-1"]  # no project, model or serving run
    assert locs == [f"{BASE}/sitemap-{name}.xml" for name in families]
    runs = ET.fromstring(client.get("/sitemap-runs-1.xml").content)
    head = basic_store.head()
    urls = [e.text for e in runs.iter(f"{SITEMAP}loc")]
    assert urls == sorted(f"{BASE}/at/{head}/runs/{digest_of(run)}" for run in basic_scenario().runs)
    for url in urls:
        assert url is not None
        assert client.get(url.removeprefix(BASE)).status_code == 200  # every listed permalink answers
    assert client.get("/sitemap-runs-2.xml").status_code == 404
    assert client.get("/sitemap-runs-0.xml").status_code == 404
    moved = client.get("/sitemaps/runs-1.xml", follow_redirects=False)  # where the files were first
    assert moved.status_code == 301 and moved.headers["location"] == f"{BASE}/sitemap-runs-1.xml"


def test_no_base_url_means_no_sitemap_and_relative_links(basic_store: registry.GitStore) -> None:
    with TestClient(create_app(Settings(repo_path=basic_store.path, graph_cache=False))) as client:
        sitemap = client.get("/sitemap.xml", headers={"host": "evil.example"})
        robots = client.get("/robots.txt").text
        llms = client.get("/llms.txt", headers={"host": "evil.example"}).text
    assert sitemap.status_code == 404
    assert sitemap.json()["errors"][0]["extensions"]["code"] == "NO_BASE_URL"
    assert "Sitemap:" not in robots
    assert "evil.example" not in llms and "(/graphql)" in llms


@pytest.mark.slow
def test_llms_txt_says_what_the_registry_is_and_how_to_ask_it() -> None:
    settings = Settings(repo_path=EMBEDDED_REPO, graph_cache=False, base_url=BASE)
    with TestClient(create_app(settings)) as client:
        response = client.get("/llms.txt")
        commit = client.get("/healthz").json()["serving"]
    text = response.text
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert text.startswith("# KernelIndex registry\n\n> ")  # llmstxt.org: an H1, then a blockquote
    assert f"Serving commit {commit}" in text
    listed = subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert f"{len(listed):,} manifests" in text  # every file of the tree is a manifest (test_embedded)
    assert f"[GraphQL]({BASE}/graphql)" in text and f"({BASE}/mcp)" in text
    for name in ("query Run(", "query Leaderboard(", "records(first", "compare(runs"):
        assert name in text
