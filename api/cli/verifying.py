"""`kernelindex verify`: a citation checked against a copy of the registry (a clone, or the embedded registry),
offline.

Exit status, for scripts: 0 the citation holds and the result stands; 3 it holds but the result has since been
retracted or superseded; 1 it does not hold (a commit not on main, a manifest that is not there or hashes to
another digest, a signature that does not verify); 2 the text is no citation (no digest, or no commit).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kernelindex.cli.console import echo, emit_json, err, guarded, visible
from kernelindex.cli.options import JsonOption, RepoOption
from kernelindex.cli.stores import open_snapshots, open_store

if TYPE_CHECKING:
    from kernelindex.registry.citation_check import CitationCheck

__all__ = ["EXIT_INVALID", "EXIT_NO_CITATION", "EXIT_NO_LONGER_STANDS", "verify"]

EXIT_INVALID, EXIT_NO_CITATION, EXIT_NO_LONGER_STANDS = 1, 2, 3


@guarded
def verify(
    citation: Annotated[
        list[str],
        typer.Argument(
            metavar="CITATION",
            help="A permalink, a BibTeX or CSL-JSON entry, or a digest and a commit; '-' reads it from stdin.",
        ),
    ],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a citation offline: its commit is in main's history, the manifest stored there has the cited digest
    (computed again from its bytes), the commit that published it verifies where it is signed, and whether the
    result has since been retracted, superseded or verified (each with its commit)."""
    from kernelindex.registry.citation_check import NotACitation, check_citation, parse_citation

    text = sys.stdin.read() if citation == ["-"] else " ".join(citation)
    try:
        claim = parse_citation(text)
    except NotACitation as exc:
        err(f"kernelindex: {exc}")
        raise typer.Exit(EXIT_NO_CITATION) from None
    snapshots = open_snapshots(open_store(repo).path)
    snapshots.load()
    found = check_citation(snapshots, claim)
    if as_json:
        emit_json(_as_json(found))
    else:
        _print(found)
    if not found.valid:
        raise typer.Exit(EXIT_INVALID)
    if found.verdict != "holds":
        raise typer.Exit(EXIT_NO_LONGER_STANDS)


def _as_json(found: CitationCheck) -> dict[str, Any]:
    return {
        "verdict": found.verdict,
        "valid": found.valid,
        "digest": found.claim.digest,
        "commit": found.commit,
        "kind": found.kind,
        "publishedIn": found.publishing_commit,
        "state": found.state,
        "checks": [{"check": what, "passed": passed, "detail": detail} for what, passed, detail in found.checks],
        "facts": [
            {"kind": f.kind, "manifest": f.overlay, "commit": f.commit, "reason": f.reason, "successor": f.successor}
            for f in found.facts
        ],
        "head": found.head,
    }


_VERDICTS = {
    "holds": "valid: the citation holds and the result stands",
    "no-longer-stands": "valid, but the result no longer stands",
    "invalid": "NOT VALID",
}


def _print(found: CitationCheck) -> None:
    echo(f"{_VERDICTS[found.verdict]}: {found.claim.digest} at {found.claim.commit}")
    for what, passed, detail in found.checks:
        echo(f"  {'ok  ' if passed else 'FAIL'} {what}: {visible(detail)}")
    if found.state is not None:
        echo(f"  at main ({found.head[:12]}): {found.state}")
    for fact in found.facts:
        extra = f" by {fact.successor}" if fact.successor else ""
        because = f": {visible(fact.reason)}" if fact.reason else ""
        echo(f"  {fact.kind.lower()}{extra} in {fact.commit}{because}")
