"""main's first-parent history as the graph reads it: each commit's place, time and Source: trailer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Mainline"]


@dataclass(frozen=True, slots=True)
class Mainline:
    """main's first-parent history (the publication record), oldest first."""

    commits: tuple[str, ...]
    times: tuple[int, ...]  # committer times, seconds
    sources: tuple[str | None, ...]  # each commit's Source: trailer
    positions: Mapping[str, int] = field(repr=False, compare=False)

    @classmethod
    def of(cls, commits: Sequence[str], times: Sequence[int], sources: Sequence[str | None]) -> Mainline:
        return cls(tuple(commits), tuple(times), tuple(sources), {c: i for i, c in enumerate(commits)})

    def extended(self, commits: Sequence[str], times: Sequence[int], sources: Sequence[str | None]) -> Mainline:
        return Mainline.of((*self.commits, *commits), (*self.times, *times), (*self.sources, *sources))
