"""The options several commands take, spelled once: a command names them in its signature."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "API_TIMEOUT_SECONDS",
    "ApiOption",
    "ApiTimeoutOption",
    "AtOption",
    "AuthorOption",
    "BranchOption",
    "CursorOption",
    "DryRunOption",
    "JsonOption",
    "JsonlOption",
    "LimitOption",
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
    typer.Option(
        "--api",
        envvar="KERNELINDEX_API",
        help="Ask a served registry (https://registry.example; default $KERNELINDEX_API) instead of a local one.",
    ),
]
API_TIMEOUT_SECONDS = 60.0
"""How long a command waits by default for a served registry's whole answer, from connecting to its last byte."""
ApiTimeoutOption = Annotated[
    float,
    typer.Option(
        "--api-timeout",
        envvar="KERNELINDEX_API_TIMEOUT",
        min=0.1,
        max=3600.0,
        metavar="SECONDS",
        help="With --api: how long to wait for each whole answer, from connecting to its last byte "
        "(0.1 to 3600; default 60, or $KERNELINDEX_API_TIMEOUT).",
        show_default=False,
    ),
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

# What every read command takes to page and to choose its output (`kernelindex.cli.listing`).
JsonlOption = Annotated[
    bool, typer.Option("--jsonl", help="One JSON object per line (each item of the list) on stdout, for scripts.")
]
LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=0,
        max=100,
        help="At most this many items (0 to 100, a page; default 20).",
        show_default=False,
    ),
]
CursorOption = Annotated[
    str | None,
    typer.Option("--cursor", help="Continue after this cursor (the `next page` a previous page printed)."),
]
