"""Contributors and trust, with real git repositories and real ssh-keygen signatures: the PR check,
signed overlays, evidence levels, retractions, merges as publication."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2
import pytest
from helpers import (
    basic_scenario,
    commit_meta,
    digest_of,
    make_attestation,
    make_environment,
    make_operation,
    make_retraction,
    make_run,
    make_supersession,
    make_verification,
    make_workload,
    to_manifest,
)
from server import serve
from signing import T0, Key, commit_raw, merge_into_main, stored
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app as cli
from kernelindex.registry.review import check_range
from kernelindex.registry.signatures import POLICY_PATH, ssh_signer


def verifycommit_raw(store: registry.GitStore, info: registry.CommitInfo) -> registry.SignatureCheck:
    """Whether a maintainer of the policy in force before the commit signed it (no pinned root)."""
    return registry.TrustChain(store).verify(info.id)


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> registry.GitStore:
    """A registry whose initial commit, signed by alice, lists alice (and only her) as maintainer."""
    scenario = basic_scenario()
    store.add(
        [to_manifest(d) for d in scenario.docs],
        commit_meta(T0, subject="Initial policy and data"),
        extra_files={POLICY_PATH: keys["alice"].allowed_signer},
        sign=ssh_signer(keys["alice"].private),
    )
    return store


def test_the_initial_policy_commit_verifies_against_its_own_policy(governed: registry.GitStore) -> None:
    head = governed.head()
    assert head is not None
    check = verifycommit_raw(governed, governed.commit_info(head))
    assert check.verified and check.signer == "alice@example.com"


def test_a_valid_pr_passes_and_after_the_merge_ranks_while_old_pins_still_answer(governed: registry.GitStore) -> None:
    scenario = basic_scenario()
    base = governed.head()
    assert base is not None
    faster = make_run(
        scenario.implementations[1],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        5000,
        "2026-09-01T00:00:00Z",
        name="pr-run",
    )
    path, data = stored(faster)
    pr = commit_raw(governed, base, {path: data}, ref="refs/heads/pr-1")
    result = CliRunner().invoke(cli, ["validate", "--base", "main", "--head", "pr-1", "--repo", str(governed.path)])
    assert result.exit_code == 0, result.output
    assert "All checks passed." in result.output and digest_of(faster) in result.output
    query = 'query($at: String) { registry(at: $at) { run(id: "run-a2") { rank } pr: run(id: "pr-run") { rank publishedAt } } }'
    with serve(governed.path) as api:
        merged = merge_into_main(governed, pr, when=T0 + 7200)
        assert api.client.post("/hooks/refresh").json()["serving"] == merged
        now = api.graphql(query).json()["data"]["registry"]
        before = api.graphql(query, {"at": base}).json()["data"]["registry"]
    assert now == {"run": {"rank": 2}, "pr": {"rank": 1, "publishedAt": registry.provenance.utc_instant(T0 + 7200)}}
    assert before == {"run": {"rank": 1}, "pr": None}


def test_every_forbidden_change_is_reported_with_its_path_in_one_run(
    governed: registry.GitStore, keys: dict[str, Key]
) -> None:
    scenario = basic_scenario()
    base = governed.head()
    assert base is not None
    existing_path, existing = stored(scenario.runs[0])
    other_path, _ = stored(scenario.runs[1])
    workload_path, workload_bytes = stored(scenario.workload)
    op2 = make_operation("other-op", family="softmax")
    mismatch = make_run(
        scenario.implementations[0], make_workload(op2, tokens=3), scenario.protocol, scenario.environment, 1
    )
    dangling = make_run(scenario.implementations[0], scenario.workload, scenario.protocol, "sha256:" + "0" * 64, 5)
    valid_run = make_run(
        scenario.implementations[1],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        6000,
        "2026-09-02T00:00:00Z",
        name="fine",
    )
    op2_path, op2_bytes = stored(op2)
    mismatch_workload_path, mismatch_workload_bytes = stored(make_workload(op2, tokens=3))
    mismatch_path, mismatch_bytes = stored(mismatch)
    dangling_path, dangling_bytes = stored(dangling)
    retraction_path, retraction_bytes = stored(make_retraction(scenario.runs[0]))
    bob_retraction_path, bob_retraction_bytes = stored(make_retraction(scenario.runs[1], "bob says so"))
    valid_path, valid_bytes = stored(valid_run)
    misplaced = valid_path.replace("benchmark-runs/", "benchmark-runs/00/", 1).replace(
        "/00/" + valid_path.split("/")[1], "/00", 1
    )
    first = commit_raw(
        governed,
        base,
        {
            existing_path: existing.replace(b'"passed"', b'"timeout"'),  # edit
            other_path: None,  # delete
            workload_path: None,  # rename: same blob, new path
            "workload-cases/00/moved.json": workload_bytes,
            "benchmark-runs/README.md": b"hello\n",  # stray file
            "notes.txt": b"outside any folder\n",  # stray file at the root
            "benchmark-runs/ff/" + "f" * 64 + ".json": valid_bytes,  # misplaced (wrong digest)
            "benchmark-runs/ab/link.json": (b"../x", pygit2.enums.FileMode.LINK),  # symlink
            "benchmark-runs/cd/sub": (base.encode(), pygit2.enums.FileMode.COMMIT),  # submodule
            op2_path: op2_bytes,
            mismatch_workload_path: mismatch_workload_bytes,
            mismatch_path: mismatch_bytes,  # operation mismatch
            dangling_path: dangling_bytes,  # dangling reference
            retraction_path: retraction_bytes,  # unsigned overlay
            "benchmark-runs/ee/" + "e" * 64 + ".json": b"x" * (1024 * 1024 + 1),  # oversize blob
        },
    )
    implementation_path = stored(scenario.implementations[0])[0]
    second = commit_raw(
        governed,
        first,
        {implementation_path: (stored(scenario.implementations[0])[1], pygit2.enums.FileMode.BLOB_EXECUTABLE)},
    )
    third = commit_raw(
        governed, second, {bob_retraction_path: bob_retraction_bytes}, signer=keys["bob"]
    )  # unlisted key
    fourth = commit_raw(
        governed,
        third,
        {POLICY_PATH: keys["alice"].allowed_signer + keys["mallory"].allowed_signer},
        ref="refs/heads/bad-pr",
    )  # unsigned policy change
    del misplaced, fourth
    result = CliRunner().invoke(
        cli, ["validate", "--base", "main", "--head", "bad-pr", "--repo", str(governed.path), "--format", "json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.output)
    reasons = {(p["file"], p["reason"].split(":")[0].split(";")[0]) for p in report["problems"]}

    def reported(path: str, fragment: str) -> bool:
        return any(file == path and fragment in p["reason"] for p in report["problems"] for file in [p["file"]])

    assert reported(existing_path, "modified"), reasons
    assert reported(other_path, "deleted")
    assert reported("workload-cases/00/moved.json", "renamed from " + workload_path)
    assert reported(workload_path, "deleted")
    assert reported("benchmark-runs/README.md", "outside the layout")
    assert reported("notes.txt", "outside the layout")
    assert reported("benchmark-runs/ff/" + "f" * 64 + ".json", "belongs at " + valid_path)
    assert reported("benchmark-runs/ab/link.json", "symbolic link")
    assert reported("benchmark-runs/cd/sub", "submodule")
    assert reported(mismatch_path, "a run measures one operation")
    assert reported(dangling_path, "does not resolve")
    assert reported(retraction_path, "signed by a maintainer")
    assert reported(bob_retraction_path, "does not list")
    assert reported(POLICY_PATH, "no maintainer of the policy in force signed")
    assert reported("benchmark-runs/ee/" + "e" * 64 + ".json", "the limit is")
    assert reported(implementation_path, "mode changed")
    text = CliRunner().invoke(cli, ["validate", "--base", "main", "--head", "bad-pr", "--repo", str(governed.path)])
    assert text.exit_code == 1 and text.output.count("\n- ") >= 16


def _publish(store: registry.GitStore, docs: list[dict[str, object]], signer: Key | None, when: int) -> str:
    result = store.add(
        [to_manifest(d) for d in docs],
        commit_meta(when, subject="Overlay"),
        sign=ssh_signer(signer.private) if signer else None,
    )
    assert result.commit is not None
    return result.commit


TRUST_QUERY = "query($id: String!) { run(id: $id) { trust verifications { runner honoured } attestations { type } } }"


def test_verifications_attestations_and_trust(governed: registry.GitStore, keys: dict[str, Key]) -> None:
    scenario = basic_scenario()
    target = scenario.runs[2]
    reruns = [
        make_run(
            scenario.implementations[1],
            scenario.workload,
            scenario.protocol,
            scenario.environment,
            9000 + i,
            f"2026-09-0{i + 1}T00:00:00Z",
            name=f"rerun-{i}",
        )
        for i in range(3)
    ]
    _publish(governed, reruns, None, T0 + 100)
    with serve(governed.path) as api:

        def trust() -> dict[str, Any]:
            api.client.post("/hooks/refresh")
            return api.graphql(TRUST_QUERY, {"id": digest_of(target)}).json()["data"]["run"]  # type: ignore[no-any-return]

        assert trust()["trust"] == "REPORTED"
        _publish(governed, [make_attestation(target, "reproduced", "Same numbers here.")], None, T0 + 200)
        assert trust() == {"trust": "REPORTED", "verifications": [], "attestations": [{"type": "reproduced"}]}
        _publish(governed, [make_verification(target, reruns[0], runner="runner-a")], None, T0 + 300)  # unsigned
        assert trust()["trust"] == "REPORTED"
        _publish(governed, [make_verification(target, reruns[1], runner="runner-a")], keys["bob"], T0 + 400)  # unlisted
        assert trust()["trust"] == "REPORTED"
        _publish(governed, [make_verification(target, reruns[2], runner="runner-a")], keys["alice"], T0 + 500)
        assert trust()["trust"] == "VERIFIED"
        _publish(governed, [make_verification(target, reruns[0], runner="runner-b")], keys["alice"], T0 + 600)
        final = trust()
    assert final["trust"] == "REPLICATED"
    assert sorted((v["runner"], v["honoured"]) for v in final["verifications"]) == [
        ("runner-a", False),
        ("runner-a", False),
        ("runner-a", True),
        ("runner-b", True),
    ]


def test_a_verification_must_rerun_in_the_same_cohort(governed: registry.GitStore, keys: dict[str, Key]) -> None:
    scenario = basic_scenario()
    other_env = make_environment("h100", product="NVIDIA H100", architecture="sm_90")
    elsewhere = make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, other_env, 1, name="elsewhere"
    )
    _publish(governed, [other_env, elsewhere], None, T0 + 100)
    with pytest.raises(registry.RejectedChange) as caught:
        _publish(governed, [make_verification(scenario.runs[0], elsewhere)], keys["alice"], T0 + 200)
    assert "same comparison" in str(caught.value)


RECORD_QUERY = """{ run(id: "run-a2") { eligible ineligibilityReasons rank retraction { reason } }
  next: run(id: "run-a1") { rank }
  cohort(key: "%s") { holder { cause run { name } previousRun { name } at } history { cause } } }"""


def test_a_signed_retraction_moves_the_record_with_a_retraction_event(
    governed: registry.GitStore, keys: dict[str, Key]
) -> None:
    scenario = basic_scenario()
    with serve(governed.path) as api:
        key = api.service.snapshots.head.facts[digest_of(scenario.runs[1])].cohort
        assert key is not None
        _publish(governed, [make_retraction(scenario.runs[1], "wrong clock")], None, T0 + 100)  # unsigned: ignored
        api.client.post("/hooks/refresh")
        ignored = api.graphql(RECORD_QUERY % key).json()["data"]
        retracted_at = 1_790_000_000  # 2026-09-21, after the runs were observed
        _publish(governed, [make_retraction(scenario.runs[1], "timer was wrong")], keys["alice"], retracted_at)
        api.client.post("/hooks/refresh")
        after = api.graphql(RECORD_QUERY % key).json()["data"]
    assert ignored["run"]["eligible"] and ignored["run"]["retraction"] is None
    assert after["run"] == {
        "eligible": False,
        "ineligibilityReasons": ["RETRACTED"],
        "rank": None,
        "retraction": {"reason": "timer was wrong"},
    }
    assert after["next"]["rank"] == 1
    assert after["cohort"]["holder"] == {
        "cause": "RETRACTION",
        "run": {"name": "run-a1"},
        "previousRun": {"name": "run-a2"},
        "at": registry.provenance.utc_instant(retracted_at),
    }
    assert [e["cause"] for e in after["cohort"]["history"]] == ["NEW_RUN", "NEW_RUN", "RETRACTION"]


def test_a_signed_supersession_points_to_the_correction(governed: registry.GitStore, keys: dict[str, Key]) -> None:
    scenario = basic_scenario()
    correction = make_run(
        scenario.implementations[0],
        scenario.workload,
        scenario.protocol,
        scenario.environment,
        7950,
        "2026-08-02T12:00:00Z",
        name="run-a2-corrected",
    )
    _publish(governed, [correction], None, T0 + 100)
    _publish(governed, [make_supersession(correction, scenario.runs[1])], keys["alice"], T0 + 200)
    with serve(governed.path) as api:
        run = api.graphql('{ run(id: "run-a2") { ineligibilityReasons supersededBy { name } } }').json()["data"]["run"]
    assert run == {"ineligibilityReasons": ["SUPERSEDED"], "supersededBy": {"name": "run-a2-corrected"}}


def test_leaderboards_filter_by_evidence(governed: registry.GitStore, keys: dict[str, Key]) -> None:
    scenario = basic_scenario()
    rerun = make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, 9100, name="rr"
    )
    _publish(governed, [rerun], None, T0 + 100)
    _publish(governed, [make_verification(scenario.runs[2], rerun, runner="runner-a")], keys["alice"], T0 + 200)
    with serve(governed.path) as api:
        key = api.service.snapshots.head.facts[digest_of(scenario.runs[2])].cohort
        board = api.graphql(f'{{ cohort(key: "{key}") {{ entries(minTrust: VERIFIED) {{ totalCount edges {{ node {{ rank run {{ name }} }} }} }} }} '
                            'runs(filter: {minTrust: VERIFIED}) { totalCount } }').json()["data"]  # fmt: skip
    assert board["cohort"]["entries"]["totalCount"] == 1
    assert board["cohort"]["entries"]["edges"][0]["node"] == {"rank": 3, "run": {"name": "run-b1"}}
    assert board["runs"]["totalCount"] == 1


def test_an_overlay_in_a_pr_cannot_promote_itself(governed: registry.GitStore, keys: dict[str, Key]) -> None:
    """A contributor's branch with a Verification signed by alice's key is still UNPUBLISHED evidence:
    only a maintainer's signed commit on main makes it count."""
    scenario = basic_scenario()
    base = governed.head()
    assert base is not None
    rerun = make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, 9050, name="pr-rerun"
    )
    files = dict([stored(rerun), stored(make_verification(scenario.runs[2], rerun, runner="runner-x"))])
    pr = commit_raw(governed, base, files, ref="refs/heads/pr-verify", signer=keys["alice"])
    assert check_range(governed, base, pr).ok
    with serve(governed.path) as api:
        preview = api.graphql('{ registry(at: "pr-verify") { run(id: "run-b1") { trust } } }').json()["data"]
        merged = merge_into_main(governed, pr)  # an unsigned merge: the publishing commit is not a maintainer's
        api.client.post("/hooks/refresh")
        unsigned_merge = api.graphql('{ commit { id } run(id: "run-b1") { trust } }').json()["data"]
    assert preview == {"registry": {"run": {"trust": "REPORTED"}}}
    assert unsigned_merge == {"commit": {"id": merged}, "run": {"trust": "REPORTED"}}


def test_kernelindex_add_signs_for_maintainers(
    governed: registry.GitStore, keys: dict[str, Key], tmp_path: Path
) -> None:
    scenario = basic_scenario()
    retraction = tmp_path / "retraction.json"
    retraction.write_text(json.dumps(make_retraction(scenario.runs[0], "duplicate")))
    result = CliRunner().invoke(
        cli,
        [
            "add",
            str(retraction),
            "--repo",
            str(governed.path),
            "--author",
            "Alice <alice@example.com>",
            "--sign",
            "--signing-key",
            str(keys["alice"].private),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    commit = json.loads(result.output)["commit"]
    check = verifycommit_raw(governed, governed.commit_info(commit))
    assert check.verified and check.signer == "alice@example.com"
