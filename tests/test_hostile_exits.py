"""Hostile content stays inert at every exit: arbitrary strings (markup, quotes, `javascript:` in every
spelling, characters XML cannot carry) pushed through every text field, link field and free key of every
kind (tests/hostile.py writes them without the door's checks, as data published before them) into every
renderer: each page type, both badges, every feed. Every answer must parse (HTML5 without a parse error;
SVG and Atom as XML), hold no element or attribute the same registry rendered with benign words lacks, and
link nowhere but http(s) and this site.
"""

from __future__ import annotations

import functools
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import html5lib
import pytest
from hostile import LINKS, PAYLOADS, Built, base_documents, build, classify, unsafe_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server import Running, serve

HTML = {"accept": "text/html"}
DOCUMENTS = base_documents()
LEAVES = [classify(document) for document in DOCUMENTS]
BENIGN_TEXT = ["benign words"]
BENIGN_LINKS = ["https://benign.example/x"]

# Arbitrary text: any code point a JSON string carries (lone surrogates excepted: no JSON parser the
# registry uses reads one back, so no served registry holds one), the payloads above, and pieces of both.
_ANY = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)
TEXT = st.one_of(st.sampled_from(PAYLOADS), _ANY, st.builds(lambda a, b: a + b, st.sampled_from(PAYLOADS), _ANY))
LINK = st.one_of(st.sampled_from(LINKS), _ANY, st.builds(lambda a, b: a + b, st.sampled_from(LINKS), _ANY))


@dataclass(frozen=True)
class Exit:
    """One answer to check: its name, its path, and how it parses (`html`, `xml`)."""

    name: str
    path: str
    form: str


def _exits(running: Running, built: Built, search: str) -> list[Exit]:
    """Every renderer of the registry `built`: the page types, the badges, the feeds (head and pinned)."""
    names = built.digests
    run, again = names["example-meridian-rmsnorm-b200"], names["example-meridian-rmsnorm-b200-again"]
    serving_run = next(d for n, d in names.items() if built.kinds[n] == "ServingRun")
    operation = next(d for n, d in names.items() if built.kinds[n] == "OperationSpec")
    implementation = next(d for n, d in names.items() if built.kinds[n] == "ImplementationRevision")
    project = next(d for n, d in names.items() if built.kinds[n] == "SoftwareProject")
    keys = running.graphql(
        "query($run: String!, $serving: String!) { run(id: $run) { cohort { key } } "
        "servingRun(id: $serving) { cohort { key } } }",
        {"run": run, "serving": serving_run},
    ).json()["data"]
    cohort, serving_cohort = keys["run"]["cohort"]["key"], keys["servingRun"]["cohort"]["key"]
    main = built.main
    pages = {
        "home": "/",
        "home, pinned": f"/at/{main}",
        "run": f"/at/{main}/runs/{run}",
        "run, the second": f"/at/{main}/runs/{again}",
        "leaderboard": f"/cohorts/{cohort}",
        "records": "/records",
        "compare": f"/compare?run={run}&run={again}",
        "operation": f"/operations/{operation}",
        "implementation": f"/implementations/{implementation}",
        "project": f"/projects/{project}",
        "source": "/sources/hostile-source",
        "commit": f"/commits/{main}",
        "search": "/search?q=" + quote(search, safe=""),
        "serving run": f"/at/{main}/runs/{serving_run}",
        "serving cohort": f"/serving/cohorts/{serving_cohort}",
        "error page": "/operations/" + quote(search, safe=""),
    }
    feeds = {
        "records feed": "/feeds/records.atom",
        "publications feed": "/feeds/publications.atom",
        "operation feed": f"/feeds/operations/{operation}.atom",
        "cohort feed": f"/feeds/cohorts/{cohort}.atom",
        "records feed, pinned": f"/at/{main}/feeds/records.atom",
        "run badge": f"/badges/runs/{run}.svg",
        "implementation badge": f"/badges/implementations/{implementation}.svg",
    }
    return [Exit(n, p, "html") for n, p in pages.items()] + [Exit(n, p, "xml") for n, p in feeds.items()]


@dataclass
class Shape:
    """What an answer is made of: its elements (counted) and the attributes each element name carries."""

    elements: Counter[str]
    attributes: set[tuple[str, str]]
    urls: list[str]


def _html_shape(text: str) -> Shape:
    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    tree = parser.parse(text)
    assert not parser.errors, f"HTML parse errors: {parser.errors[:5]}"
    return _shape(tree.iter())


def _xml_shape(body: bytes) -> Shape:
    return _shape(ET.fromstring(body).iter())  # raises on anything that is not well-formed XML


def _shape(elements: Iterator[Any]) -> Shape:
    found = Shape(Counter(), set(), [])
    for element in elements:
        tag = str(element.tag).rsplit("}", 1)[-1]
        found.elements[tag] += 1
        for name, value in element.attrib.items():
            attribute = str(name).rsplit("}", 1)[-1]
            found.attributes.add((tag, attribute))
            if attribute in ("href", "src", "action", "formaction", "xlink:href", "poster", "data"):
                found.urls.append(value)
    return found


