"""What this kernelindex is and what installs it again: `version` (`--pip`: the pip requirement that installs exactly
this installation), and `workflows`, which writes the pull-request check's two workflows into a manifests repository
pinned to that requirement.

The requirement is read from the installation's own record, the `direct_url.json` of its dist-info (PEP 610), which
pip writes for an install from a URL, a version-control URL, an archive or a local directory, and not for an install
by name from an index:

- by name from an index: `kernelindex-registry==VERSION`;
- from a version-control URL: `kernelindex-registry @ git+URL@COMMIT`, the commit pip checked out;
- from an archive: `kernelindex-registry @ URL`, with its hash when pip recorded one;
- from a directory (`pip install .`, `pip install -e .`): the clone's HEAD commit, `kernelindex-registry @
  git+file:///CLONE@COMMIT`. When that commit is on a branch of an `origin` that is an http(s) URL (as of the last
  fetch: `git for-each-ref --contains`), the requirement names origin instead, `git+https://HOST/PATH@COMMIT`: the
  same commit, fetchable wherever origin is, which a path on this machine is not. Credentials in origin's URL are
  left out: the requirement is printed and written into workflow files. Changes not committed are in no commit;
  the command says so on stderr.

A requirement that names a path on this machine installs nowhere else: `workflows` refuses to pin one (GitHub's
runner cannot read it) and asks for `--pin`.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit
from urllib.request import url2pathname

import typer

from kernelindex.cli.console import err, guarded

__all__ = [
    "DISTRIBUTION",
    "WORKFLOWS",
    "Provenance",
    "UnknownProvenance",
    "pinned_workflows",
    "provenance",
    "version",
    "workflows",
]

DISTRIBUTION = "kernelindex-registry"

WORKFLOWS = {
    ".github/workflows/kernelindex-check.yml": "manifests-pr-check.yml",
    ".github/workflows/kernelindex-report.yml": "manifests-pr-report.yml",
}
"""Where each template of docs/ (shipped as kernelindex/cli/workflows/) goes in a manifests repository, as the
check's header says."""

PIN_LINE = re.compile(r"^(  KERNELINDEX_PIN: ).*$", re.MULTILINE)
"""The line of the check's template that names what it installs (its `env:`)."""


class UnknownProvenance(Exception):
    """This installation's record says nothing pip can install again."""


@dataclass(frozen=True)
class Provenance:
    requirement: str
    """pip's requirement that installs this installation again."""
    source: str
    """index, vcs, archive, clone or directory."""
    portable: bool
    """Whether the requirement installs on another machine: it names no path on this one."""
    notes: tuple[str, ...] = ()
    """What the requirement leaves out, or where it installs only."""


def provenance(dist: Distribution | None = None) -> Provenance:
    """The requirement that installs `dist` (default: this installation of kernelindex) again, from its record."""
    if dist is None:
        dist = distribution(DISTRIBUTION)
    name = dist.metadata["Name"]
    text = dist.read_text("direct_url.json")
    if text is None:
        return Provenance(f"{name}=={dist.version}", "index", True)
    try:
        record = json.loads(text)
        url = str(record["url"])
    except (ValueError, KeyError, TypeError) as exc:
        raise UnknownProvenance(f"its direct_url.json is not a PEP 610 record: {exc}") from None
    subdirectory = [f"subdirectory={record['subdirectory']}"] if record.get("subdirectory") else []
    local = urlsplit(url).scheme == "file"
    elsewhere = (f"it names {_path(url)} on this machine",) if local else ()
    if isinstance(vcs := record.get("vcs_info"), dict):
        requirement = f"{name} @ {vcs['vcs']}+{url}@{vcs['commit_id']}{_fragment(subdirectory)}"
        return Provenance(requirement, "vcs", not local, elsewhere)
    if isinstance(archive := record.get("archive_info"), dict):
        return Provenance(f"{name} @ {url}{_fragment(_hash(archive) + subdirectory)}", "archive", not local, elsewhere)
    if isinstance(directory := record.get("dir_info"), dict) and local:
        return _from_directory(name, Path(_path(url)), editable=bool(directory.get("editable")))
    raise UnknownProvenance(f"its direct_url.json names neither a repository, an archive nor a directory: {url}")


def _path(url: str) -> str:
    return url2pathname(urlsplit(url).path)  # which undoes the URL's percent-escapes


def _fragment(parts: list[str]) -> str:
    return "#" + "&".join(parts) if parts else ""


def _hash(archive: dict[str, Any]) -> list[str]:
    """The archive's hash as pip checks one in a URL's fragment (`sha256=HEX`), when pip recorded one."""
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and hashes:
        algorithm = "sha256" if "sha256" in hashes else sorted(hashes)[0]
        return [f"{algorithm}={hashes[algorithm]}"]
    legacy = archive.get("hash")
    return [legacy] if isinstance(legacy, str) and "=" in legacy else []


