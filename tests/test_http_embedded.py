"""The API over real HTTP on loopback, against the embedded registry: what frontends render."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import EMBEDDED_REPO, SEEDS
from server import Running, serve

from kernelindex.registry.nodes import Run
from kernelindex.service.dossier import DOSSIER_QUERY

SEED_000 = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"
LARGEST_COHORT = "sha256:39d43c1992795178d10cba3e0981ac913d0242d5d34e9a9cd4ec9ed763039662"


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def data(response: Any) -> dict[str, Any]:
    body = response.json()
    assert "errors" not in body, body["errors"]
    assert response.status_code == 200
    return body["data"]  # type: ignore[no-any-return]


# The seed pages ------------------------------------------------------------------------------------

_LABELS = (
    "implementation",
    "project",
    "revision",
    "workload",
    "comparison key",
    "source",
    "external id",
    "definition comparator",
    "description",
    "harness",
    "timer",
    "primaryStatistic",
    "correctnessReference",
    "comparabilityFamily",
    "gpu",
)


class Page:
    """A seed page's text, read the way a person reads it."""

    def __init__(self, path: Path) -> None:
        self.text = path.read_text()
        self.lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        self.fields: dict[str, str] = {}
        for line in self.lines:
            for label in sorted(_LABELS, key=len, reverse=True):
                if line.startswith(label) and label not in self.fields:
                    self.fields[label] = line[len(label) :]
                    break
        start = self.text.index("{", self.text.index("Show manifest"))
        self.bundle, _ = json.JSONDecoder().raw_decode(self.text[start:])

    def after(self, heading: str) -> str:
        return self.lines[self.lines.index(heading) + 1]


PAGES = sorted(SEEDS.glob("*.txt"))


def _dossier(api: Running, run: str) -> dict[str, Any]:
    found = data(api.graphql(DOSSIER_QUERY, {"id": run}))["registry"]["run"]
    assert found is not None
    return found  # type: ignore[no-any-return]


@pytest.mark.parametrize("page_file", PAGES, ids=[p.stem for p in PAGES])
def test_the_dossier_shows_what_the_seed_page_shows(api: Running, page_file: Path) -> None:
    page = Page(page_file)
    digest_prefix = re.search(r"^(sha256:[0-9a-f]{16,})…$", page.text, re.MULTILINE)
    assert digest_prefix is not None
    run = _dossier(api, digest_prefix.group(1))
    assert run["digest"].startswith(digest_prefix.group(1))
    primary = run["primary"]
    assert page.after("Primary measurement") == primary["display"].replace(" ", "") + primary["statistic"]
    standing = next(line for line in page.lines if line.startswith("Rank "))
    profile = "source-native comparison" if run["cohort"]["profile"] == "SOURCE_NATIVE" else "strict exact comparison"
    assert f"· {profile} · observed {run['observedAt'][:10]}" in standing
    if not page_file.name.startswith("003"):
        # 003's page was captured when upstream held more runs in that cohort than the export has:
        # it shows rank 3 and a "Compare with #1"; here it is the cohort's only run.
        assert standing.startswith(f"Rank {run['rank']} in its comparison group")
        assert ("Compare with #1 →" in page.text) == (run["leader"]["digest"] != run["digest"])
    assert run["sourceNative"]["summary"] == next(line for line in page.lines if line.startswith("SOL "))
    fields = page.fields
    assert fields["implementation"] == run["implementation"]["displayName"]
    assert fields["project"] == run["implementation"]["project"]["displayName"]
    assert fields["revision"] == run["implementation"]["revision"]
    assert fields["workload"] == run["workload"]["label"]
    assert run["cohort"]["key"].startswith(fields["comparison key"].rstrip("…"))
    assert fields["source"] == run["source"]["name"] == "NVIDIA SOL-ExecBench"
    assert fields["external id"].endswith(run["sourceNative"]["externalId"])
    assert page.after("Correctness") == run["correctnessNote"]
    assert fields["definition comparator"] == run["workload"]["correctness"]["comparator"]
    assert fields["description"] == run["workload"]["correctness"]["description"]
    measurement = run["measurements"][0]
    assert page.after("Measurements") == f"{measurement['metric']} · {measurement['statistic']}{measurement['display']}"
    protocol = run["protocol"]
    for label in ("harness", "timer", "primaryStatistic", "correctnessReference", "comparabilityFamily"):
        assert fields[label] == protocol[label], label
    assert fields["gpu"] == run["environment"]["gpu"]
    assert page.after("Artifacts") == "No artifacts published with this run." and run["artifacts"] == []
    assert page.after("Replications and notes") == "No attestations yet." and run["attestations"] == []
    assert run["bundle"] == page.bundle
    published = re.search(r"Published (\d{4}-\d{2}-\d{2}) · (.+?)All results", page.text)
    assert published is not None
    assert run["publishedAt"][:10] == published.group(1)
    assert run["source"]["name"] == published.group(2)
    assert run["citation"] == (
        f"{run['implementation']['title']}, {run['workload']['label']}. {primary['display']} ({primary['statistic']}). "
        f"Reported by NVIDIA SOL-ExecBench. Run {run['digest']}. "
        "No permalink: this registry has no public base URL configured."
    )  # no access date: the server never adds its own (a client passes `accessed`); no base URL: no permalink
    assert run["permalink"] == f"/at/{api.service.snapshots.head.commit}/runs/{run['digest']}"  # no base URL set
    commit = run["provenance"]["commit"]
    assert commit["committedAt"] == run["publishedAt"]
    assert {t["key"] for t in commit["trailers"]} >= {"Source", "License"}


