"""The sitemap over every page family, held to the sitemap protocol's rules (sitemaps.org/protocol.html):
UTF-8 XML in the protocol's namespace, only its elements, absolute URLs of under 2,048 characters on the
sitemap's own host and under the folder of the file that lists them, W3C datetimes, at most 50,000 URLs
and 50 MB a file (50,000 files an index). Every URL listed answers, and families are cut into files at
their exact size."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from catalog_scenario import Catalog, build_catalog
from helpers import EMBEDDED_REPO
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.core.urls import Urls
from kernelindex.registry.snapshots import Snapshots
from kernelindex.service.wellknown import SITEMAP_FAMILIES, sitemap_index, sitemap_part

BASE = "https://registry.example.org"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MAX_URLS = 50_000
MAX_BYTES = 50 * 1024 * 1024
MAX_LOC = 2_048
W3C_DATETIME = re.compile(r"\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?")
HTML = {"accept": "text/html"}


def _check(body: bytes, root: str, entry: str, where: str, limit: int) -> list[str]:
    """The locs of a sitemap (or index) file held to the protocol's rules; `where` is the file's own URL."""
    assert body.startswith(b"<?xml version='1.0' encoding='utf-8'?>")  # declared UTF-8
    body.decode("utf-8")  # strictly UTF-8
    assert len(body) <= MAX_BYTES
    tree = ET.fromstring(body)
    assert tree.tag == f"{{{NS}}}{root}"
    folder = where.rsplit("/", 1)[0] + "/"
    locs = []
    for item in tree:
        assert item.tag == f"{{{NS}}}{entry}"
        children = [child.tag.removeprefix(f"{{{NS}}}") for child in item]
        assert children[0] == "loc" and set(children) <= {"loc", "lastmod", "changefreq", "priority"}
        assert len(children) == len(set(children))
        loc = item.findtext(f"{{{NS}}}loc") or ""
        parts = urlsplit(loc)
        assert parts.scheme == "https" and parts.netloc == urlsplit(BASE).netloc, loc
        assert len(loc) < MAX_LOC and loc.startswith(folder), loc  # under the listing file's folder
        lastmod = item.findtext(f"{{{NS}}}lastmod")
        assert lastmod is None or W3C_DATETIME.fullmatch(lastmod), lastmod
        locs.append(loc)
    assert len(locs) <= limit
    assert len(locs) == len(set(locs))
    return locs


@pytest.fixture
def built(store: registry.GitStore) -> Catalog:
    return build_catalog(store)


@pytest.fixture
def client(store: registry.GitStore, built: Catalog) -> Iterator[TestClient]:
    settings = Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600, base_url=BASE)
    with TestClient(create_app(settings)) as c:
        yield c


def _crawl(client: TestClient) -> dict[str, list[str]]:
    """Every sitemap file the index lists, by name, with the URLs it lists (each file checked)."""
    index = client.get("/sitemap.xml")
    assert index.status_code == 200 and index.headers["content-type"] == "application/xml"
    files = _check(index.content, "sitemapindex", "sitemap", f"{BASE}/sitemap.xml", MAX_URLS)
    found = {}
    for url in files:
        response = client.get(url.removeprefix(BASE))
        assert response.status_code == 200, url
        name = url.removeprefix(f"{BASE}/sitemap-").removesuffix(".xml")
        found[name] = _check(response.content, "urlset", "url", url, MAX_URLS)
    return found


def test_every_page_family_is_listed_and_every_url_answers(client: TestClient, built: Catalog) -> None:
    found = _crawl(client)
    assert list(found) == ["site", "operations-1", "cohorts-1", "projects-1", "gpus-1", "runs-1"]
    assert found["operations-1"] == [f"{BASE}/operations/{name}" for name in ("op-a", "op-b", "op-c")]
    assert found["projects-1"] == [f"{BASE}/projects/{name}" for name in ("proj-idle", "proj-x", "proj-y")]
    assert found["gpus-1"] == [f"{BASE}/gpus/{slug}" for slug in ("nvidia-b200", "nvidia-gb200", "nvidia-h100")]
    assert len(found["cohorts-1"]) == 6  # C1 to C6
    runs = [d for name, d in built.digests.items() if name.startswith("c") and name[1].isdigit()]
    first = {built.digests["c6-x2-later"]: built.second}
    assert found["runs-1"] == [f"{BASE}/at/{first.get(d, built.first)}/runs/{d}" for d in sorted(runs)]
    for urls in found.values():
        for url in urls:
            path = url.removeprefix(BASE)
            answer = client.get(path, headers=HTML if not path.endswith((".atom", ".json")) else {})
            assert answer.status_code == 200, url


def test_the_index_names_only_files_it_serves(client: TestClient) -> None:
    for name in ("runs-2", "runs-0", "models-1", "serving-cohorts-1", "nope-1", "runs-01", "site-1", "runs"):
        response = client.get(f"/sitemap-{name}.xml")
        assert response.status_code == 404 and response.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(("chunk", "files"), [(3, ["operations-1"]), (2, ["operations-1", "operations-2"])])
def test_a_family_is_cut_into_files_at_their_exact_size(
    store: registry.GitStore, built: Catalog, chunk: int, files: list[str]
) -> None:
    snapshots = Snapshots(store.path, validate=False)
    snapshots.load()
    urls = Urls(BASE)
    index = ET.fromstring(sitemap_index(snapshots.head, urls, chunk))
    names = [
        (loc.text or "").removeprefix(f"{BASE}/sitemap-").removesuffix(".xml") for loc in index.iter(f"{{{NS}}}loc")
    ]
    assert [n for n in names if n.startswith("operations-")] == files
    sizes = [
        len(ET.fromstring(sitemap_part(snapshots.head, urls, n, chunk) or b"").findall(f"{{{NS}}}url")) for n in files
    ]
    assert sizes == ([3] if chunk == 3 else [2, 1])
    assert sitemap_part(snapshots.head, urls, f"operations-{len(files) + 1}", chunk) is None


@pytest.mark.slow
def test_the_embedded_registrys_sitemap_lists_every_page() -> None:
    """480 operations, 2,627 cohorts, 620 projects, 9 GPUs, 6 models, 341 serving cohorts, and the permalinks
    of 9,508 kernel runs and 722 serving runs (two files: 10,000 and 230), each file within the protocol."""
    settings = Settings(repo_path=EMBEDDED_REPO, graph_cache=False, base_url=BASE)
    with TestClient(create_app(settings)) as client:
        index = _check(client.get("/sitemap.xml").content, "sitemapindex", "sitemap", f"{BASE}/sitemap.xml", MAX_URLS)
        counts = {}
        for url in index:
            name = url.removeprefix(f"{BASE}/sitemap-").removesuffix(".xml")
            counts[name] = len(_check(client.get(url.removeprefix(BASE)).content, "urlset", "url", url, MAX_URLS))
    assert counts == {
        "site": 14,
        "operations-1": 480,
        "cohorts-1": 2_627,
        "projects-1": 620,
        "gpus-1": 9,
        "models-1": 6,
        "serving-cohorts-1": 341,
        "runs-1": 10_000,
        "runs-2": 230,
    }
    assert set(SITEMAP_FAMILIES) == {name.rsplit("-", 1)[0] for name in counts if name != "site"}


def test_sitemap_files_and_llms_txt_are_made_once_a_head(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each was made again for every request (a file of 10,000 URLs each time); now once for the served head."""
    from kernelindex.http import publishing

    made: list[str] = []

    def counted(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def make(*args: Any) -> Any:
            made.append(name)
            return original(*args)

        return make

    for name in ("sitemap_index", "sitemap_file", "llms_txt"):
        monkeypatch.setattr(publishing, name, counted(name, getattr(publishing, name)))
    paths = ["/sitemap.xml", "/sitemap-site.xml", "/llms.txt", "/sitemap-no-such-family-1.xml"]
    first = [client.get(path) for path in paths]
    again = [client.get(path) for path in paths]
    assert [r.status_code for r in first] == [200, 200, 200, 404]
    assert [(r.status_code, r.content, r.headers["content-type"]) for r in again] == [
        (r.status_code, r.content, r.headers["content-type"]) for r in first
    ]
    # Each made once; a name that is no file is asked again (it is refused before anything is made).
    assert sorted(made) == ["llms_txt", "sitemap_file", "sitemap_file", "sitemap_file", "sitemap_index"]
