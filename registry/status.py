"""Whether a result still stands: a run's status at the head of main, for a reader who found it at an
older commit (a pinned page, a citation). The pinned page never changes; this answer is what it links to.

A run's standing changes only through lifecycle overlays that count: a Retraction
(withdrawn, with its reason), a Supersession (replaced by a correction, with its reason) or a
Verification (confirmed by a registry rerun). Each is reported with the commit that introduced it and
who signed that commit; overlays that name the run but do not count (no maintainer signed their
commit) are listed apart, never as facts. `read_at` says which of the facts came later than what the
reader saw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kernelindex.registry.cohorts import Trust
from kernelindex.registry.graph import Graph
from kernelindex.registry.nodes import Node, Retraction, Run, Supersession, Verification

__all__ = [
    "CURRENT",
    "MISSING",
    "RETRACTED",
    "SUPERSEDED",
    "UNPUBLISHED",
    "Lifecycle",
    "RunStatus",
    "run_status",
]

CURRENT, RETRACTED, SUPERSEDED, UNPUBLISHED, MISSING = "current", "retracted", "superseded", "unpublished", "missing"


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """One overlay that counts for the run, and where it came from."""

    kind: str  # Retraction | Supersession | Verification
    overlay: str  # its digest
    reason: str | None  # a retraction's or supersession's reason, in the maintainers' words
    successor: str | None  # a supersession's correction
    runner: str | None  # a verification's runner
    commit: str  # the commit of main that published it
    position: int  # that commit's place on main's first-parent history
    committed_at: int  # seconds
    signed_by: str | None  # the maintainer whose signature made it count, when the caller can tell


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A run's standing at `head` (main's commit read), and what changed after `read_at`."""

    run: str
    head: str
    state: str  # current | retracted | superseded | unpublished (not on main) | missing (not at head)
    eligible: bool
    reasons: tuple[str, ...]  # why it is not ranked at head, in upstream's order
    trust: Trust | None
    retraction: Lifecycle | None
    supersession: Lifecycle | None
    verifications: tuple[Lifecycle, ...]
    ignored: tuple[str, ...]  # overlays naming the run that do not count, by digest
    later: tuple[Lifecycle, ...]  # the lifecycle facts published after `read_at`, oldest first

    @property
    def changed(self) -> bool:
        """Whether the reader's view is out of date: a fact came after the commit they read."""
        return bool(self.later)


def run_status(
    head: Graph,
    run: str,
    read_at: str | None = None,
    signer: Callable[[str], str | None] | None = None,
) -> RunStatus:
    """The status of `run` (a digest) at `head`. `read_at` is the commit the reader saw it at: a commit
    of main's first-parent history (None, or any other commit: every fact counts as later). `signer(commit)`
    names who signed a commit (the maintainer principal), when the caller can verify signatures."""
    node = head.nodes.get(run)
    facts = head.facts.get(run)
    if not isinstance(node, Run) or facts is None:
        return RunStatus(run, head.commit, MISSING, False, (), None, None, None, (), (), ())
    ignored: list[str] = []

    def counted(digests: Iterable[str]) -> list[Lifecycle]:
        found = []
        for digest in digests:
            overlay = head.nodes.get(digest)
            if overlay is None:
                continue
            if not head.honoured(overlay):
                ignored.append(digest)
                continue
            found.append(_lifecycle(head, overlay, signer))
        found.sort(key=lambda item: (item.position, item.overlay))
        return found

    retractions = counted(head.overlays["retractions"].get(run, ()))
    supersessions = [
        s
        for s in counted(head.overlays["supersessions"].get(run, ()))
        if isinstance(head.nodes.get(s.successor or ""), Run)
    ]
    verifications = counted(head.overlays["verifications"].get(run, ()))
    # The earliest that counts is the one that changed the run's standing; later ones repeat it.
    retraction = retractions[0] if retractions else None
    supersession = supersessions[0] if supersessions else None
    if head.publication(run) is None:
        state = UNPUBLISHED
    elif retraction is not None:
        state = RETRACTED
    elif supersession is not None:
        state = SUPERSEDED
    else:
        state = CURRENT
    read = head.mainline.positions.get(read_at) if read_at is not None else None
    facts_after = [f for f in (retraction, supersession, *verifications) if f is not None]
    later = tuple(sorted((f for f in facts_after if read is None or f.position > read), key=lambda f: f.position))
    return RunStatus(
        run,
        head.commit,
        state,
        facts.eligible,
        facts.reasons,
        facts.trust,
        retraction,
        supersession,
        tuple(verifications),
        tuple(sorted(ignored)),
        later,
    )


def _lifecycle(head: Graph, overlay: Node, signer: Callable[[str], str | None] | None) -> Lifecycle:
    position = head.published_in[overlay.digest]  # honoured overlays are published
    commit = head.mainline.commits[position]
    reason = successor = runner = None
    if isinstance(overlay, Retraction):
        reason = overlay.reason
    elif isinstance(overlay, Supersession):
        reason, successor = overlay.reason, overlay.run
    elif isinstance(overlay, Verification):
        runner = overlay.runner
    return Lifecycle(
        overlay.kind,
        overlay.digest,
        reason,
        successor,
        runner,
        commit,
        position,
        head.mainline.times[position],
        signer(commit) if signer is not None else None,
    )