def test_seed_000_ranks_second_behind_144537_ns(api: Running) -> None:
    run = _dossier(api, SEED_000)
    assert run["rank"] == 2
    assert run["cohort"]["key"].startswith("sha256:92bc0be5b5ce9f52")
    assert run["leader"]["primary"]["value"] == 144537
    assert run["eligible"] and run["ineligibilityReasons"] == [] and run["warnings"] == []


def test_history_of_the_seed_cohort(api: Running) -> None:
    cohort = data(api.graphql('{ cohort(key: "92bc0be5b5ce9f52") { history { cause run { name } previousRun { name } '
                              "improvementPct } holder { run { name } } } }"))["cohort"]  # fmt: skip
    assert [(e["run"]["name"], (e["previousRun"] or {}).get("name")) for e in cohort["history"]] == [
        ("sol-submission-6709", None),
        ("sol-submission-16043", "sol-submission-6709"),
    ]
    assert cohort["holder"]["run"]["name"] == "sol-submission-16043"
    assert 0 < cohort["history"][1]["improvementPct"] < 0.1


def test_a_run_with_an_upstream_operation_mismatch_shows_its_warning(api: Running) -> None:
    run = data(api.graphql('{ run(id: "sha256:0c42117796ce0ec97435153c9a0d61c968f24fac54645b3478b00586f619990e") '
                           "{ warnings eligible } }"))["run"]  # fmt: skip
    assert len(run["warnings"]) == 1 and run["warnings"][0].startswith("operation-mismatch:")


# Leaderboards, records, compare ----------------------------------------------------------------------

LEADERBOARD = """query Board($key: String!, $after: String) {
  cohort(key: $key) { size rankedCount profile
    entries(first: 20, after: $after) { totalCount pageInfo { hasNextPage endCursor }
      edges { cursor node { rank tiedWithPrevious run { digest name primary { value display } trust } } } } } }"""


def test_a_leaderboard_slice_pages_in_rank_order(api: Running) -> None:
    first = data(api.graphql(LEADERBOARD, {"key": LARGEST_COHORT}))["cohort"]
    entries = first["entries"]
    assert entries["totalCount"] == first["rankedCount"] == 260 and len(entries["edges"]) == 20
    second = data(api.graphql(LEADERBOARD, {"key": LARGEST_COHORT, "after": entries["pageInfo"]["endCursor"]}))
    edges = entries["edges"] + second["cohort"]["entries"]["edges"]
    ranks = [e["node"]["rank"] for e in edges]
    values = [e["node"]["run"]["primary"]["value"] for e in edges]
    assert ranks == sorted(ranks) and ranks[0] == 1 and values == sorted(values)
    assert len({e["node"]["run"]["digest"] for e in edges}) == 40
    again = data(api.graphql(LEADERBOARD, {"key": LARGEST_COHORT}))["cohort"]["entries"]
    assert [e["cursor"] for e in again["edges"]] == [e["cursor"] for e in entries["edges"]]


def test_the_records_ledger(api: Running) -> None:
    ledger = data(api.graphql("{ records(first: 100) { totalCount edges { node { since cohort { key } holder { digest } "
                              "event { cause } } } } }"))["records"]  # fmt: skip
    graph = api.service.snapshots.head
    assert ledger["totalCount"] == sum(1 for c in graph.cohorts.values() if c.events(graph))
    since = [e["node"]["since"] for e in ledger["edges"]]
    assert since == sorted(since, reverse=True)
    for edge in ledger["edges"]:
        cohort = graph.cohorts[edge["node"]["cohort"]["key"]]
        assert edge["node"]["holder"]["digest"] == cohort.events(graph)[-1].run


