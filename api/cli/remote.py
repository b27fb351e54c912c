"""GraphQL over HTTP to a served registry (`--api URL`), which the CLI treats as hostile: its answer is bounded in
time as a whole (`--api-timeout`, not per read: a server sending a byte every few seconds cannot keep a command
waiting), in size (`MAX_ANSWER_BYTES`) and in depth (`MAX_ANSWER_DEPTH`), must be a GraphQL response whose `data`
has every field the document asked for, and is never followed elsewhere (a redirect is an error naming where it
points). Every way it fails is an `Unreachable` naming the server's URL.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import typer

from kernelindex import registry
from kernelindex.cli.console import answered_by

__all__ = ["MAX_ANSWER_BYTES", "MAX_ANSWER_DEPTH", "Unreachable", "answer", "endpoint", "misfit", "post"]

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most a served registry's answer may weigh: a larger one is refused, not read into memory."""
MAX_ANSWER_DEPTH = 128
"""The deepest an answer may nest (arrays and objects): a document's own depth plus a manifest's (at most
`kernelindex.registry.parse.MAX_DEPTH`, 64), with room to spare; deeper is refused before anything walks it."""


class Unreachable(registry.RegistryError):
    """A served registry that did not answer a GraphQL request with a GraphQL response."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


def endpoint(api: str) -> str:
    """The GraphQL endpoint of a served registry given by its URL (`/graphql` added unless it is there).

    >>> endpoint("https://r.example/"), endpoint("http://127.0.0.1:8000/graphql")
    ('https://r.example/graphql', 'http://127.0.0.1:8000/graphql')
    """
    url = api.rstrip("/")
    return url if url.endswith("/graphql") else f"{url}/graphql"


def answer(api: str, query: str, operation: str, variables: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """The served registry's GraphQL response to `operation` of the document `query`: errors, or data with every
    field the document selects (`misfit`). From then on the command reads an answer of this server
    (`kernelindex.cli.console.answered_by`).

    Raises:
        typer.BadParameter: as `post`.
        Unreachable: as `post`; or the answer has neither errors nor data, or lacks a field the document asks for.
    """
    body = json.dumps({"query": query, "operationName": operation, "variables": dict(variables)})
    found = post(api, body.encode(), timeout)
    url = endpoint(api)
    data = found.get("data")
    if not found.get("errors") and not isinstance(data, dict):
        raise Unreachable(url, "the answer has no data")
    missing = misfit(query, data) if isinstance(data, dict) else None
    if missing is not None:
        raise Unreachable(url, f"the answer does not fit the query: no {missing}")
    answered_by(url)
    return found


class _Deadline:
    """The time a whole exchange may take. When it passes, the connection's socket is shut down, so whatever
    read is waiting on it (the TLS handshake, the status line, a header, the body) returns at once; `expired`
    then says why the exchange ended. It shuts down a duplicate of the socket's descriptor (the same connection,
    a descriptor of its own), which stays valid whoever closes or wraps the original, and which it closes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._done = False
        self._lock = threading.Lock()
        self._watched: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            for watched in self._watched:
                watched.close()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            duplicate = sock.dup()
            self._watched.append(duplicate)
            if self.expired:
                _shut(duplicate)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            for watched in self._watched:
                _shut(watched)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the peer: nothing left to wake
        sock.shutdown(socket.SHUT_RDWR)


class _Connection(http.client.HTTPConnection):
    """An HTTP connection whose socket its deadline watches from the moment it is connected."""

    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()
        self._deadline.watch(self.sock)


class _TLSConnection(http.client.HTTPSConnection, _Connection):
    """HTTPS: `HTTPSConnection.connect` connects through `_Connection.connect` (watched), then shakes hands."""


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Connection, req, deadline=self._deadline)  # type: ignore[arg-type]


@functools.cache
def _tls() -> ssl.SSLContext:
    """The system's trusted certificates, loaded once per process (tens of milliseconds)."""
    return ssl.create_default_context()


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        self._tls = _tls()
        super().__init__(context=self._tls)
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_TLSConnection, req, deadline=self._deadline, context=self._tls)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed (urllib would resend a POST as a GET without its query, or leave for ftp:)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        fp.close()  # the redirect's own response, read no further
        raise Unreachable(req.full_url, f"redirected (HTTP {code}) to {newurl}: give that URL to --api instead")


def post(api: str, body: bytes, timeout: float) -> dict[str, Any]:
    """The GraphQL response of the served registry at `api` to `body` (a GraphQL request as JSON), whole within
    `timeout` seconds.

    Raises:
        typer.BadParameter: `api` is no http(s) URL (a usage error).
        Unreachable: the server could not be reached, took longer than `timeout`, redirected, or answered
            something that is not a GraphQL response of at most `MAX_ANSWER_BYTES` and `MAX_ANSWER_DEPTH`.
    """
    if not api.startswith(("https://", "http://")):
        raise typer.BadParameter(f"{api!r}: expected an http(s) URL", param_hint="--api")
    url = endpoint(api)
    try:
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "content-type": "application/json",
                "accept": "application/graphql-response+json, application/json;q=0.9",
                "user-agent": "kernelindex-cli",
            },
        )
    except ValueError as exc:  # no host, a bad port or IPv6 literal
        raise typer.BadParameter(f"{api!r}: {exc}", param_hint="--api") from None
    deadline = _Deadline(timeout)
    # Built before the clock starts: loading the trusted certificates is this machine's time, not the server's.
    opener = urllib.request.build_opener(_HTTP(deadline), _HTTPS(deadline), _NoRedirects())
    with deadline:
        try:
            data = _exchange(opener, request, deadline.seconds)
        except Unreachable:
            raise
        except Exception as exc:  # whatever the exchange raised, a deadline that passed is the reason
            if deadline.expired:
                raise _late(url, timeout) from None
            raise _failure(url, exc) from None
        if deadline.expired:  # the answer may have ended early because its socket was shut down
            raise _late(url, timeout)
    return _graphql_response(url, data)


