"""How pages count manifests of a kind ("9,508 runs"): the label of its spec (`kernelindex.registry.kind_specs`)."""

from __future__ import annotations

from kernelindex.registry.kinds import KINDS

__all__ = ["kind_words"]


def kind_words(kind: str) -> str:
    """A manifest kind as a plural noun for counts ("9,508 runs"); a kind with no label (the lifecycle kinds), or
    a value that is no kind, keeps its name."""
    spec = KINDS.get(kind)
    return kind if spec is None else spec.words
