"""Examples that cannot rot: every GraphQL document and read-only command of the README and the docs runs here.

- Every fenced `graphql` block, and the query of every `curl` example of `/graphql` (its `-d` body and `-H`
  headers), is sent to a real server over the embedded registry. It must answer without errors, unless the
  answer shown beside it has `errors`.
- A fenced `json` block directly after a document (nothing but blank lines between) is its answer, compared
  with the real one, both parsed: the shown answer must be a sub-tree of the real one (`subtree` below says
  exactly what an excerpt may leave out). One without `data` or `errors` at its top is compared with `data`.
- Every fenced `console` block is run: each `$ kernelindex ...` line, commands that write no registry only, in a
  copy of docs/examples/ against the embedded registry; the lines after it are its output, line for line, where `…`
  stands for any text.
- The console blocks of the contributors' walk-through (docs/contributing.md) are one session, run in order as a
  contributor runs them: in a clone of a fork of a copy of the embedded registry, with docs/examples/ copied in,
  where `kernelindex` (any command, writing ones included) and `git` lines run.

docs/testing.md states the same rule for the people who write the examples."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import EMBEDDED_REPO, PROJECT_ROOT
from markdown_it import MarkdownIt
from server import Running, serve

PAGES = sorted([PROJECT_ROOT / "README.md", PROJECT_ROOT / "CONTRIBUTING.md", *(PROJECT_ROOT / "docs").rglob("*.md")])
ELLIPSIS = "…"
ANY = "\0any"  # `{…}` in a shown answer: any value
MORE = "\0more"  # a bare `…` closing a shown list: the real list may go on
# Commands a console block may run: they read the registry and the files named, and write no registry.
READ_ONLY = {"digest", "validate", "show", "cite", "log", "schema", "new", "lookup"} | {
    *("search", "runs", "records", "compare", "changes", "gpus", "models", "serving", "resolve")
}
WALKTHROUGH = PROJECT_ROOT / "docs" / "contributing.md"
"""The page whose console blocks are one session in a contributor's clone (`test_the_walkthrough_runs_as_shown`)."""


@dataclass(frozen=True)
class Example:
    """A GraphQL request found in a page, with the answer shown beside it (None when none is)."""

    where: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    shown: Any = None


@dataclass(frozen=True)
class Session:
    """A console block: commands, each with the output lines shown after it."""

    where: str
    commands: tuple[tuple[str, tuple[str, ...]], ...]


def _fences(path: Path) -> list[Any]:
    return [t for t in MarkdownIt("commonmark").parse(path.read_text()) if t.type == "fence"]


def _where(path: Path, token: Any) -> str:
    return f"{path.relative_to(PROJECT_ROOT)}:{token.map[0] + 1}"


def _language(token: Any) -> str:
    return str(token.info).strip().split(" ")[0].lower()


def _curl_requests(script: str) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
    """The `/graphql` requests of the curl commands in a shell block: their JSON body and their headers."""
    for words in _shell_commands(script):
        if not words or words[0] != "curl" or not any(w.split("?")[0].endswith("/graphql") for w in words):
            continue
        headers: dict[str, str] = {}
        body: dict[str, Any] | None = None
        for flag, value in itertools.pairwise(words):
            if flag == "-H":
                name, _, text = value.partition(":")
                headers[name.strip().lower()] = text.strip()
            elif flag in ("-d", "--data", "--data-raw"):
                body = json.loads(value)
        if body is not None:
            yield body, headers


def _shell_commands(script: str) -> Iterator[list[str]]:
    """The words of each command of a shell block: continued lines joined, a quoted string may span lines."""
    pending = ""
    for line in script.replace("\\\n", " ").splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quotation still open: the command goes on
            continue
        pending = ""
        if words:
            yield words
    assert not pending, f"an unterminated quotation in: {pending!r}"


