"""The serving process of `kernelindex serve`: the application on uvicorn, with zero-downtime hand-over.

`kernelindex serve` parses its options, checks the registry and the settings, says where it serves, then
replaces itself (`exec`, the same process id) with `python -m kernelindex.serving.process`, which reads the settings
from the
environment it was given (as a worker or a successor reads them). Every module a process imports stays resident
for its life: the command line's (typer, and pydantic, which typer coerces every option through, and
every other command's modules) are ~10 MB that a server never uses again. A `serve` that does not own its
process (called from Python, not as the command) serves in place with `run`, the same code.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import uvicorn

import kernelindex
from kernelindex.core.settings import Settings, plain_mode

__all__ = ["options", "replace_process", "run"]

_PID_FILE = "--pid-file"


def options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for a server of `settings` (one process or workers)."""
    found: dict[str, Any] = {}
    if plain_mode():  # uvicorn's own protocol, as it chooses it
        return found | _common(settings)
    with contextlib.suppress(ImportError):  # no httptools on this platform: uvicorn's own h11 protocol
        from kernelindex.serving.wire import HttpProtocol

        # A response's head leaves with its body (one write, not two); a request's head has a deadline and a size.
        found["http"] = functools.partial(
            HttpProtocol, head_timeout=settings.header_timeout, max_header_bytes=settings.max_header_bytes
        )
    return found | _common(settings)


def _common(settings: Settings) -> dict[str, Any]:
    return {
        "log_level": "info" if settings.debug else "warning",
        "access_log": settings.debug,
        # uvicorn would take the client's address from X-Forwarded-For of any loopback peer; who a client is
        # is decided in one place, from the configured trusted proxies only (kernelindex.core.clients).
        "proxy_headers": False,
        # No route is a WebSocket: uvicorn's default ("auto") imports a WebSocket library into every server.
        "ws": "none",
    }


def run(settings: Settings, *, pid_file: Path | None = None, environment: Mapping[str, str] | None = None) -> None:
    """Serve `settings` in this process until stopped (a successor, on SIGHUP, is given `environment`)."""
    from kernelindex.app import create_app
    from kernelindex.serving.handover import Draining, HandoverServer, listening_socket

    application = create_app(settings)
    draining = Draining(application)
    config = uvicorn.Config(draining, host=settings.host, port=settings.port, lifespan="on", **options(settings))
    listener = listening_socket(config, settings.listen_fd)
    server = HandoverServer(
        config,
        draining,
        warm=application.state.server.serving,
        predecessor=settings.handover_from,
        pid_file=pid_file,
        environment=environment,
    )
    server.run(sockets=[listener])


def replace_process(environment: Mapping[str, str], pid_file: Path | None) -> None:
    """Become the serving process (never returns): this process's environment with `environment` over it,
    the interpreter's own options kept (`-X`, `-W`, `-O`...), standard streams and inherited sockets kept."""
    sys.stdout.flush()
    sys.stderr.flush()
    # The options multiprocessing gives the processes it spawns (interpreter flags and -X options).
    interpreter_flags: Callable[[], list[str]] = getattr(subprocess, "_args_from_interpreter_flags")  # noqa: B009
    command = [sys.executable, *interpreter_flags(), "-P", "-m", "kernelindex.serving.process"]
    if pid_file is not None:
        command += [_PID_FILE, str(pid_file)]
    env = {**os.environ, **environment}
    # This very package (-P: never another `kernelindex` that the working directory may hold), also where this
    # process found it only through its working directory (`python -m kernelindex` in a checkout).
    root = os.path.realpath(Path(kernelindex.__file__).resolve().parent.parent)
    cwd = os.path.realpath(os.getcwd())
    if root not in {os.path.realpath(entry) for entry in sys.path if entry} - {cwd}:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (root, env.get("PYTHONPATH"))))
    os.execve(sys.executable, command, env)


def main(argv: list[str]) -> int:
    """`python -m kernelindex.serving.process [--pid-file F]`: serve the settings of this environment; the exit
    status."""
    pid_file = Path(argv[argv.index(_PID_FILE) + 1]) if _PID_FILE in argv else None
    try:
        settings = Settings.from_env(os.environ)
        run(settings, pid_file=pid_file)  # the command's options are in this environment: a successor inherits them
    except KeyboardInterrupt:  # before uvicorn handles signals (while loading): as the command line says it
        print("kernelindex: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence, as the command line's: no traceback unless asked
        if os.environ.get("KERNELINDEX_DEBUG", "") not in ("", "0"):
            raise
        print(
            f"kernelindex: internal error: {type(exc).__name__}: {exc} (set KERNELINDEX_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
