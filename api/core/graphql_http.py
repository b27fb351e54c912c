"""GraphQL over HTTP as the GraphQL-over-HTTP draft specifies it: media types, request parsing, status codes,
entity tags; Apollo's automatic persisted queries and the trusted-documents allow-list; batches.

- **Media types.** A client that accepts `application/graphql-response+json` gets it, and a request error
  (the document does not parse or validate, a variable does not coerce, a limit refuses it: nothing ran)
  is 400. A client of `application/json` (or `*/*`, or no `Accept`) gets the legacy type, where every
  well-formed GraphQL response is 200. Neither way does a request error carry `data`. A client that
  accepts neither gets 406.
- **Requests.** GET takes `query`, `operationName`, `variables` and `extensions` (the last two as JSON);
  POST needs `Content-Type: application/json` (an object, or an array of them: a batch) or
  `application/graphql`; a POST without a content type is 415, like any other type.
- **Persisted queries.** `extensions.persistedQuery: {version: 1, sha256Hash}` without a `query` names a
  document the server already knows: its answer, or `PersistedQueryNotFound`, after which Apollo's link
  sends the document with its hash once, and the server keeps it (byte-bounded). With an allow-list
  (`KERNELINDEX_TRUSTED_DOCUMENTS`), only its documents run, by hash or by text. The hash may carry
  graphql-codegen's `sha256:` prefix, and the GraphQL-over-HTTP draft's `documentId: "sha256:<hex>"`
  (a body member, or a GET parameter) names a document the same way.
- **Entity tags.** `If-None-Match` is compared with the weak comparison (RFC 9110 section 13.1.2): `W/`
  prefixes and content-coding suffixes do not matter, `*` matches any answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from kernelindex.core.cache import ByteLRU
from kernelindex.core.codes import (
    BAD_REQUEST,
    BATCH_TOO_LARGE,
    PERSISTED_QUERY_NOT_ALLOWED,
    PERSISTED_QUERY_NOT_FOUND,
    PERSISTED_QUERY_NOT_SUPPORTED,
    UNSUPPORTED_MEDIA_TYPE,
)
from kernelindex.core.compression import CODINGS
from kernelindex.core.footprint import footprint
from kernelindex.core.negotiation import qualities

__all__ = [
    "GRAPHQL_RESPONSE",
    "JSON",
    "MAX_BATCH",
    "Operation",
    "PersistedQueries",
    "Refusal",
    "etag_matches",
    "load_trusted_documents",
    "parse_operations",
    "response_media_type",
]

GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"
MAX_BATCH = 10
"""Operations in one batch; together they share one operation's cost limit."""

PERSISTED_BYTES = 8 * 1024 * 1024
"""What registered persisted documents may hold in all (they are evicted least recently used first)."""

_HASH = re.compile(r"[0-9a-f]{64}")
_DOCUMENT_ID = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused before GraphQL: an HTTP status, a message and a code."""

    status: int
    message: str
    code: str


@dataclass(slots=True)
class Operation:
    """One GraphQL request as the client sent it (`query` is None for a hash-only persisted query)."""

    query: str | None
    variables: dict[str, Any]
    operation_name: str | None
    extensions: dict[str, Any] = field(default_factory=dict)
    document_id: str | None = None  # the GraphQL-over-HTTP draft's `documentId`, as sent

    @property
    def persisted_hash(self) -> str | None:
        """The sha256 (hex, any `sha256:` prefix removed) the request names its document by; "" when the
        name is not a string; None when it names none."""
        if self.document_id is not None:
            return self.document_id.removeprefix("sha256:")
        persisted = self.extensions.get("persistedQuery")
        if not isinstance(persisted, dict):
            return None
        found = persisted.get("sha256Hash")
        return found.removeprefix("sha256:") if isinstance(found, str) else ""


def response_media_type(accept: str | None) -> str | None:
    """The media type to answer in, for an `Accept` value; None when the client accepts neither.

    >>> response_media_type("application/graphql-response+json, application/json;q=0.9")
    'application/graphql-response+json'
    >>> response_media_type("*/*")
    'application/json'
    >>> response_media_type(None)
    'application/json'
    >>> response_media_type("text/html") is None
    True
    """
    if accept is None or not accept.strip():
        return JSON  # the draft's legacy default
    weights = qualities(accept)

    def weight_of(media: str) -> float:
        if media in weights:
            return weights[media]
        return weights.get("application/*", weights.get("*/*", 0.0))

    explicit = weights.get(GRAPHQL_RESPONSE, 0.0)
    legacy = weight_of(JSON)
    if explicit > 0 and explicit >= legacy:
        return GRAPHQL_RESPONSE
    if legacy > 0:
        return JSON  # `*/*` alone means the legacy type (the audit's 47DE)
    return None


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Whether `If-None-Match` names this answer, by the weak comparison.

    >>> etag_matches('W/"abc"', '"abc"'), etag_matches('"x", "abc-gzip"', '"abc"'), etag_matches("*", '"abc"')
    (True, True, True)
    >>> etag_matches('"abc-zstd"', '"abc"'), etag_matches('"abc-zstdx"', '"abc"')
    (True, False)
    >>> etag_matches('"abcd"', '"abc"')
    False
    """
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    opaque = etag.strip('"')
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag.startswith("W/"):
            tag = tag[2:]
        tag = tag.strip('"')
        for coding in CODINGS:
            if tag.endswith(f"-{coding}"):
                tag = tag[: -len(coding) - 1]
        if tag == opaque:
            return True
    return False


