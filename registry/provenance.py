"""Provenance from commits: who and when, the message's trailers, and how a commit message is written.

>>> message = format_message("Add a run", "", [("Source", "community"), ("Signed-off-by", "A <a@x>")])
>>> print(message, end="")
Add a run
<BLANKLINE>
Source: community
Signed-off-by: A <a@x>
>>> parse_trailers(message)
(('Source', 'community'), ('Signed-off-by', 'A <a@x>'))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

from kernelindex.registry.errors import InvalidCommit, Problem

__all__ = [
    "LINK_TRAILERS",
    "CommitInfo",
    "CommitMeta",
    "Person",
    "SignatureCheck",
    "commit_problems",
    "format_message",
    "identity_problem",
    "parse_trailers",
    "trailer_pairs",
    "utc_instant",
]

LINK_TRAILERS = ("Source-URL",)
"""Trailers the pages show as links: a new commit's must be http(s) links (`kernelindex.registry.kinds.content`)."""

_TRAILER = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*): (.*)")
_TRAILER_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


@dataclass(frozen=True, slots=True)
class Person:
    """A git identity at a moment: `time` is seconds since the epoch, `offset` minutes east of UTC."""

    name: str
    email: str
    time: int
    offset: int = 0

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.time, timezone(timedelta(minutes=self.offset)))

    @property
    def when_utc(self) -> str:
        """ISO 8601 in UTC with a `Z`, as manifests write instants."""
        return utc_instant(self.time)


@functools.lru_cache(maxsize=8192)
def utc_instant(seconds: int) -> str:
    """`2026-08-24T00:00:00Z` for a time in seconds since the epoch (remembered: a registry's runs share few
    commit times, and an answer writes several of them)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """The outcome of checking a commit's SSH signature against `policy/maintainers`."""

    signed: bool
    verified: bool
    signer: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CommitMeta:
    """What a writer says about a new commit: the people, and the message with its trailers."""

    author: Person
    committer: Person
    subject: str
    body: str = ""
    trailers: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        """A new commit is a new contribution: refused here, before anything is written.

        Raises:
            InvalidCommit: a `Source-URL` that is not an http(s) link, or a character XML cannot carry.
        """
        problems = commit_problems(
            "commit",
            [("subject", self.subject), ("body", self.body)],
            self.trailers,
            {"author": self.author, "committer": self.committer},
        )
        if problems:
            raise InvalidCommit(problems)

    @property
    def message(self) -> str:
        return format_message(self.subject, self.body, self.trailers)


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """A commit as the registry reports it."""

    id: str
    parents: tuple[str, ...]
    author: Person
    committer: Person
    message: str
    trailers: tuple[tuple[str, str], ...] = field(default=())
    signature: bytes | None = None
    signed_payload: bytes | None = None

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    def trailer(self, key: str) -> str | None:
        """The first value of a trailer, keys compared case-insensitively as git does."""
        return next((value for k, value in self.trailers if k.lower() == key.lower()), None)

    def first_trailers(self) -> dict[str, str]:
        """Each trailer's first value by its key in lower case, in one pass: `trailer(key)` is
        `first_trailers().get(key.lower())` (a run's provenance reads five of them)."""
        found: dict[str, str] = {}
        for key, value in self.trailers:
            found.setdefault(key.lower(), value)
        return found

    def trailer_values(self, key: str) -> list[str]:
        return [value for k, value in self.trailers if k.lower() == key.lower()]


def commit_problems(
    where: str,
    texts: Iterable[tuple[str, str]],
    trailers: Iterable[tuple[str, str]],
    people: Mapping[str, Person],
) -> list[Problem]:
    """What a new commit may not hold, each problem at `where` (`commit`, `commit 1a2b3c4d5e6f`) and the
    part concerned: a link trailer (`Source-URL`) that is not an http(s) link, and a character XML
    cannot carry in a text (`subject`, `body`, `message`), a trailer, or a person's name or email."""
    from kernelindex.registry.kinds.content import link_problem, text_problem  # a server that only reads never needs it

    problems: list[Problem] = []
    for part, text in texts:
        reason = text_problem(text)
        if reason is not None:
            problems.append(Problem(where, part, reason))
    for key, value in trailers:
        reason = text_problem(key) or text_problem(value)
        if reason is None and ("\n" in value or "\r" in value):
            reason = "a trailer is one line"
        if reason is None and key.lower() in (name.lower() for name in LINK_TRAILERS):
            reason = link_problem(value.strip())
            if reason is not None:
                reason = f"{reason} (got {value.strip()!r})"
        if reason is not None:
            problems.append(Problem(where, key, reason))
    for part, who in people.items():
        reason = text_problem(who.name) or text_problem(who.email) or identity_problem(who.name, who.email)
        if reason is not None:
            problems.append(Problem(where, part, reason))
    return problems


# What git (libgit2) trims from both ends of a name or an email before it checks that neither is empty.
_CRUD = "".join(map(chr, range(33))) + ",:;<>\"'\\"


def identity_problem(name: str, email: str) -> str | None:
    """Why git cannot record `Name <email>` as a commit's author or committer, or None: neither may hold an
    angle bracket or a line break, and neither may be empty once git trims spaces, controls and the
    punctuation `,:;<>"'` and backslash from its ends.

    >>> identity_problem("A", "a@b") is None
    True
    >>> print(identity_problem("A", ""), identity_problem("A <x>", "a@b"), sep="; ")
    the email is empty once git trims spaces and punctuation from its ends; the name holds < or >
    """
    for part, text in (("name", name), ("email", email)):
        if "<" in text or ">" in text:
            return f"the {part} holds < or >"
        if "\n" in text or "\r" in text:
            return f"the {part} holds a line break"
        if not text.strip(_CRUD):
            return f"the {part} is empty once git trims spaces and punctuation from its ends"
    return None


def format_message(subject: str, body: str, trailers: Iterable[tuple[str, str]]) -> str:
    """subject, blank line, body, blank line, `Key: value` trailers; always ends in a newline.

    Raises:
        ValueError: a subject or trailer that would not survive a round trip through git.
    """
    subject = subject.strip()
    if not subject or "\n" in subject:
        raise ValueError("a commit subject is one non-empty line")
    parts = [subject]
    if body.strip():
        parts.append(body.strip())
    lines = []
    for key, value in trailers:
        if not _TRAILER_KEY.fullmatch(key) or "\n" in value or not value.strip():
            raise ValueError(f"bad trailer {key!r}: {value!r}")
        lines.append(f"{key}: {value.strip()}")
    if lines:
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def parse_trailers(message: str) -> tuple[tuple[str, str], ...]:
    """The trailers of a message: its last paragraph, if every line of it is `Key: value`."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:
        return ()
    found: list[tuple[str, str]] = []
    for line in paragraphs[-1].splitlines():
        match = _TRAILER.fullmatch(line.strip())
        if not match:
            return ()
        found.append((match.group(1), match.group(2).strip()))
    return tuple(found)


def trailer_pairs(pairs: Sequence[tuple[str, str | None]]) -> tuple[tuple[str, str], ...]:
    """Drop trailers whose value is missing, keep the order."""
    return tuple((key, value) for key, value in pairs if value)
