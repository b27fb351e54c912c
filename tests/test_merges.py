"""A merged pull request's provenance (registry/merges.py): the merge commit publishes, the pull request's commit
speaks (its `Source:`, `License:` ...), and `show`, `log`, GraphQL's `provenance` and the run's `source` agree."""

from __future__ import annotations

import json

from helpers import basic_scenario, make_run
from signing import commit_raw, merge_into_main, stored
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.cli.ask import Document, ask
from kernelindex.registry.merges import introducing_commit, publication_source

PROVENANCE = Document(
    "Provenance",
    'query Provenance { run(id: "merged-run") { source { slug } provenance { commit { id } source { slug } license } } }',
)


def test_a_merged_run_speaks_through_the_commit_that_brought_it(
    runner: CliRunner, basic_store: registry.GitStore
) -> None:
    s = basic_scenario()
    run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 7000, name="merged-run")
    main = basic_store.head()
    assert main is not None
    message = "Add a run\n\nSource: community\nLicense: CC-BY-4.0\n"
    added = commit_raw(basic_store, main, dict([stored(run)]), message=message)
    tidy = commit_raw(basic_store, added, {"README.md": b"notes\n"}, message="Notes\n")  # a later commit: no trailers
    merged = merge_into_main(basic_store, tidy)  # "Merge pull request": no trailers of its own

    info = basic_store.commit_info(merged)
    assert info.trailer("Source") is None and publication_source(basic_store, info) == "community"
    digest = "sha256:" + stored(run)[0].rsplit("/", 1)[1][:-5]
    assert introducing_commit(basic_store, info, digest).id == added

    shown = runner.invoke(app, ["show", "merged-run", "--repo", str(basic_store.path)], catch_exceptions=False)
    assert shown.exit_code == 0, shown.stderr
    published = next(line for line in shown.stdout.splitlines() if line.startswith("published:"))
    assert published.endswith(f" in {merged[:12]} (source: community)"), published  # was `(source: unknown)`
    as_json = json.loads(runner.invoke(app, ["show", "merged-run", "--json", "--repo", str(basic_store.path)]).stdout)
    assert as_json["published"]["source"] == "community" and as_json["published"]["commit"] == merged

    answer = ask(PROVENANCE, {}, repo=basic_store.path)["run"]
    assert answer == {
        "source": {"slug": "community"},
        "provenance": {"commit": {"id": merged}, "source": {"slug": "community"}, "license": "CC-BY-4.0"},
    }
    log = runner.invoke(app, ["log", "--repo", str(basic_store.path)], catch_exceptions=False).stdout.splitlines()
    assert log[0].startswith(merged[:12]) and " community " in log[0]
