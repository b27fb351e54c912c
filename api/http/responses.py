"""How every HTTP answer of the registry is finished: errors in the one documented shape, with one code list
(`api.codes`)."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from starlette.responses import Response

__all__ = ["JSON", "error", "error_body"]

JSON = "application/json"


def error_body(message: str, code: str) -> bytes:
    """`{"errors": [{"message", "extensions": {"code"}}]}`: the shape of every error the registry answers."""
    return orjson.dumps({"errors": [{"message": message, "extensions": {"code": code}}]})


def error(
    status: int, message: str, code: str, *, headers: Mapping[str, str] | None = None, media_type: str = JSON
) -> Response:
    """An error answer: `status`, the error shape with `message` and `code` (one of `api.codes`)."""
    return Response(error_body(message, code), status_code=status, media_type=media_type, headers=headers)
