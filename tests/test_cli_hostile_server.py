"""The CLI's `--api` mode against a hostile served registry: a socket server in this file, on loopback, that answers
whatever a test tells it to (a replayed answer with terminal control sequences in every string, a drip of one byte
at a time, malformed JSON and HTTP). What a terminal would act on is shown as its escape, never emitted; an answer
that never ends is given up after `--api-timeout`; a malformed one is one line naming the server, exit 1.

The answers replayed are the query service's own for a registry built here, poisoned: the expected output is then
what Python's `repr` and the JSON standard write for each character, not what the code under test computes."""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    commit_manifests,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
)
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.cli.ask import Document, ask
from kernelindex.cli.documents import CITE, COMPARE, LOOKUP_COHORT, RUNS, SHOW

OPERATION = make_operation("hostile-norm")
WORKLOAD = make_workload(OPERATION, tokens=1024, name="hostile-t1024")
PROTOCOL = make_protocol("harness-h")
ENVIRONMENT = make_environment()
KERNEL = make_implementation(OPERATION, "hostile-kernel")
RUNS_MADE = [
    make_run(KERNEL, WORKLOAD, PROTOCOL, ENVIRONMENT, latency, f"2026-08-0{day}T12:00:00Z", name=f"run-{day}")
    for day, latency in ((1, 5000), (2, 7000))
]

# What a hostile server writes into every string: a window title (OSC 0), a hyperlink (OSC 8), clear-screen and
# colour (CSI), a bell, a carriage return that overwrites the line, a right-to-left override, the 8-bit CSI (C1),
# DEL, rich markup, and text that must stay as it is.
PAYLOAD = (
    " \x1b]0;pwned\x07 \x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x1b[31mred"
    " \rover \u202eevil \x9b31m \x7f [red]markup[/red] Café 東京"
)
ACTED_ON = "\x1b\x07\r\u202e\x9b\x7f"
"""The characters of PAYLOAD a terminal acts on: none may reach the output."""


def _poisoned(value: Any) -> Any:
    """`value` with PAYLOAD after every string in it."""
    if isinstance(value, str):
        return value + PAYLOAD
    if isinstance(value, list):
        return [_poisoned(item) for item in value]
    if isinstance(value, dict):
        return {key: _poisoned(item) for key, item in value.items()}
    return value


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = registry.GitStore.init(tmp_path_factory.mktemp("hostile") / "manifests.git")
    commit_manifests(store, [OPERATION, WORKLOAD, PROTOCOL, ENVIRONMENT, KERNEL, *RUNS_MADE])
    return store.path


def _answer(repo: Path, document: Document, variables: dict[str, Any]) -> dict[str, Any]:
    """The query service's answer to `document` over the local registry, as a served one would send it."""
    return {"data": ask(document, variables, repo=repo)}


# The hostile server ---------------------------------------------------------------------------------------


Reply = Callable[[socket.socket, threading.Event], None]


def _read_request(sock: socket.socket) -> None:
    """Read one HTTP request (its head and its Content-Length of body) and ignore it."""
    sock.settimeout(10)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            return
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return
        body += chunk


@contextlib.contextmanager
def hostile(reply: Reply) -> Iterator[str]:
    """A server on a free loopback port that reads each request and answers it with `reply`; its URL."""
    stop = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            with contextlib.suppress(OSError):  # the client hung up: what it did about it is the test's
                _read_request(self.request)
                reply(self.request, stop)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def http(body: bytes, status: str = "200 OK", headers: str = "content-type: application/json\r\n") -> bytes:
    return f"HTTP/1.1 {status}\r\n{headers}content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body


def sends(raw: bytes) -> Reply:
    return lambda sock, stop: sock.sendall(raw)


def drips(raw: bytes, start: int = 0) -> Reply:
    """Send `raw[:start]` at once, then one byte every 0.2 s; at most 150 of them (30 s), so a client that never
    gives up still ends (and fails) rather than hanging the suite."""

    def reply(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(raw[:start])
        for byte in raw[start : start + 150]:
            if stop.wait(0.2):
                return
            sock.sendall(bytes([byte]))

    return reply


def _run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False, env=env)


def _assert_inert(result: Result) -> str:
    both = result.stdout + result.stderr
    assert [c for c in ACTED_ON if c in both] == []
    return both


# Control sequences from a server are shown, not obeyed --------------------------------------------------------


