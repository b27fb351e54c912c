"""Settings read from the environment once; the only module that reads `os.environ`."""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelindex.core.budgets import DEFAULT_CAPACITY, DEFAULT_RATE
from kernelindex.core.clients import TrustedProxies
from kernelindex.registry.embedded import EMBEDDED_REPO, PACKAGED_REPO

__all__ = [
    "EMBEDDED_REPO",
    "PACKAGED_REPO",
    "PLAIN_VARIABLE",
    "REPO_ORIGINS",
    "Settings",
    "is_loopback",
    "parse_git_date",
    "plain_mode",
]

REPO_ORIGINS = ("--repo", "KERNELINDEX_REPO", "./manifests.git", "the working directory", "embedded")

_GIT_DATE = re.compile(r"@?(\d+)(?:\s+([+-])(\d\d)(\d\d))?")


PLAIN_VARIABLE = "KERNELINDEX_PLAIN"


def plain_mode() -> bool:
    """Whether this process runs plain: strawberry's own executor, on Starlette and uvicorn as they come, with none
    of the shortcuts that lean on those libraries' internals (the compiled executor, the direct path past
    strawberry's pipeline, the fast lane, the HTTP protocol that holds a head for its body). `KERNELINDEX_PLAIN=1`,
    or `kernelindex serve --plain`. The answers are the same; plain mode is how to tell a library upgrade's fault
    from a shortcut's. It is a property of the process and of those it starts: each part reads it when it is made
    (the schema when it is imported, the application and the protocol when they are created)."""
    return os.environ.get(PLAIN_VARIABLE, "") not in ("", "0")


def parse_git_date(text: str) -> tuple[int, int] | None:
    """`"1700000000 +0100"` (git's internal format, as in GIT_AUTHOR_DATE) -> (seconds, offset minutes)."""
    match = _GIT_DATE.fullmatch(text.strip())
    if not match:
        return None
    offset = 0
    if match.group(2):
        offset = int(match.group(3)) * 60 + int(match.group(4))
        offset = -offset if match.group(2) == "-" else offset
    return int(match.group(1)), offset