def _answers(built: Built, search: str) -> dict[str, tuple[Exit, int, bytes]]:
    with serve(built.path, export_cache=built.path.parent / "exports") as running:
        found = {}
        for exit in _exits(running, built, search):
            response = running.client.get(exit.path, headers=HTML)
            found[exit.name] = (exit, response.status_code, response.content)
        return found


def _benign() -> dict[str, tuple[Exit, int, Shape]]:
    with tempfile.TemporaryDirectory() as folder:
        built = build(
            Path(folder) / "manifests.git",
            DOCUMENTS,
            LEAVES,
            BENIGN_TEXT,
            BENIGN_LINKS,
            ["benign words"],
            BENIGN_LINKS[0],
        )
        answers = _answers(built, "benign words")
    shapes = {}
    for name, (exit, status, body) in answers.items():
        shapes[name] = (exit, status, _html_shape(body.decode()) if exit.form == "html" else _xml_shape(body))
    return shapes


@pytest.fixture(scope="module")
def benign() -> dict[str, tuple[Exit, int, Shape]]:
    return _baseline()


@functools.cache
def _baseline() -> dict[str, tuple[Exit, int, Shape]]:
    """The benign registry's shapes, rendered once (the property test reads it, not as a fixture: hypothesis
    would print it with every example)."""
    return _benign()


def _check(benign: dict[str, tuple[Exit, int, Shape]], answers: dict[str, tuple[Exit, int, bytes]]) -> list[str]:
    problems = []
    for name, (exit, status, body) in answers.items():
        expected = benign[name][2]
        if status >= 500:
            problems.append(f"{name}: {status}")
            continue
        try:
            shape = _html_shape(body.decode("utf-8")) if exit.form == "html" else _xml_shape(body)
        except (AssertionError, ET.ParseError, UnicodeDecodeError) as exc:
            problems.append(f"{name} ({exit.path[:80]}): does not parse: {exc}")
            continue
        new_attributes = shape.attributes - expected.attributes
        if new_attributes and name not in ("search", "error page"):
            problems.append(f"{name}: attributes benign words never make: {sorted(new_attributes)}")
        if name in ("search", "error page"):  # what they list depends on the query itself; no new kind of element
            extra = set(shape.elements) - set(expected.elements) - {"li", "code", "ul", "div", "p", "table"}
            new_attributes = {a for a in new_attributes if a[0] not in ("li", "code", "ul", "div", "p")}
            if extra or new_attributes:
                problems.append(f"{name}: elements {sorted(extra)}, attributes {sorted(new_attributes)}")
        else:
            extra_elements = {tag: n for tag, n in shape.elements.items() if n > expected.elements.get(tag, 0)}
            if extra_elements:
                problems.append(f"{name}: more elements than benign words make: {extra_elements}")
        if any(attribute.startswith("on") for _, attribute in shape.attributes):
            problems.append(f"{name}: an event handler attribute")
        problems += [f"{name}: {why}" for why in map(unsafe_url, shape.urls) if why is not None]
    return problems


def test_the_benign_registry_renders_every_exit(benign: dict[str, tuple[Exit, int, Shape]]) -> None:
    """The baseline itself: every renderer answers, and its links are ours or http(s)."""
    assert {status for _, status, _ in benign.values()} <= {200, 400, 404}
    # An operation name with a space is malformed (400, said so) rather than absent (404): an error page either way.
    assert benign["error page"][1] in (400, 404) and benign["run"][1] == 200
    assert sum(shape.elements["a"] for _, _, shape in benign.values()) > 100
    for name, (_, _, shape) in benign.items():
        assert [u for u in shape.urls if unsafe_url(u)] == [], name
    # The link fields were links: the run page links its logs, samples and harness, the attestation its evidence.
    assert benign["run"][2].urls.count("https://benign.example/x") >= 4


def test_the_hostile_registry_of_the_issue_renders_inert(benign: dict[str, tuple[Exit, int, Shape]]) -> None:
    """Every payload at once, in every field: the stored payloads of the attack this guards against."""
    with tempfile.TemporaryDirectory() as folder:
        built = build(Path(folder) / "manifests.git", DOCUMENTS, LEAVES, PAYLOADS, LINKS, list(PAYLOADS), LINKS[0])
        answers = _answers(built, PAYLOADS[0])
    assert _check(benign, answers) == []
    run_page = answers["run"][2].decode()
    assert "javascript:%61lert(1)" in run_page  # the harness repository, shown as text (it is no link)
    bodies = b"".join(body for _, _, body in answers.values())
    assert b"\\x08" in bodies and b"\x08" not in bodies  # U+0008 shown as its escape, never as itself


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(TEXT, min_size=1, max_size=6),
    links=st.lists(LINK, min_size=1, max_size=6),
    search=TEXT,
)
def test_arbitrary_strings_in_every_field_render_inert(texts: list[str], links: list[str], search: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        built = build(Path(folder) / "manifests.git", DOCUMENTS, LEAVES, texts, links, texts, links[0])
        answers = _answers(built, search)
    assert _check(_baseline(), answers) == []
