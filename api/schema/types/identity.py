"""Global object identification (the GraphQL spec's Relay convention): the `Node` interface, its ids, and
the ids and keys arguments take.

**The rule: an id names one state of an object, so two answers that carry the same id agree on it.**

- *At the head* (the root fields, `registry` without `at`), an id names the object (its type and key: a
  manifest's digest, a cohort's key) and a fingerprint of everything about it a commit can change (a
  run's rank, trust, eligibility and cohort leader; a cohort's members and their standing; an operation's
  runs and cohorts; when each was published). A commit that does not touch an object leaves its id as it
  was, so a client's cache keeps it across commits; one that changes it gives it a new id, so a list a
  client paged before the commit keeps showing one commit's answers, whole (a cache that updated the old
  object in place would show new ranks in an old list, or merge pages of two commits and lose a run).
- *Inside `registry(at:)`*, and for objects `node(id:)` finds by a pinned id, an id names the object and the
  commit: pinned answers never share an object with head ones.
- A `Commit` is named by its sha: nothing can change it.

`permalink` and `citation` name the commit of the answer that wrote them; two answers of one head id hold
permalinks to two commits at which the object stood the same. An id is opaque to clients: base64url of
`Type:<commit>:<key>` (pinned) or `Type:~<fingerprint>:<key>` (head). Arguments that take an object
(`run(id:)`, `cohort(key:)` ...) also take its id; a malformed one is `BAD_USER_INPUT`, saying what was
expected, and a well-formed one that names nothing answers null.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Collection, Hashable
from typing import Any, NamedTuple

import strawberry

from kernelindex.core.errors import BadUserInput
from kernelindex.registry import nodes as n
from kernelindex.registry.graph import MIN_PREFIX, Graph
from kernelindex.registry.graph import Cohort as DomainCohort
from kernelindex.registry.present import with_article

__all__ = [
    "Node",
    "NodeId",
    "decode_id",
    "encode_head_id",
    "encode_id",
    "find_cohort",
    "find_manifest",
    "fingerprint",
    "in_pinned_scope",
    "lookup_text",
]

_COMMIT = re.compile(r"[0-9a-f]{40}")
_STATE = re.compile(r"~[0-9a-f]{16}")
_HEX = re.compile(r"[0-9a-f]+")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,199}")


class NodeId(NamedTuple):
    """What an id says: the type, the object's key, and the commit (pinned) or the state (head) it names."""

    type_name: str
    key: str
    commit: str | None
    state: str | None

    @property
    def pinned(self) -> bool:
        return self.commit is not None


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def encode_id(type_name: str, commit: str, key: str) -> str:
    """The pinned id of the object of type `type_name` named `key` in the snapshot of `commit`.

    >>> encode_id("Cohort", "a" * 40, "sha256:00")[:24]
    'Q29ob3J0OmFhYWFhYWFhYWFh'
    """
    return _b64(f"{type_name}:{commit}:{key}")


def encode_head_id(type_name: str, key: str, state: str) -> str:
    """The head id of an object: its type, its key and the fingerprint of its state (`fingerprint`)."""
    return _b64(f"{type_name}:~{state}:{key}")


def fingerprint(state: Hashable) -> str:
    """16 hex digits that change when `state` (a tuple of plain values) does.

    >>> fingerprint(("rank", 2)) == fingerprint(("rank", 2)) != fingerprint(("rank", 3))
    True
    """
    return hashlib.blake2b(repr(state).encode(), digest_size=8).hexdigest()


def decode_id(text: str) -> NodeId | None:
    """What an id of ours says; None when it is not one.

    >>> decode_id(encode_id("Run", "b" * 40, "sha256:ff")) == ("Run", "sha256:ff", "b" * 40, None)
    True
    >>> decode_id(encode_head_id("Run", "sha256:ff", "0123456789abcdef")).state
    '~0123456789abcdef'
    >>> decode_id("not an id") is None
    True
    """
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    type_name, _, rest = decoded.partition(":")
    scope, _, key = rest.partition(":")
    if not type_name.isidentifier() or not key:
        return None
    if _COMMIT.fullmatch(scope):
        return NodeId(type_name, key, scope, None)
    if _STATE.fullmatch(scope):
        return NodeId(type_name, key, None, scope)
    return None


def in_pinned_scope(info: Any) -> bool:
    """Whether the field `info` resolves sits under a pinned root field (`registry(at:)`, `node(id:)` or one
    item of `nodes(ids:)` with a pinned id): those register their response paths in the context."""
    pinned: set[tuple[str | int, ...]] = info.context.pinned_paths
    if not pinned:
        return False
    keys: list[str | int] = []
    path = info.path
    while path is not None:
        keys.append(path.key)
        path = path.prev
    keys.reverse()
    return tuple(keys[:1]) in pinned or tuple(keys[:2]) in pinned


def _expected(noun: str) -> str:
    return (
        f"expected {noun}: a digest (sha256: and 64 lower-case hex digits), a unique lower-case hex prefix of "
        f"at least {MIN_PREFIX} digits, a metadata.name (lower-case letters, digits, '.', '_' and '-'), "
        "or its `id`"
    )


