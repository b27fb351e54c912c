"""The options several commands take, spelled once: a command names them in its signature."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "ApiOption",
    "AtOption",
    "AuthorOption",
    "BranchOption",
    "DryRunOption",
    "JsonOption",
    "OutOption",
    "RepoOption",
    "SignOption",
    "SigningKeyOption",
    "SkipBadOption",
    "TrustRootOption",
]

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="The registry (a git repository). Default: $KERNELINDEX_REPO, ./manifests.git, or the embedded registry.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
ApiOption = Annotated[
    str | None,
    typer.Option("--api", help="Ask a served registry (https://registry.example) instead of reading one locally."),
]
AtOption = Annotated[str | None, typer.Option("--at", help="A commit, branch or tag (default: main).")]
TrustRootOption = Annotated[
    Path | None,
    typer.Option(help="The operator's pinned maintainers policy (default $KERNELINDEX_TRUST_ROOT)."),
]

# What every `kernelindex import <source>` takes besides its source (`importing.ImportOptions`).
BranchOption = Annotated[
    str | None, typer.Option("--branch", help="Commit on this branch (created from main), then print the PR report.")
]
OutOption = Annotated[
    Path | None, typer.Option("--out", help="Write the new manifests under this directory for review instead.")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Only report (the default outside a clone): nothing is written.")
]
SkipBadOption = Annotated[
    bool, typer.Option("--skip-bad", help="Import the good rows even when some are malformed (they are listed).")
]
AuthorOption = Annotated[
    str | None, typer.Option(help="'Name <email>': author and Signed-off-by (default: the source, via the importer).")
]
SignOption = Annotated[
    bool, typer.Option("--sign", "-S", help="SSH-sign the commit: imports of registered sources are maintainers'.")
]
SigningKeyOption = Annotated[Path | None, typer.Option(help="SSH key for --sign (default: user.signingkey).")]
