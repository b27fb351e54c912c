"""GitCommand: the `git` command of one repository, run to completion with its output captured.

Every part of the store that starts git (`kernelindex.registry.store`'s reader, writer and ref lock) starts it here,
with the repository named by `GIT_DIR` and git's prompts off, so none of them can ask a terminal for anything.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from kernelindex.registry.embedded import git_command
from kernelindex.registry.errors import RegistryError

__all__ = ["GitCommand"]


class GitCommand:
    """`git` against one repository's git directory."""

    def __init__(self, git_dir: Path) -> None:
        self._git_dir = git_dir
        self._command = git_command(git_dir)  # how each git subprocess starts against this repository

    @property
    def argv(self) -> list[str]:
        """The command line that starts git against this repository, before git's own arguments."""
        return list(self._command)

    def env(self) -> dict[str, str]:
        """The environment git runs in: this process's, with `GIT_DIR` and no terminal prompts."""
        return {**os.environ, "GIT_DIR": str(self._git_dir), "GIT_TERMINAL_PROMPT": "0"}

    def run(
        self, *args: str, stdin: bytes | None = None, check: bool = True, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `git <args>` and wait for it.

        Raises:
            RegistryError: git failed and `check` is set (git's own words in the message).
        """
        result = subprocess.run(
            [*self._command, *args], input=stdin, capture_output=True, env=self.env(), check=False, cwd=cwd
        )
        if check and result.returncode != 0:
            raise RegistryError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()}")
        return result

    def run_to_file(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """`run` for a large output read by a thread while another one works: git writes to an
        unlinked temporary file and this thread reads it in one call once git is done.

        Reading a pipe takes the GIL back after each 32 KB read, and a thread waiting for it
        waits up to the switch interval each time while the other thread computes: during a
        cold build at 10x (19 MB of `git log`), ~600 waits that slowed both threads by seconds.

        Raises:
            RegistryError: git failed and `check` is set.
        """
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.run([*self._command, *args], stdout=out, stderr=err, env=self.env(), check=False)
            out.seek(0)
            err.seek(0)
            result = subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
        if check and result.returncode != 0:
            raise RegistryError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip()}")
        return result