def _commands(repo: Path) -> list[tuple[list[str], dict[str, Any]]]:
    query = 'query Cohort { registry { run(id: "run-1") { cohort { key } } } }'
    cohort = ask(Document("Cohort", query), {}, repo=repo)["registry"]["run"]["cohort"]["key"]
    return [
        (["runs"], _answer(repo, RUNS, {})),
        (["compare", "run-1", "run-2"], _answer(repo, COMPARE, {"runs": ["run-1", "run-2"]})),
        (["lookup", "cohort", cohort], _answer(repo, LOOKUP_COHORT, {"key": cohort})),
        (
            ["show", "hostile-kernel", "--kind", "ImplementationRevision"],
            _answer(repo, SHOW, {"id": "hostile-kernel", "kind": "ImplementationRevision"}),
        ),
        (["cite", "run-1"], _answer(repo, CITE, {"id": "run-1", "format": "TEXT"})),
    ]


def test_a_servers_text_in_tables_and_manifests_is_shown_as_escapes(repo: Path) -> None:
    for command, answer in _commands(repo):
        with hostile(sends(http(json.dumps(_poisoned(answer)).encode()))) as url:
            result = _run(*command, "--api", url)
        assert result.exit_code == 0, (command, result.stderr)
        shown = _assert_inert(result)
        # Each escape as Python writes the character (`repr`), markup literal, other text as itself; whole where a
        # table does not cut its cells to the width.
        assert "\\x1b]0;pwned\\x07 \\x1b]8;;https://evil" in shown, command
        if command[0] in ("show", "lookup", "cite"):
            assert (
                "link\\x1b]8;;\\x1b\\ \\x1b[2J\\x1b[31mred \\rover \\u202eevil \\x9b31m \\x7f [red]markup[/red] Café 東京"
                in shown
            )


@pytest.mark.parametrize("output", ["--json", "--jsonl"])
def test_a_servers_text_in_json_is_the_same_value_with_json_escapes(repo: Path, output: str) -> None:
    answer = _poisoned(_answer(repo, RUNS, {}))
    with hostile(sends(http(json.dumps(answer).encode()))) as url:
        result = _run("runs", output, "--api", url)
    assert result.exit_code == 0, result.stderr
    _assert_inert(result)
    # RFC 8259 section 7: any character may be escaped as \\u and four hex digits; the value is unchanged.
    assert "\\u001b]0;pwned\\u0007" in result.stdout and "\\u202eevil \\u009b31m \\u007f" in result.stdout
    edges = answer["data"]["registry"]["runs"]["edges"]
    if output == "--json":
        assert json.loads(result.stdout) == answer["data"]
    else:
        assert [json.loads(line) for line in result.stdout.splitlines()] == [edge["node"] for edge in edges]


def test_a_servers_error_message_is_one_line_of_escapes() -> None:
    error = {"message": f"no such run{PAYLOAD}\nkernelindex: all good", "extensions": {"code": "BAD\x1b[2J"}}
    with hostile(sends(http(json.dumps({"errors": [error], "data": None}).encode(), "400 Bad Request"))) as url:
        result = _run("runs", "--api", url)
    assert result.exit_code == 1 and result.stdout == ""
    _assert_inert(result)
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("kernelindex: no such run \\x1b]0;pwned\\x07 ")
    assert result.stderr.endswith("Café 東京\\nkernelindex: all good (BAD\\x1b[2J)\n")


def test_show_of_a_local_manifest_shows_its_controls_as_escapes(tmp_path: Path) -> None:
    """Text the door accepts (a right-to-left override, a C1 control, DEL, a line separator) in a title."""
    store = registry.GitStore.init(tmp_path / "manifests.git")
    operation = make_operation("odd-op")
    operation["metadata"]["title"] = "Café 東京 \u202eevil\u202c \x9b31m \x7f \u2028 [red]x[/red]"
    commit_manifests(store, [operation])
    result = _run("show", "odd-op", "--repo", store.path)
    assert result.exit_code == 0, result.stderr
    assert [c for c in "\u202e\u202c\x9b\x7f\u2028" if c in result.stdout] == []
    assert '"title": "Café 東京 \\u202eevil\\u202c \\x9b31m \\x7f \\u2028 [red]x[/red]"' in result.stdout
    assert '\n  "kind": "OperationSpec",\n' in result.stdout  # its lines and indentation kept


# A server that never finishes is given up ------------------------------------------------------------------


ANSWER = http(json.dumps({"data": None, "errors": [{"message": "never read"}]}).encode())
HEAD = ANSWER.index(b"\r\n\r\n") + 4


@pytest.mark.slow  # each waits out its deadline (1 s)
@pytest.mark.parametrize(("start", "how"), [(0, "option"), (HEAD, "option"), (HEAD, "environment")])
def test_a_server_dripping_its_answer_is_given_up_after_the_deadline(start: int, how: str) -> None:
    """One byte every 0.2 s, from the status line on or after the head: every read returns within any per-read
    timeout, so only a deadline for the whole answer ends the wait."""
    with hostile(drips(ANSWER, start)) as url:
        if how == "option":
            result = _run("runs", "--api", url, "--api-timeout", "1")
        else:
            result = _run("runs", "--api", url, env={"KERNELINDEX_API_TIMEOUT": "1"})
    assert result.exit_code == 1
    assert result.stderr == f"kernelindex: {url}/graphql: no whole answer within 1 s (--api-timeout)\n"


