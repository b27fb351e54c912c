"""The JSON Schemas of the manifest kinds, served for editors (`kernelindex new --schema-url` writes a modeline
naming them) and validators: the files the package ships (`kernelindex.registry.schemas`), under their shipped names.

`/schemas/{name}` is the schema this server validates with now, revalidated by its entity tag; it names its
immutable twin in `Content-Location`: `/schemas/{version}/{name}`, where the version is a digest of every
shipped schema (as GraphiQL's assets are versioned), so a new release's schemas get new URLs and an old URL
never changes. The media type is JSON Schema's own, `application/schema+json`.
"""

from __future__ import annotations

import functools
import hashlib

from starlette.requests import Request
from starlette.responses import Response

from kernelindex.core.cache import IMMUTABLE, REVALIDATE, Representation
from kernelindex.core.codes import NOT_FOUND
from kernelindex.core.urls import Urls
from kernelindex.http.responses import error, send

__all__ = ["MEDIA_TYPE", "current", "shipped", "versioned"]

MEDIA_TYPE = "application/schema+json"


@functools.cache
def shipped() -> tuple[str, dict[str, bytes]]:
    """(the version of the shipped schemas, each schema's bytes by its file name), read once."""
    from kernelindex.registry.kinds import KINDS
    from kernelindex.registry.schemas import schema_file_name, schema_text

    files = {schema_file_name(kind): schema_text(kind).encode() for kind in sorted(KINDS)}
    digest = hashlib.sha256()
    for name, body in sorted(files.items()):
        digest.update(name.encode() + b"\0" + body + b"\0")
    return digest.hexdigest()[:16], files


@functools.cache
def _representation(name: str, immutable: bool) -> Representation | None:
    version, files = shipped()
    body = files.get(name)
    if body is None:
        return None
    if immutable:
        return Representation(body, MEDIA_TYPE, {"cache-control": IMMUTABLE})
    twin = Urls().url_path_for("schema_version", version=version, name=name)
    return Representation(body, MEDIA_TYPE, {"cache-control": REVALIDATE, "content-location": twin})


def _unknown(name: str) -> Response:
    return error(404, f"no schema {name!r}: the names are <kind>.v1alpha1.schema.json, e.g. "
                 "benchmark-run.v1alpha1.schema.json (`kernelindex schema --list`)", NOT_FOUND)  # fmt: skip


async def current(request: Request) -> Response:
    """`/schemas/{name}`: a kind's schema as this server has it now."""
    name = request.path_params["name"]
    found = _representation(name, False)
    return _unknown(name) if found is None else send(request, found)


async def versioned(request: Request) -> Response:
    """`/schemas/{version}/{name}`: a kind's schema of one version of the shipped schemas; never changes."""
    name = request.path_params["name"]
    if request.path_params["version"] != shipped()[0]:
        return error(404, "no such version of the schemas (`/schemas/{name}` names the current one)", NOT_FOUND)
    found = _representation(name, True)
    return _unknown(name) if found is None else send(request, found)
