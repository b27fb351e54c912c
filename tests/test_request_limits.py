"""What a client may hold before it asks anything, against real servers on loopback: a request's
headers have a total size (32 KiB of names and values: at the limit answered, one byte more `431`), a head
that never ends is refused before it is all sent, a connection that sends no request is closed at its
deadline, and an aborted upload is one line in the server's log."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import EMBEDDED_REPO, TEST_TIME, basic_scenario, commit_manifests
from load import server_process
from server import Running, serve

from kernelindex import registry
from kernelindex.core.settings import Settings, plain_mode

LIMIT = 32_768
"""The documented default (docs/http.md): 32 KiB of header names and values, summed."""

FAST_ONLY = pytest.mark.skipif(
    plain_mode(),
    reason="uvicorn's own protocol reads a head whole and has no deadline for one (docs/deploy.md: the proxy's)",
)


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def _address(running: Running) -> tuple[str, int]:
    host, port = running.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _exchange(address: tuple[str, int], request: bytes) -> tuple[int, bytes]:
    """Send `request` on a new connection; the status and body of the answer (read until the server closes or
    the body's declared length has arrived)."""
    with socket.create_connection(address, timeout=60) as connection:
        connection.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = connection.recv(65536)
            assert chunk, f"closed without an answer after {received!r}"
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        fields = dict(line.split(b": ", 1) for line in lines[1:])
        length = int(fields.get(b"content-length", b"0"))
        while len(body) < length:
            chunk = connection.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(lines[0].split()[1]), body


def _request_with_headers(total: int, fields: int = 1) -> bytes:
    """`GET /healthz` whose header names and values add up to `total` bytes: `host: t` (5 bytes) and `fields`
    padding fields `x-pad-N` sharing the rest."""
    rest = total - len("host") - len("t")
    headers = [b"host: t"]
    for number in range(fields):
        name = f"x-pad-{number}".encode()
        share = rest // fields + (1 if number < rest % fields else 0)
        headers.append(name + b": " + b"a" * (share - len(name)))
    return b"GET /healthz HTTP/1.1\r\n" + b"\r\n".join(headers) + b"\r\nconnection: close\r\n\r\n"


def _sum_of_headers(request: bytes) -> int:
    """Names and values summed, counted from the request's own bytes (not by the server's code)."""
    head = request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]
    return sum(len(name) + len(value.strip()) for name, _, value in (line.partition(b":") for line in head))


@pytest.mark.parametrize("fields", [1, 16])
def test_request_headers_are_answered_at_the_limit_and_refused_one_byte_past(api: Running, fields: int) -> None:
    connection_field = len("connection") + len("close")
    at_limit = _request_with_headers(LIMIT - connection_field, fields)
    past_limit = _request_with_headers(LIMIT - connection_field + 1, fields)
    assert _sum_of_headers(at_limit) == LIMIT and _sum_of_headers(past_limit) == LIMIT + 1
    status, _ = _exchange(_address(api), at_limit)
    assert status == 200
    status, body = _exchange(_address(api), past_limit)
    assert status == 431
    error = json.loads(body)["errors"][0]
    assert error["extensions"]["code"] == "HEADERS_TOO_LARGE"
    assert "32,768 bytes" in error["message"]


def test_the_limit_is_configurable(basic_store: registry.GitStore) -> None:
    with serve(basic_store.path, max_header_bytes=2048) as running:
        connection_field = len("connection") + len("close")
        assert _exchange(_address(running), _request_with_headers(2048 - connection_field))[0] == 200
        assert _exchange(_address(running), _request_with_headers(2049 - connection_field))[0] == 431


