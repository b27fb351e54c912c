"""SSH commit signatures against the maintainers policy (`policy/maintainers`, OpenSSH allowed-signers).

A commit's signature counts when `ssh-keygen -Y verify` (namespace `git`) accepts it for a
principal listed in `policy/maintainers` of the commit's first parent: a change cannot vouch
for itself. The one exception is the initial policy commit, the one that first introduces
`policy/maintainers` into a history without one: it is checked against the policy it
introduces (someone has to be first; DESIGN section 4). Once a policy exists, only its
maintainers can change it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from registry.errors import RegistryError
from registry.provenance import CommitInfo, SignatureCheck
from registry.store import GitStore

__all__ = ["POLICY_PATH", "check_signature", "maintainers_at", "ssh_signer", "verify_commit"]

POLICY_PATH = "policy/maintainers"
_NAMESPACE = "git"
_TIMEOUT = 10


def maintainers_at(store: GitStore, commit: str | None) -> bytes | None:
    """The allowed-signers file at `commit`, or None when there is none."""
    if commit is None:
        return None
    found = store.find_path(commit, POLICY_PATH)
    if found is None or found[1] != 0o100644:
        return None
    return store.read_blob(found[0])


def verify_commit(store: GitStore, info: CommitInfo) -> SignatureCheck:
    """Whether `info` carries an SSH signature by a maintainer of its parent's policy."""
    if info.signature is None or info.signed_payload is None:
        return SignatureCheck(signed=False, verified=False, reason="unsigned")
    if b"-----BEGIN SSH SIGNATURE-----" not in info.signature:
        return SignatureCheck(signed=True, verified=False, reason="not an SSH signature (only SSH signatures count)")
    allowed = maintainers_at(store, info.parents[0] if info.parents else None)
    if allowed is None:
        allowed = maintainers_at(store, info.id)  # the initial policy commit vouches with its own policy
    if not allowed or not allowed.strip():
        return SignatureCheck(signed=True, verified=False, reason=f"no {POLICY_PATH} to check it against")
    return check_signature(info.signed_payload, info.signature, allowed)


def check_signature(payload: bytes, signature: bytes, allowed_signers: bytes) -> SignatureCheck:
    """Run `ssh-keygen -Y find-principals` then `-Y verify` on one signed payload."""
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        return SignatureCheck(signed=True, verified=False, reason="ssh-keygen is not installed")
    with tempfile.TemporaryDirectory(prefix="kernelindex-sig-") as directory:
        signers = Path(directory) / "allowed_signers"
        signature_file = Path(directory) / "signature"
        signers.write_bytes(allowed_signers)
        signature_file.write_bytes(signature)
        try:
            found = subprocess.run(
                [keygen, "-Y", "find-principals", "-f", str(signers), "-s", str(signature_file), "-n", _NAMESPACE],
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return SignatureCheck(signed=True, verified=False, reason="ssh-keygen timed out")
        principals = found.stdout.decode(errors="replace").split()
        if found.returncode != 0 or not principals:
            return SignatureCheck(
                signed=True, verified=False, reason="signed by a key that policy/maintainers does not list"
            )
        principal = principals[0]
        try:
            verified = subprocess.run(
                [
                    keygen,
                    "-Y",
                    "verify",
                    "-f",
                    str(signers),
                    "-I",
                    principal,
                    "-n",
                    _NAMESPACE,
                    "-s",
                    str(signature_file),
                ],
                input=payload,
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return SignatureCheck(signed=True, verified=False, signer=principal, reason="ssh-keygen timed out")
        if verified.returncode != 0:
            detail = verified.stderr.decode(errors="replace").strip().splitlines()
            reason = f"the signature does not verify: {detail[-1] if detail else 'rejected by ssh-keygen'}"
            return SignatureCheck(signed=True, verified=False, signer=principal, reason=reason)
        return SignatureCheck(signed=True, verified=True, signer=principal)


def ssh_signer(key: Path) -> Callable[[bytes], bytes]:
    """Sign commit bytes with an SSH key (`ssh-keygen -Y sign -n git`), as `git commit -S` does
    with `gpg.format=ssh`. `key` is the private key, or a public key whose private half is in
    ssh-agent.

    Raises:
        RegistryError: ssh-keygen is missing or refuses to sign.
    """
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        raise RegistryError("cannot sign: ssh-keygen is not installed")
    if not key.exists():
        raise RegistryError(f"cannot sign: no key at {key}")

    def sign(payload: bytes) -> bytes:
        try:
            result = subprocess.run(
                [keygen, "-Y", "sign", "-n", _NAMESPACE, "-f", str(key)],
                input=payload,
                capture_output=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RegistryError("cannot sign: ssh-keygen timed out (a passphrase prompt?)") from None
        if result.returncode != 0 or b"BEGIN SSH SIGNATURE" not in result.stdout:
            detail = result.stderr.decode(errors="replace").strip() or "no signature produced"
            raise RegistryError(f"cannot sign with {key}: {detail}")
        return result.stdout

    return sign
