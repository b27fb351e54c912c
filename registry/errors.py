"""The registry's errors: one base class, each subclass also a builtin, each carrying its facts."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AmbiguousName",
    "CommitNotOnMain",
    "CommitNotYetAvailable",
    "IncomparableKinds",
    "InvalidCommit",
    "InvalidConstraint",
    "InvalidManifest",
    "ManifestNotFound",
    "MirrorFailed",
    "Problem",
    "RegistryError",
    "RejectedChange",
    "RevisionNotFound",
    "SearchTooLarge",
    "StoreBusy",
    "StoreCorrupt",
    "StoreNotFound",
    "StoreNotOwned",
    "UnknownKind",
    "UnknownMetric",
    "UnsupportedOperator",
    "WrongUnit",
]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with one input: where (file, JSON path) and why.

    `source` names the file (or the git path) the problem is in, `path` is a JSON path
    into its document (`$.spec.timing.latencyNs.mean`), empty when the problem is the
    whole file, and `reason` says what is wrong in words a contributor can act on.
    """

    source: str
    path: str
    reason: str

    def __str__(self) -> str:
        if self.path:
            return f"{self.source}: {self.path}: {self.reason}"
        return f"{self.source}: {self.reason}"


class RegistryError(Exception):
    """Base of every error the registry raises on purpose."""


class _ProblemsError(RegistryError):
    """An error that is a list of located problems, all found in one pass."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("an error needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def source(self) -> str:
        return self.problems[0].source

    @property
    def path(self) -> str:
        return self.problems[0].path

    @property
    def reason(self) -> str:
        return self.problems[0].reason


class InvalidManifest(_ProblemsError, ValueError):
    """A document is not a valid manifest (syntax, schema, refinement or normalization)."""


class RejectedChange(_ProblemsError, ValueError):
    """A set of valid manifests cannot be written together: dangling references,
    operation mismatches, conflicts with what is already published."""


class InvalidCommit(RejectedChange):
    """A commit cannot be written as described: its message, trailers or people hold what a new
    contribution may not (a `Source-URL` that is not an http(s) link, a character XML cannot carry).
    Each problem's `source` is `commit` and its `path` the part (`Source-URL`, `subject`, `author`)."""


class ManifestNotFound(RegistryError, LookupError):
    def __init__(self, name: str, at: str | None = None, hint: str = "") -> None:
        self.name = name
        self.at = at
        where = f" at {at}" if at else ""
        super().__init__(f"manifest not found: {name!r}{where}" + (f" ({hint})" if hint else ""))


class AmbiguousName(RegistryError, LookupError):
    def __init__(self, name: str, candidates: Sequence[str], labels: Sequence[str] | None = None) -> None:
        """`candidates` are the matching digests; `labels`, when given, how the message shows each (with its kind)."""
        self.name = name
        self.candidates = tuple(candidates)
        listed = tuple(labels) if labels is not None else self.candidates
        shown = ", ".join(listed[:5]) + (" ..." if len(listed) > 5 else "")
        super().__init__(f"name {name!r} is ambiguous: {len(self.candidates)} manifests match ({shown}); use a digest")


class UnknownKind(RegistryError, LookupError):
    """A name that is no manifest kind (by name, slug or folder)."""

    def __init__(self, kind: str, known: Sequence[str]) -> None:
        self.kind = kind
        self.known = tuple(known)
        super().__init__(f"unknown kind: {kind!r}; expected one of {', '.join(self.known)}")


class RevisionNotFound(RegistryError, LookupError):
    def __init__(self, rev: str, reason: str = "no such commit, branch or tag") -> None:
        self.rev = rev
        self.reason = reason
        super().__init__(f"revision not found: {rev!r}: {reason}")


class SearchTooLarge(RegistryError, ValueError):
    """A search query longer than its limit, in `unit`s (characters, or terms: words, phrases and
    facets). Refused before any work: a search costs in proportion to its terms."""

    def __init__(self, unit: str, size: int, limit: int) -> None:
        self.unit = unit
        self.size = size
        self.limit = limit
        super().__init__(f"a search query holds at most {limit} {unit} (this one holds {size}); shorten it")


class StoreNotFound(RegistryError, FileNotFoundError):
    def __init__(self, path: str, reason: str = "not a git repository") -> None:
        self.store_path = path
        super().__init__(f"registry not found: {path}: {reason}")


class StoreNotOwned(RegistryError, PermissionError):
    """A repository another user owns: libgit2 and git open it only once it is named a safe directory."""

    def __init__(self, path: str, owner: str, user: str) -> None:
        self.store_path = path
        self.owner = owner
        self.user = user
        super().__init__(
            f"registry not opened: {path}: it belongs to {owner} and this runs as {user}, and git and libgit2 refuse "
            f"a repository another user owns; if you trust it, name it a safe directory: "
            f"git config --global --add safe.directory {shlex.quote(path)}"
        )


class MirrorFailed(RegistryError):
    """A mirror could not fetch from its canonical repository (serve --mirror)."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"mirror of {url} failed: {reason}")


class StoreCorrupt(RegistryError):
    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"registry corrupt: {where}: {reason}")


class StoreBusy(RegistryError):
    """main kept moving under us: compare-and-swap lost more races than we retry."""

    def __init__(self, attempts: int, reason: str | None = None) -> None:
        self.attempts = attempts
        self.reason = reason
        why = reason or f"main moved {attempts} times while writing"
        super().__init__(f"{why}; nothing was written, try again")


class InvalidConstraint(RegistryError, ValueError):
    """A serving constraint or objective that cannot be evaluated: `where` names the input
    (`constraints[0].unit`), `reason` says what is wrong. The subclasses say which rule broke."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"invalid constraint: {where}: {reason}")


class UnknownMetric(InvalidConstraint):
    """The metric is not in serving-v1's vocabulary."""


class WrongUnit(InvalidConstraint):
    """The value is given in a unit other than the metric's."""


class UnsupportedOperator(InvalidConstraint):
    """The operator does not bound the metric on its bad side (`>=` on a latency)."""


class IncomparableKinds(RegistryError, ValueError):
    """Serving runs and kernel runs never compare (serving-v1): they share no cohort, key or score."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = tuple(ids)
        super().__init__(
            f"serving runs never compare with kernel runs: {', '.join(repr(i) for i in self.ids)} "
            "name serving runs; compare those inside their serving cohort (servingCohort(key).resolve)"
        )


class CommitNotYetAvailable(RegistryError, LookupError):
    """A client asked for answers from `commit` or later, and this server does not have it yet
    (not fetched, or main not yet moved there). Retryable: the commit may arrive any moment."""

    def __init__(self, commit: str, waited: float, reason: str) -> None:
        self.commit = commit
        self.waited = waited
        super().__init__(f"commit {commit[:12]} is not served yet ({reason}; waited {waited:.1f} s): retry shortly")


class CommitNotOnMain(RegistryError, ValueError):
    """A minimum commit that is not in main's history: reads are ordered by main's history only."""

    def __init__(self, commit: str, reason: str) -> None:
        self.commit = commit
        super().__init__(f"commit {commit[:12]} is not on main: {reason}; send a commit an answer reported")
