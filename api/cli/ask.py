"""One way for a command to read a registry: a named GraphQL document (`api/cli/documents.py`), answered by the
query service over a local registry, or sent to a served one (`--api URL`, GraphQL over HTTP): the same
document, the same variables and the same answer either way, as the pages and the MCP tools ask theirs.

A command pins its document with `$at` (`registry(at: $at)`), so `--at` means the same locally and remotely.
An answer with errors is a failure whose line is the first error's message (with its code when it has one);
a served registry that cannot be reached in time, or answers something that is not GraphQL or lacks a field the
document asked for, is one too, naming the server (`kernelindex.cli.remote`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelindex import registry
from kernelindex.cli.options import API_TIMEOUT_SECONDS
from kernelindex.cli.stores import open_snapshots, read_settings, repo_path

__all__ = ["Document", "ask"]


@dataclass(frozen=True, slots=True)
class Document:
    """A GraphQL document with the name of the operation a command runs from it."""

    operation: str
    text: str


def ask(
    document: Document,
    variables: Mapping[str, Any],
    *,
    repo: Path | None = None,
    api: str | None = None,
    base_url: str | None = None,
    timeout: float = API_TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """The `data` of `document`'s answer: from the registry at `api` when given (whole within `timeout` seconds),
    else from the local one (`--repo`, or the default), whose links are under `base_url` (default: where `serve`
    would listen).

    Raises:
        kernelindex.registry.RegistryError: the answer has errors (the first one's message), or (`Unreachable`)
            the served registry could not be asked, or answered what is not a GraphQL response to the document;
            as `kernelindex.registry.snapshots.Snapshots.load` for a local registry.
    """
    answer = _remote(api, document, variables, timeout) if api else _local(repo, document, variables, base_url)
    errors = answer.get("errors") or []
    if errors:
        first: dict[str, Any] = errors[0] if isinstance(errors[0], dict) else {"message": str(errors[0])}
        extensions = first.get("extensions")
        code = extensions.get("code") if isinstance(extensions, dict) else None
        code = code if isinstance(code, str) else None
        raise registry.RegistryError(f"{first.get('message')}{f' ({code})' if code else ''}")
    data = answer.get("data")
    if not isinstance(data, dict):  # a served registry's answer has been checked (`kernelindex.cli.remote`)
        raise registry.RegistryError("the query service's answer has no data")
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


def _remote(api: str, document: Document, variables: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    # Here, not with the module: every command imports this one, and `serve` never asks a remote registry
    # (urllib.request brings http.client, ssl and email along).
    from kernelindex.cli.remote import answer

    return answer(api, document.text, document.operation, variables, timeout)
