"""`kernelindex verify` and `check_citation`: a citation checked offline against a copy of the registry.

The governed registry (tests/governed.py) holds a run that still stands and was verified (a2), one retracted
(c1, by C2) and one superseded (b1, by C3); the expected commits come from how the fixture built them, the
expected digests from the manifests' own bytes. Tampered copies are made with git directly."""

from __future__ import annotations

import json

import pytest
from governed import Governed, build_governed
from helpers import basic_scenario, make_run, to_manifest
from signing import Key, commit_raw, stored
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli.main import app
from kernelindex.registry.citation_check import (
    HOLDS,
    INVALID,
    NO_LONGER_STANDS,
    Claim,
    NotACitation,
    check_citation,
    parse_citation,
)
from kernelindex.registry.snapshots import Snapshots


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> Governed:
    return build_governed(store, keys["alice"])


def _loaded(store: registry.GitStore) -> Snapshots:
    snapshots = Snapshots(store.path)
    snapshots.load()
    return snapshots


def _permalink(commit: str, digest: str) -> str:
    return f"https://registry.example/at/{commit}/runs/{digest}"


def _verify(runner: CliRunner, store: registry.GitStore, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["verify", "--repo", str(store.path), *args])
    return result.exit_code, result.output


def test_a_standing_verified_run_holds_with_its_verification(
    store: registry.GitStore, governed: Governed, runner: CliRunner
) -> None:
    c0, _, _, c3 = governed.commits
    found = check_citation(_loaded(store), Claim(governed.runs["a2"], c0))
    assert found.verdict == HOLDS and found.valid and found.state == "current"
    assert found.kind == "BenchmarkRun" and found.publishing_commit == c0
    assert [(what, passed) for what, passed, _ in found.checks] == [
        ("commit", True),
        ("digest", True),
        ("signature", True),
    ]
    assert "signed by alice@example.com" in found.checks[2][2]
    assert [(f.kind, f.commit, f.overlay) for f in found.facts] == [
        ("Verification", c3, governed.overlays["verification"])
    ]
    code, output = _verify(runner, store, _permalink(c0, governed.runs["a2"]))
    assert code == 0 and output.startswith("valid: the citation holds")


def test_a_retracted_run_names_its_retraction_and_exits_3(
    store: registry.GitStore, governed: Governed, runner: CliRunner
) -> None:
    _, c1, c2, _ = governed.commits
    found = check_citation(_loaded(store), Claim(governed.runs["c1"], c1))
    assert found.verdict == NO_LONGER_STANDS and found.valid and found.state == "retracted"
    assert [(f.kind, f.commit, f.reason) for f in found.facts] == [("Retraction", c2, "clock drift")]
    code, output = _verify(runner, store, "--json", _permalink(c1, governed.runs["c1"]))
    answer = json.loads(output)
    assert code == 3 and answer["verdict"] == "no-longer-stands" and answer["valid"] is True
    assert answer["facts"] == [
        {
            "kind": "Retraction",
            "manifest": governed.overlays["retraction"],
            "commit": c2,
            "reason": "clock drift",
            "successor": None,
        }
    ]
    # The same, as the citation a reader holds: a BibTeX entry read from stdin.
    entry = "@misc{x,\n  url = {" + _permalink(c1, governed.runs["c1"]) + "},\n}\n"
    result = runner.invoke(app, ["verify", "--repo", str(store.path), "-"], input=entry)
    assert result.exit_code == 3 and f"retraction in {c2}: clock drift" in result.output


def test_a_superseded_run_names_its_correction(store: registry.GitStore, governed: Governed) -> None:
    c0, _, _, c3 = governed.commits
    found = check_citation(_loaded(store), Claim(governed.runs["b1"], c0))
    assert found.verdict == NO_LONGER_STANDS and found.state == "superseded"
    assert [(f.kind, f.commit, f.successor) for f in found.facts] == [("Supersession", c3, governed.runs["d1"])]


def test_a_digest_not_at_the_cited_commit_fails(
    store: registry.GitStore, governed: Governed, runner: CliRunner
) -> None:
    c0, c1, _, _ = governed.commits
    found = check_citation(_loaded(store), Claim(governed.runs["c1"], c0))  # c1 came one commit later
    assert found.verdict == INVALID and found.checks[-1][:2] == ("manifest", False)
    wrong = governed.runs["a2"][:-1] + ("0" if governed.runs["a2"][-1] != "0" else "1")
    code, output = _verify(runner, store, f"{wrong} {c1}")
    assert code == 1 and "NOT VALID" in output and f"no manifest {wrong}" in output


