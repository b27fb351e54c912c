"""One way for a command to read a registry: a named GraphQL document (`api/cli/documents.py`), answered by the
query service over a local registry, or sent to a served one (`--api URL`, GraphQL over HTTP): the same
document, the same variables and the same answer either way, as the pages and the MCP tools ask theirs.

A command pins its document with `$at` (`registry(at: $at)`), so `--at` means the same locally and remotely.
An answer with errors is a failure whose line is the first error's message (with its code when it has one);
a served registry that cannot be reached, or answers something that is not GraphQL, is one too.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from kernelindex import registry
from kernelindex.cli.stores import open_snapshots, read_settings, repo_path

__all__ = ["MAX_ANSWER_BYTES", "Document", "Unreachable", "ask", "endpoint"]

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most a served registry's answer may weigh: a larger one is refused, not read into memory."""
_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Document:
    """A GraphQL document with the name of the operation a command runs from it."""

    operation: str
    text: str


class Unreachable(registry.RegistryError):
    """A served registry that did not answer a GraphQL request with a GraphQL response."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


def ask(
    document: Document,
    variables: Mapping[str, Any],
    *,
    repo: Path | None = None,
    api: str | None = None,
    base_url: str | None = None,
) -> dict[str, Any]:
    """The `data` of `document`'s answer: from the registry at `api` when given, else from the local one
    (`--repo`, or the default), whose links are under `base_url` (default: where `serve` would listen).

    Raises:
        kernelindex.registry.RegistryError: the answer has errors (the first one's message), or (`Unreachable`) the
        served
            registry could not be asked; as `kernelindex.registry.snapshots.Snapshots.load` for a local registry.
    """
    answer = _remote(api, document, variables) if api else _local(repo, document, variables, base_url)
    errors = answer.get("errors") or []
    if errors:
        first: dict[str, Any] = errors[0] if isinstance(errors[0], dict) else {"message": str(errors[0])}
        extensions = first.get("extensions")
        code = extensions.get("code") if isinstance(extensions, dict) else None
        raise registry.RegistryError(f"{first.get('message')}{f' ({code})' if code else ''}")
    data = answer.get("data")
    if not isinstance(data, dict):
        raise Unreachable(api or "the registry", "the answer has no data")
    return data


def _local(repo: Path | None, document: Document, variables: Mapping[str, Any], base: str | None) -> dict[str, Any]:
    import anyio

    from kernelindex.core.context import StoredObjects
    from kernelindex.service.queries import QueryService

    settings = read_settings()
    root = (base or settings.base_url or f"http://{settings.host}:{settings.port}").rstrip("/")
    snapshots = open_snapshots(repo_path(repo))
    snapshots.load()
    service = QueryService(snapshots, StoredObjects(snapshots), root, today=lambda: dt.datetime.now(dt.UTC).date())
    answer = anyio.run(lambda: service.answer(document.text, dict(variables), operation=document.operation))
    return {"data": answer.data, "errors": answer.errors}


def endpoint(api: str) -> str:
    """The GraphQL endpoint of a served registry given by its URL (`/graphql` added unless it is there).

    >>> endpoint("https://r.example/"), endpoint("http://127.0.0.1:8000/graphql")
    ('https://r.example/graphql', 'http://127.0.0.1:8000/graphql')
    """
    url = api.rstrip("/")
    return url if url.endswith("/graphql") else f"{url}/graphql"


def _remote(api: str, document: Document, variables: Mapping[str, Any]) -> dict[str, Any]:
    if not api.startswith(("https://", "http://")):
        raise typer.BadParameter(f"{api!r}: expected an http(s) URL", param_hint="--api")
    # Here, not with the module: every command imports this one, and `serve` never asks a remote registry
    # (urllib.request brings http.client and email along).
    import urllib.error
    import urllib.request

    url = endpoint(api)
    body = json.dumps({"query": document.text, "operationName": document.operation, "variables": dict(variables)})
    request = urllib.request.Request(
        url,
        data=body.encode(),
        method="POST",
        headers={
            "content-type": "application/json",
            "accept": "application/graphql-response+json, application/json;q=0.9",
            "user-agent": "kernelindex-cli",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:  # http(s) only: checked above
            data = response.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:  # GraphQL over HTTP answers request errors with 4xx and a body
        data = exc.read(MAX_ANSWER_BYTES + 1)
        if not data:
            raise Unreachable(url, f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise Unreachable(url, f"cannot connect: {reason}") from None
    if len(data) > MAX_ANSWER_BYTES:
        raise Unreachable(url, f"the answer is larger than {MAX_ANSWER_BYTES:,} bytes")
    try:
        answer = json.loads(data)
    except ValueError:
        raise Unreachable(url, "the answer is not JSON (is this a KernelIndex registry's URL?)") from None
    if not isinstance(answer, dict) or not ({"data", "errors"} & answer.keys()):
        raise Unreachable(url, "the answer is not a GraphQL response (is this a KernelIndex registry's URL?)")
    return answer
