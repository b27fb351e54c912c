"""The project built and installed as a user gets it, with no network: what tests/test_wheel.py, tests/test_install.py
and tests/test_release.py share.

- `build_dists`: the source distribution and the wheel (`python -m build`: the sdist, then the wheel from it) of a copy
  of the project as its checkout has it. The build backend comes from this environment (`--no-isolation`).
- `new_venv`: a fresh virtual environment with no pip and no project in it. The dependencies come from this one: a
  `.pth` file names a folder of links to everything in this environment's site-packages but the files of this
  project's own install (its editable finder, its dist-info), so `import kernelindex` and pip see only what is
  installed in the new environment itself. Path entries a `.pth` file adds get none of their own `.pth` files run.
- `Venv.pip`: pip (from those dependencies) run by the new environment's interpreter, with no configuration file and
  no `PIP_*` variable of the caller's: it installs only what a test names, from the files a test names.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

from helpers import PROJECT_ROOT

__all__ = ["DISTRIBUTION", "Dists", "Venv", "build_dists", "copy_of_the_project", "new_venv"]

DISTRIBUTION = "kernelindex-registry"

_NOT_THE_PROJECT = [".git", ".venv", "venv", "node_modules", "__pycache__", "*.egg-info", "build", "dist", "site"]
_NOT_THE_PROJECT += ["*.graphcache", "*.integrity", "artifacts", ".mypy_cache", ".ruff_cache", ".pytest_cache"]


def copy_of_the_project(target: Path) -> None:
    """The project's files as a checkout has them (tracked, or new and not ignored): no build output, no venv.
    Outside a git checkout (an unpacked archive), everything but build output and caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        shutil.copytree(PROJECT_ROOT, target, ignore=shutil.ignore_patterns(*_NOT_THE_PROJECT), symlinks=True)
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = PROJECT_ROOT / name
        if source.is_symlink():  # kernelindex/'s subpackages: links to the repository's folders
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).symlink_to(os.readlink(source))
        elif source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


def build_dists(root: Path) -> Dists:
    """`python -m build --no-isolation` of a copy of the project: both files, in root/dist; nothing else is left."""
    source, dist = root / "src", root / "dist"
    copy_of_the_project(source)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    shutil.rmtree(source)  # nothing of the project is left but what was built
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return Dists(sdist, wheel)


def _dependencies(folder: Path) -> Path:
    """A folder of links to this environment's site-packages, less this project's own installed files."""
    site = Path(sysconfig.get_paths()["purelib"])
    # Read from site-packages itself: a checkout's own `*.egg-info` (left by an editable install) may come first on
    # sys.path and list the project's sources instead.
    installed = [d for d in distributions(path=[str(site)]) if d.metadata["Name"] == DISTRIBUTION]
    ours = {Path(str(file)).parts[0] for d in installed for file in d.files or ()}
    folder.mkdir()
    for entry in site.iterdir():
        if entry.name not in ours:
            (folder / entry.name).symlink_to(entry)
    return folder


@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    purelib: Path
    env: dict[str, str]
    """For what runs in it: its bin first on PATH, a HOME of its own, no variable of the caller's."""

    @property
    def bin(self) -> Path:
        return self.python.parent

    def pip_env(self) -> dict[str, str]:
        """The environment pip runs in: this one's bin first on PATH, no configuration of the caller's."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env["PIP_CACHE_DIR"] = str(self.root / "pip-cache")  # never a wheel built by another run
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        return env

    def pip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.python), "-m", "pip", *args],
            capture_output=True,
            text=True,
            env=self.pip_env(),
            check=False,
            timeout=600,
        )
        assert not check or done.returncode == 0, f"pip {' '.join(args)}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done

    def run(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A program of the environment's bin (`kernelindex`, `python`), in `cwd`."""
        done = subprocess.run(
            [str(self.bin / args[0]), *args[1:]], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=300
        )
        assert not check or done.returncode == 0, f"{' '.join(args)}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done


def new_venv(root: Path) -> Venv:
    """An empty virtual environment at root/venv whose interpreter sees this environment's dependencies."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (purelib / "zz-dependencies-of-the-tests.pth").write_text(f"{_dependencies(root / 'dependencies')}\n")
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    return Venv(root, python, purelib, env)
