"""Global object identification (the GraphQL spec's Relay convention): the `Node` interface and its ids.

The rule: **an id names the snapshot it was read from.** Every object of the graph carries
fields derived at a commit (a run's rank, cohort and trust, a cohort's size and leader, a manifest's
`publishedAt` and permalink), so the same manifest read at two commits is two objects with two ids, and a
normalized client cache (Apollo's `InMemoryCache`, urql's Graphcache, Relay) never mixes an answer of
the head with one pinned by `registry(at:)`. Only a `Commit`, which nothing can change, is named by
its own id (the commit's sha). `node(id:)` answers an id from the snapshot it names, at any later time.

An id is opaque to clients: base64url of `Type:commit:key` (the key is a manifest digest or a cohort key).
"""

from __future__ import annotations

import base64
import binascii
import re

import strawberry

__all__ = ["Node", "decode_id", "encode_id"]

_COMMIT = re.compile(r"[0-9a-f]{40}")


def encode_id(type_name: str, commit: str, key: str) -> str:
    """The id of the object of type `type_name` named `key` in the snapshot of `commit`.

    >>> encode_id("Cohort", "a" * 40, "sha256:00")[:24]
    'Q29ob3J0OmFhYWFhYWFhYWFh'
    """
    return base64.urlsafe_b64encode(f"{type_name}:{commit}:{key}".encode()).decode().rstrip("=")


def decode_id(text: str) -> tuple[str, str, str] | None:
    """(type name, commit, key) of an id of ours; None when it is not one.

    >>> decode_id(encode_id("Run", "b" * 40, "sha256:ff")) == ("Run", "b" * 40, "sha256:ff")
    True
    >>> decode_id("not an id") is None
    True
    """
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    type_name, _, rest = decoded.partition(":")
    commit, _, key = rest.partition(":")
    if not type_name.isidentifier() or not _COMMIT.fullmatch(commit) or not key:
        return None
    return type_name, commit, key


@strawberry.interface(
    description="An object with a global id (Relay's object identification). An id names the snapshot "
    "(commit) it was read from, so a normalized cache never mixes two snapshots; `node(id:)` refetches it."
)
class Node:
    def _identity(self) -> tuple[str, str]:
        """(commit, key) of this object; each implementation says."""
        raise NotImplementedError

    @strawberry.field(description="Opaque and global: the type, the snapshot's commit and the object's key.")
    def id(self) -> strawberry.ID:
        commit, key = self._identity()
        return strawberry.ID(encode_id(type(self).__name__, commit, key))
