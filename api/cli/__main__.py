"""`python -m kernelindex.cli`: the `kernelindex` command."""

from __future__ import annotations

from kernelindex.cli.main import main

main()
