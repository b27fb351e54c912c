"""Citations of a cohort's leaderboard and of the dataset (an export at a commit), end to end: in TEXT, BIBTEX
(read back with pybtex: a corporate author is one name) and CSL_JSON, absolute or saying they have no
permalink (never root-relative), under `baseUrl`, on the leaderboard and exports pages with copy buttons that
copy absolute URLs; `serve` warns without a base URL; `/schema.graphql` serves the SDL."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import basic_scenario, commit_manifests, digest_of
from pybtex.database import parse_string
from server import Running, serve

from kernelindex import registry
from kernelindex.registry.present import NO_PERMALINK
from kernelindex.registry.snapshots import Snapshots
from kernelindex.web.render import ORIGIN

BASE = "https://registry.example.org"
HTML = {"accept": "text/html"}
SCHEMA = Path(__file__).with_name("schema.graphql")
CITATIONS = """
query($key: String!, $base: String, $accessed: String) {
  registry { commit { id } cohort(key: $key) { key permalink
    text: citation(baseUrl: $base, accessed: $accessed)
    bibtex: citation(format: BIBTEX, baseUrl: $base, accessed: $accessed)
    csl: citation(format: CSL_JSON, baseUrl: $base, accessed: $accessed) } }
}
"""


@dataclass(frozen=True)
class Site:
    running: Running
    commit: str
    cohort: str

    def cohort_citations(self, base: str | None = None, accessed: str | None = None) -> dict[str, Any]:
        answer = self.running.graphql(CITATIONS, {"key": self.cohort, "base": base, "accessed": accessed}).json()
        assert "errors" not in answer, answer
        found: dict[str, Any] = answer["data"]["registry"]["cohort"]
        return found


def _built(path: Path) -> tuple[str, str]:
    store = registry.GitStore.init(path)
    scenario = basic_scenario()
    head = commit_manifests(store, scenario.docs)
    snapshots = Snapshots(path)
    snapshots.load()
    cohort = snapshots.head.facts[digest_of(scenario.runs[0])].cohort
    assert cohort is not None
    return head, cohort


@pytest.fixture(scope="module")
def with_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("cite") / "manifests.git"
    head, cohort = _built(path)
    with serve(path, base_url=BASE + "/") as running:
        yield Site(running, head, cohort)


@pytest.fixture(scope="module")
def without_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("cite-relative") / "manifests.git"
    head, cohort = _built(path)
    with serve(path) as running:
        yield Site(running, head, cohort)


def _one_corporate_author(bibtex: str, name: str) -> dict[str, Any]:
    (entry,) = parse_string(bibtex, "bibtex").entries.values()
    (person,) = entry.persons["author"]
    # Braced, the whole name is one family name: BibTeX never splits it into given and family names.
    assert person.first_names == [] and person.last_names == ["{" + name + "}"]
    return dict(entry.fields)


def test_a_cohort_citation_in_three_formats_under_the_base_url(with_base: Site) -> None:
    found = with_base.cohort_citations(accessed="2026-12-01")
    link = f"{BASE}/at/{with_base.commit}/cohorts/{with_base.cohort}"
    assert found["permalink"] == link
    assert found["text"] == (
        "KernelIndex registry. Leaderboard: Operation rmsnorm-h4096 · hidden = 4096 · tokens = 2048 · bf16 · "
        f"NVIDIA B200 · test-protocol (2023-11-14). 3 ranked runs; leader kernel-a: 7.90 µs. Cohort "
        f"{with_base.cohort}, ranking-v1 at commit {with_base.commit}. {link}. Accessed 2026-12-01."
    )
    fields = _one_corporate_author(found["bibtex"], "KernelIndex registry")
    assert fields["url"] == link and fields["urldate"] == "2026-12-01" and fields["version"] == with_base.commit
    assert fields["year"] == "2023" and with_base.cohort in fields["note"]
    csl = json.loads(found["csl"])
    assert csl["URL"] == link and csl["author"] == [{"literal": "KernelIndex registry"}]
    assert csl["issued"] == {"date-parts": [[2023, 11, 14]]} and csl["accessed"] == {"date-parts": [[2026, 12, 1]]}


def test_without_a_base_url_a_citation_says_it_has_no_permalink(without_base: Site) -> None:
    found = without_base.cohort_citations()
    assert found["text"].endswith(NO_PERMALINK) and "/at/" not in found["text"]
    fields = _one_corporate_author(found["bibtex"], "KernelIndex registry")
    assert "url" not in fields and "howpublished" not in fields and NO_PERMALINK in fields["note"]
    csl = json.loads(found["csl"])
    assert "URL" not in csl and NO_PERMALINK in csl["note"]
    assert found["permalink"] == f"/at/{without_base.commit}/cohorts/{without_base.cohort}"  # a link, not a citation
    run = digest_of(basic_scenario().runs[0])
    cited = without_base.running.graphql(f'{{ run(id: "{run}") {{ citation(format: BIBTEX) }} }}').json()
    fields = _one_corporate_author(cited["data"]["run"]["citation"], "test")  # the commit's Source: trailer
    assert "url" not in fields and NO_PERMALINK in fields["note"]


@pytest.mark.parametrize(
    ("base", "permalink"),
    [
        ("https://mirror.example", "https://mirror.example/at/{commit}/cohorts/{key}"),
        ("http://mirror.example:8080/kernelindex/", "http://mirror.example:8080/kernelindex/at/{commit}/cohorts/{key}"),
        ("javascript:alert(1)", None),
        ("ftp://mirror.example", None),
        ("/relative", None),
        ("https://mirror.example/?q=1", None),
        ("https://mirror.example/#top", None),
        ("https://user@mirror.example", None),
    ],
)
def test_a_base_url_given_by_the_client(without_base: Site, base: str, permalink: str | None) -> None:
    answer = without_base.running.graphql(CITATIONS, {"key": without_base.cohort, "base": base}).json()
    if permalink is None:
        assert answer["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT", answer
        return
    expected = permalink.format(commit=without_base.commit, key=without_base.cohort)
    found = answer["data"]["registry"]["cohort"]
    assert found["text"].endswith(f"{expected}.")
    assert json.loads(found["csl"])["URL"] == expected


def test_the_dataset_citation_names_the_bytes_the_export_serves(with_base: Site) -> None:
    client = with_base.running.client
    document = """{ registry { catalogExport { name url sha256 sizeBytes manifestCount sources tables { table rows }
        citation bibtex: citation(format: BIBTEX) csl: citation(format: CSL_JSON) } } }"""
    found = with_base.running.graphql(document).json()["data"]["registry"]["catalogExport"]
    url = f"{BASE}/at/{with_base.commit}/export.jsonl.zst"
    assert found["url"] == url
    exported = client.get(url.removeprefix(BASE)).content  # independent: the bytes the export route serves
    assert found["sha256"] == hashlib.sha256(exported).hexdigest() and found["sizeBytes"] == len(exported)
    assert found["manifestCount"] == len(basic_scenario().docs)
    assert {t["table"]: t["rows"] for t in found["tables"]}["benchmark_runs"] == 3
    assert found["citation"].endswith(f"{url}.") and found["sha256"] in found["citation"]
    fields = _one_corporate_author(found["bibtex"], "KernelIndex registry")
    assert fields["url"] == url and found["sha256"] in fields["note"] and fields["version"] == with_base.commit
    assert json.loads(found["csl"])["URL"] == url
    page = client.get("/exports", headers=HTML)
    assert page.status_code == 200 and found["sha256"] in page.text and found["name"] in page.text
    assert (
        client.get(f"/at/{with_base.commit}/exports.json").json()["data"]["registry"]["catalogExport"]["sha256"]
        == found["sha256"]
    )


def test_the_leaderboard_page_cites_itself_and_copies_absolute_urls(with_base: Site, without_base: Site) -> None:
    absolute = with_base.running.client.get(f"/cohorts/{with_base.cohort}", headers=HTML).text
    link = f"{BASE}/at/{with_base.commit}/cohorts/{with_base.cohort}"
    assert "Cite this leaderboard" in absolute and f"{link}." in absolute
    assert 'id="copy-text"' not in absolute  # the citations shown are the ones copied
    relative = without_base.running.client.get(f"/cohorts/{without_base.cohort}", headers=HTML).text
    assert NO_PERMALINK in relative and f'data-origin="{ORIGIN}"' in relative
    # What the buttons copy: made under the placeholder origin, which the page script replaces with its own.
    copied = f"{ORIGIN}/at/{without_base.commit}/cohorts/{without_base.cohort}"
    assert '<pre id="copy-text" hidden>' in relative and f"{copied}." in relative
    script = without_base.running.client.get("/static/site.js").text
    assert "window.location.origin" in script and "data-origin" in script


def test_the_schema_as_sdl(without_base: Site) -> None:
    client = without_base.running.client
    response = client.get("/schema.graphql")
    assert response.status_code == 200 and response.text == SCHEMA.read_text()
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=0, must-revalidate"
    again = client.get("/schema.graphql", headers={"if-none-match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


def _serve_stderr(repo: Path, *extra: str) -> str:
    """The first lines `kernelindex serve` writes before it answers /healthz, then stop it."""
    with httpx.Client() as probe:
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, "-m", "kernelindex.cli", "serve", "--repo", str(repo), "--port", str(port), *extra],
            env={**os.environ, "KERNELINDEX_GRAPH_CACHE": "0", "KERNELINDEX_BASE_URL": ""},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None, "serve exited"
                try:
                    if probe.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline
                time.sleep(0.1)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        assert process.stderr is not None
        text = process.stderr.read().decode()
        process.stderr.close()
        return text


@pytest.mark.slow  # two real server processes
def test_serve_warns_at_start_without_a_base_url(tmp_path: Path) -> None:
    path = tmp_path / "manifests.git"
    _built(path)
    warned = _serve_stderr(path)
    assert "warning: no base URL is set (KERNELINDEX_BASE_URL or --base-url)" in warned
    assert "citations carry no permalink" in warned
    assert "warning" not in _serve_stderr(path, "--base-url", BASE)