def _git(cwd: Path, *args: str) -> str | None:
    """git's answer in `cwd`, or None when git fails (no repository, no such ref) or is missing."""
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _from_directory(name: str, path: Path, editable: bool) -> Provenance:
    top = _git(path, "rev-parse", "--show-toplevel")
    commit = _git(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") if top else None
    if top is None or commit is None:
        return Provenance(
            f"{name} @ {path.as_uri()}",
            "directory",
            False,
            (f"{path} is no git clone with a commit: the requirement names the directory, as it is when installed",),
        )
    sub = Path(path).resolve().relative_to(Path(top).resolve()).as_posix()
    fragment = _fragment([f"subdirectory={sub}"] if sub != "." else [])
    notes: list[str] = []
    if not editable:
        notes.append(f"installed from a copy of {top}: the requirement names the clone's HEAD now, {commit[:12]}")
    if _git(Path(top), "status", "--porcelain"):
        notes.append(f"{top} has changes not committed, which the requirement ({commit[:12]}) leaves out")
    origin = _https_origin(Path(top), commit)
    if origin is not None:
        return Provenance(f"{name} @ git+{origin}@{commit}{fragment}", "clone", True, tuple(notes))
    notes.append(
        f"it names {top} on this machine; when {commit[:12]} is on a branch of an https origin (pushed, then "
        "fetched), it names that instead"
    )
    return Provenance(f"{name} @ git+{Path(top).as_uri()}@{commit}{fragment}", "clone", False, tuple(notes))


def _https_origin(top: Path, commit: str) -> str | None:
    """origin's URL without credentials, when it is http(s) and a branch of it holds `commit` (as last fetched)."""
    url = _git(top, "remote", "get-url", "origin")
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return None
    if not _git(top, "for-each-ref", "--contains", commit, "--format=%(refname)", "refs/remotes/origin/"):
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def pinned_workflows(pin: str) -> dict[str, str]:
    """The two workflow files by their path in a manifests repository: the templates, the check's pin set to `pin`
    (a YAML double-quoted string: a requirement holds spaces and `@`). A pin that is not pip's requirement of
    kernelindex-registry is a ValueError."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        parsed = Requirement(pin)
    except InvalidRequirement as exc:
        raise ValueError(f"{pin!r} is not a pip requirement: {exc}") from None
    if canonicalize_name(parsed.name) != DISTRIBUTION or parsed.marker is not None or "\n" in pin:
        raise ValueError(f"{pin!r} is not a requirement of {DISTRIBUTION} alone (no marker)")
    templates = files("kernelindex.cli") / "workflows"
    written: dict[str, str] = {}
    for target, template in WORKFLOWS.items():
        text = (templates / template).read_text(encoding="utf-8")
        if template == WORKFLOWS[".github/workflows/kernelindex-check.yml"]:
            text, replaced = PIN_LINE.subn(lambda found: found[1] + json.dumps(pin), text)
            assert replaced == 1, f"{template}: expected one KERNELINDEX_PIN line, found {replaced}"
        written[target] = text
    return written


def _installed() -> Provenance:
    try:
        return provenance()
    except PackageNotFoundError:
        err(f"kernelindex: {DISTRIBUTION} is not installed (this kernelindex runs from a checkout on the path)")
        raise typer.Exit(1) from None
    except UnknownProvenance as exc:
        err(f"kernelindex: what installed {DISTRIBUTION} is not known: {exc}")
        raise typer.Exit(1) from None


def version(
    pip: Annotated[
        bool, typer.Option("--pip", help="Print the pip requirement that installs exactly this installation again.")
    ] = False,
) -> None:
    """Print this kernelindex's version, or (--pip) the pip requirement that installs it again."""
    if not pip:
        try:
            typer.echo(f"{DISTRIBUTION} {distribution(DISTRIBUTION).version}")
        except PackageNotFoundError:
            err(f"kernelindex: {DISTRIBUTION} is not installed (this kernelindex runs from a checkout on the path)")
            raise typer.Exit(1) from None
        return
    found = _installed()
    for note in found.notes:
        err(f"kernelindex: note: {note}")
    typer.echo(found.requirement)


@guarded
def workflows(
    folder: Annotated[
        Path,
        typer.Argument(metavar="DIR", help="A clone of the manifests repository (default: the current directory)."),
    ] = Path(),
    pin: Annotated[
        str | None,
        typer.Option(
            "--pin",
            help="The pip requirement the check installs (default: this installation's, `kernelindex version --pip`).",
        ),
    ] = None,
) -> None:
    """Write the pull-request check's two workflows into a manifests repository, pinned to this kernelindex."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if not top:
        err(f"kernelindex: {folder} is in no work tree of a git repository: the workflows go in its .github/workflows/")
        raise typer.Exit(1)
    if pin is None:
        found = _installed()
        if not found.portable:
            err(
                f"kernelindex: this installation's requirement, {found.requirement}, installs only on this machine "
                f"({'; '.join(found.notes)}): GitHub's runner could not install it. Pass --pin with one that "
                "installs there (a pushed commit: kernelindex-registry @ git+https://HOST/PATH@COMMIT)."
            )
            raise typer.Exit(1)
        pin = found.requirement
    try:
        written = pinned_workflows(pin)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--pin") from None
    for target, text in written.items():
        path = Path(top) / target
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            typer.echo(f"unchanged  {target}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        typer.echo(f"wrote      {target}")
    typer.echo(f"pinned:    {pin}")
    typer.echo("next: commit both on main (a pull request may not change .github/: a maintainer's signed commit does)")
