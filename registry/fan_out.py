"""The digests of a graph's manifests by fan-out folder (`<kind-folder>/<hh>`), sorted as git sorts each folder's
files: what a refresh's tree diff bisects (`kernelindex.registry.graph.Graph.fan_out`), made once and edited by each
change."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence

from kernelindex.registry.kinds import KINDS
from kernelindex.registry.nodes import Node

__all__ = ["edited_fan_out", "fan_out_index", "fan_out_key", "pause_briefly"]


def fan_out_key(node: Node) -> str | None:
    spec = KINDS.get(node.kind)
    return None if spec is None else f"{spec.folder}/{node.digest[7:9]}"


def pause_briefly() -> None:
    time.sleep(0)  # let a waiting thread take the GIL now rather than after the switch interval


def fan_out_index(nodes: Mapping[str, Node], pause: Callable[[], object]) -> dict[str, list[str]]:
    """Digests by fan-out folder, sorted: a manifest's file is `<hex>.json`, all of one length, and
    git orders a folder's files by name, so the order of the names is that of the digests."""
    found: dict[str, list[str]] = {}
    for index, (digest, node) in enumerate(nodes.items()):
        if index % 4096 == 4095:
            pause()
        key = fan_out_key(node)
        if key is None:
            continue
        digests = found.get(key)
        if digests is None:
            found[key] = [digest]
        else:
            digests.append(digest)
    for digests in found.values():
        digests.sort()  # a cold build takes the manifests in this order already: a pass over each list
    return found


def edited_fan_out(
    index: dict[str, list[str]], before: Mapping[str, Node], added: Sequence[Node], removed: Sequence[str]
) -> dict[str, list[str]]:
    """The fan-out index after a change: the folders it touches copied and edited, the rest shared."""
    edited = dict(index)
    copied: set[str] = set()

    def folder(key: str) -> list[str]:
        if key not in copied:
            copied.add(key)
            edited[key] = list(edited.get(key, ()))
        return edited[key]

    for digest in [*removed, *(node.digest for node in added)]:  # an added node replaces one of its digest
        node = before.get(digest)
        key = None if node is None else fan_out_key(node)
        if key is not None:
            digests = folder(key)
            at = bisect_left(digests, digest)
            if at < len(digests) and digests[at] == digest:
                del digests[at]
    for node in added:
        key = fan_out_key(node)
        if key is not None:
            digests = folder(key)
            at = bisect_left(digests, node.digest)
            if at == len(digests) or digests[at] != node.digest:
                digests.insert(at, node.digest)
    return edited
