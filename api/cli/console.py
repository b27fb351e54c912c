"""What every command writes: one line per error on stderr (exit status 1), JSON on stdout, a progress bar."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer

from kernelindex import registry

__all__ = ["Progress", "emit_json", "err", "guarded", "progress_bar"]

F = TypeVar("F", bound=Callable[..., Any])
Progress = Callable[[str, int, int], None]
"""(stage, done, total): where a long command is."""


def err(line: str) -> None:
    typer.echo(line, err=True)


def emit_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def guarded(command: F) -> F:
    """A command whose registry errors become located lines and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (registry.InvalidManifest, registry.RejectedChange) as exc:
            for problem in exc.problems:
                err(str(problem))
            raise typer.Exit(1) from None
        except registry.RegistryError as exc:
            err(f"kernelindex: {exc}")
            raise typer.Exit(1) from None
        except OSError as exc:
            err(f"kernelindex: {exc.filename or ''}: {exc.strerror or exc}")
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Progress]:
    """A progress bar on stderr when it is a terminal; silent otherwise."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda stage, done, total: None
        return
    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update
