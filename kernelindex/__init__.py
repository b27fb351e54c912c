"""KernelIndex registry: GPU-kernel benchmark results as content-addressed manifests in git, served over GraphQL.

One import package. Its subpackages are the floors of the house, the ground first; a module imports its own
floor and the floors below it, never one above (`tests/test_layers.py` reads this order from the folders):

- `kernelindex.registry` (`registry/`): the domain. Manifests, identity, the git store, the graph, rankings.
  No HTTP, no GraphQL.
- `kernelindex.core` (`api/core/`): what every edge shares: error codes, URLs, settings, the request context,
  byte caches and content codings.
- `kernelindex.engine` (`api/engine/`): how a GraphQL document is executed: limits, costs, the document cache,
  and the compiled executor (the one place that leans on graphql-core's and strawberry's internals).
- `kernelindex.schema` (`api/schema/`): the GraphQL schema and its types.
- `kernelindex.service` (`api/service/`): the query service and the server's state (snapshots, following
  main, feeds and the documents the edges answer).
- `kernelindex.http` (`api/http/`): GraphQL over HTTP, permalinks, publishing, MCP.
- `kernelindex.web` (`web/`): the pages for people, through the query service.
- `kernelindex.app` (`api/app/`): the application, which composes the HTTP edges and the pages.
- `kernelindex.serving` (`api/serving/`): the serving process, its protocol and zero-downtime restarts.
- `kernelindex.cli` (`api/cli/`): the `kernelindex` command.

The repository keeps the folders named above; `kernelindex/` maps each subpackage to its folder by a relative
symbolic link, so the source tree, the type checker and an installed wheel all see the same module names.
"""

from __future__ import annotations

__all__ = ["FLOORS", "__version__"]

FLOORS = ("registry", "core", "engine", "schema", "service", "http", "web", "app", "serving", "cli")
"""The subpackages, the ground first: each imports only its own floor and those before it (tests/test_layers.py)."""


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed distribution when first asked for: `importlib.metadata` (with the
    `email`, `zipfile` and `csv` it imports) is ~3 MB that a server, which never asks, would hold for its life."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("kernelindex-registry")
    except PackageNotFoundError:  # a checkout on sys.path without an install
        found = "0+unknown"
    globals()["__version__"] = found
    return found
