"""Every error code a client can meet, with what it means: the one list (`extensions.code` of an error).

An answer's errors take the shape `{"errors": [{"message", "extensions": {"code"}}]}` wherever they come
from: GraphQL execution, a refusal before GraphQL ran, a page's JSON twin, a permalink. The registry's own
expected errors reaching a GraphQL field also carry their class name in SCREAMING_SNAKE_CASE
(`REVISION_NOT_FOUND`, `AMBIGUOUS_NAME`, `STORE_CORRUPT`...; `kernelindex.core.errors.code_of_class`), so that set grows
with the registry's errors; the codes the edges spell themselves are all here.
"""

from __future__ import annotations

__all__ = [
    "AMBIGUOUS_NAME",
    "BAD_DIGEST",
    "BAD_REQUEST",
    "BAD_USER_INPUT",
    "BATCH_TOO_LARGE",
    "CODES",
    "COMMIT_NOT_YET_AVAILABLE",
    "CURSOR_ERROR",
    "HEADERS_TOO_LARGE",
    "HOOK_DISABLED",
    "HOST_NOT_ALLOWED",
    "INTERNAL",
    "MANIFEST_NOT_FOUND",
    "NOT_ACCEPTABLE",
    "NOT_FOUND",
    "NOT_READY",
    "NO_BASE_URL",
    "OPERATION_RESOLUTION_FAILURE",
    "ORIGIN_NOT_ALLOWED",
    "PAGE_SIZE_ERROR",
    "PARSE_FAILED",
    "PERSISTED_QUERY_NOT_ALLOWED",
    "PERSISTED_QUERY_NOT_FOUND",
    "PERSISTED_QUERY_NOT_SUPPORTED",
    "PREVIEW_REJECTED",
    "QUERY_TOO_LARGE",
    "REVISION_NOT_FOUND",
    "SEARCH_TOO_LARGE",
    "STORE_CORRUPT",
    "THROTTLED",
    "TOO_MANY_TOKENS",
    "TOO_MANY_VALIDATION_ERRORS",
    "UNAUTHORIZED",
    "UNSUPPORTED_MEDIA_TYPE",
    "VALIDATION_FAILED",
]

# GraphQL request and execution errors.
PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
TOO_MANY_TOKENS = "TOO_MANY_TOKENS"
VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
TOO_MANY_VALIDATION_ERRORS = "TOO_MANY_VALIDATION_ERRORS"
BAD_USER_INPUT = "BAD_USER_INPUT"
OPERATION_RESOLUTION_FAILURE = "OPERATION_RESOLUTION_FAILURE"
INTERNAL = "INTERNAL_SERVER_ERROR"
# The registry's errors the edges name themselves (the rest arrive by class name).
REVISION_NOT_FOUND = "REVISION_NOT_FOUND"
MANIFEST_NOT_FOUND = "MANIFEST_NOT_FOUND"
PREVIEW_REJECTED = "PREVIEW_REJECTED"
AMBIGUOUS_NAME = "AMBIGUOUS_NAME"
PAGE_SIZE_ERROR = "PAGE_SIZE_ERROR"
CURSOR_ERROR = "CURSOR_ERROR"
STORE_CORRUPT = "STORE_CORRUPT"
COMMIT_NOT_YET_AVAILABLE = "COMMIT_NOT_YET_AVAILABLE"
# Refusals before GraphQL runs, and the other routes'.
BAD_REQUEST = "BAD_REQUEST"
BAD_DIGEST = "BAD_DIGEST"
BATCH_TOO_LARGE = "BATCH_TOO_LARGE"
QUERY_TOO_LARGE = "QUERY_TOO_LARGE"
HEADERS_TOO_LARGE = "HEADERS_TOO_LARGE"
NOT_ACCEPTABLE = "NOT_ACCEPTABLE"
UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
PERSISTED_QUERY_NOT_ALLOWED = "PERSISTED_QUERY_NOT_ALLOWED"
PERSISTED_QUERY_NOT_SUPPORTED = "PERSISTED_QUERY_NOT_SUPPORTED"
NOT_FOUND = "NOT_FOUND"
NOT_READY = "NOT_READY"
NO_BASE_URL = "NO_BASE_URL"
UNAUTHORIZED = "UNAUTHORIZED"
ORIGIN_NOT_ALLOWED = "ORIGIN_NOT_ALLOWED"
HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED"
HOOK_DISABLED = "HOOK_DISABLED"
THROTTLED = "THROTTLED"
SEARCH_TOO_LARGE = "SEARCH_TOO_LARGE"  # kernelindex.registry.SearchTooLarge, by its class name; the pages name it too