def test_compare_in_one_cohort_ranks_and_across_cohorts_names_the_differences(api: Running) -> None:
    same = data(api.graphql('{ compare(runs: ["sol-submission-16043", "' + SEED_000 + '"]) '
                            "{ sameCohort material entries { rank run { name } } } }"))["compare"]  # fmt: skip
    assert same["sameCohort"] and same["material"] == []
    assert [(e["rank"], e["run"]["name"]) for e in same["entries"]] == [
        (1, "sol-submission-16043"),
        (2, "sol-submission-6709"),
    ]
    other = data(api.graphql('{ compare(runs: ["' + SEED_000 + '", "sha256:fa2cdd25d5d22ec080b8e6fcabbd2acc51a3c2ab3bcff1cfc9a5be97cdd4e0dc", "nope"]) '
                             "{ sameCohort material entries { rank } rows { field same material } missing } }"))["compare"]  # fmt: skip
    assert not other["sameCohort"] and other["entries"] is None and other["missing"] == ["nope"]
    assert other["material"] == ["operation", "workload"]
    assert [r["field"] for r in other["rows"][:2]] == ["operation", "workload"]


def test_filters_on_runs_and_cohorts(api: Running) -> None:
    found = data(api.graphql('{ runs(filter: {gpu: "sm_90", source: "gpumode-kernelbot", eligibleOnly: true}, first: 5) '
                             "{ totalCount edges { node { environment { architecture } eligible source { slug } observedAt } } } }"))  # fmt: skip
    runs = found["runs"]
    assert runs["totalCount"] > 0
    for edge in runs["edges"]:
        node = edge["node"]
        assert (
            node["environment"]["architecture"] == "sm_90"
            and node["eligible"]
            and node["source"]["slug"] == "gpumode-kernelbot"
        )
    observed = [e["node"]["observedAt"] for e in runs["edges"]]
    assert observed == sorted(observed, reverse=True)
    since = data(
        api.graphql('{ runs(filter: {observedSince: "2026-08-14T00:00:00Z", status: [PASSED]}) { totalCount } }')
    )
    graph = api.service.snapshots.head
    runs = [node for node in graph.nodes.values() if isinstance(node, Run)]
    assert since["runs"]["totalCount"] == len(
        [r for r in runs if r.observed_at >= "2026-08-14T00:00:00Z" and r.status == "passed"]
    )
    cohorts = data(
        api.graphql(
            '{ cohorts(filter: {gpu: "NVIDIA B200", minSize: 100}) { totalCount edges { node { size environment { product } } } } }'
        )
    )
    assert all(
        e["node"]["size"] >= 100 and e["node"]["environment"]["product"] == "NVIDIA B200"
        for e in cohorts["cohorts"]["edges"]
    )
    trust = data(api.graphql("{ runs(filter: {minTrust: REPRODUCIBLE}) { totalCount edges { node { trust } } } }"))[
        "runs"
    ]
    assert trust["totalCount"] > 0 and all(e["node"]["trust"] == "REPRODUCIBLE" for e in trust["edges"])


def test_lookups_by_name_prefix_and_ambiguity(api: Running) -> None:
    by_name = data(
        api.graphql('{ run(id: "sol-submission-6709") { digest } manifest(digest: "7f6df4bbbdbe") { kind } }')
    )
    assert by_name["run"]["digest"] == SEED_000 and by_name["manifest"]["kind"] == "BenchmarkRun"
    missing = data(api.graphql('{ run(id: "no-such-run") { digest } operation(id: "7f6d0000000000") { name } }'))
    assert missing == {"run": None, "operation": None}
    short = api.graphql('{ run(id: "no-such-run") { digest } operation(id: "7f6d") { name } }').json()
    assert short["data"] == {"run": None, "operation": None}  # too short for a prefix, and no name: refused
    assert [e["extensions"]["code"] for e in short["errors"]] == ["BAD_USER_INPUT"]
    ambiguous = api.graphql('{ implementation(id: "kernelbot-submission-32750") { digest } }').json()
    assert ambiguous["data"] == {"implementation": None}
    assert ambiguous["errors"][0]["extensions"]["code"] == "AMBIGUOUS_NAME"
    assert "ambiguous" in ambiguous["errors"][0]["message"]


# Permalinks and HTTP semantics ----------------------------------------------------------------------


