"""Compare as CSV and Markdown (web/compare_formats.py): hostile cells stay text. CSV is read back with the
csv module, a spreadsheet's formula starts are guarded at their exact boundary; Markdown is rendered by
markdown-it (GFM tables, the parser the docs' tests use) and every cell comes back as the same text, with
no element a cell did not ask for. Over HTTP, `/compare.csv` and `/compare.md` are these functions of the
API's answer to the compare page's document."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import basic_scenario, commit_manifests
from markdown_it import MarkdownIt
from pagetext import read_page
from starlette.testclient import TestClient

from kernelindex import registry
from kernelindex.app import create_app
from kernelindex.core.settings import Settings
from kernelindex.web import documents
from kernelindex.web.compare_formats import compare_csv, compare_markdown, csv_cell, markdown_cell

HOSTILE = [
    '=HYPERLINK("http://evil.example","x")',
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
    "\r=1",
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "![i](https://evil.example/i.png)",
    "a | b",
    "`code`",
    "*em* _em_ **strong**",
    "line\nbreak\r\nand\rmore",
    "&amp; &lt;",
    "back\\slash",
    "# not a heading",
    "---",
    '"quoted", with a comma',
    "144.6 µs",
]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_that_a_spreadsheet_would_run_is_guarded(start: str) -> None:
    assert csv_cell(start + "1") == "'" + start + "1"


@pytest.mark.parametrize("text", ["a=1", " =1", "1", "", "µ", "'=1", "1-2", "x@y"])
def test_any_other_cell_is_left_as_it_is(text: str) -> None:
    assert csv_cell(text) == text


def _answer(values: list[str]) -> dict[str, Any]:
    """A compare answer whose every field holds one of `values` (two runs)."""
    run = {"digest": "sha256:" + "a" * 64, "name": values[0], "implementation": {"displayName": values[1]}}
    other = {"digest": "sha256:" + "b" * 64, "name": values[2], "implementation": None}
    rows = [{"field": v, "values": [v, v], "same": True, "material": False} for v in values]
    return {"runs": [run, other], "entries": None, "rows": rows, "material": [], "sameCohort": False}


def test_csv_reads_back_as_the_table_with_only_the_formula_starts_guarded() -> None:
    found = _answer(HOSTILE)
    table = list(csv.reader(io.StringIO(compare_csv(found).decode(), newline="")))
    assert table[0] == ["field", "'" + HOSTILE[0], "'-2+3", "same", "material"]
    assert table[1] == ["run", "sha256:" + "a" * 64, "sha256:" + "b" * 64, "", ""]
    assert table[2] == ["implementation name", "'+1+1", "", "", ""]  # a run without an implementation: empty
    shown = {row[0]: row[1] for row in table[3:]}
    for value in HOSTILE:
        guarded = value.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert shown[("'" if guarded else "") + value] == ("'" if guarded else "") + value


def test_markdown_cells_come_back_as_the_same_text_and_nothing_else() -> None:
    found = _answer(HOSTILE)
    html = MarkdownIt("gfm-like", {"linkify": False}).render(
        compare_markdown(found, "c" * 40, "2026-08-24T00:00:00Z", "/compare?run=a&run=b").decode()
    )
    page = read_page(html)
    assert {tag for tag, _ in page.elements} <= {"h1", "p", "code", "table", "thead", "tbody", "tr", "th", "td"}
    assert [tag for tag, _ in page.elements].count("code") == 1  # the commit's, in the line above the table
    (table,) = page.tables
    header, body = table[0], table[1:]
    assert header == ["field", HOSTILE[0], HOSTILE[2], "same", "material"]
    flat = [" ".join(v.split()) for v in HOSTILE]  # a line break in a cell is a space
    assert [row[0] for row in body[2:]] == flat
    assert [row[1] for row in body[2:]] == flat
    assert all(len(row) == 5 for row in table)  # no cell opened a column


@pytest.mark.parametrize("value", HOSTILE)
def test_a_markdown_cell_holds_no_line_break_and_no_bare_punctuation(value: str) -> None:
    cell = markdown_cell(value)
    assert "\n" not in cell and "\r" not in cell
    bare = [c for i, c in enumerate(cell) if c in "|<>[]()`*_&\\!#-" and (i == 0 or cell[i - 1] != "\\")]
    assert all(c == "\\" for c in bare)  # every punctuation character is escaped (the escapes are themselves)


HTML = {"accept": "text/html"}


@pytest.fixture
def client(store: registry.GitStore) -> Iterator[tuple[TestClient, str]]:
    main = commit_manifests(store, basic_scenario().docs)
    with TestClient(create_app(Settings(repo_path=store.path, graph_cache=False, poll_seconds=3600))) as c:
        yield c, main


def test_compare_as_csv_and_markdown_over_http(client: tuple[TestClient, str]) -> None:
    http, main = client
    query = "?run=run-a1&run=run-b1"
    answer = http.post(
        "/graphql", json={"query": documents.COMPARE, "variables": {"at": main, "runs": ["run-a1", "run-b1"]}}
    ).json()["data"]["registry"]
    as_csv = http.get(f"/at/{main}/compare.csv{query}", headers=HTML)
    assert as_csv.status_code == 200 and as_csv.headers["content-type"] == "text/csv; charset=utf-8; header=present"
    assert as_csv.headers["content-disposition"] == f'attachment; filename="compare-{main}.csv"'
    assert as_csv.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert as_csv.content == compare_csv(answer["compare"])
    assert next(csv.reader(io.StringIO(as_csv.text))) == ["field", "run-a1", "run-b1", "same", "material"]
    as_md = http.get(f"/at/{main}/compare.md{query}", headers={"accept": "application/json"})  # the path decides
    assert as_md.status_code == 200 and as_md.headers["content-type"] == "text/markdown; charset=utf-8"
    committed = answer["commit"]["committedAt"]
    assert as_md.content == compare_markdown(answer["compare"], main, committed, f"/at/{main}/compare{query}")
    head = http.get(f"/compare.csv{query}")
    assert head.headers["content-disposition"] == 'attachment; filename="compare-head.csv"'
    assert head.headers["cache-control"] == "public, max-age=0, must-revalidate"
    one = http.get("/compare.csv?run=run-a1", headers=HTML)
    assert one.status_code == 400 and "compare takes 2 to 8 runs" in read_page(one.text).text
