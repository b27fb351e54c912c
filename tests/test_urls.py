"""URLs are spelled once (api/core/urls.py): every link the builder makes is a path the application routes to the
route of the same name, pinned twins and `.json` twins included; and every route is declared from that table."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from urllib.parse import quote, urlencode

import orjson
import pytest
from starlette.routing import Match, Route

from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.core.urls import PATHS, Urls, twin

COMMIT = "e775d39b6768675ff8eb086da76420493425c1a4"
SAMPLES = {
    "digest": "sha256:" + "ab" * 32,
    "key": "sha256:" + "cd" * 32,
    "ident": "rmsnorm h4096@x:y",  # a space: the builder quotes it
    "slug": "sol-execbench",
    "commit_id": COMMIT,
    "run_id": "01a0032e-d57a-74d8-8b5c-15a3ea25ed78",
    "version": "0123456789abcdef",
    "name": "graphiql.min.js",
}


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> list[Route]:
    app = create_app(Settings(repo_path=tmp_path_factory.mktemp("none") / "manifests.git"))  # never started
    return [route for route in app.routes if isinstance(route, Route)]


def _params(name: str) -> dict[str, str]:
    return {param: SAMPLES[param] for param in re.findall(r"\{(\w+)", PATHS[name])}


def _routed(routes: list[Route], url: str) -> str | None:
    """The name of the route the application matches a built URL's path with (its query left out)."""
    path = url.split("?")[0]
    from urllib.parse import unquote

    for route in routes:
        scope = {"type": "http", "method": sorted(route.methods or ["GET"])[0], "path": unquote(path), "root_path": ""}
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return route.name
    return None


PINNED_ONLY = {"export", "run_card", "cohort_card", "operation_card"}  # paths that exist pinned only
ROUTED = sorted(set(PATHS) - {"static"} - PINNED_ONLY)  # and a mount


@pytest.mark.parametrize("name", ROUTED)
def test_every_path_is_the_route_of_its_name(routes: list[Route], name: str) -> None:
    url = Urls("https://r.example").url_path_for(name, **_params(name)).removeprefix("https://r.example")
    assert _routed(routes, url) == name


@pytest.mark.parametrize(
    "name", ["cohort", "records", "operation", "run_badge", "records_feed", "run", "gpu", *sorted(PINNED_ONLY)]
)
def test_pinned_paths_are_the_pinned_routes(routes: list[Route], name: str) -> None:
    assert _routed(routes, Urls().url_path_for(name, at=COMMIT, **_params(name))) == f"pinned_{name}"


def test_the_json_twins_route_to_their_pages(routes: list[Route]) -> None:
    assert _routed(routes, Urls().url_path_for("records", format="json")) == "records_json"
    assert _routed(routes, Urls().url_path_for("home", format="json")) == "home_json"
    assert _routed(routes, Urls().url_path_for("home", at=COMMIT, format="json")) == "pinned_home_json"
    assert _routed(routes, Urls().url_path_for("run", at=COMMIT, format="json", digest=SAMPLES["digest"])) == (
        "pinned_run_json"
    )
    assert twin("/at/abc/") == "/at/abc/index.json"


@pytest.mark.parametrize("format", ["json", "md", "csv"])
def test_compare_routes_each_of_its_formats(routes: list[Route], format: str) -> None:
    assert _routed(routes, Urls().compare(["a", "b"], format=format)) == f"compare_{format}"
    assert _routed(routes, Urls().pinned(COMMIT).compare(["a", "b"], format=format)) == f"pinned_compare_{format}"


def test_a_uuid_is_kernelindexs_run_id_and_a_digest_a_run(routes: list[Route]) -> None:
    assert _routed(routes, f"/runs/{uuid.UUID(SAMPLES['run_id'])}") == "kernelindex_run"
    assert _routed(routes, f"/runs/{SAMPLES['digest']}") == "run"


def test_the_builder_quotes_what_it_is_given() -> None:
    urls = Urls("https://r.example")
    assert urls.operation("rmsnorm h4096/x") == "https://r.example/operations/rmsnorm%20h4096%2Fx"
    assert urls.pinned(COMMIT).cohort("sha256:ab", after="x y", min_trust="VERIFIED") == (
        f"https://r.example/at/{COMMIT}/cohorts/sha256:ab?after=x+y&minTrust=VERIFIED"
    )
    assert urls.feed("operations/sha256:ab", COMMIT) == f"https://r.example/at/{COMMIT}/feeds/operations/sha256:ab.atom"
    assert urls.published(COMMIT, "SoftwareProject", "p") == f"https://r.example/at/{COMMIT}/projects/p"
    assert urls.published(COMMIT, "ServingRun", "sha256:ab") == f"https://r.example/at/{COMMIT}/runs/sha256:ab"
    assert urls.published(COMMIT, "Model", "sha256:ab") == f"https://r.example/at/{COMMIT}/manifests/sha256:ab"
    assert Urls.of("https://r.example/").graphql() == "https://r.example/graphql"
    assert Urls.of(None).absolute is False


@pytest.mark.parametrize("route", sorted(PATHS))
def test_each_parameter_is_quoted_as_one_path_segment(route: str) -> None:
    # Every character up to U+02FF and a few beyond, each as a whole parameter, against urllib's own quoting;
    # `quote(safe=":@")` keeps RFC 3986's unreserved characters and `:@`, and writes `/` as `%2F`.
    names = re.findall(r"\{(\w+)(?::\w+)?\}", PATHS[route])
    for value in [*map(chr, range(0x300)), "", "..", "sha256:ab", "a b/c", "\U0001f600", "%41", "x?y#z"]:
        expected = re.sub(r"\{(\w+)(?::\w+)?\}", quote(value, safe=":@").replace("\\", "\\\\"), PATHS[route])
        assert Urls()._path(route, dict.fromkeys(names, value), None) == expected


@pytest.mark.parametrize("variables", [None, {}, {"at": None, "key": "sha256:ab", "first": 50, "q": "a&b=c d"}])
def test_a_document_opened_at_the_endpoint_is_form_encoded_whole(variables: dict[str, object] | None) -> None:
    document = "  query Page($key: String!) { cohort(key: $key) { key label: size } } # é&=+?\n"
    query = {"query": document.strip(), **({"variables": orjson.dumps(variables).decode()} if variables else {})}
    for _ in range(2):  # the second time from what was kept of the first
        assert Urls("https://r.example").graphql(document, variables) == f"https://r.example/graphql?{urlencode(query)}"


SOURCES = [p for tree in ("api", "web") for p in sorted((Path(__file__).parent.parent / tree).rglob("*.py"))]
ROUTE_LITERAL = re.compile(
    r"[\"'f](/(at|runs|manifests|cohorts|feeds|commits|badges|operations|implementations|projects|sources|serving|exports)/)"
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(Path(__file__).parent.parent).as_posix())
def test_no_module_but_the_table_spells_a_page_path(path: Path) -> None:
    """Paths of pages and permalinks are spelled in `api/core/urls.py` alone (docstrings and comments may name them)."""
    if path.name == "urls.py" and path.parent.name == "core":
        return
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    documentation = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    spelled = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documentation
        and ROUTE_LITERAL.search('"' + node.value)
    ]
    assert not spelled, spelled


TEMPLATES = sorted((Path(__file__).parent.parent / "web" / "templates").glob("*.html"))


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_no_template_spells_a_path(path: Path) -> None:
    """A template links with the builder (`links.cohort(key)`), never by gluing a path to something."""
    text = path.read_text(encoding="utf-8")
    assert not re.findall(r'(?:href|src|action)="/|}}/', text)