@FAST_ONLY
def test_a_head_that_never_ends_is_refused_before_it_is_sent(api: Running) -> None:
    """The reproduction: a 100 MB header was read whole (200, and /healthz stalled while the parser joined it).
    The server answers 431 long before the client has sent it all."""
    total = 100 * 1024 * 1024
    chunk = b"a" * (1024 * 1024)
    sent = 0
    with socket.create_connection(_address(api), timeout=60) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nhost: t\r\nx-big: ")
        try:
            while sent < total and not select.select([connection], [], [], 0)[0]:  # until the server answers
                connection.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while piece := connection.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    assert sent < total, "the server answered only once the whole 100 MB head was sent"
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"HEADERS_TOO_LARGE"' in answer
    assert api.client.get("/healthz").status_code == 200


def _closed_by_server(connection: socket.socket) -> bool:
    """Whether the server closed `connection` (waits for it, up to the socket's timeout)."""
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@FAST_ONLY
def test_connections_that_send_no_request_are_closed_at_the_deadline(basic_store: registry.GitStore) -> None:
    """The reproduction: 3,000 connections that never sent a byte were held as long as their clients liked. With
    a deadline of 0.5 s: idle ones, one that trickles its headers, one idle after its answer are all closed;
    a request sent in time is answered."""
    with serve(basic_store.path, header_timeout=0.5) as running:
        address = _address(running)
        idle = [socket.create_connection(address, timeout=60) for _ in range(200)]
        trickling = socket.create_connection(address, timeout=60)
        trickling.sendall(b"GET /healthz HTTP/1.1\r\n")
        answered = socket.create_connection(address, timeout=60)
        answered.sendall(b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n")
        assert answered.recv(12) == b"HTTP/1.1 200"
        for _ in range(100):  # a header every 20 ms: bytes keep coming, the head never ends
            try:
                trickling.sendall(b"x-slow: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.02)
        assert all(_closed_by_server(connection) for connection in idle)
        assert _closed_by_server(trickling)
        answered.settimeout(60)
        while answered.recv(65536):  # the rest of the answer, then the close
            pass
        for connection in [*idle, trickling, answered]:
            connection.close()
        assert running.client.get("/healthz").status_code == 200


def test_the_deadline_is_configurable_and_checked() -> None:
    assert Settings.from_env({"KERNELINDEX_HEADER_TIMEOUT": "2.5"}).header_timeout == 2.5
    assert Settings().header_timeout == 10.0
    with pytest.raises(ValueError, match="KERNELINDEX_HEADER_TIMEOUT"):
        Settings.from_env({"KERNELINDEX_HEADER_TIMEOUT": "0"})
    assert Settings.from_env({"KERNELINDEX_MAX_HEADER_BYTES": "1024"}).max_header_bytes == 1024
    with pytest.raises(ValueError, match="KERNELINDEX_MAX_HEADER_BYTES"):
        Settings.from_env({"KERNELINDEX_MAX_HEADER_BYTES": "1023"})


@pytest.mark.slow
@pytest.mark.parametrize("plain", ["0", "1"])
def test_an_aborted_upload_is_one_log_line(tmp_path: Path, store: registry.GitStore, plain: str) -> None:
    """The reproduction: each upload a client abandoned logged two full tracebacks as an unexpected error."""
    commit_manifests(store, basic_scenario().docs, TEST_TIME)
    log = tmp_path / "server.log"
    with server_process(store.path, log=log, environ={"KERNELINDEX_PLAIN": plain}) as server:
        before = log.read_text().splitlines()
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        for _ in range(3):
            with socket.create_connection((host, int(port)), timeout=60) as connection:
                connection.sendall(
                    b"POST /graphql HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n"
                    b"content-length: 100000\r\n\r\n" + b'{"query": "' + b" " * 5000
                )
                time.sleep(0.2)  # the server reads what came, and waits for the rest
        # Each abort is logged as the request ends: ask until all three are (state, not time).
        deadline = time.monotonic() + 60
        while len([line for line in log.read_text().splitlines() if "closed the connection" in line]) < 3:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        server.settle()
    said = log.read_text().splitlines()[len(before) :]
    assert said == ["kernelindex: POST /graphql: the client closed the connection before its body arrived"] * 3
