"""Settings read from the environment once; the only module that reads `os.environ`."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EMBEDDED_REPO", "Settings", "parse_git_date"]

EMBEDDED_REPO = Path(__file__).resolve().parent.parent / "manifests.git"
"""The registry committed with the project (real data), served when nothing else is named."""

_GIT_DATE = re.compile(r"@?(\d+)(?:\s+([+-])(\d\d)(\d\d))?")


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


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the CLI and the server take from their environment."""

    repo_path: Path = EMBEDDED_REPO
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
    listen_fd: int | None = None  # a listening socket handed over by the process this one replaces (api/handover.py)
    handover_from: int | None = None  # that process, told to drain once this one is warm
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

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

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        repo = env.get("KERNELINDEX_REPO")
        here = cwd or Path.cwd()
        local = here / "manifests.git"
        if repo:
            repo_path = Path(repo)
        elif local.exists():
            repo_path = local
        elif (here / ".git").exists() or (here / "HEAD").is_file():
            repo_path = here  # inside a clone of a manifests repository (or a bare one)
        else:
            repo_path = EMBEDDED_REPO
        return cls(
            repo_path=repo_path,
            host=env.get("KERNELINDEX_HOST", "127.0.0.1"),
            port=int(env.get("KERNELINDEX_PORT", "8000")),
            workers=int(env.get("KERNELINDEX_WORKERS", "1")),
            base_url=env.get("KERNELINDEX_BASE_URL") or None,
            poll_seconds=float(env.get("KERNELINDEX_POLL_SECONDS", "2")),
            graph_cache=env.get("KERNELINDEX_GRAPH_CACHE", "1") != "0",
            author_date=parse_git_date(env["GIT_AUTHOR_DATE"]) if env.get("GIT_AUTHOR_DATE") else None,
            committer_date=parse_git_date(env["GIT_COMMITTER_DATE"]) if env.get("GIT_COMMITTER_DATE") else None,
            debug=env.get("KERNELINDEX_DEBUG", "") not in ("", "0"),
            hook_secret=env.get("KERNELINDEX_HOOK_SECRET") or None,
            trust_root=Path(env["KERNELINDEX_TRUST_ROOT"]) if env.get("KERNELINDEX_TRUST_ROOT") else None,
            mirror_url=env.get("KERNELINDEX_MIRROR_URL") or None,
            listen_fd=int(env["KERNELINDEX_LISTEN_FD"]) if env.get("KERNELINDEX_LISTEN_FD") else None,
            handover_from=int(env["KERNELINDEX_HANDOVER_FROM"]) if env.get("KERNELINDEX_HANDOVER_FROM") else None,
            environ=env,
        )
