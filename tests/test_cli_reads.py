"""The read commands (`search`, `runs`, `records`, `compare`, `changes`, `gpus`, `models`, `serving ...`,
`resolve kernel`) as clients of the GraphQL API: each runs one named document through the query service locally,
or sends it to a served registry (`--api`), and prints the same bytes either way.

The registry is built here: two operations, two workloads, two GPUs, two implementations and runs with distinct
latencies and observation times over two commits, so every expected count, order and record holder below is
worked out from the lists in this file, not from the code under test."""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    EMBEDDED_REPO,
    PROJECT_ROOT,
    TEST_TIME,
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
)
from server import Running, serve
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app, vocabularies

ALPHA = make_operation("alpha-norm", family="rmsnorm")
BETA = make_operation("beta-softmax", family="softmax")
WORKLOADS = [make_workload(ALPHA, tokens=t, name=f"alpha-t{t}") for t in (1024, 4096)]
BETA_WORKLOAD = make_workload(BETA, tokens=512, name="beta-t512")
PROTOCOL = make_protocol("harness-a")
B200 = make_environment()
H100 = make_environment("env-h100", product="NVIDIA H100", architecture="sm_90")
ENVIRONMENTS = [B200, H100]
FAST = make_implementation(ALPHA, "fast-kernel")
SLOW = make_implementation(ALPHA, "slow-kernel")
BETA_KERNEL = make_implementation(BETA, "beta-kernel")
IMPLEMENTATIONS = [FAST, SLOW]

# (implementation, workload, environment, latency ns, day of August) of each alpha run; the first five are
# published in the first commit, the rest in the second.
ALPHA_RUNS = [
    (0, 0, 0, 5000, 1),
    (1, 0, 0, 7000, 2),
    (0, 1, 0, 9000, 3),
    (1, 1, 1, 8000, 4),
    (0, 1, 1, 8500, 5),
    (1, 0, 0, 4000, 6),  # beats run-0 in the first cohort: a new record in the second commit
    (0, 0, 1, 6000, 7),
]
FIRST = 5
RUNS = [
    make_run(
        IMPLEMENTATIONS[i],
        WORKLOADS[w],
        PROTOCOL,
        ENVIRONMENTS[e],
        latency,
        f"2026-08-{day:02d}T12:00:00Z",
        name=f"run-{n}",
    )
    for n, (i, w, e, latency, day) in enumerate(ALPHA_RUNS)
]
BETA_RUN = make_run(BETA_KERNEL, BETA_WORKLOAD, PROTOCOL, B200, 3000, "2026-08-09T12:00:00Z", name="beta-run")
FIRST_COMMIT = [
    ALPHA,
    BETA,
    *WORKLOADS,
    BETA_WORKLOAD,
    PROTOCOL,
    *ENVIRONMENTS,
    FAST,
    SLOW,
    BETA_KERNEL,
    BETA_RUN,
    *RUNS[:FIRST],
]
SECOND_COMMIT = RUNS[FIRST:]


def _run(runner: CliRunner, *args: str | Path, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False, env=env)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = registry.GitStore.init(tmp_path_factory.mktemp("reads") / "manifests.git")
    commit_manifests(store, FIRST_COMMIT, source="first-source")
    commit_manifests(store, SECOND_COMMIT, TEST_TIME + 60, source="second-source")
    return store.path


@pytest.fixture(scope="module")
def api(repo: Path) -> Iterator[Running]:
    with serve(repo) as running:
        yield running