def _operation(raw: Any, where: str) -> Operation | Refusal:
    if not isinstance(raw, dict):
        return Refusal(400, f"{where}must be a JSON object with a query", BAD_REQUEST)
    query = raw.get("query")
    variables = raw.get("variables")
    name = raw.get("operationName")
    extensions = raw.get("extensions")
    document_id = raw.get("documentId")
    if document_id is not None and not (isinstance(document_id, str) and _DOCUMENT_ID.fullmatch(document_id)):
        return Refusal(400, f"{where}documentId: expected sha256: and 64 lowercase hex digits", BAD_REQUEST)
    if query is not None and not isinstance(query, str):
        return Refusal(400, f"{where}query must be a string", BAD_REQUEST)
    if variables is not None and not isinstance(variables, dict):
        return Refusal(400, f"{where}variables must be a JSON object", BAD_REQUEST)
    if name is not None and not isinstance(name, str):
        return Refusal(400, f"{where}operationName must be a string", BAD_REQUEST)
    if extensions is not None and not isinstance(extensions, dict):
        return Refusal(400, f"{where}extensions must be a JSON object", BAD_REQUEST)
    operation = Operation(query, variables or {}, name, extensions or {}, document_id)
    if (query is None or not query.strip()) and operation.persisted_hash is None:
        return Refusal(400, f'{where}no query: send {{"query": "..."}}', BAD_REQUEST)
    return operation


def parse_operations(
    method: str, params: Mapping[str, str], content_type: str | None, body: bytes
) -> Operation | list[Operation] | Refusal:
    """The operation (or batch) of a request, or why it is refused."""
    if method in ("GET", "HEAD"):
        raw: dict[str, Any] = {k: params[k] for k in ("query", "operationName", "documentId") if k in params}
        for key in ("variables", "extensions"):
            if params.get(key):
                try:
                    raw[key] = orjson.loads(params[key])
                except orjson.JSONDecodeError:
                    return Refusal(400, f"{key} is not valid JSON", BAD_REQUEST)
        return _operation(raw, "")
    media = (content_type or "").split(";")[0].strip().lower()
    if not media:
        return Refusal(415, "a POST needs a Content-Type: application/json", UNSUPPORTED_MEDIA_TYPE)
    if media == "application/graphql":
        return Operation(body.decode("utf-8", errors="replace"), {}, None)
    if media != JSON:
        return Refusal(415, f"unsupported Content-Type {media!r}: send application/json", UNSUPPORTED_MEDIA_TYPE)
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return Refusal(400, 'the body is not valid JSON (expected {"query": ...})', BAD_REQUEST)
    if isinstance(parsed, list):
        if not parsed:
            return Refusal(400, "an empty batch: send at least one operation", BAD_REQUEST)
        if len(parsed) > MAX_BATCH:
            return Refusal(400, f"a batch of {len(parsed)} operations: at most {MAX_BATCH}", BATCH_TOO_LARGE)
        batch: list[Operation] = []
        for index, item in enumerate(parsed):
            found = _operation(item, f"[{index}]: ")
            if isinstance(found, Refusal):
                return found
            batch.append(found)
        return batch
    return _operation(parsed, "")