def _parse_shown(text: str, where: str) -> Any:
    """A shown answer: JSON in which `{…}` stands for any value and a bare `…` ends a list excerpt."""
    out: list[str] = []
    i, in_string = 0, False
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\":
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("{" + ELLIPSIS + "}", i):
            out.append(json.dumps(ANY))
            i += 2
        elif char == ELLIPSIS:
            out.append(json.dumps(MORE))
        else:
            out.append(char)
        i += 1
    try:
        return json.loads("".join(out))
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{where}: the answer shown is not JSON (with … excerpts): {exc}") from exc


def _collect() -> tuple[list[Example], list[Session], Session]:
    examples: list[Example] = []
    sessions: list[Session] = []
    walkthrough: list[tuple[str, tuple[str, ...]]] = []
    for path in PAGES:
        lines = path.read_text().splitlines()
        fences = _fences(path)
        for index, token in enumerate(fences):
            language = _language(token)
            requests: list[tuple[dict[str, Any], dict[str, str]]] = []
            if language == "graphql":
                requests = [({"query": token.content}, {})]
            elif language in ("sh", "bash", "shell"):
                requests = list(_curl_requests(token.content))
            elif language == "console" and path == WALKTHROUGH:
                walkthrough += _commands(token.content, _where(path, token))
            elif language == "console":
                sessions.append(Session(_where(path, token), _commands(token.content, _where(path, token))))
            if not requests:
                continue
            shown = None
            following = fences[index + 1] if index + 1 < len(fences) else None
            if following is not None and _language(following) == "json":
                between = lines[token.map[1] : following.map[0]]
                if not any(line.strip() for line in between):
                    shown = _parse_shown(following.content, _where(path, following))
            for body, headers in requests:
                examples.append(Example(_where(path, token), body, headers, shown if len(requests) == 1 else None))
    return examples, sessions, Session(str(WALKTHROUGH.relative_to(PROJECT_ROOT)), tuple(walkthrough))


def _commands(content: str, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    commands: list[tuple[str, list[str]]] = []
    for line in content.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"{where}: a console block starts with its `$ ` command"
            commands[-1][1].append(line)
    return tuple((command, tuple(output)) for command, output in commands)


EXAMPLES, SESSIONS, WALK = _collect()


def subtree(shown: Any, real: Any, path: str = "$") -> list[str]:
    """Where `shown` is not an excerpt of `real` (empty when it is).

    An object shows some of the real object's keys, each with a sub-tree of its value. A list shows the real
    list element for element, or its first elements followed by a bare `…`. `{…}` stands for any value. A string
    with `…` in it stands for any string that starts with the text before the `…` and ends with the text after
    it. Numbers, booleans and null are equal (a boolean is never a number)."""
    if shown == ANY:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{path}: shown an object, got {real!r}"]
        found = []
        for key, value in shown.items():
            if key not in real:
                found.append(f"{path}.{key}: shown, but not in the answer")
            else:
                found += subtree(value, real[key], f"{path}.{key}")
        return found
    if isinstance(shown, list):
        if not isinstance(real, list):
            return [f"{path}: shown a list, got {real!r}"]
        excerpt = bool(shown) and shown[-1] == MORE
        items = shown[:-1] if excerpt else shown
        if len(real) < len(items) or (not excerpt and len(real) != len(items)):
            return [f"{path}: shown {len(items)} items{' and more' if excerpt else ''}, got {len(real)}"]
        return [problem for i, item in enumerate(items) for problem in subtree(item, real[i], f"{path}[{i}]")]
    if isinstance(shown, str) and ELLIPSIS in shown:
        before, _, after = shown.partition(ELLIPSIS)
        fits = isinstance(real, str) and len(real) >= len(before) + len(after)
        if fits and real.startswith(before) and real.endswith(after):
            return []
        return [f"{path}: shown {shown!r}, got {real!r}"]
    if type(shown) is not type(real) and not (isinstance(shown, int | float) and isinstance(real, int | float)):
        return [f"{path}: shown {shown!r}, got {real!r}"]
    if isinstance(shown, bool) != isinstance(real, bool) or shown != real:
        return [f"{path}: shown {shown!r}, got {real!r}"]
    return []


@pytest.mark.parametrize(
    ("shown", "real", "problems"),
    [
        ({"a": 1}, {"a": 1, "b": 2}, 0),  # an object shows some of its keys
        ({"c": 1}, {"a": 1}, 1),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2], "c": 3}}, 0),
        ([1, 2], [1, 2, 3], 1),  # without `…` a list is whole
        ([1, MORE], [1, 2, 3], 0),
        ([1, 2, 3, 4, MORE], [1, 2, 3], 1),
        ([2, MORE], [1, 2], 1),
        ({"k": ANY}, {"k": {"deep": [1]}}, 0),
        ("sha256:7f6d…a308", "sha256:7f6df4bb…" + "a308", 0),
        ("sha256:7f6d…a308", "sha256:7f6dxxxx", 1),
        ("abc…", "ab", 1),
        ("ab…ba", "aba", 1),  # the prefix and the suffix may not overlap
        (144571.0, 144571, 0),
        (True, 1, 1),
        (None, 0, 1),
        ("2", 2, 1),
    ],
)
def test_the_subtree_rule(shown: Any, real: Any, problems: int) -> None:
    assert len(subtree(shown, real)) == problems, subtree(shown, real)


