"""`kernelindex cite` in each format, for seed record 000 of the embedded registry.

Every expected value comes from outside the code under test: the seed page
(`data/seeds/000_e2385c33f2609bf3.txt`: workload label, value, statistic, source, published
date), the seed's implementation manifest (`data/seeds/manifests/…implementation.json`: its
title), the citation text and the permalink's shape and a pinned commit."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from helpers import DATA, EMBEDDED_REPO
from typer.testing import CliRunner

from kernelindex.cli import app as cli

SEEDS = DATA / "seeds"
RUN = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"  # seed 000's run
PINNED = "e775d39b6768675ff8eb086da76420493425c1a4"  # the commit that added the seed records
BASE = "https://registry.example.org"
PERMALINK = f"{BASE}/at/{PINNED}/runs/{RUN}"


def _page() -> str:
    return (SEEDS / "000_e2385c33f2609bf3.txt").read_text()


def _title() -> str:
    implementation = json.loads((SEEDS / "manifests" / "000_e2385c33f2609bf3.implementation.json").read_text())
    return str(implementation["metadata"]["title"])


def _facts() -> dict[str, str]:
    page = _page()
    workload = re.search(r"^workload(.+)$", page, re.MULTILINE)
    value = re.search(r"^Primary measurement\n\n([0-9.]+)µs(\w+)$", page, re.MULTILINE)
    published = re.search(r"^Published (\d{4}-\d{2}-\d{2}) · (.+?)All results", page, re.MULTILINE)
    assert workload and value and published, "the seed page changed shape"
    return {
        "title": _title(),
        "workload": workload.group(1),
        "value": f"{value.group(1)} µs",
        "statistic": value.group(2),
        "source": published.group(2),
        "published": published.group(1),
    }


def _cite(*args: str) -> tuple[int, str, set[str]]:
    """Run `kernelindex cite` on the embedded registry; also the UTC dates the run could have used."""
    before = dt.datetime.now(dt.UTC).date().isoformat()
    result = CliRunner().invoke(
        cli, ["cite", *args, "--repo", str(EMBEDDED_REPO), "--at", PINNED, "--base-url", BASE + "/"]
    )
    after = dt.datetime.now(dt.UTC).date().isoformat()
    return result.exit_code, result.output, {before, after}


def test_the_facts_are_the_seed_pages() -> None:
    assert _facts() == {  # what the page and the manifest say, read by eye once
        "title": "Recursive · 060_fused_attention_qk_matmul_scale_mask_softmax_backward",
        "workload": "suite of 16 cases · mean latency",
        "value": "144.6 µs",
        "statistic": "mean",
        "source": "NVIDIA SOL-ExecBench",
        "published": "2026-08-24",
    }


@pytest.mark.parametrize("ident", [RUN, RUN.removeprefix("sha256:")[:12], "sol-submission-6709"])
def test_cite_text(ident: str) -> None:
    f = _facts()
    code, output, days = _cite(ident)
    assert code == 0, output
    assert output in {
        f"{f['title']}, {f['workload']}. {f['value']} ({f['statistic']}). Reported by {f['source']}. "
        f"Run {RUN}. {PERMALINK}. Accessed {day}.\n"
        for day in days
    }


def test_cite_bibtex() -> None:
    f = _facts()
    code, output, days = _cite(RUN, "--format", "BIBTEX")
    assert code == 0, output
    title = f"{f['title']}, {f['workload']}: {f['value']} ({f['statistic']})".replace("_", "\\_")
    assert (
        output
        in {
            "@misc{kernelindex-7f6df4bbbdbe,\n"
            f"  title = {{{title}}},\n"
            f"  author = {{{{{f['source']}}}}},\n"  # braced twice: a corporate author, one literal name
            f"  year = {{{f['published'][:4]}}},\n"
            f"  howpublished = {{\\url{{{PERMALINK}}}}},\n"
            f"  url = {{{PERMALINK}}},\n"
            f"  urldate = {{{day}}},\n"
            f"  note = {{KernelIndex registry, run {RUN}. Accessed {day}}}\n"
            "}\n"
            for day in days
        }
    )


def test_bibtex_readers_take_the_source_as_one_literal_name() -> None:
    """pybtex reads names as BibTeX does: without the extra braces it made a person "SOL-ExecBench, NVIDIA"."""
    from pybtex.database import parse_string

    code, output, _ = _cite(RUN, "--format", "BIBTEX")
    assert code == 0, output
    (entry,) = parse_string(output, "bibtex").entries.values()
    (author,) = entry.persons["author"]
    assert (author.first_names, author.middle_names, author.prelast_names) == ([], [], [])
    assert author.last_names == ["{" + _facts()["source"] + "}"]


def test_cite_csl_json() -> None:
    f = _facts()
    code, output, days = _cite(RUN, "--format", "csl_json")  # the format is case-insensitive
    assert code == 0, output
    record = json.loads(output)
    accessed = record.pop("accessed")
    assert accessed in [{"date-parts": [[int(part) for part in day.split("-")]]} for day in days]
    year, month, day = (int(part) for part in f["published"].split("-"))
    assert record == {
        "id": "kernelindex-7f6df4bbbdbe",
        "type": "dataset",
        "title": f"{f['title']}, {f['workload']}: {f['value']} ({f['statistic']})",
        "author": [{"literal": f["source"]}],
        "publisher": "KernelIndex registry",
        "URL": PERMALINK,
        "issued": {"date-parts": [[year, month, day]]},
        "note": f"Run {RUN}",
    }
    assert list(json.loads(output)) == sorted(json.loads(output))  # one line, keys sorted: stable for diffs
    assert output.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["sol-submission-6709", "--format", "MLA"], 2, "expected TEXT, BIBTEX or CSL_JSON"),
        (["sol-submission-6709", "--kind", "ImplementationRevision"], 2, "only a BenchmarkRun is cited"),
        (["no-such-run"], 1, "manifest not found: 'no-such-run'"),
        (["sol-submission-6709", "--at", "314f4d24fd889fc1048942a520881d7750ef542c"], 1, "manifest not found"),
    ],
)
def test_cite_refuses_clearly(args: list[str], code: int, message: str) -> None:
    """Before commit 314f4d2's child added the seeds, their run did not exist (docs/api.md, "Pinning")."""
    result = CliRunner().invoke(cli, ["cite", *args, "--repo", str(EMBEDDED_REPO)])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
