"""The `kernelindex` command line: it parses and dispatches; the commands live in a module per family."""

from __future__ import annotations

import typer

from kernelindex.cli import (
    browsing,
    checking,
    citing,
    exporting,
    installing,
    lookup,
    reading,
    resolving,
    schemas,
    serving,
    sources,
    verifying,
    writing,
)
from kernelindex.cli.console import err
from kernelindex.cli.stores import read_settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="kernelindex",
    help="A registry of GPU-kernel benchmark results: content-addressed manifests in git.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # usage errors as one plain line, not a box
)
import_app: typer.Typer = typer.Typer(
    help="Import manifests from upstream sources.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(import_app, name="import")
app.add_typer(lookup.app, name="lookup")
app.add_typer(resolving.serving_app, name="serving")
app.add_typer(resolving.resolve_app, name="resolve")

# In the order `kernelindex --help` lists them.
app.command()(writing.init)
app.command()(installing.workflows)
app.command()(schemas.schema)
app.command()(schemas.new)
app.command()(reading.digest)
app.command()(checking.validate)
app.command()(writing.add)
app.command()(reading.show)
app.command()(reading.log)
app.command()(browsing.search)
app.command()(browsing.runs)
app.command()(browsing.records)
app.command()(browsing.compare)
app.command()(browsing.changes)
app.command()(browsing.gpus)
app.command()(browsing.models)
app.command()(serving.serve)
app.command()(exporting.export)
app.command()(serving.mcp)
app.command()(citing.cite)
app.command()(verifying.verify)
app.command()(installing.version)
for name, command in sources.COMMANDS:
    import_app.command(name)(command)


def main() -> None:
    """Entry point: no traceback reaches a user unless KERNELINDEX_DEBUG is set."""
    serving.OWNS_PROCESS = True  # the command is this process: `serve` may become the serving one
    try:
        app()
    except KeyboardInterrupt:
        err("kernelindex: interrupted")
        raise SystemExit(130) from None
    except Exception as exc:  # the last line of defence: report, never dump a traceback
        if read_settings().debug:
            raise
        err(f"kernelindex: internal error: {type(exc).__name__}: {exc} (set KERNELINDEX_DEBUG=1 for details)")
        raise SystemExit(1) from None
