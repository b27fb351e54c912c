"""One write a response: uvicorn's HTTP protocol, with a response's head sent together with its first body bytes.

uvicorn writes a response's status line and headers as soon as the application starts it, then each part of
the body as it comes: two `send` calls, two TCP segments and two wake-ups of the client for every answer,
however small. On loopback a `send` costs about as much as the rest of a cached answer: measured against a
bare Starlette route answering 1.7 KB, the server's CPU a request went from 148-245 to 122-150 us with the
head held for its body, and the client's median from 545-661 to 480-599 us.

The head is held only until the event loop's current turn ends: an application that starts a response and
then waits (a stream, a long poll) has its head sent on the next turn, as uvicorn would have, only later by
one turn of the loop. Interim responses (`100 Continue`) and anything else are written at once, and any write
sends the held head first, so bytes leave in the order uvicorn wrote them.

The protocol also bounds what a client may hold before it asks anything, which uvicorn does not:

- **A request's head has a deadline** (`head_timeout`, `KERNELINDEX_HEADER_TIMEOUT`): from the moment the
  connection waits for a request (it opened, or its last response ended) until that request's headers are
  complete. A connection that sends nothing, or trickles its headers, is closed when it passes (uvicorn's
  keep-alive timeout starts only after a first response, and each byte received restarts it: 3,000 connections
  that never sent a byte were held for as long as their clients liked).
- **Request headers have a total size** (`max_header_bytes`, `KERNELINDEX_MAX_HEADER_BYTES`): the names and
  values of a request's header fields, summed, as the application sees them (the same sum
  `kernelindex.http.limits` checks in plain mode). One byte more is refused with `431 Request Header Fields
  Too Large` and the connection closed. The parser buffers a field until its end, so the bytes of a head are
  also counted as they arrive: past four times the limit and `REQUEST_LINE_ALLOWANCE` (room for the request
  line and each field's framing) the head is refused before it is complete (a 100 MB header was read whole,
  and stalled every other connection for 2.9 s while the parser joined it).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kernelindex.core.codes import HEADERS_TOO_LARGE

__all__ = ["HEAD_TIMEOUT", "LINGER_SECONDS", "MAX_HEADER_BYTES", "REQUEST_LINE_ALLOWANCE", "HttpProtocol"]

log = logging.getLogger("kernelindex")

HEAD_TIMEOUT = 10.0
"""Seconds a connection may wait before its request's headers are complete (`KERNELINDEX_HEADER_TIMEOUT`)."""
MAX_HEADER_BYTES = 32 * 1024
"""The most bytes of header names and values one request may send (`KERNELINDEX_MAX_HEADER_BYTES`)."""
REQUEST_LINE_ALLOWANCE = 1024 * 1024
"""Room for the request line (a GraphQL GET's URL-encoded query and variables) in the bytes a head may take."""
LINGER_SECONDS = 2.0
"""After a 431, how long what the client still sends is read and dropped before the connection closes: closed at
once with unread bytes, the kernel resets it, and the client may lose the answer before reading it."""

