"""The documentation: the site builds with no warning, the README's links resolve, and the commands it
gives (the README's, the site's, CI's) are one and the same."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROJECT_ROOT
from markdown_it import MarkdownIt

DOCS = PROJECT_ROOT / "docs"
# The project's own pages: what a reader of the repository reads first, and the site.
PAGES = sorted([PROJECT_ROOT / "README.md", PROJECT_ROOT / "CONTRIBUTING.md", *DOCS.rglob("*.md")])
# Readers cannot open our tracker, so prose never sends them there.
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
# A file or folder of the project named in prose: `api/service/dossier.py`, `tests/schema.graphql`, `data/seeds/*.txt`.
CODE_PATH = re.compile(r"`((?:api|web|registry|bench|scripts|tests|data|docs)/[\w./-]*)")
# What the docs name that a clone does not have until something makes it (caches, installed packages).
MADE_LATER = ("bench/cache/", "tests/js/node_modules", "kernelindex/embedded/")  # the last: in a wheel only (setup.py)


def _fences(path: Path, language: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(path.read_text())
    return [t.content.strip() for t in tokens if t.type == "fence" and t.info.strip() == language]


def _links(path: Path) -> list[str]:
    found: list[str] = []
    for block in MarkdownIt("commonmark").parse(path.read_text()):
        for token in block.children or []:
            if token.type == "link_open":
                found.append(str(token.attrs["href"]))
            elif token.type == "image":
                found.append(str(token.attrs["src"]))
    return found


def _readme_test_command() -> str:
    readme = PROJECT_ROOT / "README.md"
    commands = [c for c in _fences(readme, "sh") if "pytest" in c]
    assert len(commands) == 1, commands
    return commands[0]


def test_the_readme_test_command_is_what_ci_runs() -> None:
    command = _readme_test_command()
    assert command.startswith("pip install -e '.[test,docs]'") and command.endswith("pytest -q -n 2")
    assert command in (PROJECT_ROOT / ".ci" / "run").read_text().splitlines()
    for page in (DOCS / "index.md", DOCS / "testing.md"):
        assert command in _fences(page, "sh"), page


def test_the_readme_run_command_is_the_sites() -> None:
    run = [c for c in _fences(PROJECT_ROOT / "README.md", "sh") if c.endswith("kernelindex serve")]
    assert run == ["pip install -e . && kernelindex serve"]
    assert run[0] in _fences(DOCS / "index.md", "sh")


@pytest.mark.parametrize("page", [PROJECT_ROOT / "README.md", PROJECT_ROOT / "CONTRIBUTING.md"], ids=lambda p: p.name)
def test_the_repository_pages_link_to_files_that_exist(page: Path) -> None:
    """mkdocs checks the site's links; GitHub shows these two pages from the repository, so check theirs."""
    local = [link for link in _links(page) if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert local, "no relative link found: the parser missed them"
    missing = [link for link in local if not (page.parent / link.split("#")[0]).exists()]
    assert not missing, missing


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_no_page_cites_an_issue_number(page: Path) -> None:
    found = [m.group() for m in ISSUE_NUMBER.finditer(page.read_text())]
    assert not found, found


def test_no_source_file_cites_an_issue_number() -> None:
    """Comments and docstrings say why in words a reader of the repository can follow."""
    listed = subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    suffixes = {".py", ".html", ".js", ".css", ".toml", ".yml", ".yaml", ".cfg", ".ini"}
    found = []
    for name in listed.stdout.splitlines():
        path = PROJECT_ROOT / name
        source = path.suffix in suffixes or name.startswith((".ci/", "scripts/"))
        if not source or "static/graphiql/" in name or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        found += [f"{name}: {m.group()}" for m in ISSUE_NUMBER.finditer(text)]
    assert not found, found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_code_path_a_page_names_exists(page: Path) -> None:
    """A module renamed or moved fails here, naming the page that still sends readers to the old place."""
    named = {m.group(1).rstrip(".") for m in CODE_PATH.finditer(page.read_text())}
    missing = [p for p in named if not p.startswith(MADE_LATER) and not (PROJECT_ROOT / p).exists()]
    assert not missing, missing


def test_the_layout_names_what_is_there() -> None:
    """Each entry of the layout tree in the design notes (a top folder, or a file or folder two spaces in)."""
    text = (DOCS / "design.md").read_text()
    tree = next(block for block in _fences(DOCS / "design.md", "") if block.startswith("registry/"))
    assert "## Layout" in text
    missing: list[str] = []
    top = Path()
    for line in tree.splitlines():
        if m := re.match(r"([\w.-]+/)\s", line):
            top = Path(m.group(1))
            named = top
        elif m := re.match(r"  ([\w.-]+/?)\s", line):
            named = top / m.group(1)
        else:
            continue  # a description's second line
        if not (PROJECT_ROOT / named).exists():
            missing.append(str(named))
    assert not missing, missing


def test_the_readme_is_a_front_page() -> None:
    """What it is, the two commands, one query and its answer, a screenshot, where to go next: no more."""
    text = (PROJECT_ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 120
    assert len(_fences(PROJECT_ROOT / "README.md", "json")) == 1
    assert "docs/screenshots/" in text
    linked = {link.split("#")[0] for link in _links(PROJECT_ROOT / "README.md")}
    assert {f"docs/{p.name}" for p in DOCS.glob("*.md") if p.name != "index.md"} <= linked


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs.yml turns a broken link or anchor, and a page left out of the navigation, into a warning,
    and --strict turns every warning into a failed build."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must build the docs: pip install -e '.[docs]'")
        pytest.skip("mkdocs and mkdocs-material are not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(PROJECT_ROOT / "mkdocs.yml"), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    assert "WARNING" not in built.stderr, built.stderr
    pages = {p.relative_to(DOCS).with_suffix("") for p in DOCS.rglob("*.md")}
    for page in pages:
        html = site / ("index.html" if page == Path("index") else page / "index.html")
        assert html.is_file(), html
    assert (site / "screenshots" / "run-page.png").is_file()
