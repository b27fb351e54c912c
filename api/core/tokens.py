"""Tokens an operator issues for heavier clients (frontends, mirrors), each with a budget of its own.

The file (`kernelindex serve --tokens FILE`, `KERNELINDEX_TOKENS`) holds no token, only the SHA-256 of each:

    {"tokens": [{"name": "frontend", "sha256": "<64 hex digits>", "budget": 5000000, "rate": 100000}]}

A request with `Authorization: Bearer <token>` whose SHA-256 is listed spends from the budget of `token:<name>`
(`budget` points, refilled at `rate` a second; the server's defaults when left out), whichever address it comes from.
The file is read again when its modification time or size changes, at the next request with a token: a token removed
from it stops at once (401 `UNAUTHORIZED`), without a restart. A file that cannot be read or parsed keeps the tokens
last read (and is logged), so a half-written file never revokes every token.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import orjson

from kernelindex.core.budgets import Policy

__all__ = ["Grant", "Tokens", "token_digest"]

log = logging.getLogger("kernelindex")


@dataclass(frozen=True, slots=True)
class Grant:
    """A token's name (its budget's key is `token:<name>`) and its budget."""

    name: str
    policy: Policy

    @property
    def key(self) -> str:
        return f"token:{self.name}"


def token_digest(token: str) -> str:
    """What the file lists for `token`: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


class Tokens:
    """The tokens of one file, read again when it changes."""

    def __init__(self, path: Path, default: Policy) -> None:
        self.path = path
        self.default = default
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file last read
        self._grants: dict[str, Grant] = {}

    def find(self, token: str) -> Grant | None:
        """The grant of `token`, or None when the file does not list it (never listed, or revoked)."""
        self._refresh()
        digest = token_digest(token)
        for listed, grant in self._grants.items():
            if hmac.compare_digest(listed, digest):
                return grant
        return None

    def _refresh(self) -> None:
        try:
            stat = os.stat(self.path)
        except OSError as exc:
            self._failed(f"cannot read it: {exc.strerror}")
            return
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen == self._seen:
            return
        with self._lock:
            if seen == self._seen:
                return
            try:
                self._grants = _parse(orjson.loads(self.path.read_bytes()), self.default)
            except (OSError, ValueError, TypeError, KeyError) as exc:
                self._failed(str(exc))
            self._seen = seen

    def _failed(self, why: str) -> None:
        log.warning(
            "kernelindex: tokens file %s: %s; keeping the %d token(s) last read", self.path, why, len(self._grants)
        )


def _parse(document: object, default: Policy) -> dict[str, Grant]:
    """`{"tokens": [{"name", "sha256", "budget"?, "rate"?}]}` -> grants by digest.

    Raises:
        ValueError, TypeError, KeyError: not that shape.
    """
    if not isinstance(document, dict) or not isinstance(document.get("tokens"), list):
        raise ValueError('expected {"tokens": [...]}')
    grants: dict[str, Grant] = {}
    for entry in document["tokens"]:
        digest = str(entry["sha256"]).lower()
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"token {entry.get('name')!r}: sha256 must be 64 hex digits")
        budget = int(entry.get("budget", default.capacity))
        rate = float(entry.get("rate", default.rate))
        if budget < 1 or rate <= 0:
            raise ValueError(f"token {entry.get('name')!r}: budget and rate must be positive")
        grants[digest] = Grant(str(entry["name"]), Policy(budget, rate))
    return grants