def lookup_text(text: str, type_names: Collection[str], noun: str) -> str:
    """The digest, prefix or name `text` names an object of one of `type_names` by (a Node id gives its key).

    Raises:
        BadUserInput: `text` is none of these, or the id of another type (the message says what was expected).
    """
    given = text.strip()
    decoded = decode_id(given) if not _NAME.fullmatch(given) else None
    if decoded is not None:
        if decoded.type_name not in type_names:
            raise BadUserInput(f"{text[:120]!r} is the id of {with_article(decoded.type_name)}: {_expected(noun)}")
        return decoded.key
    hexpart = given.removeprefix("sha256:")
    if given.startswith("sha256:"):
        if not _HEX.fullmatch(hexpart) or not MIN_PREFIX <= len(hexpart) <= 64:
            raise BadUserInput(f"{text[:120]!r} is not a digest or a digest prefix: {_expected(noun)}")
        return given
    if not _NAME.fullmatch(given):
        raise BadUserInput(f"{text[:120]!r} names nothing: {_expected(noun)}")
    return given


def find_manifest(graph: Graph, kinds: Collection[str], text: str, type_names: Collection[str], noun: str) -> Any:
    """The node of one of `kinds` that `text` names in `graph` (by digest, prefix, name or id); None when a
    well-formed `text` names none.

    Raises:
        BadUserInput: malformed, or a bare hex string too short for a prefix that names nothing.
        kernelindex.registry.errors.AmbiguousName: a prefix or a name names several.
    """
    ident = lookup_text(text, type_names, noun)
    node: n.Node | None = graph.find(kinds, ident)
    if node is None and _HEX.fullmatch(ident) and len(ident) < MIN_PREFIX:
        raise BadUserInput(
            f"{text[:120]!r} names no manifest, and as a digest prefix it is too short: {_expected(noun)}"
        )
    return node


def find_cohort(cohorts: Any, text: str, type_names: Collection[str] = ("Cohort",)) -> Any:
    """The cohort (or serving cohort) of a `find_keyed`-style table a key, a unique prefix of at least 12 hex
    digits or a Cohort's id names; None when a well-formed key names none.

    Raises:
        BadUserInput: malformed (the message says what a key looks like).
        kernelindex.registry.errors.AmbiguousName: a prefix names several.
    """
    from kernelindex.registry.graph import find_keyed

    given = text.strip()
    decoded = decode_id(given)
    noun = "a cohort key" if "Cohort" in type_names else "a serving cohort key"
    expected = (
        f"expected {noun}: sha256: and 64 lower-case hex digits, a unique prefix of at least {MIN_PREFIX} of "
        "them (with or without sha256:), or its `id`"
    )
    if decoded is not None and not _HEX.fullmatch(given):
        if decoded.type_name not in type_names:
            raise BadUserInput(f"{text[:120]!r} is the id of {with_article(decoded.type_name)}: {expected}")
        given = decoded.key
    hexpart = given.removeprefix("sha256:")
    if not _HEX.fullmatch(hexpart) or not MIN_PREFIX <= len(hexpart) <= 64:
        raise BadUserInput(f"{text[:120]!r} is not a key: {expected}")
    found: DomainCohort | None = find_keyed(cohorts, given)
    return found


@strawberry.interface(
    description="An object a client cache can keep: its `id` is global and names one state of the object. At "
    "the head, an object keeps its id across commits that do not change it and gets a new one when a commit "
    "does, so a cached list always shows one commit's answers; inside `registry(at:)`, ids also name the "
    "commit, so pinned answers never overwrite head ones. `node(id:)` refetches any of them."
)
class Node:
    def _identity(self) -> tuple[str, str]:
        """(commit, key) of this object; each implementation says."""
        raise NotImplementedError

    def _state(self, info: Any) -> Hashable:
        """Everything about this object a commit can change (each implementation says), for its head id."""
        raise NotImplementedError

    @strawberry.field(
        description="Opaque and global: use it as the cache key (Apollo's and urql's default). Equal ids "
        "always carry equal fields (except `permalink` and `citation`, which name the commit of the answer)."
    )
    def id(self, info: strawberry.Info) -> strawberry.ID:
        commit, key = self._identity()
        name = type(self).__name__
        if in_pinned_scope(info):
            return strawberry.ID(encode_id(name, commit, key))
        states: dict[tuple[str, str], str] = self._cache_of_states()
        found = states.get((name, key))
        if found is None:
            found = states[(name, key)] = fingerprint(self._state(info))
        return strawberry.ID(encode_head_id(name, key, found))

    def _cache_of_states(self) -> dict[tuple[str, str], str]:
        graph: Graph = getattr(self, "_graph")  # noqa: B009 (every implementation with a state has one)
        cache: dict[tuple[str, str], str] | None = graph.__dict__.get("_node_states")
        if cache is None:
            cache = graph.__dict__["_node_states"] = {}
        return cache
