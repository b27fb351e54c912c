"""The wheel carries the embedded registry: `build_py` copies the clone's `manifests.git` into the package, at
`kernelindex/embedded/manifests.git`, where `kernelindex.core.settings.EMBEDDED_REPO` finds it when no clone is around.

Everything else is in pyproject.toml. The registry is shipped as the repository itself (one pack of objects
without deltas, ~17 MB) rather than as the data it is built from (~4 MB) and a build on first use: docs/deploy.md
says why, with the measurements.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REGISTRY = Path(__file__).resolve().parent / "manifests.git"
TARGET = ("kernelindex", "embedded", "manifests.git")
# What a bare repository needs to be read: its HEAD, config, refs and objects (no hooks, logs or locks).
KEPT = ("HEAD", "config", "packed-refs", "refs", "objects")


class BuildPyWithRegistry(build_py):
    """`build_py`, then the embedded registry's files beside the package (a wheel's, never an editable install's:
    an editable install reads the clone's own)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not (REGISTRY / "HEAD").is_file():
            raise SystemExit(f"setup.py: no embedded registry at {REGISTRY} (scripts/build-embedded-registry makes it)")
        target = Path(self.build_lib, *TARGET)
        shutil.rmtree(target, ignore_errors=True)
        for name in KEPT:
            source = REGISTRY / name
            if source.is_dir():
                shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("*.lock"))
            elif source.is_file():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildPyWithRegistry})
