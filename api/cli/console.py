"""What every command writes: one line per error on stderr (exit status 1), JSON on stdout, a progress bar.

Whatever a command prints passes through `visible` first (`echo`, `err`, `emit_json`, `dumps`, and the tables'
cells): text from a served registry, a manifest, a commit or an upstream file is never trusted with a terminal.
Control characters (ESC, CR, BEL, the C1 controls), format characters (U+202E and the other bidirectional
overrides, zero-width spaces) and line separators are written as Python escapes (`\\x1b`, `\\r`,
`\\u202e`), so no sequence can retitle a window, plant a link, clear the screen, recolour or overwrite a line,
or reorder what is shown; accented and CJK text, and emoji, print as themselves.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import typer

from kernelindex import registry

__all__ = [
    "Progress",
    "answered_by",
    "dumps",
    "echo",
    "emit_json",
    "err",
    "guarded",
    "progress_bar",
    "visible",
]

F = TypeVar("F", bound=Callable[..., Any])
Progress = Callable[[str, int, int], None]
"""(stage, done, total): where a long command is."""

# Unicode's general categories a terminal acts on rather than shows: controls (Cc: ESC, CR, BEL, DEL, the C1
# controls), format characters (Cf: the bidirectional overrides and isolates, zero-width spaces, soft hyphens),
# surrogates (Cs: no encoder writes one alone) and the line and paragraph separators (Zl, Zp).
_ACTED_ON = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Format characters that spell words rather than steer the terminal: the zero-width joiner and non-joiner (Persian
# and Indic writing, emoji sequences) print as themselves.
_SPELLING = frozenset("\u200c\u200d")

_SERVER: ContextVar[str | None] = ContextVar("kernelindex_cli_server", default=None)
# What a command's code raises when an answer it reads is not the shape its document asked for.
_MISFITS = (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError)


def _shown(character: str, keep: str) -> str:
    if character.isprintable() or character in keep or character in _SPELLING:
        return character
    if unicodedata.category(character) in _ACTED_ON:
        return repr(character)[1:-1]  # \x1b, \r, \u202e, \U000e0001: as Python writes it
    return character  # spaces other than U+0020, private use, unassigned: shown, never obeyed


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every character a terminal would act on written as its escape: one line, unless `lines`,
    when newlines and tabs stay (a manifest's text, a report). A backslash is itself.

    >>> visible("ok\\x1b]0;pwned\\x07 \\r\\u202eevil [red]x[/] Café 東京")
    'ok\\\\x1b]0;pwned\\\\x07 \\\\r\\\\u202eevil [red]x[/] Café 東京'
    >>> visible("a\\tb\\nc", lines=True) == "a\\tb\\nc", visible("a\\tb\\nc")
    (True, 'a\\\\tb\\\\nc')
    """
    if text.isprintable():
        return text  # the common case, at C speed: nothing a terminal acts on
    keep = "\t" if lines else ""
    parts = text.split("\n") if lines else [text]
    return "\n".join(part if part.isprintable() else "".join(_shown(c, keep) for c in part) for part in parts)


def _json_escape(character: str) -> str:
    if character.isprintable() or character in _SPELLING or unicodedata.category(character) not in _ACTED_ON:
        return character
    # A character beyond the BMP as its UTF-16 pair, as JSON writes one (RFC 8259, section 7).
    units = character.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))


def dumps(value: Any, *, indent: int | None = None, separators: tuple[str, str] | None = None) -> str:
    """`value` as JSON for a terminal: the same value for any JSON reader, with every character a terminal would
    act on (DEL, the C1 controls, U+202E...) written as a `\\u` escape; json.dumps already escapes the C0 controls.

    >>> print(dumps({"name": "a\\u202eb\\x9b\\x1b", "city": "Zürich"}))
    {"name": "a\\u202eb\\u009b\\u001b", "city": "Zürich"}
    """
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
    if text.isprintable():
        return text
    return "\n".join(line if line.isprintable() else "".join(map(_json_escape, line)) for line in text.split("\n"))


def echo(text: str, *, lines: bool = False) -> None:
    """Print `text` on stdout, made `visible` (one line unless `lines`)."""
    typer.echo(visible(text, lines=lines))


def err(line: str) -> None:
    """Print one line on stderr, made `visible`."""
    typer.echo(visible(line), err=True)


def emit_json(value: Any) -> None:
    typer.echo(dumps(value, indent=2))


def answered_by(server: str) -> None:
    """Say that the command is reading an answer of the served registry at `server`: from here on, an answer
    that does not fit its query is that server's fault, reported as such by `guarded`."""
    _SERVER.set(server)


def guarded(command: F) -> F:
    """A command whose registry errors become located lines and exit status 1; so does an answer of a served
    registry the command cannot read (a field missing, of another type), naming the server."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _SERVER.set(None)
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
        except _MISFITS as exc:  # after the registry's own errors, some of which are ValueErrors
            server = _SERVER.get()
            if server is None:
                raise  # a local registry's answer: a bug of ours, reported as one by `main`
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            err(f"kernelindex: {server}: the answer does not fit the query ({detail})")
            raise typer.Exit(1) from None
        finally:
            _SERVER.reset(token)

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
