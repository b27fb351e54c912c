"""The pages' pure parts: wording, chart geometry, badges, content negotiation, KernelIndex's run ids,
and the layering (pages read the schema, never the registry's internals)."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import EXPORT, PROJECT_ROOT
from starlette.requests import Request

from kernelindex.core.urls import Urls
from kernelindex.http.requests import wants_json
from kernelindex.web.badges import badge, text_width
from kernelindex.web.charts import IntervalRow, interval_chart, step_chart
from kernelindex.web.kernelindex_ids import digest_of, id_of
from kernelindex.web.names import external_id, humanize_operation, short

# KernelIndex's own cases (apps/web/src/lib/names.test.ts), plus the three seed pages' "All results for".
HUMANIZED = [
    ("004_attention_output_projection_with_reshape_backward", "Attention output projection with reshape backward"),
    ("001_fused_add_rmsnorm_h2048", "Fused add RMSNorm h2048"),
    ("004_gemm_n128_k2048", "GEMM n128 k2048"),
    ("005_fp8_moe_router_projection", "FP8 MoE router projection"),
    ("AMD FP8 blockwise GEMM", "AMD FP8 blockwise GEMM"),
    ("rmsnorm", "RMSNorm"),
    ("007_", "007_"),
    (
        "060_fused_attention_qk_matmul_scale_mask_softmax_backward",
        "Fused attention QK matmul scale mask softmax backward",
    ),
    (
        "014_audio_encoder_varlen_attention_with_chunking_backward",
        "Audio encoder varlen attention with chunking backward",
    ),
    (
        "079_ImageNet_83.6_ssm_output_projection_gate_multiply_backward",
        "ImageNet 83.6 SSM output projection gate multiply backward",
    ),
]


@pytest.mark.parametrize(("raw", "words"), HUMANIZED)
def test_operation_names_read_as_on_kernelindex(raw: str, words: str) -> None:
    assert humanize_operation(raw) == words


@pytest.mark.parametrize(
    ("identifier", "source", "shown"),
    [
        ("6709", "sol-execbench", "submission/6709"),
        ("submission/30771", "gpumode", "submission/30771"),
        ("abc", "sol-execbench", "abc"),
    ],
)
def test_external_ids_as_the_source_writes_them(identifier: str, source: str, shown: str) -> None:
    assert external_id(identifier, source) == shown


def test_short_digests_say_they_are_cut() -> None:
    key = "sha256:92bc0be5b5ce9f523be5faba2a4e34c39837aab389f3cfd25189af326e2daae0"
    assert short(key) == "sha256:92bc0be5b5ce9f52…"  # the seed pages' comparison key
    assert short("sha256:abcd") == "sha256:abcd"


def test_interval_chart_puts_the_best_left_and_draws_intervals_on_one_scale() -> None:
    # Values 100, 150, 200 with an interval 90-110 on the first: the scale spans 90..200 onto 8..232.
    chart = interval_chart(
        [
            IntervalRow(100, 90, 110, "a"),
            IntervalRow(150, None, None, "b", tied=True),
            IntervalRow(200, None, None, "c"),
        ]
    )
    assert chart is not None
    step = 224 / 110
    expected = [
        (8 + 10 * step, 8.0, 8 + 20 * step),
        (8 + 60 * step, 8 + 60 * step, 8 + 60 * step),
        (232.0, 232.0, 232.0),
    ]
    assert [(m.x, m.x_low, m.x_high) for m in chart.marks] == [tuple(round(v, 1) for v in e) for e in expected]
    assert [m.tied for m in chart.marks] == [False, True, False]
    assert interval_chart([]) is None
    single = interval_chart([IntervalRow(5, None, None, "only")])
    assert single is not None and single.marks[0].x == 120.0  # a zero span sits in the middle of 8..232


def test_step_chart_steps_down_at_each_record_and_holds_until_the_snapshot() -> None:
    # Three records on days 0, 1 and 3, the snapshot on day 4: x = 8 + day * 304 / 4.
    chart = step_chart(
        [
            ("2026-01-01T00:00:00Z", 300.0, "a"),
            ("2026-01-02T00:00:00Z", 200.0, "b"),
            ("2026-01-04T00:00:00Z", 100.0, "c"),
        ],
        until="2026-01-05T00:00:00Z",
    )
    assert chart is not None
    assert [(s.x, s.y) for s in chart.steps] == [(8.0, 8.0), (84.0, 40.0), (236.0, 72.0)]
    assert chart.path == "M8.0,8.0H84.0V40.0H236.0V72.0H312.0"
    assert (chart.first_day, chart.last_day) == ("2026-01-01", "2026-01-05")
    assert step_chart([]) is None


def test_badges_are_svg_with_their_words_and_widths() -> None:
    svg = badge("kernelindex", "rank 2/2 · 144.6 µs")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["kernelindex", "rank 2/2 · 144.6 µs"]
    # "kernelindex": k e r n e l i n d e x = 7+7+3.5+7+7+3.5+3.5+7+7+7+7 = 66.5 -> 66 (banker's), + 12 padding
    assert text_width("kernelindex") == 66
    assert root.get("width") == str(66 + 12 + text_width("rank 2/2 · 144.6 µs") + 12)
    assert root.get("aria-label") == "kernelindex: rank 2/2 · 144.6 µs"
    assert "<title>a &amp; b: &lt;c&gt;</title>" in badge("a & b", "<c>")


def _request(accept: str | None, path: str = "/cohorts/x") -> Request:
    headers = [] if accept is None else [(b"accept", accept.encode())]
    return Request({"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": headers})


@pytest.mark.parametrize(
    ("accept", "json"),
    [
        ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8", False),  # Chromium
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),  # Firefox
        ("application/json", True),
        ("*/*", True),  # curl, httpx: the API's answer, as before pages
        (None, True),
        ("application/json, text/html;q=0.5", True),
        ("text/html;q=0.5, application/json;q=0.5", False),  # equal preference: the page
        ("text/html;q=0", True),
        ("application/xhtml+xml", False),
    ],
)
def test_content_negotiation(accept: str | None, json: bool) -> None:
    assert wants_json(_request(accept)) is json


def test_links_pin_to_the_commit_of_the_page() -> None:
    head = Urls("")
    pinned = Urls("https://r.example", "e775d39b6768675ff8eb086da76420493425c1a4")
    assert head.cohort("sha256:ab", after="x y") == "/cohorts/sha256:ab?after=x+y"
    assert (
        pinned.cohort("sha256:ab") == "https://r.example/at/e775d39b6768675ff8eb086da76420493425c1a4/cohorts/sha256:ab"
    )
    assert pinned.commit("abc") == "https://r.example/commits/abc"  # a commit page is pinned by what it is
    assert head.compare(["a", "b"]) == "/compare?run=a&run=b"
    assert (
        head.graphql("query Q { x }", {"at": None})
        == "/graphql?query=query+Q+%7B+x+%7D&variables=%7B%22at%22%3Anull%7D"
    )


def test_kernelindex_run_ids_are_the_exports_own() -> None:
    """Every run row of the catalog export, read here independently, maps its id to its digest."""
    import io
    import json

    import zstandard

    pairs = {}
    with EXPORT.open("rb") as raw:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw), encoding="utf-8"):
            record = json.loads(line)
            if record["table"] == "benchmark_runs":
                pairs[record["row"]["id"]] = record["row"]["runDigest"]
    assert len(pairs) == 7857
    assert all(digest_of(key) == digest for key, digest in pairs.items())
    assert digest_of("01A006C1-DDD8-7753-9AF4-B12B0CC75772") == pairs["01a006c1-ddd8-7753-9af4-b12b0cc75772"]
    # Seed 004's page title is "Run 01a0032e": its run is in the export under that id.
    seed_004 = pairs["01a0032e-f7d2-749e-bb30-df1bba93405f"]
    assert seed_004.startswith("sha256:fa2cdd25d5d22ec080b8e6f")  # the digest prefix on seed 004's page
    assert id_of(seed_004) == "01a0032e-f7d2-749e-bb30-df1bba93405f"
    assert digest_of("00000000-0000-0000-0000-000000000000") is None


WEB = PROJECT_ROOT / "web"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted(WEB.glob("*.py")), ids=lambda p: p.name)
def test_pages_read_the_schema_never_the_registry(path: Path) -> None:
    imported = _imports(path)
    assert not {name for name in imported if name == "registry" or name.startswith("registry.")}, imported


@pytest.mark.parametrize("path", sorted((PROJECT_ROOT / "registry").rglob("*.py")), ids=lambda p: p.name)
def test_the_registry_never_imports_the_pages(path: Path) -> None:
    assert not {name for name in _imports(path) if name == "web" or name.startswith("web.")}