def test_manifest_permalinks_serve_the_stored_bytes_forever(api: Running, embedded: Any) -> None:
    head = api.service.snapshots.head.commit
    entry = embedded.find_entry(head, SEED_000)
    response = api.client.get(f"/at/{head}/manifests/{SEED_000}")
    assert response.status_code == 200
    assert response.content == embedded.read_blob(entry.oid)
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    again = api.client.get(f"/at/{head}/manifests/{SEED_000}", headers={"if-none-match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    moved = api.client.get(f"/manifests/{SEED_000}", follow_redirects=False)
    assert moved.status_code == 302 and moved.headers["location"].endswith(f"/at/{head}/manifests/{SEED_000}")
    short = api.client.get(f"/at/{head[:12]}/manifests/{SEED_000}", follow_redirects=False)
    assert short.status_code == 307 and f"/at/{head}/" in short.headers["location"]
    commits = api.service.snapshots.publication.mainline.commits  # type: ignore[union-attr]
    seeds = next(i for i, c in enumerate(commits) if "seed" in embedded.commit_info(c).subject.lower())
    before_seeds = commits[seeds - 1]
    assert api.client.get(f"/at/{before_seeds}/manifests/{SEED_000}").status_code == 404
    assert (
        api.client.get(f"/at/{'0' * 40}/manifests/{SEED_000}").json()["errors"][0]["extensions"]["code"]
        == "REVISION_NOT_FOUND"
    )
    assert api.client.get(f"/at/{head}/manifests/sha256:XYZ").status_code == 400


def test_run_permalinks_serve_the_dossier_at_that_commit(api: Running) -> None:
    head = api.service.snapshots.head.commit
    response = api.client.get(f"/at/{head}/runs/{SEED_000}")
    assert response.status_code == 200 and response.headers["cache-control"].endswith("immutable")
    body = response.json()
    assert body["registry"]["commit"] == head and body["run"]["digest"] == SEED_000 and body["run"]["rank"] == 2
    assert body["run"]["permalink"].endswith(f"/at/{head}/runs/{SEED_000}")
    assert api.client.get(f"/at/{head}/runs/{SEED_000}").content == response.content


def test_responses_carry_the_registry_and_caching_headers(api: Running) -> None:
    head = api.service.snapshots.head
    unpinned = api.graphql("{ commit { id } }")
    assert unpinned.json()["extensions"]["registry"]["commit"] == head.commit
    assert unpinned.headers["cache-control"] == "public, max-age=0, must-revalidate"
    assert api.graphql("{ commit { id } }", headers={"if-none-match": unpinned.headers["etag"]}).status_code == 304
    pinned = api.graphql("query($at: String) { registry(at: $at) { commit { id } } }", {"at": head.commit})
    assert pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert pinned.json()["extensions"]["registry"]["pinned"] == [
        {"commit": head.commit, "committedAt": "2026-08-24T00:00:00Z"}
    ]
    by_branch = api.graphql('{ registry(at: "main") { commit { id } } }')
    assert by_branch.headers["cache-control"] == "public, max-age=0, must-revalidate"
    get = api.client.get("/graphql", params={"query": "{ commit { id } }"})
    assert get.status_code == 200 and get.json()["data"]["commit"]["id"] == head.commit
    cors = api.client.options(
        "/graphql", headers={"origin": "https://example.org", "access-control-request-method": "POST"}
    )
    assert cors.status_code == 200 and cors.headers["access-control-allow-origin"] == "*"
    ide = api.client.get("/graphql", headers={"accept": "text/html"})
    assert ide.status_code == 200 and "graphiql" in ide.text.lower()


BASE = "https://registry.example.org"


def test_citation_formats(api: Running) -> None:
    # Under a base URL a client gives (this server has none: its citations would say they need one).
    run = data(api.graphql('{ run(id: "' + SEED_000 + '") { '
                           'text: citation(accessed: "2026-11-29", baseUrl: "' + BASE + '") '
                           'bib: citation(format: BIBTEX, accessed: "2026-11-29", baseUrl: "' + BASE + '") '
                           'csl: citation(format: CSL_JSON, accessed: "2026-11-29", baseUrl: "' + BASE + '") '
                           'permalink } }'))["run"]  # fmt: skip
    run["permalink"] = BASE + run["permalink"]
    assert run["text"].endswith(f"{run['permalink']}. Accessed 2026-11-29.")
    assert run["bib"].startswith("@misc{kernelindex-7f6df4bbbdbe,") and run["permalink"] in run["bib"]
    csl = json.loads(run["csl"])
    assert csl["URL"] == run["permalink"] and csl["issued"] == {"date-parts": [[2026, 8, 24]]}
    assert csl["accessed"] == {"date-parts": [[2026, 11, 29]]} and csl["author"] == [
        {"literal": "NVIDIA SOL-ExecBench"}
    ]


def test_healthz(api: Running) -> None:
    health = api.client.get("/healthz").json()
    assert health["status"] == "ok" and health["serving"] == health["main"] and health["reason"] is None
