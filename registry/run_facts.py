"""What the graph derives about one run at a commit (`RunFacts`): a module of its own, so that the graph
and the indexes built from its facts (`kernelindex.registry.run_indexes`) both import it and not each other."""

from __future__ import annotations

from typing import NamedTuple

from kernelindex.registry.cohorts import Trust

__all__ = ["RunFacts"]


class RunFacts(NamedTuple):
    """What the graph derives about one run at this commit."""

    cohort: str | None
    reasons: tuple[str, ...]  # why it is not eligible; empty when it is
    trust: Trust
    warnings: tuple[str, ...]
    source: str | None  # sourceNative.source, else the publishing commit's Source: trailer
    retraction: str | None  # the honoured Retraction, if any
    superseded_by: str | None  # the run that corrects this one, if any
    operation: str | None  # the workload's operation
    gpu: tuple[str, ...]  # lower-cased product and architecture of its environment

    @property
    def eligible(self) -> bool:
        return not self.reasons