def test_a_tampered_commit_on_main_is_not_served_and_fails(store: registry.GitStore, governed: Governed) -> None:
    """A tampered copy: in one commit of main the file named for run a2 holds a2 with another latency (the next
    commit puts it back). Main fails validation from that commit on, so it is not the history the registry
    serves, and the check says why."""
    c3 = governed.commits[3]
    path, data = stored(_a2_document(governed))
    document = json.loads(data)
    document["spec"]["timing"]["latencyNs"]["median"] = 1
    tampered = commit_raw(store, c3, {path: json.dumps(document).encode()}, when=1_790_000_900)
    commit_raw(store, tampered, {path: data}, ref="refs/heads/main", when=1_790_001_000)
    found = check_citation(_loaded(store), Claim(governed.runs["a2"], tampered))
    assert found.verdict == INVALID and [c[:2] for c in found.checks] == [("commit", False)]
    assert found.checks[0][2].startswith(f"{tampered} is on main past {c3[:12]}, the last commit served: main ")
    assert "published files never change" in found.checks[0][2]


def test_stored_bytes_that_hash_to_another_digest_fail(
    store: registry.GitStore, governed: Governed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes that changed under a served commit (a corrupted object store): the digest is computed again from
    the bytes read, never taken from the index, and the check says what they hash to."""
    c0 = governed.commits[0]
    snapshots = _loaded(store)
    document = json.loads(stored(_a2_document(governed))[1])
    document["spec"]["timing"]["latencyNs"]["median"] = 1
    oid = snapshots.head.nodes[governed.runs["a2"]].oid
    read = registry.GitStore.read_blob
    monkeypatch.setattr(
        registry.GitStore, "read_blob", lambda self, o: json.dumps(document).encode() if o == oid else read(self, o)
    )
    found = check_citation(snapshots, Claim(governed.runs["a2"], c0))
    expected = str(to_manifest(document).digest)
    assert found.verdict == INVALID and found.checks[-1] == (
        "digest",
        False,
        f"the BenchmarkRun stored at {c0[:12]} hashes to {expected}, not {governed.runs['a2']}",
    )


def test_a_commit_outside_mains_history_fails(store: registry.GitStore, governed: Governed, runner: CliRunner) -> None:
    c3 = governed.commits[3]
    scenario = basic_scenario()
    extra = make_run(scenario.implementations[0], scenario.workload, scenario.protocol, scenario.environment, 5000)
    path, data = stored(extra)
    branch = commit_raw(store, c3, {path: data}, ref="refs/heads/feature")
    digest = str(to_manifest(extra).digest)
    found = check_citation(_loaded(store), Claim(digest, branch))
    assert found.verdict == INVALID and found.checks == (
        ("commit", False, f"{branch} is not in the history of main ({c3[:12]})"),
    )
    code, _ = _verify(runner, store, _permalink(branch, digest))
    assert code == 1


def test_a_forged_signature_fails(store: registry.GitStore, governed: Governed, keys: dict[str, Key]) -> None:
    """mallory signs a commit of main that publishes a run; the policy lists alice only."""
    c3 = governed.commits[3]
    scenario = basic_scenario()
    extra = make_run(scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, 5100)
    path, data = stored(extra)
    forged = commit_raw(store, c3, {path: data}, ref="refs/heads/main", signer=keys["mallory"], when=1_790_001_000)
    found = check_citation(_loaded(store), Claim(str(to_manifest(extra).digest), forged))
    assert found.verdict == INVALID and found.checks[-1][:2] == ("signature", False)
    assert found.checks[-1][2].startswith(f"{forged[:12]}, which published it, is signed and its signature does not")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("see the registry", "no manifest digest"),
        ("sha256:" + "a" * 64, "no commit beside the digest"),
        ("sha256:" + "a" * 64 + " sha256:" + "b" * 64 + " " + "c" * 40, "2 different digests"),
        ("sha256:" + "a" * 64 + " " + "c" * 40 + " " + "d" * 40, "2 commits beside the digest"),
    ],
)
def test_text_that_is_no_citation_is_refused(text: str, message: str) -> None:
    with pytest.raises(NotACitation, match=message):
        parse_citation(text)


def test_no_citation_exits_2(store: registry.GitStore, governed: Governed, runner: CliRunner) -> None:
    code, output = _verify(runner, store, "nothing", "cited")
    assert code == 2 and "no manifest digest" in output


def test_each_citation_format_names_the_same_claim(embedded: registry.GitStore, runner: CliRunner) -> None:
    """The seed run's citations as `cite` prints them, in every format, name its digest and commit."""
    head = embedded.head()
    assert head is not None
    claims = set()
    for fmt in ("TEXT", "BIBTEX", "CSL_JSON"):
        printed = runner.invoke(app, ["cite", "sol-submission-6709", "--repo", str(embedded.path), "--format", fmt])
        assert printed.exit_code == 0, printed.output
        claims.add(parse_citation(printed.output))
    assert len(claims) == 1 and next(iter(claims)).commit == head


def _a2_document(governed: Governed) -> dict[str, object]:
    return next(d for d in governed.base if d["kind"] == "BenchmarkRun" and d["metadata"]["name"] == "run-a2")


def test_verify_citation_answers_in_graphql_as_the_cli_does(store: registry.GitStore, governed: Governed) -> None:
    import anyio

    from kernelindex.core.context import StoredObjects
    from kernelindex.service.queries import QueryService

    _, c1, c2, _ = governed.commits
    snapshots = _loaded(store)
    service = QueryService(snapshots, StoredObjects(snapshots), "")
    query = (
        "query($c: String!) { verifyCitation(citation: $c) { verdict digest citedCommit kind state "
        "steps { name passed } facts { kind reason commit { id } } commit { id } publishedIn { id } } }"
    )
    answer = anyio.run(lambda: service.answer(query, {"c": _permalink(c1, governed.runs["c1"])}))
    assert (
        not answer.errors
        and answer.data is not None
        and answer.data["verifyCitation"]
        == {
            "verdict": "NO_LONGER_STANDS",
            "digest": governed.runs["c1"],
            "citedCommit": c1,
            "kind": "BenchmarkRun",
            "state": "RETRACTED",
            "steps": [
                {"name": "commit", "passed": True},
                {"name": "digest", "passed": True},
                {"name": "signature", "passed": True},
            ],
            "facts": [{"kind": "RETRACTION", "reason": "clock drift", "commit": {"id": c2}}],
            "commit": {"id": c1},
            "publishedIn": {"id": c1},
        }
    )
    # As of C1, before the retraction: it held then (a snapshot checks against its own history and facts).
    then = "query($c: String!, $at: String) { registry(at: $at) { verifyCitation(citation: $c) { verdict facts { kind } } } }"
    earlier = anyio.run(lambda: service.answer(then, {"c": _permalink(c1, governed.runs["c1"]), "at": c1}))
    assert earlier.data == {"registry": {"verifyCitation": {"verdict": "HOLDS", "facts": []}}}, earlier.errors
    refused = anyio.run(lambda: service.answer(query, {"c": "a citation without a digest"}))
    assert refused.data is None  # a non-null field that failed: no data
    assert refused.codes == ["NOT_A_CITATION"]


def test_the_verify_page_over_http(store: registry.GitStore, governed: Governed) -> None:
    """A reader's browser on a real server: the retraction named with its commit, the citation shown back
    escaped, a text that is no citation a 400 page that says why, the JSON twin the same check."""
    from server import serve

    _, c1, c2, _ = governed.commits
    cited = _permalink(c1, governed.runs["c1"])
    hostile = cited + ' "><script>alert(1)</script>'
    with serve(store.path) as running:
        page = running.client.get("/verify", params={"citation": hostile}, headers={"accept": "text/html"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "Valid, but the result no longer stands" in page.text and f'href="/commits/{c2}"' in page.text
        assert "<script>alert(1)" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
        assert "clock drift" in page.text
        refused = running.client.get("/verify", params={"citation": "nothing"}, headers={"accept": "text/html"})
        assert refused.status_code == 400 and "no manifest digest" in refused.text
        twin = running.client.get("/verify.json", params={"citation": cited}).json()
        assert twin["data"]["registry"]["verifyCitation"]["verdict"] == "NO_LONGER_STANDS"
        assert running.client.get("/verify", headers={"accept": "text/html"}).status_code == 200  # the form alone
