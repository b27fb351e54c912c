"""Link previews: every page's Open Graph and Twitter card tags (title and description from its data; the
canonical URL and the image absolute under the configured base URL, never from the Host header, and left
out without one), Atom autodiscovery on the pages that have a feed (each link answers a feed), and the
preview images of run, cohort and operation pages: valid PNGs of the declared size (the signature, the IHDR
and every chunk's CRC read here with struct and zlib, and Pillow decodes them), their text from the data,
the same bytes for the same data, immutable where pinned."""

from __future__ import annotations

import hashlib
import io
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import basic_scenario, commit_manifests, digest_of
from pagetext import Page, read_page
from PIL import Image
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.web.cards import FONT

BASE = "https://registry.example.org"
HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
HOSTILE = {**HTML, "host": "evil.example", "x-forwarded-host": "evil.example", "forwarded": "host=evil.example"}
ATOM = "{http://www.w3.org/2005/Atom}"


@dataclass(frozen=True)
class Site:
    client: TestClient
    main: str
    runs: dict[str, str]
    cohort: str


def _site(store: registry.GitStore, base_url: str | None) -> Iterator[Site]:
    s = basic_scenario()
    main = commit_manifests(store, s.docs)
    settings = Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600, base_url=base_url)
    with TestClient(create_app(settings)) as client:
        found = client.post("/graphql", json={"query": '{ run(id: "run-a1") { cohort { key } } }'}).json()
        runs = {doc["metadata"]["name"]: digest_of(doc) for doc in s.runs}
        yield Site(client, main, runs, found["data"]["run"]["cohort"]["key"])


@pytest.fixture
def site(store: registry.GitStore) -> Iterator[Site]:
    yield from _site(store, BASE)


def _pages(site: Site) -> dict[str, str]:
    """A path of every page family (with the image it previews with, if any: run, cohort, operation)."""
    return {
        "home": "/",
        "records": "/records",
        "cohort": f"/cohorts/{site.cohort}",
        "compare": "/compare?run=run-a1&run=run-b1",
        "search": "/search?q=rmsnorm",
        "operations": "/operations",
        "operation": "/operations/rmsnorm-h4096",
        "implementation": "/implementations/kernel-a",
        "source": "/sources/test",
        "sources": "/sources",
        "projects": "/projects",
        "gpus": "/gpus",
        "gpu": "/gpus/nvidia-b200",
        "models": "/models",
        "serving": "/serving",
        "commit": f"/commits/{site.main}",
        "run": f"/at/{site.main}/runs/{site.runs['run-a1']}",
        "pinned cohort": f"/at/{site.main}/cohorts/{site.cohort}",
    }


CARDS = {"cohort", "operation", "run", "pinned cohort"}


def _read(site: Site, path: str, headers: dict[str, str] = HTML) -> Page:
    response = site.client.get(path, headers=headers)
    assert response.status_code == 200, (path, response.status_code)
    return read_page(response.text)


def test_every_page_previews_with_its_title_description_and_canonical_url(site: Site) -> None:
    for family, path in _pages(site).items():
        page = _read(site, path, HOSTILE)
        assert not [a for _, a in page.elements if any("evil.example" in v for v in a.values())], family
        (title,) = page.meta("og:title")
        (description,) = page.meta("og:description")
        assert title and page.meta("twitter:title") == [title], family
        assert description and page.meta("description") == page.meta("twitter:description") == [description]
        assert page.meta("og:url") == [BASE + path] == [link["href"] for link in page.links("canonical")], family
        images = page.meta("og:image")
        if family in CARDS:
            (image,) = images
            assert image.startswith(f"{BASE}/at/{site.main}/") and image.endswith("/card.png"), family
            assert page.meta("twitter:image") == [image] and page.meta("twitter:card") == ["summary_large_image"]
            assert page.meta("og:image:width") == ["1200"] and page.meta("og:image:height") == ["630"]
        else:
            assert images == [] and page.meta("twitter:card") == ["summary"], family


def test_descriptions_come_from_the_data(site: Site) -> None:
    run = _read(site, _pages(site)["run"]).meta("og:description")
    assert run == ["Rank 2 of 3 in its comparison group · 8.12 µs median latency · kernel-a on NVIDIA B200 (sm_100): "
                   "Operation rmsnorm-h4096."]  # fmt: skip
    cohort = _read(site, _pages(site)["cohort"]).meta("og:description")
    assert cohort == ["3 ranked runs of Operation rmsnorm-h4096 (hidden = 4096 · tokens = 2048 · bf16). "
                      "#1: kernel-a, 7.90 µs."]  # fmt: skip


def test_without_a_base_url_a_preview_has_no_absolute_url(store: registry.GitStore) -> None:
    for site in _site(store, None):
        for family, path in _pages(site).items():
            page = _read(site, path, HOSTILE)
            assert page.meta("og:title") and page.meta("og:description"), family
            for absolute in ("og:url", "og:image", "twitter:image"):
                assert page.meta(absolute) == [], (family, absolute)
            assert page.links("canonical") == [] and page.meta("twitter:card") == ["summary"], family


FEEDS = {
    "home": ["/feeds/records.atom", "/feeds/publications.atom"],
    "records": ["/feeds/records.atom"],
    "cohort": ["/feeds/cohorts/{cohort}.atom"],
    "pinned cohort": ["/feeds/cohorts/{cohort}.atom"],  # a subscription follows main: the head's feed
    "operation": ["/feeds/operations/{operation}.atom"],
    "run": ["/feeds/cohorts/{cohort}.atom"],
}


