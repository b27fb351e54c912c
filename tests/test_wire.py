"""The HTTP protocol every server runs (`kernelindex.serving.wire`): a response's head leaves in the same write as its
first body bytes, and nothing is held past the event loop's turn, so interim responses, HEAD answers and
streams that wait before their body still reach the client as uvicorn would send them.

The protocol runs as uvicorn runs it (uvicorn's configuration, its server state, the real application), over a
transport that records each write the protocol makes to the socket: one write is one `send` and one segment."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from uvicorn.server import ServerState

from kernelindex.serving.wire import HttpProtocol

Scope = MutableMapping[str, Any]
Asgi = Callable[[Scope, Any, Any], Awaitable[None]]


class Socket(asyncio.Transport):
    """What the protocol writes, one entry per write reaching the socket (`writelines` is one `writev`)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.writes.append(b"".join(bytes(part) for part in list_of_data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _connect(app: Asgi) -> tuple[asyncio.Protocol, Socket]:
    """A connection of a real uvicorn protocol, configured as uvicorn configures it, to `app`."""
    config = uvicorn.Config(app, http=HttpProtocol, lifespan="off", log_level="warning")
    config.load()
    protocol = config.http_protocol_class(  # type: ignore[call-arg]
        config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
    )
    socket = Socket()
    protocol.connection_made(socket)
    return protocol, socket


async def _exchange(app: Asgi, *requests: bytes, wait: float = 0.05) -> Socket:
    """Feed `requests` (raw bytes, each one `data_received`) to a new connection, `wait` seconds apart."""
    protocol, socket = _connect(app)
    for data in requests:
        protocol.data_received(data)
        await asyncio.sleep(wait)
    return socket


def _app(endpoint: Callable[[Request], Awaitable[Response]]) -> Starlette:
    return Starlette(routes=[Route("/", endpoint, methods=["GET", "HEAD", "POST"])])


async def _small(request: Request) -> Response:
    await request.body()
    return Response(b'{"data":{}}', media_type="application/json")


GET = b"GET / HTTP/1.1\r\nhost: example\r\n\r\n"


def test_a_response_is_one_write_with_its_head_first() -> None:
    socket = asyncio.run(_exchange(_app(_small), GET))
    assert len(socket.writes) == 1, socket.writes
    head, _, body = socket.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: 11" in head
    assert body == b'{"data":{}}'


def test_pipelined_requests_get_their_answers_in_order_one_write_each() -> None:
    second = b"POST / HTTP/1.1\r\nhost: example\r\ncontent-length: 2\r\n\r\n{}"
    socket = asyncio.run(_exchange(_app(_small), GET + second))
    assert [write.split(b"\r\n", 1)[0] for write in socket.writes] == [b"HTTP/1.1 200 OK"] * 2
    assert all(write.endswith(b'{"data":{}}') for write in socket.writes)


def test_a_head_answer_without_body_bytes_is_still_sent() -> None:
    socket = asyncio.run(_exchange(_app(_small), b"HEAD / HTTP/1.1\r\nhost: example\r\n\r\n"))
    assert len(socket.writes) == 1 and socket.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert socket.writes[0].endswith(b"\r\n\r\n")


def test_an_interim_100_continue_is_sent_before_the_client_sends_its_body() -> None:
    """A client that asked `Expect: 100-continue` waits for the interim answer before its body: holding it
    for a body that cannot come until then would stall the exchange."""

    async def scenario() -> tuple[list[bytes], list[bytes]]:
        protocol, socket = _connect(_app(_small))
        protocol.data_received(b"POST / HTTP/1.1\r\nhost: example\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\n")
        await asyncio.sleep(0.05)
        interim = list(socket.writes)
        protocol.data_received(b"{}")  # what the client sends once it has the interim answer
        await asyncio.sleep(0.05)
        return interim, socket.writes

    interim, writes = asyncio.run(scenario())
    assert interim == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    assert len(writes) == 2 and writes[1].startswith(b"HTTP/1.1 200 OK\r\n") and writes[1].endswith(b"{}}")


def test_a_stream_that_waits_before_its_body_has_its_head_sent_at_once() -> None:
    """The head waits for the end of the loop's turn, not for a body an application may take long to make."""
    release = asyncio.Event()

    async def stream(request: Request) -> Response:
        async def parts() -> Any:
            await release.wait()
            yield b"late"

        return StreamingResponse(parts(), media_type="text/plain")

    async def scenario() -> tuple[list[bytes], list[bytes]]:
        socket = await _exchange(_app(stream), GET)
        before = list(socket.writes)
        release.set()
        await asyncio.sleep(0.05)
        return before, socket.writes

    before, after = asyncio.run(scenario())
    assert len(before) == 1 and before[0].startswith(b"HTTP/1.1 200 OK\r\n") and before[0].endswith(b"\r\n\r\n")
    assert after[1:] == [b"4\r\nlate\r\n", b"0\r\n\r\n"]


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NOT HTTP AT ALL\r\n\r\n", b"400"),  # uvicorn answers and closes on a request it cannot parse
        (b"GET / HTTP/1.1\r\nhost: example\r\ncontent-length: x\r\n\r\n", b"400"),
    ],
)
def test_a_malformed_request_gets_its_error_and_the_connection_closes(request_bytes: bytes, status: bytes) -> None:
    socket = asyncio.run(_exchange(_app(_small), request_bytes))
    assert socket.closed
    assert b"".join(socket.writes).startswith(b"HTTP/1.1 " + status)


def test_a_connection_the_application_closes_sends_the_held_head_first() -> None:
    """An answer with `connection: close`: uvicorn closes the transport right after the body; the held head and
    the body leave, in order, before the close."""

    async def closing(request: Request) -> Response:
        return Response(b"bye", headers={"connection": "close"})

    socket = asyncio.run(_exchange(_app(closing), GET))
    assert socket.closed
    assert b"".join(socket.writes).startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"".join(socket.writes).endswith(b"\r\n\r\nbye")