def test_a_shown_answer_may_be_an_excerpt() -> None:
    shown = _parse_shown('{"a":[{"b":"x…"}, …],"c":{…},"d":"…"}', "here")
    assert shown == {"a": [{"b": "x…"}, MORE], "c": ANY, "d": "…"}
    assert subtree(shown, {"a": [{"b": "xyz", "e": 1}, {}], "c": [], "d": "", "f": 0}) == []


def test_the_examples_are_found() -> None:
    """The collector sees the pages' examples: a change that hid them would pass every test below vacuously."""
    places = {e.where.split(":")[0] for e in EXAMPLES}
    assert {"README.md", "docs/api.md", "docs/http.md", "docs/index.md"} <= places
    assert sum(e.shown is not None for e in EXAMPLES) >= 10
    assert any(e.headers for e in EXAMPLES)  # the curl example with X-Registry-Min-Commit
    assert {s.where.split(":")[0] for s in SESSIONS} >= {"docs/cli.md", "docs/api.md"}
    commands = [command.split()[:2] for command, _ in WALK.commands]
    assert ["kernelindex", "new"] in commands and ["kernelindex", "add"] in commands and ["git", "push"] in commands


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


@pytest.mark.slow  # a server over the whole embedded registry
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.where)
def test_every_graphql_example_answers(api: Running, example: Example) -> None:
    headers = {"content-type": "application/json", **example.headers}
    answer = api.client.post("/graphql", content=json.dumps(example.body), headers=headers).json()
    expects_errors = isinstance(example.shown, dict) and "errors" in example.shown
    if not expects_errors:
        assert "errors" not in answer, f"{example.where}: {answer['errors']}"
    if example.shown is None:
        return
    whole = isinstance(example.shown, dict) and ("data" in example.shown or "errors" in example.shown)
    problems = subtree(example.shown, answer if whole else answer.get("data"))
    assert not problems, f"{example.where}: the answer shown is not the real one's: {problems}"


def _kernelindex() -> str:
    """The installed command, next to this interpreter (whatever module implements it)."""
    found = Path(sys.executable).with_name("kernelindex")
    return str(found) if found.exists() else shutil.which("kernelindex") or "kernelindex"


def _matches(shown: str, real: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in shown.split(ELLIPSIS))
    return re.fullmatch(pattern, real) is not None


def _printed_as_shown(where: str, command: str, shown: tuple[str, ...], real: list[str]) -> None:
    """Line for line, `…` in a line standing for any text; a last line that is only `…` for any further lines."""
    excerpt = bool(shown) and shown[-1] == ELLIPSIS
    lines = shown[:-1] if excerpt else shown
    fits = len(real) >= len(lines) if excerpt else len(real) == len(lines)
    assert fits, f"{where}: `{command}` printed {real}"
    for want, got in zip(lines, real, strict=False):
        assert _matches(want, got), f"{where}: `{command}` printed {got!r}, the page shows {want!r}"


