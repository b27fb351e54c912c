"""Property: any registry the door accepts renders. Hypothesis draws the free text of an operation,
a workload, an implementation and an environment (any character XML carries: line and paragraph breaks,
bidirectional controls, combining marks, astral characters, up to each field's limit), axis names up to
100 characters, and measurements anywhere in a double's finite range, in any unit; what passes the door is
committed and served on loopback, and every page, preview image, badge, feed and export of it answers
without a server error."""

from __future__ import annotations

import copy
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
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from server import serve

from kernelindex import registry
from kernelindex.registry.kinds.content import XML_FORBIDDEN

# Characters XML 1.0 (and so the door) refuses, and the surrogates a str may hold: never drawn.
_REFUSED = [chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)] + ["\ufffe", "\uffff"]
assert all(ch in XML_FORBIDDEN or "\x00" <= ch <= "\x1f" for ch in _REFUSED)
_AWKWARD = "\n\r\t\x85\u2028\u2029\u200b\u200d\u202e\u0301\ufeff\U0001f600 \xa0"


def _text(max_size: int) -> st.SearchStrategy[str]:
    """Words of at most `max_size` characters, each holding at least one awkward character."""
    characters = st.characters(exclude_categories=["Cs"], exclude_characters=_REFUSED)
    words = st.text(st.one_of(characters, st.sampled_from(_AWKWARD)), max_size=max_size // 2 - 1)
    return st.builds(lambda a, awkward, b: a + awkward + b, words, st.sampled_from(_AWKWARD), words)


_identifier = st.from_regex(r"[a-z][a-z0-9_]{0,99}", fullmatch=True)
_value = st.one_of(
    st.sampled_from([1e40, -1e40, 1e21, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -0.0]),
    st.floats(allow_nan=False, allow_infinity=False),
)
_unit = st.one_of(st.sampled_from(["ns", "s", "ms", "tflops"]), _identifier)


@st.composite
def registries(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The manifests of one small kernel registry with drawn words and values (dependencies first)."""
    operation = make_operation("drawn-op")
    operation["metadata"]["title"] = draw(_text(200))
    operation["metadata"]["description"] = draw(_text(2000))
    axes = draw(
        st.lists(_identifier, min_size=0, max_size=6, unique=True).map(
            lambda a: [x for x in a if x not in ("tokens", "hidden")]
        )
    )
    for axis in axes:
        operation["spec"]["axes"][axis] = {"role": "variable", "type": "integer"}
    workload = make_workload(operation, name="drawn-workload")
    workload["spec"]["axes"].update({axis: draw(st.integers(-(2**53) + 1, 2**53 - 1)) for axis in axes})
    workload["metadata"]["title"] = draw(_text(200))
    implementation = make_implementation(operation, "kernel-a")
    implementation["metadata"]["title"] = draw(_text(200))
    other = make_implementation(operation, "kernel-b")
    protocol = make_protocol()
    environment = make_environment(product=draw(_text(200)))
    measured = {
        "metric": draw(_identifier),
        "unit": draw(_unit),
        "statistic": "median",
        "value": draw(_value),
    }
    runs = [
        make_run(implementation, workload, protocol, environment, draw(st.integers(0, 2**53 - 1)), name="run-a"),
        make_run(other, workload, protocol, environment, None, name="run-b", extra_spec={"measurements": [measured]}),
        make_run(other, workload, protocol, environment, draw(st.integers(0, 2**53 - 1)), "2026-08-02T12:00:00Z"),
    ]
    runs[0]["metadata"]["title"] = draw(_text(200))
    return [operation, workload, implementation, other, protocol, environment, *runs]


def _accepted(documents: list[dict[str, Any]]) -> bool:
    try:
        for document in documents:
            registry.manifest_from_document(copy.deepcopy(document), "drawn.json")
    except registry.InvalidManifest:
        return False
    return True


FAMILIES = [
    "home", "records", "operations", "operation", "operation card", "cohort", "cohort card", "run", "run json",
    "run card", "run status", "implementation", "gpus", "gpu", "sources", "projects", "search", "compare",
    "compare md", "compare csv", "manifest", "run badge", "implementation badge", "records feed",
    "publications feed", "cohort feed", "operation feed", "changes feed", "exports", "export",
]  # fmt: skip


def _paths(main: str, runs: list[str], operation: str, cohort: str | None, gpu: str | None) -> dict[str, str]:
    at = f"/at/{main}"
    found = {
        "home": "/",
        "records": "/records",
        "operations": "/operations",
        "operation": f"/operations/{operation}",
        "operation card": f"{at}/operations/{operation}/card.png",
        "run": f"{at}/runs/{runs[0]}",
        "run json": f"{at}/runs/{runs[1]}.json",
        "run card": f"{at}/runs/{runs[1]}/card.png",
        "run status": f"/runs/{runs[1]}/status",
        "implementation": "/implementations/kernel-a",
        "gpus": "/gpus",
        "sources": "/sources",
        "projects": "/projects",
        "search": "/search?q=kernel",
        "compare": f"/compare?run={runs[0]}&run={runs[1]}",
        "compare md": f"/compare.md?run={runs[0]}&run={runs[1]}",
        "compare csv": f"/compare.csv?run={runs[0]}&run={runs[1]}",
        "manifest": f"/manifests/{runs[1]}",
        "run badge": f"/badges/runs/{runs[1]}.svg",
        "implementation badge": "/badges/implementations/kernel-a.svg",
        "records feed": "/feeds/records.atom",
        "publications feed": "/feeds/publications.atom",
        "operation feed": f"/feeds/operations/{operation}.atom",
        "changes feed": "/feeds/changes.json",
        "exports": "/exports",
        "export": f"{at}/export.jsonl.zst",
    }
    if cohort is not None:
        found |= {
            "cohort": f"/cohorts/{cohort}",
            "cohort card": f"{at}/cohorts/{cohort}/card.png",
            "cohort feed": f"/feeds/cohorts/{cohort}.atom",
        }
    if gpu is not None:
        found["gpu"] = f"/gpus/{gpu}"
    return found


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(registries())
def test_whatever_the_door_accepts_renders(tmp_path_factory: pytest.TempPathFactory, documents: list[Any]) -> None:
    assume(_accepted(documents))
    store = registry.GitStore.init(Path(tmp_path_factory.mktemp("drawn")) / "manifests.git")
    main = commit_manifests(store, documents)
    runs = [digest_of(run) for run in documents[6:]]
    with serve(store.path, base_url="https://registry.example.org") as running:
        cohort = running.graphql('{ run(id: "run-a") { cohort { key } } }').json()["data"]["run"]["cohort"]
        gpus = running.client.get("/gpus", headers={"accept": "application/json"}).json()
        slugs = [g["slug"] for g in gpus.get("gpus", []) if isinstance(g, dict) and "slug" in g]
        paths = _paths(main, runs, digest_of(documents[0]), cohort and cohort["key"], slugs[0] if slugs else None)
        assert set(paths) <= set(FAMILIES)
        for family, path in paths.items():
            response = running.client.get(path, headers={"accept": "text/html"})
            assert response.status_code < 500, (family, path, response.status_code, response.text[:400])
            assert response.status_code < 400 or response.status_code == 404, (family, response.status_code)
