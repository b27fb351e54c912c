"""The commands that help write a manifest: `schema` (a kind's JSON Schema, the list of kinds, or every schema
written to a folder) and `new` (a starting YAML of a kind, whose first line points an editor at its schema).

An editor with a YAML language server (VS Code's YAML extension, Neovim's yamlls, JetBrains) reads the
`# yaml-language-server: $schema=...` line and completes and checks the manifest as it is typed. The line
names a schema file beside the manifest (`schemas/<kind>.v1alpha1.schema.json`, which `new --out` writes;
the language server resolves it against the manifest's folder) or, with `--schema-url`, the schema a served
registry answers at `/schemas/...`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernelindex.cli.console import emit_json, err, guarded
from kernelindex.cli.options import JsonOption
from kernelindex.registry.present import with_article

__all__ = ["new", "schema"]

SCHEMA_FOLDER = "schemas"
"""Where `new --out FILE` writes the schema its modeline names: this folder beside FILE."""


def _kind(text: str) -> str:
    """The kind a person names (name, slug or folder, any case); a usage error that suggests the nearest one."""
    from kernelindex.registry.schemas import find_kind, nearest_kind

    found = find_kind(text)
    if found is not None:
        return found
    near = nearest_kind(text)
    hint = f"did you mean {near}?" if near else "no kind is close to it."
    raise typer.BadParameter(
        f"{text!r} is not a kind of manifest; {hint} (`kernelindex schema --list` lists them)", param_hint="KIND"
    )


def _write(path: Path, text: str) -> str:
    """Write a file if its text differs; what was done, for the report line."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return "unchanged"
    except FileNotFoundError:
        pass
    except UnicodeDecodeError:
        pass  # not ours: replaced by the schema
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return "wrote"


@guarded
def schema(
    kind: Annotated[
        str | None, typer.Argument(metavar="KIND", help="A kind: BenchmarkRun, benchmark-run or benchmark-runs.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the kinds and their schema files.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the schema files into this folder (every kind's, or KIND's only)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Print a kind's JSON Schema (Draft 2020-12), list the kinds, or write the schemas into a folder."""
    from kernelindex.registry.kinds import KINDS
    from kernelindex.registry.schemas import kind_slug, schema_file_name, schema_text

    if list_:
        rows = [(name, kind_slug(name), info.folder, schema_file_name(name)) for name, info in sorted(KINDS.items())]
        if as_json:
            emit_json([{"kind": k, "slug": s, "folder": f, "file": n} for k, s, f, n in rows])
            return
        width = max(len(name) for name, *_ in rows)
        for name, _, folder, file in rows:
            typer.echo(f"{name:<{width}}  {file:<46}  {folder}/")
        return
    if out is not None:
        chosen = [_kind(kind)] if kind is not None else sorted(KINDS)
        paths = [(out / schema_file_name(name), name) for name in chosen]
        written = [(path, _write(path, schema_text(name))) for path, name in paths]
        if as_json:
            emit_json([{"file": str(path), "status": status} for path, status in written])
            return
        for path, status in written:
            typer.echo(f"{status:<10} {path}")
        return
    if kind is None:
        raise typer.BadParameter("give a KIND, --list, or --out DIR", param_hint="KIND")
    typer.echo(schema_text(_kind(kind)), nl=False)


@guarded
def new(
    kind: Annotated[str, typer.Argument(metavar="KIND", help="A kind: BenchmarkRun, benchmark-run or benchmark-runs.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help=f"Write the manifest here, and its schema into {SCHEMA_FOLDER}/ beside it."),
    ] = None,
    schema_url: Annotated[
        str | None,
        typer.Option(
            help="A served registry's URL (https://registry.example): the editor line names the schema it "
            "serves, and no schema file is written."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the --out file if it exists.")] = False,
) -> None:
    """Write a starting YAML manifest of a kind: the fields to fill, each with what goes there, and a first line
    that points an editor at the kind's schema (completion and checks as you type).

    The empty fields are placeholders: `kernelindex validate` refuses the file, naming each one, until every
    one is filled in.
    """
    from kernelindex.core.urls import Urls
    from kernelindex.registry.schemas import schema_file_name, schema_text
    from kernelindex.registry.schemas.starter import render_starter

    name = _kind(kind)
    file_name = schema_file_name(name)
    if schema_url is not None:
        if not schema_url.startswith(("https://", "http://")):
            raise typer.BadParameter(f"{schema_url!r}: expected an http(s) URL", param_hint="--schema-url")
        reference = Urls.of(schema_url).schema(file_name)
    else:
        reference = f"{SCHEMA_FOLDER}/{file_name}"
    starter = render_starter(name, schema_ref=reference)
    if out is None:
        typer.echo(starter.text, nl=False)
        if schema_url is None:
            err(f"kernelindex: the editor line names {reference}: `kernelindex schema {name} --out {SCHEMA_FOLDER}` "
                "writes it beside the file you save this in")  # fmt: skip
        return
    if out.exists() and not force:
        raise typer.BadParameter(f"{out} exists (--force replaces it)", param_hint="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(starter.text, encoding="utf-8")
    typer.echo(f"wrote      {out}  ({with_article(name)} with {len(starter.placeholders)} empty fields to fill)")
    if schema_url is None:
        path = out.parent / SCHEMA_FOLDER / file_name
        typer.echo(f"{_write(path, schema_text(name)):<10} {path}  (the schema its first line names)")
    typer.echo(f"next: fill them in, then `kernelindex validate {out}` (it names each one left empty)")