def _integer(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ValueError(f"{name}={text!r}: expected a whole number from {low} to {high:,}")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}={text!r}: expected a positive number of seconds")
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the CLI and the server take from their environment."""

    repo_path: Path = EMBEDDED_REPO
    repo_origin: str = "embedded"  # how repo_path was found: one of REPO_ORIGINS (the CLI sets "--repo")
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    base_url: str | None = None
    poll_seconds: float = 2.0
    graph_cache: bool = True
    author_date: tuple[int, int] | None = None
    committer_date: tuple[int, int] | None = None
    debug: bool = False
    hook_secret: str | None = None
    trust_root: Path | None = None
    mirror_url: str | None = None  # serve a mirror of this canonical repository (registry/mirror.py)
    mirror_pull_requests: bool = False  # the mirror also fetches refs/pull/*/head, for previews of forks' PRs
    listen_fd: int | None = (
        None  # a listening socket handed over by the process this one replaces (api/serving/handover.py)
    )
    handover_from: int | None = None  # that process, told to drain once this one is warm
    watch: bool = True
    min_commit_wait: float = 2.0
    cors_origins: tuple[str, ...] = ("*",)
    trusted_documents_path: Path | None = None
    cache_dir: Path | None = None  # where each registry's cache folder is made (None: the user's cache folder)
    export_cache: Path | None = None  # where exports are kept (None: `exports/` in the registry's cache folder)
    export_cache_bytes: int = 1024 * 1024 * 1024
    prepare_search: bool = True  # build a new head's search index and facets in the background
    mcp_origins: tuple[str, ...] = ()  # browser origins /mcp answers besides the base URL's ("*": any)
    allowed_hosts: tuple[str, ...] = ()  # Host names /mcp answers besides the base URL's and loopback's
    # How long a connection may take to send a request's headers, from when it waits for one (api/serving/wire.py).
    header_timeout: float = 10.0
    max_header_bytes: int = 32 * 1024  # a request's header names and values, summed: one byte more is a 431
    # Peers whose forwarded header names the client (CIDRs), and that header (kernelindex.core.clients).
    trusted_proxies: tuple[str, ...] = ()
    proxy_header: str = "x-forwarded-for"
    # Each client's budget of cost points (kernelindex.core.budgets): its size (0: no budgets) and refill a second.
    budget: int = DEFAULT_CAPACITY
    budget_rate: float = DEFAULT_RATE
    # The budgets table the workers of `serve --workers N` share (kernelindex.core.shared_budgets); None: in memory.
    budget_file: Path | None = None
    tokens_path: Path | None = None  # hashed tokens with their budgets (kernelindex.core.tokens), read when it changes
    access_log: bool = False  # one JSON line a request on stderr (kernelindex.http.observing)
    # Where the workers of `serve --workers N` keep their metrics (prometheus_client's multiprocess mode): the folder
    # `PROMETHEUS_MULTIPROC_DIR` names, which prometheus_client reads itself.
    metrics_dir: Path | None = None

    def trust_root_policy(self) -> bytes | None:
        """The bytes of the pinned trust root (an allowed-signers file), if one is configured.

        Raises:
            ValueError: the file cannot be read.
        """
        if self.trust_root is None:
            return None
        try:
            return self.trust_root.read_bytes()
        except OSError as exc:
            raise ValueError(f"KERNELINDEX_TRUST_ROOT: cannot read {self.trust_root}: {exc.strerror}") from None

    def proxies(self) -> TrustedProxies:
        """The trusted proxies, parsed (`from_env` has checked them).

        Raises:
            ValueError: a CIDR that is not one, or a header that is neither `X-Forwarded-For` nor `Forwarded`.
        """
        return TrustedProxies.parse(self.trusted_proxies, self.proxy_header)

    def trusted_documents(self) -> dict[str, str] | None:
        """The allow-list of documents (sha256 -> text) when one is configured: then only they run.

        Raises:
            ValueError: the file cannot be read, or is not a list of documents with their hashes.
        """
        if self.trusted_documents_path is None:
            return None
        from kernelindex.core.graphql_http import load_trusted_documents  # settings stay importable on their own

        return load_trusted_documents(self.trusted_documents_path)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        """The settings of this environment (`KERNELINDEX_*`, `GIT_*_DATE`).

        Raises:
            ValueError: a number that is not one (a port, a worker count, poll seconds), naming the variable.
        """
        env = dict(os.environ if environ is None else environ)
        repo = env.get("KERNELINDEX_REPO")
        here = cwd or Path.cwd()
        local = here / "manifests.git"
        # The registry, first found: the environment's, ./manifests.git, the working directory when it is a
        # clone of a manifests repository (or a bare one), else the embedded one (`--repo` overrides all).
        if repo:
            repo_path, origin = Path(repo), "KERNELINDEX_REPO"
        elif local.exists():
            repo_path, origin = local, "./manifests.git"
        elif (here / ".git").exists() or (here / "HEAD").is_file():
            repo_path, origin = here, "the working directory"
        else:
            repo_path, origin = EMBEDDED_REPO, "embedded"
        return cls(
            repo_path=repo_path,
            repo_origin=origin,
            host=env.get("KERNELINDEX_HOST") or "127.0.0.1",
            port=_integer(env, "KERNELINDEX_PORT", 8000, 0, 65535),
            workers=_integer(env, "KERNELINDEX_WORKERS", 1, 1, 1024),
            base_url=env.get("KERNELINDEX_BASE_URL") or None,
            poll_seconds=_seconds(env, "KERNELINDEX_POLL_SECONDS", 2.0),
            graph_cache=env.get("KERNELINDEX_GRAPH_CACHE", "1") != "0",
            author_date=parse_git_date(env["GIT_AUTHOR_DATE"]) if env.get("GIT_AUTHOR_DATE") else None,
            committer_date=parse_git_date(env["GIT_COMMITTER_DATE"]) if env.get("GIT_COMMITTER_DATE") else None,
            debug=env.get("KERNELINDEX_DEBUG", "") not in ("", "0"),
            hook_secret=env.get("KERNELINDEX_HOOK_SECRET") or None,
            trust_root=Path(env["KERNELINDEX_TRUST_ROOT"]) if env.get("KERNELINDEX_TRUST_ROOT") else None,
            mirror_url=env.get("KERNELINDEX_MIRROR_URL") or None,
            mirror_pull_requests=env.get("KERNELINDEX_MIRROR_PULL_REQUESTS", "0") not in ("", "0"),
            # set by a server for the successor it starts (api/serving/handover.py), never by hand
            listen_fd=_integer(env, "KERNELINDEX_LISTEN_FD", -1, 0, 2**31 - 1)
            if env.get("KERNELINDEX_LISTEN_FD")
            else None,
            handover_from=(
                _integer(env, "KERNELINDEX_HANDOVER_FROM", -1, 1, 2**31 - 1)
                if env.get("KERNELINDEX_HANDOVER_FROM")
                else None
            ),
            watch=env.get("KERNELINDEX_WATCH", "1") != "0",
            min_commit_wait=float(env.get("KERNELINDEX_MIN_COMMIT_WAIT", "2")),
            cors_origins=tuple(o.strip() for o in env.get("KERNELINDEX_CORS_ORIGINS", "*").split(",") if o.strip()),
            trusted_documents_path=(
                Path(env["KERNELINDEX_TRUSTED_DOCUMENTS"]) if env.get("KERNELINDEX_TRUSTED_DOCUMENTS") else None
            ),
            cache_dir=_folder(env, "KERNELINDEX_CACHE_DIR"),
            export_cache=Path(env["KERNELINDEX_EXPORT_CACHE"]) if env.get("KERNELINDEX_EXPORT_CACHE") else None,
            export_cache_bytes=_integer(env, "KERNELINDEX_EXPORT_CACHE_BYTES", 1024**3, 1, 2**50),
            prepare_search=env.get("KERNELINDEX_PREPARE_SEARCH", "1") != "0",
            mcp_origins=_listed(env, "KERNELINDEX_MCP_ORIGINS"),
            allowed_hosts=_listed(env, "KERNELINDEX_ALLOWED_HOSTS"),
            header_timeout=_seconds(env, "KERNELINDEX_HEADER_TIMEOUT", 10.0),
            max_header_bytes=_integer(env, "KERNELINDEX_MAX_HEADER_BYTES", 32 * 1024, 1024, 2**30),
            trusted_proxies=_proxies(env),
            proxy_header=env.get("KERNELINDEX_PROXY_HEADER", "").strip().lower() or "x-forwarded-for",
            budget=_integer(env, "KERNELINDEX_BUDGET", DEFAULT_CAPACITY, 0, 2**53),
            budget_rate=_seconds(env, "KERNELINDEX_BUDGET_RATE", DEFAULT_RATE),
            budget_file=Path(env["KERNELINDEX_BUDGET_FILE"]) if env.get("KERNELINDEX_BUDGET_FILE") else None,
            tokens_path=Path(env["KERNELINDEX_TOKENS"]) if env.get("KERNELINDEX_TOKENS") else None,
            access_log=env.get("KERNELINDEX_ACCESS_LOG", "") not in ("", "0"),
            metrics_dir=Path(env["PROMETHEUS_MULTIPROC_DIR"]) if env.get("PROMETHEUS_MULTIPROC_DIR") else None,
        )

    @property
    def loopback_only(self) -> bool:
        """Whether the server listens on a loopback address only (`127.0.0.1`, `::1`, `localhost`)."""
        return is_loopback(self.host)


def _folder(env: Mapping[str, str], name: str) -> Path | None:
    """A folder named by an environment variable (None when unset or empty): one that may not exist yet, but never
    a path that is something else."""
    text = env.get(name, "")
    if not text.strip():
        return None
    folder = Path(text)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name}={text!r}: expected a folder, and this path is something else")
    return folder


def _proxies(env: Mapping[str, str]) -> tuple[str, ...]:
    """`KERNELINDEX_TRUSTED_PROXIES`, checked with `KERNELINDEX_PROXY_HEADER` (a bad one fails at start, not later)."""
    cidrs = _listed(env, "KERNELINDEX_TRUSTED_PROXIES")
    header = env.get("KERNELINDEX_PROXY_HEADER", "").strip() or "x-forwarded-for"
    try:
        TrustedProxies.parse(cidrs, header)
    except ValueError as exc:
        raise ValueError(f"KERNELINDEX_TRUSTED_PROXIES / KERNELINDEX_PROXY_HEADER: {exc}") from None
    return cidrs


def _listed(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list of an environment variable, without blanks."""
    return tuple(item.strip() for item in env.get(name, "").split(",") if item.strip())


def is_loopback(host: str) -> bool:
    """Whether a host (a name or an address, `[::1]` bracketed or not) is this machine's loopback.

    >>> [is_loopback(h) for h in ("127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "0.0.0.0", "example.org")]
    [True, True, True, True, True, False, False]
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