def load_trusted_documents(path: Path) -> dict[str, str]:
    """An allow-list: a JSON object of `{sha256 hex: document}` (graphql-codegen's persisted-documents.json),
    or a JSON array of documents; each hash is checked against its document.

    Raises:
        ValueError: unreadable, not that shape, or a hash that is not its document's (says which).
    """
    try:
        raw = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise ValueError(f"trusted documents {path}: cannot read: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"trusted documents {path}: not JSON: {exc}") from None
    if isinstance(raw, list):
        raw = {hashlib.sha256(str(d).encode()).hexdigest(): d for d in raw}
    if not isinstance(raw, dict):
        raise ValueError(f"trusted documents {path}: expected an object of sha256 -> document, or a list")
    documents: dict[str, str] = {}
    for key, document in raw.items():
        if not isinstance(document, str):
            raise ValueError(f"trusted documents {path}: {key!r}: the document is not a string")
        actual = hashlib.sha256(document.encode()).hexdigest()
        name = key.removeprefix("sha256:")
        if name != actual:
            raise ValueError(f"trusted documents {path}: {key!r} is not the sha256 of its document ({actual})")
        documents[actual] = document
    return documents


class PersistedQueries:
    """Documents known by their sha256: registered by clients (APQ), or an operator's allow-list.

    With an allow-list, only its documents run, whichever edge asks (`allows`: the query service asks it for
    every document, so the pages and `/mcp` are held to it too), and the server's own documents (those of
    its pages, permalinks and MCP tools, `trust`) count as listed: they are fixed text, the same in every
    release."""

    def __init__(self, trusted: Mapping[str, str] | None = None) -> None:
        self.trusted = dict(trusted) if trusted is not None else None
        self._texts = frozenset(self.trusted.values()) if self.trusted is not None else frozenset()
        # Weighed as held: a text of 4-byte characters holds four times its length.
        self._registered: ByteLRU[str, str] = ByteLRU(PERSISTED_BYTES, footprint, bookkeeping=True)

    def trust(self, documents: Iterable[str]) -> None:
        """Count the server's own `documents` as listed (when there is an allow-list)."""
        if self.trusted is None:
            return
        for document in documents:
            self.trusted[hashlib.sha256(document.encode()).hexdigest()] = document
        self._texts = frozenset(self.trusted.values())

    def allows(self, document: str) -> bool:
        """Whether `document` may run: anything without an allow-list, else only a listed one."""
        return self.trusted is None or document in self._texts

    def resolve(self, operation: Operation) -> str | Refusal:
        """The document to run; a refusal with a GraphQL error code when there is none.

        Status 200 for the codes Apollo's link retries on: it reads them from the errors either way.
        """
        digest = operation.persisted_hash
        query = operation.query
        if digest is not None and operation.document_id is None:
            version = operation.extensions["persistedQuery"].get("version")
            if version != 1:
                return Refusal(400, "persistedQuery: only version 1 is supported", PERSISTED_QUERY_NOT_SUPPORTED)
            if not _HASH.fullmatch(digest):
                return Refusal(
                    400,
                    "persistedQuery.sha256Hash: expected 64 lowercase hex digits (with or without sha256:)",
                    BAD_REQUEST,
                )
        if query is None or not query.strip():
            assert digest is not None, "parse_operations refuses a request with neither"
            found = self.trusted.get(digest) if self.trusted is not None else self._registered.get(digest)
            if found is None:
                if self.trusted is not None:
                    return Refusal(403, f"no trusted document has sha256 {digest}", PERSISTED_QUERY_NOT_ALLOWED)
                return Refusal(200, "PersistedQueryNotFound", PERSISTED_QUERY_NOT_FOUND)
            return found
        actual = hashlib.sha256(query.encode()).hexdigest()
        if digest is not None and digest != actual:
            return Refusal(400, f"persistedQuery.sha256Hash is not the document's ({actual})", BAD_REQUEST)
        if self.trusted is not None:
            if actual not in self.trusted:
                return Refusal(
                    403,
                    f"only trusted documents run here; this one (sha256 {actual}) is not",
                    PERSISTED_QUERY_NOT_ALLOWED,
                )
            return query
        if digest is not None:
            self._registered.put(digest, query)
        return query
