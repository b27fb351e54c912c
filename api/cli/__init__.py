"""The `kernelindex` command: init, add, validate, digest, show, log, import, export (and serve, cite, mcp).

Errors are one line per problem (`file: $.json.path: reason`) on stderr with exit status 1;
usage errors exit 2; no command prints a traceback (set KERNELINDEX_DEBUG=1 to see one).

`main` parses and dispatches (`api/cli/main.py`); each family of commands is a module of its own (`writing`,
`reading`, `checking`, `sources` with `importing`, `serving`, `exporting`, `citing`); what they share is
public in `options` (the options), `console` (output and errors), `stores` (the registry and its files) and
`identity` (who writes, and signs).
"""

from __future__ import annotations

from kernelindex.cli.main import app, main

__all__ = ["app", "main"]