CODES = {
    PARSE_FAILED: "the document is not GraphQL (a syntax error)",
    TOO_MANY_TOKENS: "the document has more tokens than the limit (comments count)",
    VALIDATION_FAILED: "the document does not validate against the schema",
    TOO_MANY_VALIDATION_ERRORS: "more than 100 validation errors: validation stopped",
    "QUERY_TOO_DEEP": "a field nested deeper than the depth limit",
    "TOO_MANY_ALIASES": "more aliases than the limit",
    "QUERY_TOO_COMPLEX": "the estimated cost is over the limit (extensions.cost says both)",
    BAD_USER_INPUT: "a variable or argument value that does not fit its type",
    OPERATION_RESOLUTION_FAILURE: "no operation to run: an unknown operationName, or a document without one",
    INTERNAL: "a fault of the server, masked as 'Unexpected error.' and logged",
    REVISION_NOT_FOUND: "no such commit, branch or tag; or (a permalink) a commit main's history does not hold",
    MANIFEST_NOT_FOUND: "no manifest (or run) with that digest at that commit",
    PREVIEW_REJECTED: "a commit off main that fails the pull-request check",
    AMBIGUOUS_NAME: "a name or prefix that more than one manifest has",
    PAGE_SIZE_ERROR: "a page size outside 0 to 100",
    CURSOR_ERROR: "a cursor this list did not give",
    STORE_CORRUPT: "stored bytes that are not what their id says: the server cannot answer this (503)",
    COMMIT_NOT_YET_AVAILABLE: "a minimum commit not served yet: retry (503 with Retry-After)",
    "COMMIT_NOT_ON_MAIN": "a minimum commit that main's history does not hold",
    "NOT_A_CITATION": "verifyCitation of a text that names no manifest digest, several, or no commit beside it",
    "BAD_MIN_COMMIT": "a minimum commit that is not a full commit id",
    BAD_REQUEST: "a request GraphQL-over-HTTP cannot read (its body, its parameters, a batch item)",
    BAD_DIGEST: "a path digest that is not sha256:<64 lowercase hex digits>",
    BATCH_TOO_LARGE: "a batch of more operations than the limit",
    QUERY_TOO_LARGE: "a request body or query over its byte limit (413)",
    HEADERS_TOO_LARGE: "request headers over their total byte limit, names and values summed (431)",
    NOT_ACCEPTABLE: "an Accept header naming no media type the endpoint answers in (406)",
    UNSUPPORTED_MEDIA_TYPE: "a POST body of a type other than JSON or GraphQL (415)",
    PERSISTED_QUERY_NOT_FOUND: "a persisted query's hash this server does not know yet: send the document",
    PERSISTED_QUERY_NOT_ALLOWED: "a document that is not on the server's allow-list (403)",
    PERSISTED_QUERY_NOT_SUPPORTED: "a persisted query protocol version other than 1",
    NOT_FOUND: "nothing at this URL (a page's subject, a sitemap, a GraphiQL asset)",
    THROTTLED: "the client's budget of cost points cannot pay for this request: nothing ran (429 with Retry-After)",
    NOT_READY: "the registry is loading, or has no valid head to serve (503)",
    NO_BASE_URL: "a sitemap without a configured base URL",
    UNAUTHORIZED: "the refresh hook without its secret (401)",
    ORIGIN_NOT_ALLOWED: "/mcp from a browser page of an origin not on its allow-list (403)",
    HOST_NOT_ALLOWED: "/mcp under a Host name the server is not configured for (403)",
    HOOK_DISABLED: "the refresh hook of a server listening beyond loopback without KERNELINDEX_HOOK_SECRET (403)",
    SEARCH_TOO_LARGE: "a search query over 512 characters or 32 terms",
}
"""Each code and when it is given (the registry's own errors add theirs, named after their class)."""
