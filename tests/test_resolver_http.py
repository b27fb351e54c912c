"""The kernel resolver and implementation facts, end to end: `resolveKernel`, the search page's answer above its
results, typed implementation facts (licence, install variants, source, deployability-v1) as fields and as
filters of `runs` and `implementations`, and the implementation page; on a real server over tests/test_resolve.py's
hand-built registry (its answers written out by hand there) with three more implementations whose facts are
known by construction."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import commit_meta, digest_of, make_implementation, make_run, make_verification, to_manifest
from server import Running, serve
from signing import Key
from test_resolve import B200, DOCS, PROTOCOL, RMS, RUNS, W

from kernelindex import registry
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer
from kernelindex.service.read_documents import RESOLVE_KERNEL
from kernelindex.web import documents
from kernelindex.web.search_page import RESOLVER_CASES

HTML = {"accept": "text/html"}

# Three more implementations, each with one run on the tokens-1024 case, whose facts are known by construction:
# U's licence is no SPDX expression (unknown), P has no public source, N installs nothing and declares nothing.
U = make_implementation(RMS, "kernel-u")
U["spec"]["licensing"] = {"declared": "Custom terms"}
U["spec"]["buildVariants"] = [{"name": "git", "install": {"kind": "git", "repository": "https://example.invalid/u"}}]
P = make_implementation(RMS, "kernel-p", repository=None)
P["spec"]["buildVariants"] = [
    {
        "name": "container",
        "install": {"kind": "container", "command": "docker run example.invalid/p:1.2"},
        "requirements": {"cuda": ">=12.4", "driver": ">=550"},
    }
]
N = make_implementation(RMS, "kernel-n")
N["spec"]["licensing"] = {}  # declares nothing
MORE = {name: make_run(impl, W[1024], PROTOCOL, B200, 3900 + i, f"2026-08-2{i}T00:00:00Z", name=name)
        for i, (name, impl) in enumerate((("u1", U), ("p1", P), ("n1", N)))}  # fmt: skip
ALL_RUNS = {**RUNS, **MORE}

# By hand: A (repository, Apache-2.0, no install) and S likewise lack an install recipe; B installs (pip, pinned)
# and is the only deployable one; U lacks a known licence; P lacks public source; N lacks an install and a licence.
VERDICTS = {
    "kernel-a": ["NO_INSTALL_RECIPE"],
    "kernel-b": [],
    "softmax-k": ["NO_INSTALL_RECIPE"],
    "kernel-u": ["LICENSE_UNKNOWN"],
    "kernel-p": ["NO_PUBLIC_SOURCE"],
    "kernel-n": ["NO_INSTALL_RECIPE", "LICENSE_UNKNOWN"],
}
RUNS_OF = {  # the runs of each implementation (tests/test_resolve.py's RUNS, and MORE)
    "kernel-a": {"r1", "r2", "r3", "t1024", "t4096", "h100", "suite"},
    "kernel-b": {"r4", "t4096b"},
    "softmax-k": {"softmax"},
    "kernel-u": {"u1"},
    "kernel-p": {"p1"},
    "kernel-n": {"n1"},
}


@dataclass(frozen=True)
class Site:
    running: Running
    commit: str

    def query(self, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.running.graphql(document, variables).json()
        assert "errors" not in answer, answer
        found: dict[str, Any] = answer["data"]
        return found

    def code(self, document: str, variables: dict[str, Any] | None = None) -> str:
        return str(self.running.graphql(document, variables).json()["errors"][0]["extensions"]["code"])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Key]) -> Iterator[Site]:
    store = registry.GitStore.init(tmp_path_factory.mktemp("hand") / "manifests.git")
    sign = ssh_signer(keys["alice"].private)
    docs = [*DOCS, U, P, N, *MORE.values()]
    store.add([to_manifest(d) for d in docs], commit_meta(1_790_000_000), sign=sign,
              extra_files={POLICY_PATH: keys["alice"].allowed_signer})  # fmt: skip
    verified = store.add(
        [to_manifest(make_verification(RUNS["r2"], RUNS["r3"]))], commit_meta(1_790_000_100), sign=sign
    )
    assert verified.commit is not None
    with serve(store.path) as running:
        yield Site(running, verified.commit)


def _d(name: str) -> str:
    return digest_of(ALL_RUNS[name])


def _resolve(site: Site, cases: int = 10, **variables: Any) -> dict[str, Any]:
    found = site.query(RESOLVE_KERNEL, {"cases": cases, **variables})
    resolution: dict[str, Any] = found["registry"]["resolveKernel"]
    return resolution


# The resolver ------------------------------------------------------------------------------------------


def test_an_exact_cohort_with_its_three_picks_and_why(site: Site) -> None:
    found = _resolve(site, operation="RMSNorm", gpu="B200", dtype="bf16", axes=[{"name": "tokens", "value": 2048}])
    assert found["mode"] == "EXACT" and found["exactCount"] == 1 and found["problems"] == []
    assert found["operations"] == [
        {"how": "ALIAS", "operation": {"digest": digest_of(RMS), "name": "kernel-rms-norm", "title": "RMSNorm",
                                       "family": "rmsnorm"}}
    ]  # fmt: skip
    assert found["openParts"] == [] and found["policy"] == "ranking-v1" and found["nearest"]["totalCount"] == 0
    (answer,) = [edge["node"] for edge in found["exact"]["edges"]]
    assert answer["rankedCount"] == 4
    assert (answer["leader"]["run"]["digest"], answer["leader"]["rank"]) == (_d("r1"), 1)
    assert (answer["bestVerified"]["run"]["digest"], answer["bestVerified"]["rank"]) == (_d("r2"), 2)
    assert (answer["bestDeployable"]["run"]["digest"], answer["bestDeployable"]["rank"]) == (_d("r4"), 4)
    assert answer["leader"]["why"] == "rank 1 of 4 ranked runs by latency under ranking-v1"
    assert found["summary"] == "1 comparison group measured exactly this request for RMSNorm."


def test_a_near_miss_on_a_shape_explains_the_distance_and_brackets_it(site: Site) -> None:
    found = _resolve(site, operation="rmsnorm", gpu="B200", shape=[3000, 4096])
    assert found["mode"] == "NEAREST" and found["exact"]["totalCount"] == 0
    first = found["nearest"]["edges"][0]["node"]
    (difference,) = first["differences"]
    # The operation declares its input [tokens, hidden]: dimension 0 of the shape is the axis tokens.
    assert (difference["facet"], difference["axis"], difference["requested"], difference["measured"]) == (
        "AXIS",
        "tokens",
        "3000",
        "4096",
    )
    assert difference["delta"] == 1096 and difference["ratio"] == pytest.approx(4096 / 3000)
    assert difference["distance"] == pytest.approx(0.449, abs=1e-3)  # |log2(4096/3000)|
    assert difference["explanation"] == "tokens 4096 measured, 3000 asked (1.37× as much)"
    assert first["distance"] == pytest.approx(difference["distance"])
    assert {"facet": "GPU", "axis": None, "value": "NVIDIA B200"} in first["same"]
    bracket = found["bracket"]
    assert (bracket["facet"], bracket["axis"], bracket["requested"], bracket["below"], bracket["above"]) == (
        "AXIS",
        "tokens",
        3000,
        2048,
        4096,
    )
    assert found["summary"].startswith("Nothing measured exactly this for RMSNorm; the nearest of ")


def test_an_unknown_gpu_is_explained_with_the_gpus_there_are(site: Site) -> None:
    found = _resolve(site, operation="rmsnorm", gpu="TPU v5", axes=[{"name": "tokens", "value": 2048}])
    assert found["mode"] == "NEAREST"
    assert found["problems"] == [
        {
            "part": "GPU",
            "message": "no run in the registry was measured on a GPU named 'TPU v5'",
            "suggestions": ["NVIDIA B200", "NVIDIA H100", "sm_100", "sm_90"],
        }
    ]
    assert {d["facet"] for e in found["nearest"]["edges"] for d in e["node"]["differences"][:1]} == {"GPU"}


def test_an_unknown_operation_is_explained_with_the_nearest_names(site: Site) -> None:
    found = _resolve(site, operation="rmsnrom")
    assert found["mode"] == "NONE" and found["operations"] == [] and found["exactCount"] == 0
    (problem,) = found["problems"]
    assert problem["part"] == "OPERATION" and problem["suggestions"][0] == "RMSNorm"
    assert found["summary"] == "no operation is named, titled or of the family 'rmsnrom'."


@pytest.mark.parametrize(
    ("axes", "shape", "accepted"),
    [
        ([{"name": f"a{i}", "value": i} for i in range(16)], None, True),  # at the limit
        ([{"name": f"a{i}", "value": i} for i in range(17)], None, False),  # one past
        ([{"name": "tokens", "value": 1}, {"name": "tokens", "value": 2}], None, False),
        (None, [1] * 8, True),
        (None, [1] * 9, False),
        (None, [], False),
        (None, [2048, -1], False),
    ],
)
def test_the_requests_bounds(site: Site, axes: Any, shape: Any, accepted: bool) -> None:
    variables = {"operation": "rmsnorm", "axes": axes, "shape": shape, "cases": 1}
    if accepted:
        assert _resolve(site, **variables)["mode"] in ("EXACT", "NEAREST")
    else:
        assert site.code(RESOLVE_KERNEL, variables) == "BAD_USER_INPUT"
    too_long = {"operation": "x" * 201, "cases": 1}
    assert site.code(RESOLVE_KERNEL, too_long) == "BAD_USER_INPUT"


def test_the_search_page_shows_the_resolvers_answer_for_a_kernel_request(site: Site) -> None:
    client = site.running.client
    page = client.get("/search", params={"q": "rmsnorm b200 bf16 tokens=2048"}, headers=HTML).text
    assert "The resolver&#39;s answer" in page or "The resolver's answer" in page
    assert "1 comparison group measured exactly this request for RMSNorm." in page
    assert f'href="/at/{site.commit}/runs/{_d("r1")}"' in page  # the leader, linked
    assert "the best-ranked run a registry rerun confirmed" in page
    variables: dict[str, object] = {
        "at": None,
        "q": "rmsnorm b200 bf16 tokens=2048",
        "first": 50,
        "after": None,
        "cases": RESOLVER_CASES,
    }
    twin = client.get("/search.json", params={"q": "rmsnorm b200 bf16 tokens=2048"}).json()
    assert twin == site.running.graphql(documents.SEARCH, variables).json()
    assert twin["data"]["registry"]["search"]["resolution"]["mode"] == "EXACT"
    for query in ("rmsnorm triton", "b200 bf16", "rmsnorm gpu:b200 gpu:h100", "zzz qqq"):
        found = client.get("/search.json", params={"q": query}).json()["data"]["registry"]["search"]
        assert found["resolution"] is None, query  # not a kernel request: a search only
        assert "The resolver" not in client.get("/search", params={"q": query}, headers=HTML).text
    near = client.get("/search", params={"q": "op:rmsnorm b200 tokens=3000"}, headers=HTML).text
    assert "tokens 4096 measured, 3000 asked" in near and "Measured on either side of tokens = 3000" in near


# Implementation facts ----------------------------------------------------------------------------------

FACTS = """
query($id: String!) { implementation(id: $id) {
  license { declared stated concluded known permissive evidencePath }
  installable installVariants { name kind package version repository commit command pinned
                                requirements { name constraint } }
  sourceCode { available repository commit version contentDigest fileName sizeBytes }
  deployability { deployable reasons policy explanation }
} }
"""


def test_implementation_facts_are_typed_fields(site: Site) -> None:
    b = site.query(FACTS, {"id": "kernel-b"})["implementation"]
    assert b["license"] == {
        "declared": "Apache-2.0",
        "stated": None,
        "concluded": "Apache-2.0",
        "known": True,
        "permissive": True,
        "evidencePath": None,
    }
    assert b["installable"] and b["installVariants"] == [
        {
            "name": "pip",
            "kind": "PIP",
            "package": "kernel-b",
            "version": "1.0",
            "repository": None,
            "commit": None,
            "command": None,
            "pinned": True,
            "requirements": [],
        }
    ]
    assert b["sourceCode"]["available"] and b["sourceCode"]["repository"] == "https://example.invalid/kernels"
    assert b["deployability"] == {
        "deployable": True,
        "reasons": [],
        "policy": "deployability-v1",
        "explanation": "Deployable: public source, an install recipe and a known licence.",
    }
    u = site.query(FACTS, {"id": "kernel-u"})["implementation"]
    assert u["license"]["declared"] == "Custom terms" and u["license"]["concluded"] is None
    assert not u["license"]["known"] and not u["license"]["permissive"]
    assert u["installVariants"][0]["kind"] == "GIT" and not u["installVariants"][0]["pinned"]  # no commit
    assert u["deployability"]["explanation"] == "Not deployable: its licence is unknown."
    p = site.query(FACTS, {"id": "kernel-p"})["implementation"]
    assert not p["sourceCode"]["available"] and p["installVariants"][0]["pinned"]  # an image :tag
    assert p["installVariants"][0]["requirements"] == [
        {"name": "cuda", "constraint": ">=12.4"},
        {"name": "driver", "constraint": ">=550"},
    ]
    n = site.query(FACTS, {"id": "kernel-n"})["implementation"]
    assert n["deployability"]["explanation"] == "Not deployable: no install recipe is given and its licence is unknown."
    for name, reasons in VERDICTS.items():
        found = site.query(FACTS, {"id": name})["implementation"]["deployability"]
        assert found["reasons"] == reasons and found["deployable"] is (not reasons), name


def _runs(site: Site, run_filter: dict[str, Any]) -> set[str]:
    found = site.query(
        "query($f: RunFilter) { runs(filter: $f, first: 100) { totalCount edges { node { digest } } } }",
        {"f": run_filter},
    )["runs"]
    digests = {edge["node"]["digest"] for edge in found["edges"]}
    assert len(digests) == found["totalCount"]
    return digests


def _of(names: set[str]) -> set[str]:
    return {_d(run) for name in names for run in RUNS_OF[name]}


def test_runs_and_implementations_filter_on_implementation_facts(site: Site) -> None:
    deployable = {name for name, reasons in VERDICTS.items() if not reasons}
    unknown = {name for name, reasons in VERDICTS.items() if "LICENSE_UNKNOWN" in reasons}
    installable = {"kernel-b", "kernel-u", "kernel-p"}
    assert _runs(site, {"deployableOnly": True}) == _of(deployable) == {_d("r4"), _d("t4096b")}
    assert _runs(site, {"licenseKnown": False}) == _of(unknown)
    assert _runs(site, {"licenseKnown": True}) == _of(set(VERDICTS) - unknown)
    assert _runs(site, {"installable": True}) == _of(installable)
    assert _runs(site, {"installable": False, "licenseKnown": True}) == _of({"kernel-a", "softmax-k"})
    assert _runs(site, {"deployableOnly": True, "gpu": "h100"}) == set()  # every condition must hold
    assert len(_runs(site, {})) == len(ALL_RUNS)
    document = "query($f: ImplementationFilter) { implementations(filter: $f, first: 100) { edges { node { name } } } }"

    def names(implementation_filter: dict[str, Any]) -> set[str]:
        found = site.query(document, {"f": implementation_filter})["implementations"]["edges"]
        return {edge["node"]["name"] for edge in found}

    assert names({"deployableOnly": True}) == deployable
    assert names({"licenseKnown": False}) == unknown
    assert names({"installable": False}) == set(VERDICTS) - installable
    assert names({}) == set(VERDICTS)


def test_the_implementation_page_says_whether_it_can_be_shipped(site: Site) -> None:
    client = site.running.client
    b = client.get("/implementations/kernel-b", headers=HTML).text
    assert "Can I ship it?" in b and "Deployable: public source, an install recipe and a known licence." in b
    assert "<code>kernel-b==1.0</code>" in b
    n = client.get("/implementations/kernel-n", headers=HTML).text
    assert "Not deployable: no install recipe is given and its licence is unknown." in n
    assert "Its manifest gives no way to install it." in n and "unknown: no SPDX licence could be concluded" in n
    p = client.get("/implementations/kernel-p", headers=HTML).text
    assert "<code>docker run example.invalid/p:1.2</code>" in p and "<code>cuda &gt;=12.4</code>" in p
    twin = client.get("/implementations/kernel-u.json").json()["data"]["registry"]["implementation"]
    assert twin["deployability"]["reasons"] == ["LICENSE_UNKNOWN"]
    assert json.dumps(twin["license"]) == json.dumps(
        {"declared": "Custom terms", "stated": None, "concluded": None, "known": False, "permissive": False,
         "evidencePath": None}
    )  # fmt: skip
