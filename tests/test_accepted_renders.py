"""Whatever the door accepts renders: manifests that pass `add` with line and paragraph breaks in an
operation's title and a GPU's product, the longest axis names, a workload of a thousand of them and a
measurement of 1e40 ns, served on loopback: every page and preview image of theirs answers 200, a card is
drawn once for all the aliases of what it shows, and a page's head says a bounded description.

Before the change each of these answered 500 (Pillow's text layout, `Decimal.quantize`), every alias drew
its card again, and the cohort's meta description ran to over 100,000 characters."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
)
from pagetext import read_page
from server import Running, serve

from kernelindex import registry
from kernelindex.web.cards import _fit, _longest, _most, _wrap, drawable, drawn_count
from kernelindex.web.link_previews import MAX_DESCRIPTION, MAX_TITLE

BREAKS = "\n\r\x85\u2028\u2029"
"""The line and paragraph breaks XML (and so the door) accepts in text; Pillow's layout refused all but U+2028."""
TITLE = f"Fused{BREAKS[0]}RMSNorm{BREAKS[1]}with{BREAKS[2]}every{BREAKS[3]}kind of{BREAKS[4]}break"
PRODUCT = "NVIDIA\nB200\u2029(sm_100)\x85"
AXES = 1000
"""Axes of 100 characters (the longest an identifier may be): a workload label of ~110,000 characters."""
HTML = {"accept": "text/html"}


def _axis(number: int) -> str:
    return f"a{number:04d}" + "x" * 95


@dataclass(frozen=True)
class Hostile:
    main: str
    runs: dict[str, str]  # name -> digest
    operation: str
    cohort: str


def _documents() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The hostile registry's manifests, and its runs."""
    operation = make_operation("hostile-op")
    operation["metadata"]["title"] = TITLE
    for number in range(AXES):
        operation["spec"]["axes"][_axis(number)] = {"role": "variable", "type": "integer", "minimum": 1}
    workload = make_workload(operation, name="hostile-workload")
    workload["spec"]["axes"].update({_axis(number): number + 1 for number in range(AXES)})
    implementation = make_implementation(operation, "kernel-a")
    protocol = make_protocol()
    environment = make_environment(product=PRODUCT)
    measured = {"metric": "latency", "unit": "ns", "statistic": "median", "value": 1e40}
    runs = [
        make_run(implementation, workload, protocol, environment, 8120, name="run-ok"),
        make_run(
            implementation,
            workload,
            protocol,
            environment,
            None,
            "2026-08-02T12:00:00Z",
            name="run-huge",
            extra_spec={"measurements": [measured]},
        ),
    ]
    return [operation, workload, implementation, protocol, environment, *runs], runs


def test_the_door_accepts_the_hostile_manifests() -> None:
    """The premise: every one of them passes the door (the models and normalization)."""
    documents, _ = _documents()
    for document in documents:
        registry.manifest_from_document(document, "hostile.json")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Hostile]]:
    store = registry.GitStore.init(Path(tmp_path_factory.mktemp("hostile")) / "manifests.git")
    documents, runs = _documents()
    main = commit_manifests(store, documents)
    with serve(store.path, base_url="https://registry.example.org") as running:
        found = running.graphql('{ run(id: "run-ok") { cohort { key } } }').json()
        yield (
            running,
            Hostile(
                main,
                {run["metadata"]["name"]: digest_of(run) for run in runs},
                digest_of(documents[0]),
                found["data"]["run"]["cohort"]["key"],
            ),
        )


@pytest.mark.slow
def test_every_page_and_card_of_the_hostile_registry_answers(hostile: tuple[Running, Hostile]) -> None:
    running, h = hostile
    at = f"/at/{h.main}"
    paths = [
        *(f"{at}/runs/{digest}{suffix}" for digest in h.runs.values() for suffix in ("", ".json", "/card.png")),
        f"{at}/cohorts/{h.cohort}",
        f"{at}/cohorts/{h.cohort}/card.png",
        f"{at}/operations/{h.operation}",
        f"{at}/operations/{h.operation}/card.png",
        f"/cohorts/{h.cohort}",
        "/operations/hostile-op",
        "/gpus",
        "/records",
        "/feeds/records.atom",
    ]
    for path in paths:
        response = running.client.get(path, headers=HTML)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
    dossier = running.client.get(f"{at}/runs/{h.runs['run-huge']}", headers={"accept": "application/json"}).json()
    assert dossier["run"]["primary"]["display"] == "1.0000000000000001e+31 s"


