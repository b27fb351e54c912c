"""Signing for tests: real SSH keys (ssh-keygen), commits made the way git makes them, merges."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
from helpers import to_manifest

from kernelindex import registry
from kernelindex.registry.signatures import ssh_signer

__all__ = ["T0", "Key", "commit_raw", "make_key", "merge_into_main", "stored"]

T0 = 1_700_000_000


@dataclass(frozen=True)
class Key:
    principal: str
    private: Path

    @property
    def allowed_signer(self) -> bytes:
        public = self.private.with_suffix(".pub").read_text().split()
        return f'{self.principal} namespaces="git" {public[0]} {public[1]}\n'.encode()


def make_key(directory: Path, principal: str) -> Key:
    path = directory / principal.split("@")[0]
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(path)], check=True)
    return Key(principal, path)


def commit_raw(
    store: registry.GitStore,
    parent: str | list[str],
    files: Mapping[str, bytes | tuple[bytes, pygit2.enums.FileMode] | None],
    *,
    ref: str | None = None,
    when: int = T0 + 3600,
    message: str = "Change\n\nSource: community\n",
    signer: Key | None = None,
    base_tree: str | None = None,
) -> str:
    """A commit made the way git would: `files` maps paths to bytes (or (bytes, mode)); None deletes."""
    repo = pygit2.Repository(str(store.git_dir))
    parents = parent if isinstance(parent, list) else [parent]
    index = pygit2.Index()
    index.read_tree(repo.revparse_single(base_tree or parents[0]).peel(pygit2.Tree))
    for path, content in files.items():
        if content is None:
            index.remove(path)
            continue
        data, mode = content if isinstance(content, tuple) else (content, pygit2.enums.FileMode.BLOB)
        oid = pygit2.Oid(hex=data.decode()) if mode == pygit2.enums.FileMode.COMMIT else repo.create_blob(data)
        index.add(pygit2.IndexEntry(path, oid, mode))
    tree = index.write_tree(repo)
    person = pygit2.Signature("Contributor", "c@example.com", when, 0)
    oids: list[str | pygit2.Oid] = [pygit2.Oid(hex=p) for p in parents]
    if signer is None:
        commit = str(repo.create_commit(None, person, person, message, tree, oids))
    else:
        text = str(repo.create_commit_string(person, person, message, tree, oids))
        signature = ssh_signer(signer.private)(text.encode()).decode()
        commit = str(repo.create_commit_with_signature(text, signature))
    if ref is not None:
        repo.references.create(ref, commit, force=True)
    return commit


def stored(document: Mapping[str, object]) -> tuple[str, bytes]:
    """The path and stored bytes of a manifest document."""
    manifest = to_manifest(document)
    return manifest.path, manifest.stored_bytes()


def merge_into_main(store: registry.GitStore, pr: str, *, signer: Key | None = None, when: int = T0 + 7200) -> str:
    main = store.head()
    assert main is not None
    merged = commit_raw(store, [main, pr], {}, base_tree=pr, when=when, message="Merge pull request\n", signer=signer)
    assert store._compare_and_swap(registry.store.MAIN, main, merged)  # the maintainer's push
    return merged
