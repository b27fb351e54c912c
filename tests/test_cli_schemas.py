"""`kernelindex schema` and `kernelindex new`: the shipped JSON Schemas for editors, and a starting manifest whose
first line points an editor at its schema and whose empty fields are exactly what `validate` then refuses.

Expected values come from the shipped files themselves (registry/schemas/*.schema.json, read as bytes) and from
the list of kinds in the docs' examples, never from the command's own code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import DOC_EXAMPLES
from jsonschemas import ecma_validator, errors_of
from typer.testing import CliRunner, Result

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.parse import load_document

SHIPPED = Path(registry.__file__).parent / "schemas"
MODELINE = "# yaml-language-server: $schema="


def _run(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def _shipped(file: str) -> str:
    return (SHIPPED / file).read_text(encoding="utf-8")


@pytest.mark.parametrize("spelling", ["BenchmarkRun", "benchmarkrun", "benchmark-run", "benchmark-runs"])
def test_schema_prints_the_shipped_file(runner: CliRunner, spelling: str) -> None:
    result = _run(runner, "schema", spelling)
    assert result.exit_code == 0
    assert result.stdout == _shipped("benchmark-run.v1alpha1.schema.json")


def test_schema_list_names_every_kind_and_its_file(runner: CliRunner) -> None:
    listed = json.loads(_run(runner, "schema", "--list", "--json").stdout)
    files = sorted(path.name for path in SHIPPED.glob("*.schema.json"))
    assert sorted(row["file"] for row in listed) == files and len(files) == 17
    assert {"kind": "WorkloadCase", "slug": "workload-case", "folder": "workload-cases"}.items() <= next(
        row for row in listed if row["kind"] == "WorkloadCase"
    ).items()
    lines = _run(runner, "schema", "--list").stdout.splitlines()
    assert len(lines) == 17 and all(line.split()[1] in files for line in lines)


def test_schema_out_writes_every_schema_then_changes_nothing(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    first = _run(runner, "schema", "--out", out)
    assert first.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in SHIPPED.glob("*.schema.json"))
    assert all((out / p.name).read_text() == p.read_text() for p in SHIPPED.glob("*.schema.json"))
    assert all(line.startswith("wrote ") for line in first.stdout.splitlines())
    again = _run(runner, "schema", "--out", out).stdout.splitlines()
    assert len(again) == 17 and all(line.startswith("unchanged ") for line in again)
    one = _run(runner, "schema", "retraction", "--out", tmp_path / "one")
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["retraction.v1alpha1.schema.json"]
    assert one.exit_code == 0


@pytest.mark.parametrize(
    ("given", "suggestion"),
    [("benchmrk-run", "did you mean BenchmarkRun?"), ("Enviroment", "did you mean ExecutionEnvironment?")],
)
def test_an_unknown_kind_is_a_usage_error_with_the_nearest(runner: CliRunner, given: str, suggestion: str) -> None:
    for command in (["schema", given], ["new", given]):
        result = _run(runner, *command)
        assert result.exit_code == 2
        assert f"Invalid value for KIND: {given!r} is not a kind of manifest; {suggestion}" in result.stderr


def test_a_kind_nothing_resembles_is_said_so(runner: CliRunner) -> None:
    result = _run(runner, "schema", "zzzz")
    assert result.exit_code == 2 and "no kind is close to it" in result.stderr


def test_schema_without_a_kind_or_an_option_is_a_usage_error(runner: CliRunner) -> None:
    result = _run(runner, "schema")
    assert result.exit_code == 2 and "give a KIND, --list, or --out DIR" in result.stderr


@pytest.mark.parametrize("kind", sorted(registry.KINDS))
def test_new_writes_a_starter_its_schema_and_validate_names_each_empty_field(
    runner: CliRunner, tmp_path: Path, kind: str
) -> None:
    """The modeline names a file beside the manifest (the schema, byte for byte); the schema and the validator
    both refuse the starter, the validator at exactly its empty fields."""
    from kernelindex.registry.schemas import schema_file_name
    from kernelindex.registry.schemas.starter import render_starter

    out = tmp_path / "work" / "my.yaml"
    result = _run(runner, "new", kind, "--out", out)
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    first = text.splitlines()[0]
    assert first == f"{MODELINE}schemas/{schema_file_name(kind)}"
    named = out.parent / first.removeprefix(MODELINE)
    assert named.read_text() == _shipped(schema_file_name(kind))
    document = load_document(text.encode(), "my.yaml")
    assert errors_of(ecma_validator(json.loads(named.read_text())), document) != []
    refused = _run(runner, "validate", out)
    assert refused.exit_code == 1
    paths = {line.split(": ")[1] for line in refused.stderr.splitlines()}
    placeholders = set(render_starter(kind, schema_ref="x").placeholders)
    assert paths == placeholders and placeholders


def test_new_refuses_to_replace_a_file_unless_forced(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    out.write_text("apiVersion: kept\n")
    result = _run(runner, "new", "benchmark-run", "--out", out)
    assert result.exit_code == 2 and "exists (--force replaces it)" in result.stderr
    assert out.read_text() == "apiVersion: kept\n"
    assert _run(runner, "new", "benchmark-run", "--out", out, "--force").exit_code == 0
    assert out.read_text().startswith(MODELINE)


def test_new_names_a_served_schema_and_writes_no_file(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "run.yaml"
    result = _run(runner, "new", "BenchmarkRun", "--out", out, "--schema-url", "https://registry.example/")
    assert result.exit_code == 0
    assert out.read_text().splitlines()[0] == (
        f"{MODELINE}https://registry.example/schemas/benchmark-run.v1alpha1.schema.json"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.yaml"]
    bad = _run(runner, "new", "BenchmarkRun", "--schema-url", "javascript:alert(1)")
    assert bad.exit_code == 2 and "expected an http(s) URL" in bad.stderr


def test_new_to_stdout_says_where_the_schema_goes(runner: CliRunner) -> None:
    result = _run(runner, "new", "software-project")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{MODELINE}schemas/software-project.v1alpha1.schema.json\n")
    assert "kernelindex schema SoftwareProject --out schemas" in result.stderr


def test_every_kind_of_the_docs_examples_has_a_starter(runner: CliRunner) -> None:
    """The docs show one example per kind: each of those kinds gets a starter (and no other kind exists)."""
    kinds = {load_document(p.read_bytes(), p.name)["kind"] for p in (DOC_EXAMPLES / "kinds").glob("*.yaml")}
    assert kinds == set(registry.KINDS)
    for kind in sorted(kinds):
        assert _run(runner, "new", kind).stdout.startswith(MODELINE)


def test_a_place_that_cannot_be_written_is_one_located_line(runner: CliRunner, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for command in (["new", "benchmark-run", "--out", str(blocker / "run.yaml")], ["schema", "--out", str(blocker)]):
        result = _run(runner, *command)
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"kernelindex: {blocker}") and "Traceback" not in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_a_starter_whose_empty_fields_are_filled_validates(
    runner: CliRunner, tmp_path: Path, basic_store: registry.GitStore
) -> None:
    """Filling in every empty field makes a valid run: the optional ones are commented out, not shown
    empty beside the required ones (`samples: null is not allowed` once the rest were filled)."""
    from helpers import basic_scenario, digest_of

    s = basic_scenario()
    plausible = {
        "name": "my-first-run",
        "implementationDigest": digest_of(s.implementations[0]),
        "workloadDigest": digest_of(s.workload),
        "protocolDigest": digest_of(s.protocol),
        "environmentDigest": digest_of(s.environment),
        "status": "passed",
        "comparator": "allclose",
        "primaryStatistic": "median",
        "median": "8.12 us",
        "digest": "sha256:" + "ab" * 32,
        "uri": "https://example.org/logs/my-first-run.txt",
        "observedAt": "2026-08-05T12:00:00Z",
    }
    out = tmp_path / "run.yaml"
    assert _run(runner, "new", "benchmark-run", "--out", out).exit_code == 0
    empty = re.compile(r"(\s*)(\w+):  # (?!optional: delete it).*")  # no value, a hint beside it (not a group)

    def fill(line: str) -> str:
        found = empty.fullmatch(line)
        return f"{found[1]}{found[2]}: {json.dumps(plausible[found[2]])}" if found and found[2] in plausible else line

    filled = [fill(line) for line in out.read_text().splitlines()]
    out.write_text("\n".join(filled) + "\n")
    result = _run(runner, "validate", out, "--repo", basic_store.path)
    assert result.exit_code == 0, result.stderr
    assert "    # samples:  # an integer > 0" in filled  # optional, and said to be: a line to uncomment