@pytest.mark.slow
def test_a_card_is_drawn_once_for_every_alias(hostile: tuple[Running, Hostile]) -> None:
    running, h = hostile
    digest = h.runs["run-ok"]
    hexes = digest.removeprefix("sha256:")
    aliases = [digest, hexes, f"sha256:{hexes[:12]}", hexes[:12], "run-ok"]
    before = drawn_count()
    bodies = set()
    for alias in aliases:
        response = running.client.get(f"/at/{h.main}/runs/{alias}/card.png")
        assert response.status_code == 200, alias
        bodies.add(response.content)
    assert len(bodies) == 1
    assert drawn_count() - before <= 1  # 1, or 0 when an earlier test of this module drew it


@pytest.mark.slow
def test_a_page_head_says_a_bounded_title_and_description(hostile: tuple[Running, Hostile]) -> None:
    running, h = hostile
    for path in (f"/cohorts/{h.cohort}", f"/at/{h.main}/runs/{h.runs['run-ok']}", "/operations/hostile-op"):
        page = read_page(running.client.get(path, headers=HTML).text)
        (description,) = page.meta("description")
        (og,) = page.meta("og:description")
        (title,) = page.meta("og:title")
        assert og == description and len(description) <= MAX_DESCRIPTION and len(title) <= MAX_TITLE, path
        assert not set(BREAKS) & set(description + title), path
    cohort = read_page(running.client.get(f"/cohorts/{h.cohort}", headers=HTML).text).meta("description")[0]
    assert len(cohort) == MAX_DESCRIPTION or cohort.endswith(" …")  # the workload's thousand axes were cut


# Fitting text: the cut depends on what could possibly fit, never on the rest --------------------------


def _linear(text: str, size: int, width: float, suffix: str) -> int:
    """The reference: the longest prefix that fits, found by measuring every prefix in turn."""
    from PIL import ImageFont

    from kernelindex.web.cards import FONT

    font = ImageFont.truetype(str(FONT), size)
    return max((n for n in range(len(text) + 1) if font.getlength(text[:n] + suffix) <= width), default=0)


@pytest.mark.parametrize("text", ["Fused RMSNorm on NVIDIA B200 " * 4, "W" * 60, "iiii jjjj " * 30, "µs · ≥ ×" * 20])
def test_the_longest_prefix_that_fits_is_the_one_measuring_every_prefix_finds(text: str) -> None:
    assert _longest(text, 32, 600, " …") == _linear(text, 32, 600, " …")


@pytest.mark.parametrize("size", [24, 32, 50, 92])
def test_only_what_could_fit_is_measured(size: int) -> None:
    width = 1072.0
    head = "axis " + "a" * (_most(size, width) + 10)
    assert _fit(head, size, width) == _fit(head + "b" * 100_000, size, width)
    assert _wrap(head, size, width, 2) == _wrap(head + "b c" * 30_000, size, width, 2)


def test_a_line_fits_exactly_at_its_width() -> None:
    from PIL import ImageFont

    from kernelindex.web.cards import FONT

    font = ImageFont.truetype(str(FONT), 32)
    text = "Rank 2 of 14 in its comparison group"
    width = font.getlength(text)
    assert _fit(text, 32, width) == text  # at the limit: whole
    assert _fit(text, 32, width - 1).endswith(" …")  # one pixel short: cut at a word
    assert font.getlength(_fit(text, 32, width - 1)) <= width - 1


def test_breaks_and_controls_are_drawn_as_a_page_shows_them() -> None:
    assert drawable(TITLE) == "Fused RMSNorm with every kind of break"
    assert drawable(PRODUCT) == "NVIDIA B200 (sm_100)"
    assert drawable("N\x08VIDIA\x7f") == "N\\x08VIDIA\\x7f"
