"""SSH signatures: checking one signed payload against an allowed-signers file, and signing.

`ssh-keygen -Y verify` (namespace `git`) does the cryptography. Which allowed-signers file a
commit is checked against (the policy in force before it) is `kernelindex.registry.trust`'s business.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from kernelindex.registry.errors import RegistryError
from kernelindex.registry.provenance import SignatureCheck

__all__ = ["POLICY_PATH", "check_signature", "ssh_signer"]

POLICY_PATH = "policy/maintainers"
_NAMESPACE = "git"
_TIMEOUT = 10
_SIGN_TIMEOUT = 60  # signing may wait on ssh-agent


def check_signature(
    payload: bytes, signature: bytes, allowed_signers: bytes, *, timeout: float = _TIMEOUT
) -> SignatureCheck:
    """Run `ssh-keygen -Y find-principals` then `-Y verify` on one signed payload; each may take
    `timeout` seconds before the signature is refused as unchecked."""
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
                timeout=timeout,
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
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return SignatureCheck(signed=True, verified=False, signer=principal, reason="ssh-keygen timed out")
        if verified.returncode != 0:
            detail = verified.stderr.decode(errors="replace").strip().splitlines()
            reason = f"the signature does not verify: {detail[-1] if detail else 'rejected by ssh-keygen'}"
            return SignatureCheck(signed=True, verified=False, signer=principal, reason=reason)
        return SignatureCheck(signed=True, verified=True, signer=principal)


def ssh_signer(key: Path, *, timeout: float = _SIGN_TIMEOUT) -> Callable[[bytes], bytes]:
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
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RegistryError("cannot sign: ssh-keygen timed out (a passphrase prompt?)") from None
        if result.returncode != 0 or b"BEGIN SSH SIGNATURE" not in result.stdout:
            detail = result.stderr.decode(errors="replace").strip() or "no signature produced"
            raise RegistryError(f"cannot sign with {key}: {detail}")
        return result.stdout

    return sign