def test_the_deadline_takes_from_a_tenth_of_a_second_to_an_hour() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for seconds, status in (("0.1", 1), ("3600", 1), ("0.099", 2), ("3600.001", 2), ("nan", 2)):
        result = _run("runs", "--api", url, "--api-timeout", seconds)
        assert result.exit_code == status, (seconds, result.stderr)
        if status == 1:  # taken: then the registry at a closed port is not reached (whichever comes first)
            assert result.stderr.startswith(f"kernelindex: {url}/graphql: ")


# A malformed answer is the server's fault, said in one line --------------------------------------------------


def _runs_answer(repo: Path, change: Callable[[dict[str, Any]], None]) -> bytes:
    answer = _answer(repo, RUNS, {})
    change(answer["data"]["registry"])
    return http(json.dumps(answer).encode())


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(found: dict[str, Any]) -> None:
        for step in path[:-1]:
            found = found[step]
        found[path[-1]] = value

    return change


MALFORMED: dict[str, tuple[Callable[[Path], bytes], str]] = {
    "nested past the recursion limit": (
        lambda repo: http(b'{"data":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        "the answer nests deeper than 128 levels",
    ),
    "no commit": (
        lambda repo: http(b'{"data": {"registry": {}}}'),
        "the answer does not fit the query: no registry.commit",
    ),
    "a list for data": (lambda repo: http(b'{"data": []}'), "the answer's data is not an object"),
    "errors a string": (lambda repo: http(b'{"errors": "boom"}'), "the answer's errors are not a list"),
    "a message an object": (lambda repo: http(b'{"errors": [{"message": {}}]}'), "the answer's errors are not a list"),
    "an object for edges": (
        lambda repo: _runs_answer(repo, _set(("runs", "edges"), {"node": 1})),
        "the answer does not fit the query: no registry.runs.edges",
    ),
    "a number for the commit": (
        lambda repo: _runs_answer(repo, _set(("commit", "id"), 5)),
        "the answer does not fit the query (TypeError: ",
    ),
    "words for a count": (
        lambda repo: _runs_answer(repo, _set(("runs", "totalCount"), "many")),
        "the answer does not fit the query (ValueError: ",
    ),
    "not UTF-8": (lambda repo: http(b'{"data": "\xff\xfe"}'), "the answer is not JSON"),
    "not HTTP": (lambda repo: b"SMTP ready\r\n\r\n", "not an HTTP answer (BadStatusLine: "),
    "a redirect": (
        lambda repo: http(b"", "302 Found", "location: ftp://evil.example/x\r\n"),
        "redirected (HTTP 302) to ftp://evil.example/x: give that URL to --api instead",
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_answer_names_the_server_in_one_line(repo: Path, case: str) -> None:
    raw, reason = MALFORMED[case]
    with hostile(sends(raw(repo))) as url:
        result = _run("runs", "--api", url)
    assert result.exit_code == 1, result.stdout
    assert result.stderr.startswith(f"kernelindex: {url}/graphql: {reason}"), result.stderr
    assert result.stderr.count("\n") == 1


def _nesting(text: str) -> int:
    """How deep JSON text nests arrays and objects, read from its characters (strings skipped)."""
    deepest = depth = 0
    in_string = escaped = False
    for character in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (character == "\\", character != '"')
        elif character == '"':
            in_string = True
        elif character in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif character in "]}":
            depth -= 1
    return deepest


def test_an_answer_nests_at_most_128_levels(repo: Path) -> None:
    answer = _answer(repo, SHOW, {"id": "hostile-kernel", "kind": "ImplementationRevision"})
    base = _nesting(json.dumps(answer | {"data": {**answer["data"], "registry": {}}}))
    for levels, status in ((128, 0), (129, 1)):
        nested: Any = 1
        for _ in range(levels - base - 1):  # the manifest object itself is one level below `registry`
            nested = [nested]
        answer["data"]["registry"]["manifest"]["json"] = nested
        text = json.dumps(answer)
        assert _nesting(text) == levels
        with hostile(sends(http(text.encode()))) as url:
            result = _run("show", "hostile-kernel", "--api", url, "--json")
        assert result.exit_code == status, (levels, result.stderr)
        if status:
            assert result.stderr == f"kernelindex: {url}/graphql: the answer nests deeper than 128 levels\n"
        else:
            assert json.loads(result.stdout)["manifest"] == nested
