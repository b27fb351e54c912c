"""The wheel is a product: built from a copy of the project (`python -m build`: the source distribution, then the wheel
from it), installed in a fresh virtual environment in a temporary directory, and run from elsewhere with no clone in
sight, it serves the embedded registry on `kernelindex serve` (the README's query answers as the README shows) and
answers `schema`, `new`, `show`, `cite` and `lookup`; `python -m kernelindex` is the same command.

It is installed by name and version from a folder of distributions (`--find-links`), as from a package index after a
release: then it says so (`kernelindex version --pip` is `kernelindex-registry==VERSION`) and writes the pull-request
workflows pinned to that version.
Installed read-only by one user and served by another, it serves all the same and writes nothing into the
install.

No network: the build backend comes from this environment (`--no-isolation`), and so do the wheel's dependencies
(tests/wheels.py says how the new environment sees them and nothing of this environment's install of the project).
The project itself comes from the wheel only: `import kernelindex` must resolve inside the new environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import httpx
import pytest
from helpers import EMBEDDED_REPO, PROJECT_ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_docs_examples import EXAMPLES, subtree
from users import as_user, give_away, needs_root, unused_ids
from wheels import DISTRIBUTION, Dists, Venv, new_venv

from kernelindex import registry

pytestmark = pytest.mark.slow  # a build, a virtual environment, a server process

SEED_RUN = "sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308"  # the README's run
SEED_COHORT = "sha256:92bc0be5b5ce9f523be5faba2a4e34c39837aab389f3cfd25189af326e2daae0"


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Venv
    elsewhere: Path  # a working directory that is no clone

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.venv.run("kernelindex", *args, cwd=self.elsewhere, check=check)


def _wheel_version(wheel: Path) -> str:
    """The version the wheel's own metadata states (its METADATA file), not the project's."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        fields = archive.read(name).decode().split("\n\n")[0].splitlines()
    return next(line.removeprefix("Version: ") for line in fields if line.startswith("Version: "))