@pytest.mark.parametrize(
    ("shown", "real", "fits"),
    [
        (("a", "b"), ["a", "b"], True),
        (("a", "b"), ["a", "b", "c"], False),  # without a last `…`, the output is whole
        (("a", ELLIPSIS), ["a", "b", "c"], True),
        (("a", ELLIPSIS), ["a"], True),
        (("a", "b", ELLIPSIS), ["a"], False),
        (("x…", ELLIPSIS), ["xyz", "w"], True),
        (("b", ELLIPSIS), ["a", "b"], False),
    ],
)
def test_the_console_excerpt_rule(shown: tuple[str, ...], real: list[str], fits: bool) -> None:
    try:
        _printed_as_shown("here", "cmd", shown, real)
    except AssertionError:
        assert not fits
    else:
        assert fits


@pytest.mark.slow  # a process per command, each reading the embedded registry
@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: s.where)
def test_every_console_example_prints_what_it_shows(session: Session, tmp_path: Path) -> None:
    shutil.copytree(PROJECT_ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELINDEX_")}
    env |= {"KERNELINDEX_REPO": str(EMBEDDED_REPO), "KERNELINDEX_GRAPH_CACHE": "0", "COLUMNS": "200"}
    for command, shown in session.commands:
        words = shlex.split(command)
        assert words[0] == "kernelindex" and words[1] in READ_ONLY and "--base" not in words, (
            f"{session.where}: `{command}` is not a read-only kernelindex command: show it in a `sh` block instead"
        )
        ran = subprocess.run(
            [_kernelindex(), *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, f"{session.where}: `{command}` failed: {ran.stderr}"
        _printed_as_shown(session.where, command, shown, ran.stdout.splitlines())


def _git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.mark.slow  # clones of the embedded registry, and a process per command
def test_the_walkthrough_runs_as_shown(tmp_path: Path) -> None:
    """docs/contributing.md from its fork's clone to the check's comment: every console line, in order."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNELINDEX_", "GIT_"))}
    env |= {
        "GIT_CONFIG_GLOBAL": str(empty),  # nobody's own git settings (signing, hooks, default branch)
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "1764000000 +0000",
        "GIT_COMMITTER_DATE": "1764000000 +0000",
        "COLUMNS": "200",
    }
    registry, fork, clone = tmp_path / "registry.git", tmp_path / "fork.git", tmp_path / "manifests"
    _git(tmp_path, "clone", "--quiet", "--bare", "--no-hardlinks", str(EMBEDDED_REPO), str(registry), env=env)
    _git(tmp_path, "clone", "--quiet", "--bare", str(registry), str(fork), env=env)  # the contributor's fork
    _git(tmp_path, "clone", "--quiet", str(fork), str(clone), env=env)
    _git(clone, "config", "user.name", "Carol Contributor", env=env)
    _git(clone, "config", "user.email", "carol@example.com", env=env)
    shutil.copytree(PROJECT_ROOT / "docs" / "examples", clone, dirs_exist_ok=True)
    for command, shown in WALK.commands:
        words = shlex.split(command)
        assert words[0] in ("kernelindex", "git"), f"{WALK.where}: `{command}`: only kernelindex and git lines run"
        program = _kernelindex() if words[0] == "kernelindex" else "git"
        ran = subprocess.run([program, *words[1:]], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, f"{WALK.where}: `{command}` failed: {ran.stderr}"
        _printed_as_shown(WALK.where, command, shown, ran.stdout.splitlines())
    # The pushed branch is in the fork, and main there is untouched: the pull request is the fork's branch.
    pushed = subprocess.run(["git", "branch", "--list"], cwd=fork, env=env, capture_output=True, text=True).stdout
    assert "add-my-run" in pushed
