"""pygit2 is loaded without the TLS trust store libgit2 builds at its start (`kernelindex.registry.git_binding`).

Observed from outside a fresh interpreter: the trust store named by `SSL_CERT_FILE` is a FIFO here, and a
thread of the test holds its other end. Opening a FIFO to write returns only once a reader opens it, so
when the interpreter has exited, that thread has returned if and only if something in the interpreter
opened the bundle."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest


def _opens_the_bundle(code: str, bundle: Path) -> tuple[bool, str]:
    """Whether a fresh interpreter running `code` opened `bundle` (a FIFO), and what it printed."""
    os.mkfifo(bundle)

    def offer() -> None:
        descriptor = os.open(bundle, os.O_WRONLY)  # returns once a reader opens the FIFO
        os.close(descriptor)  # the reader sees an empty bundle

    writer = threading.Thread(target=offer, daemon=True)
    writer.start()
    environment = {**os.environ, "SSL_CERT_FILE": str(bundle)}
    finished = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120, check=False
    )
    opened = not writer.is_alive()
    if not opened:  # let the writer go: this test is its reader
        os.close(os.open(bundle, os.O_RDONLY))
        writer.join()
    assert finished.returncode == 0, finished.stderr
    return opened, finished.stdout.strip()


def test_libgit2_reads_the_trust_store_when_it_starts(tmp_path: Path) -> None:
    """What the binding exists for: a plain `import pygit2` reads the CA bundle (when this fails, libgit2
    no longer does, and `kernelindex.registry.git_binding` can go)."""
    opened, _ = _opens_the_bundle("import pygit2", tmp_path / "bundle.pem")
    assert opened


def test_the_registry_loads_pygit2_without_reading_it(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.pem"
    code = "import os, kernelindex.registry.store; print(os.environ['SSL_CERT_FILE'])"
    opened, printed = _opens_the_bundle(code, bundle)
    assert not opened
    assert printed == str(bundle)  # put back for the process's other libraries and its commands


@pytest.mark.parametrize(
    "code",
    [
        "import os, kernelindex.registry.store; print('SSL_CERT_FILE' in os.environ)",
        # pygit2 already loaded: the registry takes it as it is, and leaves the variable alone too.
        "import os, pygit2, kernelindex.registry.store; print('SSL_CERT_FILE' in os.environ)",
    ],
    ids=["registry first", "pygit2 first"],
)
def test_an_unset_trust_store_stays_unset(code: str) -> None:
    environment = {name: value for name, value in os.environ.items() if name != "SSL_CERT_FILE"}
    finished = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120, check=True
    )
    assert finished.stdout.strip() == "False"
