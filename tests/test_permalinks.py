"""Permalinks pin commits of main only: a commit that is on a branch, reachable and
previewable through `registry(at:)`, is refused as a permalink until main merges it; then the very
same URL answers, and keeps answering."""

from __future__ import annotations

import pygit2
from helpers import basic_scenario, digest_of, make_run
from server import serve
from signing import commit_raw, stored

from kernelindex import registry


def test_a_commit_on_a_branch_but_not_on_main_has_no_permalink(basic_store: registry.GitStore) -> None:
    scenario = basic_scenario()
    main = basic_store.head()
    assert main is not None
    new = make_run(scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, 100,
                   name="branch-run")  # fmt: skip
    branch = commit_raw(basic_store, main, dict([stored(new)]), ref="refs/heads/pr")
    run = digest_of(new)
    published = digest_of(scenario.runs[0])
    with serve(basic_store.path) as api:
        refused = {
            "run by commit": api.client.get(f"/at/{branch}/runs/{run}"),
            "manifest by commit": api.client.get(f"/at/{branch}/manifests/{run}"),
            "published run at the branch commit": api.client.get(f"/at/{branch}/runs/{published}"),
            "run by branch name": api.client.get(f"/at/pr/runs/{run}", follow_redirects=False),
        }
        preview = api.graphql('{ registry(at: "pr") { run(id: "branch-run") { ineligibilityReasons } } }').json()
        on_main = api.client.get(f"/at/{main}/runs/{published}")
        by_name = api.client.get(f"/at/main/runs/{published}", follow_redirects=False)
        # The pull request merges: main fast-forwards to the branch commit.
        pygit2.Repository(str(basic_store.git_dir)).references["refs/heads/main"].set_target(pygit2.Oid(hex=branch))
        assert api.client.post("/hooks/refresh").json()["serving"] == branch
        merged = api.client.get(f"/at/{branch}/runs/{run}")
    for label, response in refused.items():
        assert response.status_code == 404, label
        assert response.json() == {
            "errors": [
                {
                    "message": f"{branch} is not on main: permalinks pin commits of the publication record",
                    "extensions": {"code": "REVISION_NOT_FOUND"},
                }
            ]
        }, label
    assert preview["data"]["registry"]["run"] == {"ineligibilityReasons": ["UNPUBLISHED"]}
    assert on_main.status_code == 200 and on_main.json()["run"]["digest"] == published
    assert by_name.status_code == 307 and by_name.headers["location"] == f"/at/{main}/runs/{published}"
    assert merged.status_code == 200 and merged.json()["run"]["digest"] == run