def test_pages_with_a_feed_advertise_it_and_it_answers(site: Site) -> None:
    import xml.etree.ElementTree as ET

    operation = digest_of(basic_scenario().operation)
    for family, path in _pages(site).items():
        links = _read(site, path).links("alternate", "application/atom+xml")
        expected = [BASE + p.format(cohort=site.cohort, operation=operation) for p in FEEDS.get(family, [])]
        assert [link["href"] for link in links] == expected, family
        for link in links:
            assert link["title"], family
            feed = site.client.get(link["href"].removeprefix(BASE))
            assert feed.status_code == 200 and feed.headers["content-type"].startswith("application/atom+xml")
            assert ET.fromstring(feed.content).tag == f"{ATOM}feed"


# Preview images ---------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The PNG's chunks (type, data), each CRC checked (PNG specification, sections 5.2 to 5.4)."""
    assert data[:8] == PNG_SIGNATURE
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append((kind, body))
        at += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    return chunks


def _itxt(chunks: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The PNG's international text chunks, read by hand (keyword, flags, language, translated keyword)."""
    found = {}
    for kind, body in chunks:
        if kind == b"iTXt":
            keyword, rest = body.split(b"\0", 1)
            compressed, method, rest = rest[0], rest[1], rest[2:]
            _language, _translated, text = rest.split(b"\0", 2)
            assert method == 0
            found[keyword.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
    return found


def _card(site: Site, path: str) -> tuple[bytes, dict[str, str], Any]:
    response = site.client.get(path)
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    data = response.content
    chunks = _chunks(data)
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (width, height, depth, colour, compression, filtering, interlace) == (1200, 630, 8, 2, 0, 0, 0)
    Image.open(io.BytesIO(data)).verify()
    image = Image.open(io.BytesIO(data))
    image.load()
    assert (image.format, image.size, image.mode) == ("PNG", (1200, 630), "RGB")
    return data, _itxt(chunks), image


def test_a_run_card_says_what_the_runs_dossier_says(site: Site) -> None:
    digest = site.runs["run-a1"]
    dossier = site.client.get(f"/at/{site.main}/runs/{digest}", headers={"accept": "application/json"}).json()["run"]
    data, text, image = _card(site, f"/at/{site.main}/runs/{digest}/card.png")
    operation = dossier["operation"]["title"]
    assert text["Title"] == operation
    lines = text["Description"].split("\n")
    assert lines[0] == dossier["primary"]["display"] == "8.12 µs"
    assert lines[1] == f"Rank {dossier['rank']} of {dossier['cohort']['rankedCount']} in its comparison group"
    assert lines[2] == f"{dossier['implementation']['displayName']} on {dossier['environment']['gpu']}"
    assert lines[3] == f"{dossier['primary']['statistic']} {dossier['primary']['metric']} · evidence: reported"
    assert lines[4] == f"KernelIndex registry · commit {site.main[:12]} of {dossier['publishedAt'][:10]}"
    ink = image.crop((64, 240, 700, 360)).getcolors(1_000_000)  # where the value is drawn, in the accent colour
    assert ink is not None and any(colour == (5, 80, 174) for _, colour in ink)
    again = site.client.get(f"/at/{site.main}/runs/{digest}/card.png").content
    assert again == data  # the same bytes for the same data
    other, other_text, _ = _card(site, f"/at/{site.main}/runs/{site.runs['run-b1']}/card.png")
    assert other != data and other_text["Description"].split("\n")[0] == "9.00 µs"


def test_cohort_and_operation_cards(site: Site) -> None:
    _, cohort, _ = _card(site, f"/at/{site.main}/cohorts/{site.cohort}/card.png")
    assert cohort["Title"] == "Operation rmsnorm-h4096"
    assert cohort["Description"].split("\n")[:4] == [
        "7.90 µs",
        "#1: kernel-a",
        "3 ranked of 3 runs on NVIDIA B200 (sm_100)",
        "hidden = 4096 · tokens = 2048 · bf16",
    ]
    _, operation, _ = _card(site, f"/at/{site.main}/operations/rmsnorm-h4096/card.png")
    assert operation["Description"].split("\n")[:3] == [
        "3 runs",
        "1 comparison group · family rmsnorm",
        "Largest group's #1: kernel-a, 7.90 µs on NVIDIA B200 (sm_100)",
    ]


def test_a_card_pins_a_full_commit_of_main(site: Site) -> None:
    path = f"/runs/{site.runs['run-a1']}/card.png"
    moved = site.client.get(f"/at/{site.main[:10]}{path}", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == f"{BASE}/at/{site.main}{path}"
    assert site.client.get(f"/at/{'0' * 40}{path}").status_code == 404
    assert site.client.get(f"/at/{site.main}/runs/sha256:{'0' * 64}/card.png").status_code == 404
    assert site.client.get(path).status_code == 404  # never at the head: a preview shows a commit


def test_the_font_is_the_one_its_licence_names() -> None:
    licence = (FONT.parent / "LICENSE.DejaVu").read_text(encoding="utf-8")
    named = re.search(r"sha256 ([0-9a-f]{64})", licence)
    assert named is not None and hashlib.sha256(FONT.read_bytes()).hexdigest() == named.group(1)
    assert "Bitstream Vera" in licence and "Permission is hereby granted" in licence