def _exchange(opener: urllib.request.OpenerDirector, request: urllib.request.Request, seconds: float) -> bytes:
    try:
        with opener.open(request, timeout=seconds) as response:  # http(s) only: checked by `post`
            data: bytes = response.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:  # GraphQL over HTTP answers request errors with 4xx and a body
        with exc:
            data = exc.read(MAX_ANSWER_BYTES + 1)
        if not data:
            raise Unreachable(request.full_url, f"HTTP {exc.code} {exc.reason}") from None
    return data


def _late(url: str, timeout: float) -> Unreachable:
    return Unreachable(url, f"no whole answer within {timeout:g} s (--api-timeout)")


def _failure(url: str, exc: Exception) -> Unreachable:
    if isinstance(exc, http.client.HTTPException) and not isinstance(exc, OSError):
        return Unreachable(url, f"not an HTTP answer ({type(exc).__name__}: {exc})")
    if isinstance(exc, urllib.error.URLError | OSError):
        return Unreachable(url, f"cannot connect: {getattr(exc, 'reason', exc)}")
    return Unreachable(url, f"the exchange failed ({type(exc).__name__}: {exc})")


def _graphql_response(url: str, data: bytes) -> dict[str, Any]:
    if len(data) > MAX_ANSWER_BYTES:
        raise Unreachable(url, f"the answer is larger than {MAX_ANSWER_BYTES:,} bytes")
    try:
        answer = json.loads(data)
    except RecursionError:
        raise Unreachable(url, f"the answer nests deeper than {MAX_ANSWER_DEPTH} levels") from None
    except ValueError:
        raise Unreachable(url, "the answer is not JSON (is this a KernelIndex registry's URL?)") from None
    if _depth_beyond(answer, MAX_ANSWER_DEPTH):
        raise Unreachable(url, f"the answer nests deeper than {MAX_ANSWER_DEPTH} levels")
    if not isinstance(answer, dict) or not ({"data", "errors"} & answer.keys()):
        raise Unreachable(url, "the answer is not a GraphQL response (is this a KernelIndex registry's URL?)")
    errors = answer.get("errors")
    if errors is not None and not (
        isinstance(errors, list) and all(isinstance(e, dict) and isinstance(e.get("message"), str) for e in errors)
    ):
        raise Unreachable(url, "the answer's errors are not a list of GraphQL errors, each with a message")
    if answer.get("data") is not None and not isinstance(answer["data"], dict):
        raise Unreachable(url, "the answer's data is not an object")
    return answer


def _depth_beyond(value: Any, limit: int) -> bool:
    """Whether `value` nests arrays and objects more than `limit` deep; walked without recursion.

    >>> _depth_beyond([[1]], 2), _depth_beyond([[[1]]], 2), _depth_beyond({"a": {"b": []}}, 2)
    (False, True, True)
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict | list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in (current.values() if isinstance(current, dict) else current))
    return False


def misfit(document: str, data: Mapping[str, Any]) -> str | None:
    """Where `data` lacks what `document` asks for, as a JSON path (`registry.commit.id`), or None when every field
    the document selects is there, and every field with a selection of its own is null, an object or a list of
    them (GraphQL over HTTP: a response has each field its operation selected). Fragments are not walked.

    >>> misfit("{ registry { commit { id } runs { name } } }", {"registry": {"commit": {"id": "c"}, "runs": [{}]}})
    'registry.runs[0].name'
    >>> misfit("{ registry { commit { id } } }", {"registry": {"commit": "c"}})
    'registry.commit'
    """
    from graphql import FieldNode, OperationDefinitionNode, SelectionSetNode, parse

    operations = [d for d in parse(document).definitions if isinstance(d, OperationDefinitionNode)]
    pending: list[tuple[SelectionSetNode, Any, str]] = [(op.selection_set, data, "") for op in operations]
    while pending:
        selection, value, where = pending.pop()
        if value is None:
            continue
        if isinstance(value, list):
            pending.extend((selection, item, f"{where}[{i}]") for i, item in enumerate(value))
            continue
        if not isinstance(value, dict):
            return where or "data"
        for field in selection.selections:
            if not isinstance(field, FieldNode):
                continue
            key = (field.alias or field.name).value
            path = f"{where}.{key}" if where else key
            if key not in value:
                return path
            if field.selection_set is not None:
                pending.append((field.selection_set, value[key], path))
    return None