_STATUS_LINE = b"HTTP/1.1 "
_HEAD_END = b"\r\n\r\n"


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (`uvicorn.Config(http=HttpProtocol)`), writing each response's head with
    the first bytes of its body, with a deadline and a size limit on each request's head (see the module's
    docstring; `functools.partial(HttpProtocol, head_timeout=..., max_header_bytes=...)` sets them)."""

    def __init__(
        self,
        *args: Any,
        head_timeout: float = HEAD_TIMEOUT,
        max_header_bytes: int = MAX_HEADER_BYTES,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.head_timeout = head_timeout
        self.max_header_bytes = max_header_bytes
        self._max_head_bytes = 4 * max_header_bytes + REQUEST_LINE_ALLOWANCE
        self._head_open = True  # the bytes arriving are a request's head (until its headers are complete)
        self._head_bytes = 0  # bytes of the current head received so far
        self._header_bytes = 0  # bytes of its header names and values
        self._heads = 0  # requests whose message ended (the next begins): see `data_received`
        self._refused = False
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeadHeld(transport, self.loop))
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:  # lingering after a 431: dropped
            return
        room = self._max_head_bytes - self._head_bytes
        if not self._head_open or len(data) <= room:
            self._head_bytes += len(data) if self._head_open else 0
            super().data_received(data)
            return
        # Feed what fits: if the head is still not complete (and no other request began meanwhile, whose bytes
        # here are not counted), it is too long. Otherwise the rest is a body, or another request's head.
        heads = self._heads
        self._head_bytes = self._max_head_bytes
        super().data_received(data[:room])
        if self._refused or self.transport.is_closing():
            return
        if self._head_open and self._heads == heads:
            self._refuse_head(f"the request's head exceeds {self._max_head_bytes:,} bytes")
            return
        super().data_received(data[room:])

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._refused:
            return
        super().on_header(name, value)
        stored_name, stored_value = self.headers[-1]  # as the application will see it (the value trimmed)
        self._header_bytes += len(stored_name) + len(stored_value)
        if self._header_bytes > self.max_header_bytes:
            self._refuse_head(f"the request's header names and values exceed {self.max_header_bytes:,} bytes")

    def on_headers_complete(self) -> None:
        if self._refused:
            return
        self._head_open = False
        self._cancel_deadline()
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._heads += 1
        self._head_open = True
        self._head_bytes = 0
        self._header_bytes = 0
        super().on_message_complete()
        if self.cycle is None or self.cycle.response_complete:  # answered before its body ended
            self._await_head()

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)
        super().on_response_complete()
        if not queued:
            self._await_head()

    def _await_head(self) -> None:
        """The connection waits for a request's head: it has `head_timeout` seconds to complete it."""
        if self._head_open and self._head_deadline is None and not self.transport.is_closing():
            self._head_deadline = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _cancel_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self._head_open and (self.cycle is None or self.cycle.response_complete):
            self.transport.close()

    def _refuse_head(self, why: str) -> None:
        """431, then the connection closed (after `LINGER_SECONDS`): nothing more of it is parsed."""
        self._refused = True
        self._cancel_deadline()
        log.info("kernelindex: 431 for %s: %s", self.client[0] if self.client else "a client", why)
        body = orjson.dumps({"errors": [{"message": why, "extensions": {"code": HEADERS_TOO_LARGE}}]})
        head = [b"HTTP/1.1 431 Request Header Fields Too Large\r\n"]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"cache-control: no-store\r\n",
            b"x-content-type-options: nosniff\r\n",
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join([*head, body]))
        if self.transport.can_write_eof():
            self.transport.write_eof()  # the answer is complete; what still arrives is read and dropped
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()


class HeadHeld(asyncio.Transport):
    """A connection's transport that holds a response head (status line and headers, nothing after them) until
    the next write or the end of the event loop's turn, whichever comes first."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
        elif _is_final_head(data):
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def writelines(self, list_of_data: Any) -> None:
        self.flush()
        self._transport.writelines(list_of_data)

    def flush(self) -> None:
        """Send the held head now, if any (and if the connection can still take it)."""
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + (0 if self._held is None else len(self._held))

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)


def _is_final_head(data: bytes | bytearray | memoryview) -> bool:
    """Whether `data` is a final response's head alone: `HTTP/1.1 <status not 1xx> ...` up to the blank line
    that ends the headers, and nothing after it (an interim `100 Continue` is sent at once: the client waits
    for it before sending its body).

    >>> _is_final_head(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\n")
    True
    >>> _is_final_head(b"HTTP/1.1 100 Continue\\r\\n\\r\\n")
    False
    >>> _is_final_head(b"HTTP/1.1 400 Bad Request\\r\\ncontent-length: 2\\r\\n\\r\\nno")
    False
    """
    return (
        type(data) is bytes
        and data.startswith(_STATUS_LINE)
        and data.endswith(_HEAD_END)
        and data[9:10] != b"1"
        and data.find(_HEAD_END) == len(data) - 4
    )