def _json(runner: CliRunner, *args: str | Path) -> Any:
    result = _run(runner, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _lines(runner: CliRunner, *args: str | Path) -> list[Any]:
    result = _run(runner, *args, "--jsonl")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _names(found: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in found]


def _newest_first(indexes: list[int]) -> list[str]:
    """Alpha runs by observation day, newest first."""
    return [f"run-{n}" for n in sorted(indexes, key=lambda n: -ALPHA_RUNS[n][4])]


# Each command, both ways ---------------------------------------------------------------------------


COMMANDS: list[list[str]] = [
    ["search", "alpha"],
    ["runs"],
    ["runs", "--gpu", "h100", "--order", "lowest_value"],
    ["records"],
    ["compare", "run-0", "run-5", "run-6"],
    ["changes"],
    ["gpus"],
    ["models"],
    ["serving", "runs"],
    ["serving", "cohorts"],
    ["resolve", "kernel", "alpha-norm", "--gpu", "h100"],
    ["resolve", "kernel", "alpha-norm", "--gpu", "mi300"],
    ["show", "run-5"],
    ["show", "fast-kernel", "--kind", "ImplementationRevision"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_served_registry_prints_the_same_bytes(
    runner: CliRunner, repo: Path, api: Running, command: list[str]
) -> None:
    outputs = [[], ["--json"]] if command[0] == "show" else [[], ["--json"], ["--jsonl"]]
    for output in outputs:
        local = _run(runner, *command, *output, "--repo", repo)
        remote = _run(runner, *command, *output, "--api", api.url)
        assert local.exit_code == 0, local.stderr
        assert remote.exit_code == 0, remote.stderr
        assert remote.stdout == local.stdout, (command, output)
        assert remote.stderr == local.stderr


def test_kernelindex_api_names_the_served_registry(runner: CliRunner, repo: Path, api: Running) -> None:
    local = _run(runner, "runs", "--json", "--repo", repo).stdout
    assert _run(runner, "runs", "--json", env={"KERNELINDEX_API": api.url}).stdout == local


def test_cite_asks_a_served_registry_with_the_readers_access_date(runner: CliRunner, repo: Path, api: Running) -> None:
    """`cite --api`: the served registry's citation, dated by the reader (a server adds no date)."""
    today = dt.datetime.now(dt.UTC).date().isoformat()
    remote = _run(runner, "cite", "run-5", "--api", api.url)
    assert remote.exit_code == 0, remote.stderr
    assert f"Run {digest_of(RUNS[5])[:15]}" in remote.stdout and f"Accessed {today}." in remote.stdout
    both = _run(runner, "cite", "run-5", "--api", api.url, "--base-url", "https://elsewhere.example")
    assert both.exit_code == 2 and "cites its own links" in both.stderr


# What each command answers, worked out from the lists above ----------------------------------------


def test_runs_newest_first_and_filtered(runner: CliRunner, repo: Path) -> None:
    every = _lines(runner, "runs", "--repo", repo)
    assert _names(every) == ["beta-run", *_newest_first(list(range(len(RUNS))))]  # beta-run: 9 August
    on_h100 = [n for n, place in enumerate(ALPHA_RUNS) if place[2] == 1]
    assert _names(_lines(runner, "runs", "--gpu", "H100", "--repo", repo)) == _newest_first(on_h100)
    fastest = sorted(on_h100, key=lambda n: ALPHA_RUNS[n][3])
    lowest = _lines(runner, "runs", "--gpu", "h100", "--order", "lowest_value", "--repo", repo)
    assert _names(lowest) == [f"run-{n}" for n in fastest]
    slow = [n for n, place in enumerate(ALPHA_RUNS) if place[0] == 1]
    by_impl = _lines(runner, "runs", "--implementation", "slow-kernel", "--repo", repo)
    assert _names(by_impl) == _newest_first(slow)
    beta = _lines(runner, "runs", "--operation", "beta-softmax", "--repo", repo)
    assert _names(beta) == ["beta-run"]
    answer = _json(runner, "runs", "--workload", "alpha-t4096", "--repo", repo)["registry"]["runs"]
    assert answer["totalCount"] == sum(1 for place in ALPHA_RUNS if place[1] == 1)


def test_the_table_has_a_row_per_run(runner: CliRunner, repo: Path) -> None:
    lines = _run(runner, "runs", "--gpu", "h100", "--repo", repo).stdout.splitlines()
    head = (registry.GitStore(repo).head() or "")[:12]
    on_h100 = _newest_first([n for n, place in enumerate(ALPHA_RUNS) if place[2] == 1])
    assert lines[0] == f"runs: {len(on_h100)} of {len(on_h100)} at {head}"
    assert lines[1].split()[:3] == ["run", "name", "operation"]
    assert [line.split()[1] for line in lines[2:]] == on_h100
    assert all(line == line.rstrip() for line in lines)


def test_search_finds_the_operation_by_a_word(runner: CliRunner, repo: Path) -> None:
    found = _lines(runner, "search", "beta", "--repo", repo)
    assert _names(found) == ["beta-run"]
    alpha = _json(runner, "search", "alpha", "--repo", repo)["registry"]["search"]["runs"]
    assert alpha["totalCount"] == len(RUNS)


def test_search_takes_several_words_unquoted_as_one_query(runner: CliRunner, repo: Path) -> None:
    """`kernelindex search alpha b200` asks what `kernelindex search 'alpha b200'` asks."""
    on_b200 = [f"run-{n}" for n, place in enumerate(ALPHA_RUNS) if place[2] == 0]
    quoted = _lines(runner, "search", "alpha b200", "--repo", repo)
    unquoted = _lines(runner, "search", "alpha", "b200", "--repo", repo)
    assert unquoted == quoted and sorted(_names(unquoted)) == sorted(on_b200)
    assert _run(runner, "search", "alpha", "b200", "--repo", repo).stdout.startswith("runs matching 'alpha b200': ")


def test_records_are_held_by_each_cohorts_fastest_run(runner: CliRunner, repo: Path) -> None:
    cohorts: dict[tuple[int, int], int] = {}  # (workload, environment) -> the fastest alpha run
    for n, (_, w, e, latency, _) in enumerate(ALPHA_RUNS):
        if (w, e) not in cohorts or latency < ALPHA_RUNS[cohorts[(w, e)]][3]:
            cohorts[(w, e)] = n
    found = _lines(runner, "records", "--operation", "alpha-norm", "--repo", repo)
    assert sorted(item["holder"]["name"] for item in found) == sorted(f"run-{n}" for n in cohorts.values())
    run5 = next(item for item in found if item["holder"]["name"] == "run-5")
    assert run5["event"]["previousValue"] is not None  # it took the record from run-0


def test_compare_says_what_differs(runner: CliRunner, repo: Path) -> None:
    same = _json(runner, "compare", "run-0", "run-5", "--repo", repo)["registry"]["compare"]
    assert same["sameCohort"] is True and same["material"] == []
    apart = _json(runner, "compare", "run-0", "run-6", "--repo", repo)["registry"]["compare"]
    assert apart["sameCohort"] is False and apart["material"] == ["environment"]  # only the GPU differs
    lines = _run(runner, "compare", "run-0", "run-6", "--repo", repo).stdout.splitlines()
    assert lines[1] == "material differences: environment"
    assert lines[2].split() == ["field", "run-0", "run-6", "same", "material"]


def test_changes_list_each_commit_newest_first(runner: CliRunner, repo: Path) -> None:
    store = registry.GitStore(repo)
    chain = store.first_parents(store.head() or "")
    found = _lines(runner, "changes", "--repo", repo)
    assert [item["commit"]["id"] for item in found] == chain
    assert [item["publishedCount"] for item in found] == [len(SECOND_COMMIT), len(FIRST_COMMIT)]
    assert [item["source"]["slug"] for item in found] == ["second-source", "first-source"]
    since = _lines(runner, "changes", "--since", chain[1][:12], "--repo", repo)
    assert [item["commit"]["id"] for item in since] == chain[:1]
    assert _lines(runner, "changes", "--since", chain[0], "--repo", repo) == []


def test_gpus_most_runs_first(runner: CliRunner, repo: Path) -> None:
    on_b200 = 1 + sum(1 for place in ALPHA_RUNS if place[2] == 0)  # with beta-run
    on_h100 = sum(1 for place in ALPHA_RUNS if place[2] == 1)
    found = _lines(runner, "gpus", "--repo", repo)
    assert [(g["product"], g["runCount"]) for g in found] == [("NVIDIA B200", on_b200), ("NVIDIA H100", on_h100)]
    assert _lines(runner, "gpus", "--limit", "1", "--repo", repo) == found[:1]
    limited = _json(runner, "gpus", "--limit", "1", "--repo", repo)["registry"]["gpus"]
    assert limited == found[:1]  # --json holds what the table shows


def test_resolve_kernel_an_exact_cohort_and_an_unknown_gpu(runner: CliRunner, repo: Path) -> None:
    exact = _json(runner, "resolve", "kernel", "alpha-norm", "--gpu", "h100", "--repo", repo)
    answer = exact["registry"]["resolveKernel"]
    assert answer["mode"] == "EXACT"
    on_h100 = {(w, n) for n, (_, w, e, _, _) in enumerate(ALPHA_RUNS) if e == 1}
    assert answer["exactCount"] == len({w for w, _ in on_h100})
    leaders = {edge["node"]["leader"]["run"]["name"] for edge in answer["exact"]["edges"]}
    fastest: dict[int, int] = {}
    for w, n in on_h100:
        if w not in fastest or ALPHA_RUNS[n][3] < ALPHA_RUNS[fastest[w]][3]:
            fastest[w] = n
    assert leaders == {f"run-{n}" for n in fastest.values()}
    unknown = _run(runner, "resolve", "kernel", "alpha-norm", "--gpu", "mi300", "--repo", repo)
    assert unknown.exit_code == 0
    assert unknown.stdout.splitlines()[0].startswith(("NEAREST: ", "NONE: "))
    assert "mi300" in unknown.stdout


def test_show_is_a_runs_dossier(runner: CliRunner, repo: Path) -> None:
    """run-5 took the record of the first cohort (workload 0 on the B200) from run-0: rank 1 of the cohort's runs."""
    in_cohort = [n for n, place in enumerate(ALPHA_RUNS) if place[1:3] == (0, 0)]
    by_speed = sorted(in_cohort, key=lambda n: ALPHA_RUNS[n][3])
    lines = _run(runner, "show", "run-5", "--repo", repo).stdout.split("\n\n", 1)[0].splitlines()
    rows = dict(line.split(":", 1) for line in lines)
    assert rows["rank"].strip() == f"{by_speed.index(5) + 1} of {len(in_cohort)} ranked"
    assert rows["leader"].strip().startswith(f"run-{by_speed[0]} (")
    assert rows["impl"].strip() == "slow-kernel" and rows["gpu"].strip() == "NVIDIA B200 (sm_100)"
    report = _json(runner, "show", "run-5", "--repo", repo)
    assert report["digest"] == digest_of(RUNS[5]) and report["manifest"] == RUNS[5]
    assert report["run"]["cohort"]["size"] == len(in_cohort)
    implementation = _json(runner, "show", "fast-kernel", "--kind", "implementationrevision", "--repo", repo)
    assert implementation["kind"] == "ImplementationRevision" and implementation["run"] is None


# Paging at its boundary ------------------------------------------------------------------------------


def test_limit_and_cursor_walk_a_list_once(runner: CliRunner, repo: Path) -> None:
    every = _names(_lines(runner, "runs", "--repo", repo))
    walked: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        args = ["runs", "--limit", "3", "--repo", str(repo), *(["--cursor", cursor] if cursor else [])]
        result = _run(runner, *args, "--jsonl")
        walked += _names([json.loads(line) for line in result.stdout.splitlines()])
        pages += 1
        found = re.fullmatch(r"next page: --cursor (\S+)\n", result.stderr)
        if found is None:
            assert result.stderr == ""
            break
        cursor = found[1]
    assert walked == every and pages == -(-len(every) // 3)
    table = _run(runner, "runs", "--limit", "3", "--repo", repo).stdout.splitlines()
    assert table[0] == f"runs: 3 of {len(every)} at {(registry.GitStore(repo).head() or '')[:12]}"
    assert table[-1].startswith("next page: --cursor ")


@pytest.mark.parametrize(
    ("command", "size"),
    [
        (["search", "alpha"], len(RUNS)),
        (["records"], len({place[1:3] for place in ALPHA_RUNS}) + 1),  # a record per cohort, beta's included
        (["changes"], 2),
        (["resolve", "kernel", "alpha-norm"], len({place[1:3] for place in ALPHA_RUNS})),  # every alpha cohort
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_every_list_pages_one_item_at_a_time(runner: CliRunner, repo: Path, command: list[str], size: int) -> None:
    """--limit 1 and each page's cursor give the whole list, in order, once: the last page names no next one."""
    whole = _lines(runner, *command, "--limit", "100", "--repo", repo)
    assert len(whole) == size
    walked: list[Any] = []
    cursor: str | None = None
    for _ in range(size + 1):
        args = [*command, "--limit", "1", "--repo", str(repo), *(["--cursor", cursor] if cursor else [])]
        result = _run(runner, *args, "--jsonl")
        walked += [json.loads(line) for line in result.stdout.splitlines()]
        found = re.fullmatch(r"next page: --cursor (\S+)\n", result.stderr)
        if found is None:
            break
        cursor = found[1]
    assert walked == whole


@pytest.mark.parametrize("command", [["runs"], ["records"], ["changes"], ["models"], ["serving", "runs"]])
def test_the_limit_is_the_apis_page(runner: CliRunner, repo: Path, command: list[str]) -> None:
    assert _run(runner, *command, "--limit", "100", "--repo", repo).exit_code == 0
    over = _run(runner, *command, "--limit", "101", "--repo", repo)
    assert over.exit_code == 2 and "less than or equal to 100" in over.stderr
    assert _lines(runner, *command, "--limit", "0", "--repo", repo) == []


def test_json_is_the_answers_data_with_its_page(runner: CliRunner, repo: Path) -> None:
    answer = _json(runner, "runs", "--limit", "2", "--repo", repo)
    page = answer["registry"]["runs"]
    assert answer["registry"]["commit"]["id"] == registry.GitStore(repo).head()
    assert len(page["edges"]) == 2 and page["pageInfo"]["hasNextPage"] is True
    assert page["totalCount"] == len(RUNS) + 1
    last = _json(runner, "runs", "--limit", "100", "--repo", repo)["registry"]["runs"]
    assert last["pageInfo"]["hasNextPage"] is False and len(last["edges"]) == len(RUNS) + 1


# Errors: one line, the right exit status -------------------------------------------------------------


def test_a_coded_error_is_one_line(runner: CliRunner, repo: Path, api: Running) -> None:
    for where in (["--repo", str(repo)], ["--api", api.url]):
        cursor = _run(runner, "runs", "--cursor", "not-a-cursor", *where)
        assert cursor.exit_code == 1 and cursor.stdout == ""
        assert cursor.stderr == "kernelindex: invalid cursor 'not-a-cursor' (CURSOR_ERROR)\n"
        revision = _run(runner, "changes", "--since", "no-such-branch", *where)
        assert revision.exit_code == 1
        assert revision.stderr.startswith("kernelindex: ") and revision.stderr.endswith("(REVISION_NOT_FOUND)\n")
        assert revision.stderr.count("\n") == 1


def test_usage_errors_exit_2(runner: CliRunner, repo: Path) -> None:
    both = _run(runner, "runs", "--json", "--jsonl", "--repo", repo)
    assert both.exit_code == 2 and "give one of --json and --jsonl" in both.stderr
    trust = _run(runner, "runs", "--min-trust", "trusted", "--repo", repo)
    assert trust.exit_code == 2 and "Traceback" not in trust.stderr
    shape = _run(runner, "resolve", "kernel", "alpha-norm", "--shape", "12x", "--repo", repo)
    assert shape.exit_code == 2 and "expected dimensions such as 2048x4096" in shape.stderr
    bound = _run(runner, "serving", "resolve", "ab" * 8, "--where", "ttft_ms<=fast", "--repo", repo)
    assert bound.exit_code == 2 and "expected METRIC[:STATISTIC]" in bound.stderr


def test_an_unreachable_registry_says_its_url(runner: CliRunner) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    for command in COMMANDS:
        result = _run(runner, *command, "--api", f"http://127.0.0.1:{port}")
        assert result.exit_code == 1, command
        assert result.stderr.startswith(f"kernelindex: http://127.0.0.1:{port}/graphql: cannot connect: ")
        assert result.stderr.count("\n") == 1


def test_a_missing_serving_cohort_is_said(runner: CliRunner, repo: Path) -> None:
    result = _run(runner, "serving", "resolve", "ab" * 8, "--repo", repo)
    assert result.exit_code == 1 and f"no serving cohort '{'ab' * 8}'" in result.stderr


def test_what_a_client_sent_is_shown_as_text(runner: CliRunner, repo: Path) -> None:
    """A query is echoed in the heading: rich markup stays literal and an escape sequence cannot reach a terminal."""
    result = _run(runner, "search", "\x1b[2J[bold red]alpha[/]", "--repo", repo)
    assert result.exit_code == 0, result.stderr
    heading = result.stdout.splitlines()[0]
    assert heading.startswith("runs matching '\\x1b[2J[bold red]alpha[/]'")  # as Python writes it
    assert "\x1b" not in result.stdout


# The vocabularies the options take are the API's ----------------------------------------------------


@pytest.mark.parametrize("name", vocabularies.__all__)
def test_each_choice_is_the_schemas_enum(name: str) -> None:
    schema = (PROJECT_ROOT / "tests" / "schema.graphql").read_text()
    body = re.search(rf"^enum {name} {{\n(.*?)^}}", schema, re.S | re.M)
    assert body is not None
    values = [line.strip() for line in body[1].splitlines() if re.fullmatch(r"  [A-Z][A-Z0-9_]*", line)]
    assert [member.value for member in getattr(vocabularies, name)] == values


# The embedded registry: a few real answers -------------------------------------------------------------


def _git(*args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "--git-dir", str(EMBEDDED_REPO), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.slow  # the embedded registry's graph
def test_the_embedded_registry_answers(runner: CliRunner) -> None:
    chain = _git("rev-list", "--first-parent", "main").split()
    changes = _lines(runner, "changes", "--limit", "3", "--repo", EMBEDDED_REPO)
    assert [c["commit"]["id"] for c in changes] == chain[:3]
    for change, commit in zip(changes, chain, strict=False):
        added = _git("diff-tree", "-r", "--no-commit-id", "--name-only", "--diff-filter=A", f"{commit}^", commit)
        assert change["publishedCount"] == len(added.split()), commit
    models = _json(runner, "models", "--limit", "100", "--repo", EMBEDDED_REPO)["registry"]["models"]
    files = _git("ls-tree", "-r", "--name-only", "main", "model-revisions/").split()
    assert models["totalCount"] == len(files)
    serving = _json(runner, "serving", "runs", "--limit", "1", "--repo", EMBEDDED_REPO)["registry"]["servingRuns"]
    assert serving["totalCount"] == len(_git("ls-tree", "-r", "--name-only", "main", "serving-runs/").split())
    found = _lines(runner, "resolve", "kernel", "rmsnorm", "--gpu", "b200", "--limit", "1", "--repo", EMBEDDED_REPO)
    assert len(found) == 1
