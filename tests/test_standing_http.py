"""Status after the fact, end to end: a page pinned to an older commit never changes, links to the run's status
(`/runs/{digest}/status?readAt=<commit>`), and that page (and its JSON twin) shows a retraction or supersession
signed after the pinned commit, with its reason, its commit and its signer; the head run page shows them too.
On the governed registry (tests/governed.py), whose commits are signed with real SSH keys (tests/signing.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape

import pytest
from governed import Governed, build_governed
from server import Running, serve
from signing import Key

from kernelindex import registry

HTML = {"accept": "text/html"}


@dataclass(frozen=True)
class Site:
    running: Running
    governed: Governed


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Key]) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("governed") / "manifests.git"
    governed = build_governed(registry.GitStore.init(path), keys["alice"])
    with serve(path) as running:
        yield Site(running, governed)


def _status_link(html: str) -> str:
    found = re.search(r'<a href="([^"]+)">Is this still the current result\?</a>', html)
    assert found is not None
    return unescape(found.group(1))


def test_a_retraction_signed_after_a_pinned_page_is_shown_from_its_status_link(site: Site) -> None:
    _, c1, c2, c3 = site.governed.commits
    run = site.governed.runs["c1"]
    client = site.running.client
    pinned = client.get(f"/at/{c1}/runs/{run}", headers=HTML)
    assert pinned.status_code == 200 and pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "Retracted" not in pinned.text  # at C1 nothing had happened yet: the page never changes
    link = _status_link(pinned.text)
    assert link == f"/runs/{run}/status?readAt={c1}"
    dossier = client.get(f"/at/{c1}/runs/{run}", headers={"accept": "application/json"}).json()
    assert dossier["run"]["statusUrl"] == link  # the pinned page's JSON twin carries the same link
    status = client.get(link, headers=HTML)
    assert status.status_code == 200
    assert status.headers["cache-control"] == "public, max-age=60"  # follows main, never immutable
    text = status.text
    assert "Retracted." in text and "clock drift" in text
    assert f'href="/commits/{c2}"' in text and "alice@example.com" in text
    assert "1 fact changed its standing" in text
    twin = client.get(f"/runs/{run}/status.json", params={"readAt": c1}).json()["data"]["registry"]
    standing = twin["runStanding"]
    assert twin["commit"]["id"] == c3 and standing["state"] == "RETRACTED" and standing["changed"]
    assert standing["ineligibilityReasons"] == ["RETRACTED"] and not standing["eligible"]
    retraction = standing["retraction"]
    assert (retraction["kind"], retraction["reason"], retraction["signedBy"]) == (
        "RETRACTION",
        "clock drift",
        "alice@example.com",
    )
    assert (retraction["commit"]["id"], retraction["position"]) == (c2, 2)
    assert retraction["manifest"]["digest"] == site.governed.overlays["retraction"]
    assert standing["later"] == [{"kind": "RETRACTION", "position": 2}]
    assert standing["readAt"]["id"] == c1


def test_a_reader_who_saw_the_retraction_is_told_nothing_changed(site: Site) -> None:
    _, _, c2, _ = site.governed.commits
    run = site.governed.runs["c1"]
    standing = site.running.client.get(f"/runs/{run}/status.json", params={"readAt": c2}).json()
    found = standing["data"]["registry"]["runStanding"]
    assert found["state"] == "RETRACTED" and not found["changed"] and found["later"] == []
    page = site.running.client.get(f"/runs/{run}/status", params={"readAt": c2[:12]}, headers=HTML).text
    assert "Nothing changed its standing since commit" in page


def test_a_supersession_and_a_verification(site: Site) -> None:
    c0, _, _, c3 = site.governed.commits
    runs = site.governed.runs
    superseded = site.running.client.get(f"/runs/{runs['b1']}/status.json", params={"readAt": c0}).json()
    found = superseded["data"]["registry"]["runStanding"]
    assert found["state"] == "SUPERSEDED" and found["supersession"]["reason"] == "wrong protocol"
    assert found["supersession"]["successor"]["digest"] == runs["d1"]
    assert found["supersession"]["commit"]["id"] == c3 and found["supersession"]["signedBy"] == "alice@example.com"
    verified = site.running.client.get(f"/runs/{runs['a2']}/status.json", params={"readAt": c0}).json()
    found = verified["data"]["registry"]["runStanding"]
    assert found["state"] == "CURRENT" and found["trust"] == "VERIFIED" and found["changed"]
    assert [v["runner"] for v in found["verifications"]] == ["registry-runner"]
    page = site.running.client.get(f"/runs/{runs['a2']}/status", headers=HTML).text
    assert "It stands." in page and "verified by 1 registry rerun" in page
    # An unsigned retraction names a1: listed as not counted, never as a fact.
    unsigned = site.running.client.get(f"/runs/{runs['a1']}/status.json").json()["data"]["registry"]["runStanding"]
    assert unsigned["state"] == "CURRENT" and unsigned["ignored"] == [
        {"kind": "Retraction", "digest": site.governed.overlays["unsigned_retraction"]}
    ]


def test_the_head_run_page_shows_the_signed_reason_commit_and_signer(site: Site) -> None:
    _, _, c2, c3 = site.governed.commits
    runs = site.governed.runs
    retracted = site.running.client.get(f"/at/{c3}/runs/{runs['c1']}", headers=HTML).text
    assert "Retracted 2026-09-21: clock drift" in retracted
    assert f'<a href="/commits/{c2}"><code>{c2[:12]}</code></a>, signed by alice@example.com' in retracted
    superseded = site.running.client.get(f"/at/{c3}/runs/{runs['b1']}", headers=HTML).text
    assert "Reason: wrong protocol" in superseded
    assert f'<a href="/commits/{c3}"><code>{c3[:12]}</code></a>, signed by alice@example.com' in superseded


def test_refusals_of_the_status_page(site: Site) -> None:
    client = site.running.client
    assert client.get(f"/runs/sha256:{'0' * 64}/status", headers=HTML).status_code == 404
    assert client.get("/runs/sha256:nope/status", headers=HTML).status_code == 400
    run = site.governed.runs["c1"]
    assert client.get(f"/runs/{run}/status", params={"readAt": "HEAD"}, headers=HTML).status_code == 400
    unknown = client.get(f"/runs/{run}/status.json", params={"readAt": "0" * 40})
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["extensions"]["code"] == "REVISION_NOT_FOUND"
    graphql = site.running.graphql('{ runStanding(run: "c1") { state } }').json()
    assert graphql["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
