"""Who a command writes as: `--author 'Name <email>'` or git's `user.*`, and the SSH key that signs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import typer

from kernelindex import registry

__all__ = ["git_config", "identity", "signer_for"]


def git_config(store: registry.GitStore, key: str) -> str:
    """A git setting as the repository sees it (its own config, then the user's)."""
    result = subprocess.run(
        ["git", "--git-dir", str(store.git_dir), "config", "--get", key], capture_output=True, text=True, check=False
    )
    return result.stdout.strip()


def identity(value: str | None, store: registry.GitStore, which: str) -> tuple[str, str]:
    """The (name, email) a command writes as: `--<which> 'Name <email>'`, else git's `user.*`; refused, saying
    where and why, when git cannot record it (an empty name or email, an angle bracket inside one)."""
    if value:
        name, _, rest = value.partition("<")
        if not rest.endswith(">") or not name.strip():
            raise typer.BadParameter(f"{value!r}: expected 'Name <email>'", param_hint=f"--{which}")
        name, email = name.strip(), rest[:-1].strip()
        problem = registry.provenance.identity_problem(name, email)
        if problem is not None:
            raise typer.BadParameter(f"{value!r}: {problem}", param_hint=f"--{which}")
        return name, email
    name, email = git_config(store, "user.name"), git_config(store, "user.email")
    if not name or not email:
        raise typer.BadParameter(
            "no identity: pass --author 'Name <email>' or set git config user.name/user.email",
            param_hint=f"--{which}",
        )
    problem = registry.provenance.identity_problem(name, email)
    if problem is not None:
        raise typer.BadParameter(f"git config user.name/user.email: {problem}", param_hint=f"--{which}")
    return name, email


def signer_for(store: registry.GitStore, key: Path | None) -> Callable[[bytes], bytes]:
    from kernelindex.registry.signatures import ssh_signer

    if key is None:
        configured = git_config(store, "user.signingkey")
        if not configured:
            raise typer.BadParameter(
                "no key: pass --signing-key or set git config user.signingkey", param_hint="--sign"
            )
        if git_config(store, "gpg.format") not in ("ssh", ""):
            raise typer.BadParameter("only SSH signatures count here: git config gpg.format ssh", param_hint="--sign")
        key = Path(configured).expanduser()
    return ssh_signer(key)
