"""`python -m api.cli`: the `kernelindex` command."""

from __future__ import annotations

from api.cli.main import main

main()
