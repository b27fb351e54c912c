"""The commands that serve: `serve` (the HTTP API, pages and /mcp) and `mcp` (the MCP tools over stdio)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernelindex import registry
from kernelindex.cli.console import err, guarded
from kernelindex.cli.options import RepoOption, TrustRootOption
from kernelindex.cli.stores import (
    describe_registry,
    open_snapshots,
    open_store,
    read_settings,
    read_trust_root,
    repo_path,
)
from kernelindex.core.settings import PLAIN_VARIABLE, Settings

__all__ = ["CACHE_WARNING", "NO_BASE_URL_WARNING", "OWNS_PROCESS", "mcp", "serve"]

OWNS_PROCESS = False
"""Whether `serve` runs as the command itself (`main`), so that it may replace the process with the serving one
(`kernelindex.serving.process`); called from Python (a test's runner) it serves in place."""

NO_BASE_URL_WARNING = (
    "kernelindex: warning: no base URL is set (KERNELINDEX_BASE_URL or --base-url): links are relative to this "
    "server's root, citations carry no permalink (they say they need one), and no sitemap is published"
)


CACHE_WARNING = (
    "kernelindex: warning: no cache folder {folder} ({reason}): every start builds the graph and checks every manifest "
    "again (--cache-dir or KERNELINDEX_CACHE_DIR names a folder this user can write)"
)


@guarded
def serve(
    repo: RepoOption = None,
    host: Annotated[str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=0, max=65535, help="Port (default 8000).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (default 1).")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="Public URL of links and citations, e.g. https://registry.example (default: none; warned)."),
    ] = None,
    poll: Annotated[float | None, typer.Option(help="Seconds between checks of main (default 2).")] = None,
    trust_root: TrustRootOption = None,
    mirror: Annotated[
        str | None,
        typer.Option(help="Serve a replica of this canonical repository (cloned to --repo, kept fresh by git fetch)."),
    ] = None,
    pid_file: Annotated[
        Path | None, typer.Option(help="Write the serving process's id here (SIGHUP it for a zero-downtime restart).")
    ] = None,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help="Run plain strawberry on plain Starlette and uvicorn: none of the shortcuts through their internals "
            "(the same answers, slower; default $KERNELINDEX_PLAIN). For telling a library upgrade's fault from ours.",
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            file_okay=False,
            help="Keep each registry's caches (warm start, integrity record, exports) in a folder of its own under "
            "this one (default $KERNELINDEX_CACHE_DIR, else the user's cache folder, ~/.cache/kernelindex on Linux). "
            "Nothing is written beside the repository; caches older versions left there are ignored.",
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            help="A reverse proxy (address or CIDR, repeatable) whose --proxy-header names the client its budget is "
            "kept for (default $KERNELINDEX_TRUSTED_PROXIES, comma-separated; none: each peer address is a client).",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Each client's budget of cost points: the most it may spend at once (default 500000, "
            "$KERNELINDEX_BUDGET; 0: no budgets). A GraphQL query costs its estimated cost, a cached answer 1, "
            "a page 5.",
        ),
    ] = None,
    budget_rate: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Cost points a client's budget regains each second (default 10000, $KERNELINDEX_BUDGET_RATE).",
        ),
    ] = None,
    tokens: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="A JSON file of issued tokens' SHA-256 with their budgets, read again when it changes "
            "(default $KERNELINDEX_TOKENS): `Authorization: Bearer` spends from the token's budget.",
        ),
    ] = None,
    access_log: Annotated[
        bool,
        typer.Option(
            "--access-log",
            help="Write one JSON line a request to stderr: time, client key, route family, method, status, cost, "
            "cache, duration, commit; never a path, header or token (default off, $KERNELINDEX_ACCESS_LOG=1).",
        ),
    ] = False,
    proxy_header: Annotated[
        str | None,
        typer.Option(
            help="Where the trusted proxies report their client: x-forwarded-for (the default) or forwarded "
            "(RFC 7239); the other header is never read.",
        ),
    ] = None,
) -> None:
    """Serve the registry over HTTP: GraphQL at /graphql (GraphiQL in a browser), permalinks, /healthz."""
    import contextlib
    import os

    from uvicorn.supervisors import Multiprocess

    from kernelindex.registry.cache_dir import cache_dir as folder_of
    from kernelindex.registry.cache_dir import make_folder

    settings = read_settings()
    path = repo_path(repo).resolve()
    mirror_url = mirror or settings.mirror_url
    if mirror_url:
        from kernelindex.registry.mirror import Mirror

        # The first start of a replica clones (docs/deploy.md), pull requests' heads too when configured: a preview
        # of a fork's pull request must not wait for the first poll.
        if Mirror(mirror_url, path, pull_requests=settings.mirror_pull_requests).ensure():
            err(f"kernelindex: cloned {mirror_url} into {path}")
    registry.GitStore(path)  # fail here, with a clear line, rather than in every worker
    served = f"{mirror_url} (a replica, in {path})" if mirror_url else describe_registry(repo)
    chosen = {
        "KERNELINDEX_REPO": str(path),
        "KERNELINDEX_HOST": host or settings.host,
        "KERNELINDEX_PORT": str(settings.port if port is None else port),
        "KERNELINDEX_WORKERS": str(workers or settings.workers),
        "KERNELINDEX_POLL_SECONDS": str(settings.poll_seconds if poll is None else poll),
    }
    if base_url or settings.base_url:
        chosen["KERNELINDEX_BASE_URL"] = base_url or settings.base_url or ""
    if trust_root is not None or settings.trust_root is not None:
        root = (trust_root or settings.trust_root or Path()).resolve()
        registry.TrustChain.check_root(read_trust_root(root))  # a bad root fails here, with a clear line
        chosen["KERNELINDEX_TRUST_ROOT"] = str(root)
    if mirror_url:
        chosen["KERNELINDEX_MIRROR_URL"] = mirror_url
    if plain:
        # The mode is the process's and its children's (the schema picks its executor when it is imported): the
        # one variable this command writes into its own environment, for the workers it starts.
        chosen[PLAIN_VARIABLE] = os.environ[PLAIN_VARIABLE] = "1"
    if trusted_proxy or settings.trusted_proxies:
        chosen["KERNELINDEX_TRUSTED_PROXIES"] = ",".join(trusted_proxy or settings.trusted_proxies)
    if proxy_header or settings.proxy_header != "x-forwarded-for":
        chosen["KERNELINDEX_PROXY_HEADER"] = proxy_header or settings.proxy_header
    if tokens is not None or settings.tokens_path is not None:
        chosen["KERNELINDEX_TOKENS"] = str((tokens or settings.tokens_path or Path()).resolve())
    if access_log or settings.access_log:
        chosen["KERNELINDEX_ACCESS_LOG"] = "1"
    if budget is not None:
        chosen["KERNELINDEX_BUDGET"] = str(budget)
    if budget_rate is not None:
        chosen["KERNELINDEX_BUDGET_RATE"] = str(budget_rate)
    if cache_dir is not None or settings.cache_dir is not None:
        chosen["KERNELINDEX_CACHE_DIR"] = str((cache_dir or settings.cache_dir or Path()).resolve())
    # The options are the application's settings, read as the environment would give them. This process's
    # environment is never written: a worker gets the settings with its configuration, a successor with its
    # command (kernelindex.serving.handover).
    final = Settings.from_env({**os.environ, **chosen})
    if not final.base_url:
        err(NO_BASE_URL_WARNING)
    caches = folder_of(path, final.cache_dir)
    try:
        make_folder(caches)
    except OSError as exc:  # served all the same: each start then builds the graph and checks every manifest
        err(CACHE_WARNING.format(folder=caches, reason=exc.strerror or exc))
    from kernelindex.core.urls import Urls
    from kernelindex.serving import process

    listening = Urls(f"http://{final.host}:{final.port}")  # where this process listens, for its first line

    if final.workers > 1:
        import tempfile

        from kernelindex.app import WorkerConfig

        shared = Path(tempfile.mkdtemp(prefix="kernelindex-workers-"))
        if final.metrics_dir is None:
            # The workers' metrics in one folder (prometheus_client's multiprocess mode, which it reads from the
            # environment when imported): written here for the workers this process starts, as --plain is.
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = chosen["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
        if final.budget_file is None:  # one budget a client, whichever worker answers it
            chosen["KERNELINDEX_BUDGET_FILE"] = str(shared / "budgets")
        final = Settings.from_env({**os.environ, **chosen})

        err(f"kernelindex: serving {served} on {listening.graphql()} ({final.workers} worker(s))")
        processes = WorkerConfig(final, **process.options(final))
        with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: the supervisor has stopped its workers
            Multiprocess(processes, sockets=[processes.bind_socket()]).run()
        return

    if final.handover_from is None:
        err(f"kernelindex: serving {served} on {listening.graphql()} (SIGHUP: hand over)")
    pid = pid_file.resolve() if pid_file else None
    if OWNS_PROCESS:
        process.replace_process(chosen, pid)  # the serving process, without the command line's modules
    process.run(final, pid_file=pid, environment=chosen)


@guarded
def mcp(
    repo: RepoOption = None,
    base_url: Annotated[
        str | None, typer.Option(help="Where the registry is served, for permalinks (default $KERNELINDEX_BASE_URL).")
    ] = None,
) -> None:
    """Serve the MCP tools over stdio (for an assistant's MCP configuration); stdout is the protocol."""
    import datetime as dt

    from kernelindex.http.mcp_server import run_stdio

    settings = read_settings()
    snapshots = open_snapshots(open_store(repo).path)
    run_stdio(snapshots, base_url or settings.base_url, lambda: dt.datetime.now(dt.UTC).date())