@pytest.fixture(scope="module")
def installed(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    venv = new_venv(root)
    version = _wheel_version(dists.wheel)
    venv.pip("install", "--quiet", "--no-deps", "--no-index", "--find-links", str(dists.wheel.parent),
             f"{DISTRIBUTION}=={version}")  # fmt: skip
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    return Installed(dists.wheel, venv, elsewhere)


def test_the_project_comes_from_the_wheel_alone(installed: Installed) -> None:
    code = (
        "import kernelindex.app, kernelindex.registry; print(kernelindex.app.__file__, kernelindex.registry.__file__)"
    )
    found = installed.venv.run("python", "-c", code, cwd=installed.elsewhere).stdout.split()
    assert all(Path(path).is_relative_to(installed.venv.purelib) for path in found), found


def test_python_dash_m_kernelindex_is_the_command(installed: Installed) -> None:
    as_module = installed.venv.run("python", "-m", "kernelindex", "--help", cwd=installed.elsewhere).stdout
    assert as_module.startswith("Usage: python -m kernelindex [OPTIONS] COMMAND [ARGS]...")
    assert as_module.replace("python -m kernelindex", "kernelindex", 1) == installed.run("--help").stdout


def test_the_wheel_carries_the_embedded_registry_byte_for_byte(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        packed = {
            name.removeprefix("kernelindex/embedded/manifests.git/"): hashlib.sha256(wheel.read(name)).hexdigest()
            for name in wheel.namelist()
            if name.startswith("kernelindex/embedded/manifests.git/")
        }
        schemas = [
            name
            for name in wheel.namelist()
            if name.startswith("kernelindex/registry/schemas/") and name.endswith(".json")
        ]
    clone = {
        str(path.relative_to(EMBEDDED_REPO)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in EMBEDDED_REPO.rglob("*")
        if path.is_file()
    }
    assert packed == clone
    assert len(schemas) == len(registry.KINDS)


def test_show_cite_and_lookup_read_the_embedded_registry(installed: Installed) -> None:
    shown = installed.run("show", "sol-submission-6709", "--kind", "BenchmarkRun").stdout
    assert f"digest:    {SEED_RUN}" in shown.splitlines()
    assert "kernelindex/embedded" not in shown  # a manifest, not a path
    cited = installed.run("cite", "sol-submission-6709").stdout
    assert SEED_RUN in cited and "/at/667fb1b393371afe7b1663540a73b8bc9ee41f9b/runs/" in cited  # the embedded main
    cohort = json.loads(installed.run("lookup", "cohort", SEED_COHORT[7:23], "--json").stdout)
    assert cohort["cohort"]["key"] == SEED_COHORT and cohort["cohort"]["size"] == 2
    refused = installed.run("add", "nothing.yaml", check=False)
    assert refused.returncode == 2 and "the embedded registry is only read" in refused.stderr


def test_schema_and_new_work_from_the_package(installed: Installed) -> None:
    schema = installed.run("schema", "benchmark-run").stdout
    shipped = Path(registry.__file__).parent / "schemas" / "benchmark-run.v1alpha1.schema.json"
    assert schema == shipped.read_text()
    written = installed.run("new", "benchmark-run", "--out", "mine/run.yaml")
    assert "mine/run.yaml" in written.stdout
    first = (installed.elsewhere / "mine" / "run.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=schemas/benchmark-run.v1alpha1.schema.json"
    assert (installed.elsewhere / "mine" / "schemas" / "benchmark-run.v1alpha1.schema.json").read_text() == schema


def test_an_install_by_name_pins_its_version(installed: Installed) -> None:
    """No record of a URL (pip writes none for an install by name): the requirement is the version, and the
    workflows it writes are the templates with that pin."""
    version = _wheel_version(installed.wheel)
    assert installed.run("version").stdout == f"{DISTRIBUTION} {version}\n"
    assert installed.run("version", "--pip").stdout == f"{DISTRIBUTION}=={version}\n"
    clone = installed.elsewhere / "manifests"
    subprocess.run(["git", "init", "--quiet", str(clone)], check=True)
    installed.run("workflows", str(clone))
    for target, template in (("kernelindex-check.yml", "manifests-pr-check.yml"),
                             ("kernelindex-report.yml", "manifests-pr-report.yml")):  # fmt: skip
        expected = (PROJECT_ROOT / "docs" / template).read_text()
        expected = expected.replace('  KERNELINDEX_PIN: "kernelindex-registry==0.1.0"\n',
                                    f'  KERNELINDEX_PIN: "{DISTRIBUTION}=={version}"\n')  # fmt: skip
        assert (clone / ".github" / "workflows" / target).read_text() == expected


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve_the_readme_query(command: list[str], env: dict[str, str], cwd: Path, api: Installed | None = None) -> str:
    """Run `command` (a `kernelindex serve`) until /healthz answers, ask it the README's query (and, given `api`, a
    lookup through it); stop it (SIGTERM: it stops as an operator stops it). Its first lines, on stderr."""
    (readme,) = [e for e in EXAMPLES if e.where.startswith("README.md")]
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([*command, "--port", str(port)], cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, process.stderr.read()
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the installed server did not become healthy"
            time.sleep(0.1)
        answer = httpx.post(f"{url}/graphql", json=readme.body, headers=readme.headers, timeout=60).json()
        assert subtree(readme.shown, answer) == []
        schema = httpx.get(f"{url}/schemas/benchmark-run.v1alpha1.schema.json", timeout=30)
        assert schema.headers["content-type"] == "application/schema+json"
        if api is not None:
            remote = json.loads(api.run("lookup", "cohort", SEED_COHORT, "--api", url, "--json").stdout)
            assert remote["cohort"]["key"] == SEED_COHORT
    finally:
        process.terminate()
        process.wait(timeout=60)
        banner = process.stderr.read()
        process.stderr.close()
    return banner


def _served(banner: str) -> Path:
    """The registry a server said it serves, on its first line."""
    line = next(line for line in banner.splitlines() if line.startswith("kernelindex: serving "))
    assert "(the embedded registry)" in line, line
    return Path(line.removeprefix("kernelindex: serving ").split(" (")[0])


def test_serve_answers_the_readme_query(installed: Installed) -> None:
    command = [str(installed.venv.bin / "kernelindex"), "serve"]
    banner = _serve_the_readme_query(command, installed.venv.env, installed.elsewhere, installed)
    served = _served(banner)
    assert served.is_relative_to(installed.venv.purelib)
    assert os.path.basename(served) == "manifests.git"


def _install(wheel: Path, venv: Path, python: str, *, copy_dependencies: bool = False) -> None:
    """A fresh virtual environment of `python` at `venv` with the wheel installed, and this environment's packages
    for its dependencies: named by a `.pth` file (the module's docstring says how), or copied into it."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    target = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(target),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    purelib = subprocess.run(
        [str(target), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if copy_dependencies:
        _copy_dependencies(Path(purelib))
    else:
        (Path(purelib) / "zz-dependencies-of-the-test.pth").write_text(_DEPENDENCIES + "\n")


def _copy_dependencies(site: Path) -> None:
    """Copy into `site` every file of the distributions the project requires, and those they require (with the
    extras asked for), as this environment has them installed."""
    found: dict[str, frozenset[str]] = {}
    wanted: list[tuple[str, frozenset[str]]] = [(_PROJECT, frozenset())]
    while wanted:
        name, extras = wanted.pop()
        key = canonicalize_name(name)
        if key in found and extras <= found[key]:
            continue
        found[key] = found.get(key, frozenset()) | extras
        for text in metadata.distribution(name).requires or []:
            required = Requirement(text)
            if required.marker is None or any(required.marker.evaluate({"extra": e}) for e in {"", *extras}):
                wanted.append((required.name, frozenset(required.extras)))
    for listed in sorted(found.keys() - {canonicalize_name(_PROJECT)}):  # the project itself: from the wheel
        distribution = metadata.distribution(listed)
        for file in distribution.files or []:
            if ".." not in file.parts:  # a script or data file outside site-packages
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(str(distribution.locate_file(file))), site / file)


_PROJECT = "kernelindex-registry"
_DEPENDENCIES = sysconfig.get_paths()["purelib"]
"""Where this environment's packages are: the installed wheel's dependencies."""


def _files(root: Path) -> dict[str, str]:
    """Every file, link and folder under `root`, each with what it holds (a digest, a link's target)."""
    found: dict[str, str] = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder, name)
            where = str(path.relative_to(root))
            if path.is_symlink():
                found[where] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[where] = "folder"
            else:
                found[where] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _open_to_others(path: Path) -> bool:
    """Whether any user may reach `path` (its real path) by the permission bits: every folder above it searchable by
    others, and the path itself readable and, when it is a program, executable by them."""
    real = path.resolve()
    wanted = stat.S_IROTH | (stat.S_IXOTH if real.is_dir() or os.access(real, os.X_OK) else 0)
    try:
        return (real.stat().st_mode & wanted) == wanted and all(p.stat().st_mode & stat.S_IXOTH for p in real.parents)
    except OSError:
        return False


def _python_for(uid: int) -> str:
    """An interpreter of this Python (the version the copied packages are built for) that user `uid` can run: this
    one may live in root's home."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [f"/usr/bin/python{version}", f"/usr/local/bin/python{version}", sys.executable]
    for candidate in dict.fromkeys(c for c in candidates if Path(c).is_file() and _open_to_others(Path(c))):
        ran = subprocess.run(
            [*as_user(uid), candidate, "-c", "import sys; print(sys.version_info[:2])"],
            cwd="/",
            capture_output=True,
            text=True,
            check=False,
        )
        if ran.returncode == 0 and ran.stdout.strip() == str(sys.version_info[:2]):
            return candidate
    pytest.skip(f"no Python {version} that another user can run (its folders must be open to others)")


@needs_root
def test_a_read_only_install_by_one_user_serves_another(dists: Dists) -> None:
    """A wheel installed by one user and served by another, with the install read-only, answers the README's query,
    and the install folder holds the same files before and after: the server's caches are in its own user's cache
    folder. The users are ids no account has (tests/users.py). pytest's folders are root's alone, and so may this
    environment be, so the install is made in the system's temporary folder with its dependencies copied in."""
    installer, server = unused_ids(2)
    python = _python_for(server)
    top = Path(tempfile.mkdtemp(prefix="kernelindex-wheel-"))
    try:
        top.chmod(0o755)
        venv, home = top / "venv", top / "home"
        _install(dists.wheel, venv, python, copy_dependencies=True)  # this environment may be out of the user's reach
        give_away(venv, installer)
        subprocess.run(["chmod", "-R", "a-w", str(venv)], check=True)
        (home / "elsewhere").mkdir(parents=True)
        give_away(home, server)
        before = _files(venv)
        env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
        command = [*as_user(server), str(venv / "bin" / "kernelindex"), "serve"]
        served = _served(_serve_the_readme_query(command, env, home / "elsewhere"))
        assert _files(venv) == before
        assert served.is_relative_to(venv) and served.stat().st_uid == installer
        key = f"manifests.git-{hashlib.sha256(str(served.resolve()).encode()).hexdigest()[:16]}"
        folder = home / ".cache" / "kernelindex" / key
        assert sorted(p.name for p in folder.iterdir()) == ["graphcache", "integrity"]
        assert {p.stat().st_uid for p in (folder, *folder.iterdir())} == {server}
    finally:
        shutil.rmtree(top)
