"""The pull-request check's report names the repository's own files a change touches (`.github/`, README,
licence...), with who signed for them, in each of its formats: text, the Markdown of the PR comment, JSON.

A path is the contributor's text: the Markdown shows it as a code span whatever it holds, which markdown-it
(CommonMark, as GitHub renders comments) reads back as the path itself, with no HTML and no table cell split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import basic_scenario, commit_meta, make_run, to_manifest
from markdown_it import MarkdownIt
from signing import T0, Key, commit_raw, stored
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.signatures import POLICY_PATH

WORKFLOW = ".github/workflows/kernelindex-check.yml"
HOSTILE = "README `x` | <img src=x onerror=alert(1)>.md"


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def governed(store: registry.GitStore, keys: dict[str, Key]) -> tuple[registry.GitStore, str]:
    """A registry whose first commit holds the policy (alice), the scenario and a README."""
    result = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        commit_meta(T0, subject="Initial policy and data", source="test"),
        extra_files={POLICY_PATH: keys["alice"].allowed_signer, "README.md": b"# A registry\n"},
    )
    assert result.commit is not None
    return store, result.commit


def _pull_request(store: registry.GitStore, base: str, signer: Key | None) -> str:
    s = basic_scenario()
    run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 7000, name="pr-run")
    files = {WORKFLOW: b"name: check\n", "README.md": None, HOSTILE: b"x\n", **dict([stored(run)])}
    return commit_raw(store, base, files, signer=signer, ref="refs/heads/pr")


def _check(runner: CliRunner, store: registry.GitStore, fmt: str) -> Result:
    return _run(runner, "validate", "--repo", store.path, "--base", "main", "--head", "pr", "--format", fmt)


def test_json_lists_each_file_with_its_change_and_signer(
    runner: CliRunner, governed: tuple[registry.GitStore, str], keys: dict[str, Key]
) -> None:
    store, base = governed
    _pull_request(store, base, keys["alice"])
    result = _check(runner, store, "json")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["repositoryFiles"] == [
        {"path": WORKFLOW, "status": "added", "signedBy": "alice@example.com"},
        {"path": HOSTILE, "status": "added", "signedBy": "alice@example.com"},
        {"path": "README.md", "status": "deleted", "signedBy": "alice@example.com"},
    ]  # in the order of their paths


def test_unsigned_they_are_listed_without_a_signer_and_refused(
    runner: CliRunner, governed: tuple[registry.GitStore, str]
) -> None:
    store, base = governed
    _pull_request(store, base, None)
    report = json.loads(_check(runner, store, "json").stdout)
    assert report["ok"] is False
    assert [(f["path"], f["signedBy"]) for f in report["repositoryFiles"]] == [
        (WORKFLOW, None),
        (HOSTILE, None),
        ("README.md", None),
    ]
    text = _check(runner, store, "text")
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    start = lines.index(
        "Repository files (not manifests: only a commit signed by a maintainer of the policy in force may change them):"
    )
    assert lines[start + 1 : start + 4] == [
        f'- added "{WORKFLOW}" (no maintainer\'s signature)',
        f"- added {json.dumps(HOSTILE)} (no maintainer's signature)",
        '- deleted "README.md" (no maintainer\'s signature)',
    ]


def test_the_markdown_shows_each_path_literally(
    runner: CliRunner, governed: tuple[registry.GitStore, str], keys: dict[str, Key]
) -> None:
    store, base = governed
    _pull_request(store, base, keys["alice"])
    markdown = _check(runner, store, "markdown").stdout
    assert "### Repository files" in markdown
    tokens = MarkdownIt("commonmark").parse(markdown)
    spans = [child.content for t in tokens if t.children for child in t.children if child.type == "code_inline"]
    assert [s for s in spans if s in (WORKFLOW, "README.md", HOSTILE)] == [WORKFLOW, HOSTILE, "README.md"]
    html = MarkdownIt("commonmark").render(markdown)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    lines = markdown.splitlines()
    start = lines.index("### Repository files")
    assert lines[start + 2 : start + 7] == [
        "These are not manifests: only a commit signed by a maintainer of the policy in force may change them.",
        "",
        f"- ` {WORKFLOW} `: added, alice@example.com",
        f"- `` {HOSTILE} ``: added, alice@example.com",
        "- ` README.md `: deleted, alice@example.com",
    ]


def test_a_change_without_them_has_no_section(runner: CliRunner, governed: tuple[registry.GitStore, str]) -> None:
    store, base = governed
    s = basic_scenario()
    run = make_run(s.implementations[1], s.workload, s.protocol, s.environment, 7000, name="pr-run")
    commit_raw(store, base, dict([stored(run)]), ref="refs/heads/pr")
    assert "Repository files" not in _check(runner, store, "markdown").stdout
    assert "Repository files" not in _check(runner, store, "text").stdout
    assert json.loads(_check(runner, store, "json").stdout)["repositoryFiles"] == []
