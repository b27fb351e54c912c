"""Bad inputs are refused with the file, the JSON path and the reason, and nothing is written.

One table drives three doors: `kernelindex.registry.load_manifest`, `kernelindex add` (in process, every row)
and `kernelindex add`/`validate` as a real subprocess (a representative subset: exit status,
one line per problem, no traceback).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    EXAMPLES,
    commit_manifests,
    digest_of,
    make_environment,
    make_implementation,
    make_operation,
    make_protocol,
    make_run,
    make_workload,
    object_ids,
    to_manifest,
)
from typer.testing import CliRunner

from kernelindex import registry
from kernelindex.cli import app
from kernelindex.registry.parse import load_document

Doc = dict[str, Any]


@dataclass(frozen=True)
class Bad:
    id: str
    file: str
    data: bytes
    path: str  # "" when the problem is the whole file
    reason: str  # a fragment of the reason, as a contributor reads it


def _yaml(name: str) -> bytes:
    return (EXAMPLES / f"{name}.yaml").read_bytes()


def _doc(name: str) -> Doc:
    document: Doc = load_document(_yaml(name), f"{name}.yaml")
    return document


def _json(name: str, change: Callable[[Doc], object] | None = None) -> bytes:
    document = _doc(name)
    if change:
        change(document)
    return json.dumps(document, indent=2, ensure_ascii=False).encode()


def _yaml_edit(name: str, old: str, new: str) -> bytes:
    data = _yaml(name)
    assert old.encode() in data, old
    return data.replace(old.encode(), new.encode(), 1)


def _latency(value: Any) -> Callable[[Doc], object]:
    return lambda d: d["spec"]["timing"]["latencyNs"].__setitem__("median", value)


def _observed(value: str) -> Callable[[Doc], object]:
    return lambda d: d["spec"].__setitem__("observedAt", value)


def _digest(value: str) -> Callable[[Doc], object]:
    return lambda d: d["spec"].__setitem__("protocolDigest", value)


PROTOCOL = "6ac212f99724757d058e7a7f440314debd2fed235c5178bc006b62c0d5e0d295"
LATENCY = "$.spec.timing.latencyNs.median"
TIMESTAMP = "not an RFC 3339 UTC timestamp"
DIGEST = "should match pattern '^sha256:[0-9a-f]{64}$'"


def _billion_laughs() -> bytes:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return ("\n".join(lines) + "\n").encode()


BAD = [
    # syntax
    Bad("malformed-json", "run.json", b'{"apiVersion": kernelindex}', "", "invalid JSON at line 1, column 16"),
    Bad("truncated-json", "run.json", _json("benchmark-run")[:300], "", "invalid JSON at line"),
    Bad("empty-file", "run.json", b"  \n", "", "empty document"),
    Bad("not-an-object", "run.json", b"[1, 2]", "$", "a manifest is a JSON object, not an array"),
    Bad(
        "duplicate-key-json",
        "run.json",
        _json("benchmark-run").replace(b'"status": "passed"', b'"status": "passed", "status": "timeout"'),
        "$.spec",
        "duplicate key 'status'",
    ),
    Bad(
        "duplicate-key-yaml",
        "run.yaml",
        _yaml_edit("benchmark-run", "  status: passed\n", "  status: passed\n  status: timeout\n"),
        "$.spec",
        "duplicate key 'status'",
    ),
    Bad(
        "non-utf8",
        "run.json",
        _json("benchmark-run").replace(b"Example", b"Ex\xe9mple"),
        "",
        "not UTF-8: byte 0xe9",
    ),
    Bad(
        "oversize",
        "run.json",
        b'{"spec": "' + b"x" * (1024 * 1024) + b'"}',
        "",
        "the limit is 1,048,576 (1 MiB)",
    ),
    Bad(
        "deep-nesting",
        "run.json",
        _json("benchmark-run", lambda d: d["metadata"].__setitem__("labels", json.loads("[" * 80 + "]" * 80))),
        "$.metadata.labels[0][0][0][0]...(depth 65)",
        "nesting deeper than 64 levels",
    ),
    # the envelope and unknown fields, level by level
    Bad(
        "unknown-kind",
        "run.json",
        _json("benchmark-run", lambda d: d.update(kind="BenchmarkRuns")),
        "$.kind",
        "unknown kind 'BenchmarkRuns'",
    ),
    Bad(
        "unknown-apiVersion",
        "run.json",
        _json("benchmark-run", lambda d: d.update(apiVersion="kernelindex.dev/v1")),
        "$.apiVersion",
        "unknown apiVersion 'kernelindex.dev/v1'; expected 'kernelindex.dev/v1alpha1'",
    ),
    Bad(
        "missing-spec",
        "run.json",
        _json("benchmark-run", lambda d: d.pop("spec")),
        "$",
        "missing required field 'spec'",
    ),
    Bad(
        "unknown-field-top",
        "run.json",
        _json("benchmark-run", lambda d: d.update(status="x")),
        "$",
        "unknown field 'status'",
    ),
    Bad(
        "unknown-field-metadata",
        "run.json",
        _json("benchmark-run", lambda d: d["metadata"].update(owner="me")),
        "$.metadata",
        "unknown field 'owner'",
    ),
    Bad(
        "unknown-field-spec",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"].update(notes="x")),
        "$.spec",
        "unknown field 'notes'",
    ),
    Bad(
        "unknown-field-nested",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"]["timing"]["latencyNs"].update(p50=8100)),
        "$.spec.timing.latencyNs",
        "unknown field 'p50'",
    ),
    Bad(
        "unknown-field-in-list",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["inputs"][0]["tensor"].update(stride=[1])),
        "$.spec.inputs[0].tensor",
        "unknown field 'stride'",
    ),
    Bad(
        "missing-field",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"].pop("status")),
        "$.spec",
        "missing required field 'status'",
    ),
    # digests
    Bad(
        "digest-uppercase",
        "run.json",
        _json("benchmark-run", _digest("sha256:" + PROTOCOL.upper())),
        "$.spec.protocolDigest",
        DIGEST,
    ),
    Bad(
        "digest-short",
        "run.json",
        _json("benchmark-run", _digest("sha256:" + PROTOCOL[:40])),
        "$.spec.protocolDigest",
        DIGEST,
    ),
    Bad(
        "digest-no-prefix",
        "run.json",
        _json("benchmark-run", _digest(PROTOCOL)),
        "$.spec.protocolDigest",
        DIGEST,
    ),
    Bad(
        "digest-sha512",
        "run.json",
        _json("benchmark-run", _digest("sha512:" + PROTOCOL)),
        "$.spec.protocolDigest",
        DIGEST,
    ),
    # latencies
    Bad(
        "latency-negative",
        "run.json",
        _json("benchmark-run", _latency(-8120)),
        LATENCY,
        "between 0 and 2^53-1 (got -8120)",
    ),
    Bad(
        "latency-nan-json",
        "run.json",
        _json("benchmark-run", _latency(-1)).replace(b"-1", b"NaN"),
        LATENCY,
        "NaN is not JSON",
    ),
    Bad(
        "latency-nan-yaml",
        "run.yaml",
        _yaml_edit("benchmark-run", "median: 8120", "median: .nan"),
        LATENCY,
        ".nan is not JSON",
    ),
    Bad(
        "latency-1e400",
        "run.json",
        _json("benchmark-run", _latency(-1)).replace(b"-1", b"1e400"),
        LATENCY,
        "not finite",
    ),
    Bad(
        "latency-inf-yaml",
        "run.yaml",
        _yaml_edit("benchmark-run", "median: 8120", "median: .inf"),
        LATENCY,
        ".inf is not JSON",
    ),
    Bad(
        "latency-fractional-ns",
        "run.json",
        _json("benchmark-run", _latency(8120.5)),
        LATENCY,
        "not a whole number of nanoseconds (got 8120.5)",
    ),
    Bad(
        "latency-1.5-ns",
        "run.json",
        _json("benchmark-run", _latency("1.5 ns")),
        LATENCY,
        "1.5 ns is not a whole number of nanoseconds",
    ),
    Bad(
        "latency-unknown-unit",
        "run.json",
        _json("benchmark-run", _latency("8 sec")),
        LATENCY,
        "a string with a unit",
    ),
    Bad(
        "latency-greek-mu",
        "run.json",
        _json("benchmark-run", _latency("8 \u03bcs")),
        LATENCY,
        "a string with a unit",
    ),
    Bad("latency-boolean", "run.json", _json("benchmark-run", _latency(True)), LATENCY, "(got True)"),
    Bad(
        "latency-past-2^53",
        "run.json",
        _json("benchmark-run", _latency("9999999999 s")),
        LATENCY,
        "outside 0..2^53-1 nanoseconds",
    ),
    Bad(
        "latency-without-median-or-mean",
        "run.json",
        _json("benchmark-run", lambda d: [d["spec"]["timing"]["latencyNs"].pop(k) for k in ("median", "mad")]),
        "$.spec.timing.latencyNs",
        "latencyNs needs a median or a mean",
    ),
    Bad(
        "confidence-upside-down",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"]["timing"]["latencyNs"].update(confidence95=[9000, 8000])),
        "$.spec.timing.latencyNs.confidence95",
        "low exceeds high",
    ),
    # timestamps
    Bad(
        "timestamp-offset",
        "run.json",
        _json("benchmark-run", _observed("2026-08-01T12:00:00+01:00")),
        "$.spec.observedAt",
        TIMESTAMP,
    ),
    Bad(
        "timestamp-garbage",
        "run.json",
        _json("benchmark-run", _observed("last tuesday")),
        "$.spec.observedAt",
        TIMESTAMP,
    ),
    Bad(
        "timestamp-feb-30",
        "run.json",
        _json("benchmark-run", _observed("2026-02-30T12:00:00Z")),
        "$.spec.observedAt",
        TIMESTAMP,
    ),
    Bad(
        "timestamp-date-only",
        "run.json",
        _json("benchmark-run", _observed("2026-08-01")),
        "$.spec.observedAt",
        TIMESTAMP,
    ),
    # names
    Bad(
        "name-uppercase",
        "run.json",
        _json("benchmark-run", lambda d: d["metadata"].update(name="Example-Run")),
        "$.metadata.name",
        "(got 'Example-Run')",
    ),
    Bad(
        "name-spaces",
        "run.json",
        _json("benchmark-run", lambda d: d["metadata"].update(name="example run")),
        "$.metadata.name",
        "(got 'example run')",
    ),
    Bad(
        "label-key",
        "run.json",
        _json("benchmark-run", lambda d: d["metadata"].update(labels={"Bad Key": "x"})),
        "$.metadata.labels['Bad Key']",
        "invalid key",
    ),
    # YAML specials
    Bad(
        "yaml-custom-tag",
        "run.yaml",
        _yaml_edit("benchmark-run", "status: passed", "status: !foo passed"),
        "$.spec.status",
        "tag !foo is not allowed",
    ),
    Bad(
        "yaml-binary",
        "run.yaml",
        _yaml_edit("benchmark-run", "status: passed", "status: !!binary cGFzc2Vk"),
        "$.spec.status",
        "tag !!binary is not allowed",
    ),
    Bad(
        "yaml-timestamp-tag",
        "run.yaml",
        _yaml_edit("benchmark-run", "observedAt: 2026", "observedAt: !!timestamp 2026"),
        "$.spec.observedAt",
        "tag !!timestamp is not allowed",
    ),
    Bad(
        "yaml-alias-bomb",
        "run.yaml",
        _billion_laughs(),
        "$.a4[",
        "more than 20,000 values after expanding aliases",
    ),
    Bad("yaml-merge-key", "run.yaml", b"a: &x {b: 1}\nc:\n  <<: *x\n", "$.c", "merge keys (<<) are YAML 1.1"),
    # refinements the JSON Schemas cannot express
    Bad(
        "constant-axis-without-value",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["axes"]["hidden"].pop("value")),
        "$.spec.axes.hidden",
        "a constant axis needs a value",
    ),
    Bad(
        "derived-axis-without-expression",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["axes"].update(total={"role": "derived", "type": "integer"})),
        "$.spec.axes.total",
        "a derived axis needs an expression",
    ),
    Bad(
        "argument-tensor-and-scalar",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["inputs"][2].update(tensor={"shape": [1], "dtype": "fp32"})),
        "$.spec.inputs[2]",
        "an argument is exactly one of tensor or scalar",
    ),
    Bad(
        "argument-neither",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["inputs"][2].pop("scalar")),
        "$.spec.inputs[2]",
        "an argument is exactly one of tensor or scalar",
    ),
    Bad(
        "ratio-above-1",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"]["correctness"].update(matchedRatio=1.01)),
        "$.spec.correctness.matchedRatio",
        "less than or equal to 1",
    ),
    Bad(
        "ratio-negative",
        "workload.json",
        _json("workload-case", lambda d: d["spec"]["correctness"].update(requiredMatchedRatio=-0.1)),
        "$.spec.correctness.requiredMatchedRatio",
        "greater than or equal to 0",
    ),
    Bad(
        "null-value",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"]["correctness"].update(matchedRatio=None)),
        "$.spec.correctness.matchedRatio",
        "null is not allowed (omit the field instead)",
    ),
    Bad(
        "null-metadata",
        "run.yaml",
        _yaml_edit("benchmark-run", "title: Example benchmark run (fictional)", "title:"),
        "$.metadata.title",
        "null is not allowed",
    ),
    Bad(
        "wrong-enum",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"].update(status="great")),
        "$.spec.status",
        "Input should be 'passed'",
    ),
    # An integer past Python's 4,300-digit conversion limit: once "internal error: ValueError".
    Bad(
        "long-integer-json",
        "run.json",
        _json("benchmark-run").replace(b'"samples": 200', b'"samples": ' + b"9" * 5000),
        "$.spec.timing.samples",
        "an integer of 5,000 digits is outside ±(2^53-1)",
    ),
    Bad(
        "long-integer-yaml",
        "run.yaml",
        _yaml_edit("benchmark-run", "samples: 200", "samples: " + "9" * 5000),
        "$.spec.timing.samples",
        "an integer of 5,000 digits is outside ±(2^53-1)",
    ),
    # An identifier has at most 100 characters (an axis name of 100,000 once passed `add`): the
    # error points at the key by its start and length, and never repeats it whole.
    Bad(
        "axis-name-101",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["axes"].__setitem__("a" * 101, d["spec"]["axes"]["tokens"])),
        "$.spec.axes['" + "a" * 60 + "... (101 characters)']",
        "invalid key: String should have at most 100 characters",
    ),
    Bad(
        "axis-name-100000",
        "operation.json",
        _json("operation-spec", lambda d: d["spec"]["axes"].__setitem__("a" * 100_000, d["spec"]["axes"]["tokens"])),
        "$.spec.axes['" + "a" * 60 + "... (100,000 characters)']",
        "invalid key: String should have at most 100 characters (got '" + "a" * 60 + "'... (100,000 characters))",
    ),
    Bad(
        "comparator-101",
        "run.json",
        _json("benchmark-run", lambda d: d["spec"]["correctness"].update(comparator="c" * 101)),
        "$.spec.correctness.comparator",
        "String should have at most 100 characters",
    ),
    Bad(
        "string-for-integer",
        "workload.json",
        _json("workload-case", lambda d: d["spec"]["axes"].update(tokens="2048")),
        "$.spec.axes.tokens",
        "valid integer",
    ),
]

assert len({b.id for b in BAD}) == len(BAD) >= 25


def _line(bad: Bad, file: str) -> str:
    """The one line the CLI prints for the first problem: `file: $.path: reason...`."""
    return f"{file}: {bad.path}" if bad.path else f"{file}: "


# The command line reads a file as one manifest, several (a YAML stream) or a submission bundle, so a file's
# values are bounded as a file of several manifests is (MAX_STREAM_NODES), each manifest in it as one is.
CLI_REASONS = {"yaml-alias-bomb": ("$.a", "more than 100,000 values after expanding aliases")}


def _cli(bad: Bad) -> Bad:
    """`bad` as the command line refuses it."""
    if bad.id not in CLI_REASONS:
        return bad
    path, reason = CLI_REASONS[bad.id]
    return dataclasses.replace(bad, path=path, reason=reason)


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_load_manifest_refuses(bad: Bad) -> None:
    with pytest.raises(registry.InvalidManifest) as caught:
        registry.load_manifest(bad.data, bad.file)
    problem = caught.value.problems[0]
    assert problem.source == bad.file
    assert problem.path.startswith(bad.path) if bad.path.endswith("[") else problem.path == bad.path
    assert bad.reason in problem.reason
    assert bad.file in str(caught.value)
    assert bad.reason in str(caught.value)


@pytest.fixture
def examples_store(store: registry.GitStore) -> registry.GitStore:
    """A registry holding the upstream examples, so that references resolve."""
    docs = [load_document(p.read_bytes(), p.name) for p in sorted(EXAMPLES.glob("*.yaml"))]
    commit_manifests(store, docs)
    return store


def _add(runner: CliRunner, store: registry.GitStore, *files: Path) -> Any:
    args = ["add", *map(str, files), "--repo", str(store.path), "--author", "Test <test@example.com>"]
    return runner.invoke(app, args, catch_exceptions=False)


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_cli_add_refuses_and_writes_nothing(
    bad: Bad, examples_store: registry.GitStore, runner: CliRunner, tmp_path: Path
) -> None:
    file = tmp_path / bad.file
    file.write_bytes(bad.data)
    head, objects = examples_store.head(), object_ids(examples_store)
    result = _add(runner, examples_store, file)
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines
    assert all(line.startswith(f"{file}: ") for line in lines)
    assert lines[0].startswith(_line(_cli(bad), str(file)))
    assert _cli(bad).reason in lines[0]
    assert "Traceback" not in result.stderr
    assert examples_store.head() == head
    assert object_ids(examples_store) == objects


def test_every_problem_of_every_file_is_listed(
    examples_store: registry.GitStore, runner: CliRunner, tmp_path: Path
) -> None:
    chosen = [b for b in BAD if b.id in ("unknown-field-top", "latency-negative", "yaml-custom-tag")]
    files = []
    for number, bad in enumerate(chosen):
        files.append(tmp_path / f"{number}-{bad.file}")
        files[-1].write_bytes(bad.data)
    two_problems = tmp_path / "two.json"
    two_problems.write_bytes(
        _json("benchmark-run", lambda d: (d["spec"].update(notes="x"), d["metadata"].update(name="Bad Name")))
    )
    result = _add(runner, examples_store, *files, two_problems)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 5
    for file, bad in zip(files, chosen, strict=True):
        assert any(line.startswith(_line(bad, str(file))) and bad.reason in line for line in lines)
    assert f"{two_problems}: $.spec: unknown field 'notes'" in lines
    assert any(line.startswith(f"{two_problems}: $.metadata.name: ") for line in lines)


# A run whose implementation and workload name different operations -----------------------------------


def _mismatch() -> tuple[list[Doc], Doc]:
    """A registry's worth of manifests, and a new run that measures implementation of one operation
    on a workload of another."""
    op_a, op_b = make_operation("op-a"), make_operation("op-b")
    workload = make_workload(op_a)
    implementation = make_implementation(op_b, "kernel-b")
    protocol, environment = make_protocol(), make_environment()
    run = make_run(implementation, workload, protocol, environment, 8120, name="mismatched-run")
    return [op_a, op_b, workload, implementation, protocol, environment], run


def test_store_refuses_a_run_across_operations(store: registry.GitStore) -> None:
    existing, run = _mismatch()
    commit_manifests(store, existing)
    head, objects = store.head(), object_ids(store)
    with pytest.raises(registry.RejectedChange) as caught:
        store.add([("new-run.json", to_manifest(run))], _meta())
    (problem,) = caught.value.problems
    assert problem.source == "new-run.json"
    assert problem.path == "$.spec.workloadDigest"
    op_a, op_b = digest_of(existing[0]), digest_of(existing[1])
    assert f"implementation is for operation {op_b} but workload is for operation {op_a}" in problem.reason
    assert "a run measures one operation" in problem.reason
    assert (store.head(), object_ids(store)) == (head, objects)


def test_store_refuses_the_mismatch_within_one_batch(store: registry.GitStore) -> None:
    existing, run = _mismatch()
    with pytest.raises(registry.RejectedChange, match="a run measures one operation"):
        commit_manifests(store, [*existing, run])
    assert store.head() is None
    assert object_ids(store) == set()


def test_known_upstream_mismatches_may_be_imported(store: registry.GitStore) -> None:
    """The importer's way in for upstream's 43: named, one by one."""
    existing, run = _mismatch()
    commit = commit_manifests(store, [*existing, run], allowed_mismatches=[digest_of(run)])
    assert store.find_entry(commit, digest_of(run)) is not None


def test_cli_refuses_a_run_across_operations(store: registry.GitStore, runner: CliRunner, tmp_path: Path) -> None:
    existing, run = _mismatch()
    commit_manifests(store, existing)
    head, objects = store.head(), object_ids(store)
    file = tmp_path / "mismatched-run.json"
    file.write_text(json.dumps(run))
    result = _add(runner, store, file)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{file}: $.spec.workloadDigest: implementation is for operation ")
    assert (store.head(), object_ids(store)) == (head, objects)
    validated = runner.invoke(app, ["validate", str(file), "--repo", str(store.path)])
    assert validated.exit_code == 1
    assert "a run measures one operation" in validated.stderr


def _meta() -> registry.CommitMeta:
    from helpers import commit_meta

    return commit_meta()


# The real command, in its own process --------------------------------------------------------------

SUBSET = [
    "malformed-json",
    "duplicate-key-yaml",
    "unknown-field-nested",
    "latency-nan-json",
    "yaml-alias-bomb",
    "oversize",
]


def _kernelindex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "kernelindex"
    command = [str(script)] if script.exists() else [sys.executable, "-c", "from kernelindex.cli import main; main()"]
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_cli_process_reports_each_problem_on_one_line(examples_store: registry.GitStore, tmp_path: Path) -> None:
    chosen = [b for b in BAD if b.id in SUBSET]
    files = []
    for bad in chosen:
        files.append(tmp_path / f"{bad.id}-{bad.file}")
        files[-1].write_bytes(bad.data)
    head, objects = examples_store.head(), object_ids(examples_store)
    added = _kernelindex(
        "add", *map(str, files), "--repo", str(examples_store.path), "--author", "T <t@e>", cwd=tmp_path
    )
    assert added.returncode == 1, added.stderr
    assert added.stdout == ""
    lines = added.stderr.splitlines()
    assert len(lines) == len(chosen)
    for line, file, bad in zip(lines, files, chosen, strict=True):
        assert line.startswith(_line(_cli(bad), str(file)))
        assert _cli(bad).reason in line
    assert "Traceback" not in added.stderr
    assert (examples_store.head(), object_ids(examples_store)) == (head, objects)

    checked = _kernelindex("validate", "--json", *map(str, files), cwd=tmp_path)
    assert checked.returncode == 1
    report = json.loads(checked.stdout)
    assert report["ok"] is False
    assert [p["file"] for p in report["problems"]] == [str(f) for f in files]
    assert all(set(p) == {"file", "path", "reason"} for p in report["problems"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["add"],
        ["frobnicate"],
        ["show", "--bogus", "x"],
        ["log", "--limit", "0"],
        ["add", "x.json", "--author", "nobody"],
    ],
    ids=" ".join,
)
def test_cli_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "x.json").write_bytes(_json("benchmark-protocol"))
    registry.GitStore.init(tmp_path / "manifests.git")
    result = _kernelindex(*args, "--repo", str(tmp_path / "manifests.git"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip()


def test_bad_inputs_are_distinct() -> None:
    """The table tests distinct inputs (no two rows with the same bytes)."""
    assert len({b.data for b in BAD}) == len(BAD)


def test_a_refused_file_among_good_ones_blocks_the_whole_commit(
    examples_store: registry.GitStore, runner: CliRunner, tmp_path: Path
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(make_operation("new-operation")))
    bad = tmp_path / "bad.json"
    bad.write_bytes(BAD[0].data)
    head = examples_store.head()
    result = _add(runner, examples_store, good, bad)
    assert result.exit_code == 1
    assert examples_store.head() == head
    assert examples_store.find_entry(head or "", digest_of(json.loads(good.read_text()))) is None


def test_documents_stay_untouched_by_a_refusal() -> None:
    document = _doc("benchmark-run")
    before = copy.deepcopy(document)
    document["spec"]["status"] = "great"
    with pytest.raises(registry.InvalidManifest):
        registry.manifest_from_document(document, "x.json")
    document["spec"]["status"] = before["spec"]["status"]
    assert document == before


@pytest.mark.parametrize("command", ["validate", "digest"])
def test_validate_and_digest_locate_a_long_integer(command: str, runner: CliRunner, tmp_path: Path) -> None:
    (bad,) = [b for b in BAD if b.id == "long-integer-json"]
    file = tmp_path / bad.file
    file.write_bytes(bad.data)
    result = runner.invoke(app, [command, str(file)], catch_exceptions=False)
    assert result.exit_code == 1 and "internal error" not in result.stderr
    assert result.stderr.splitlines()[0].startswith(f"{file}: {bad.path}: {bad.reason}")


def test_an_identifier_of_100_characters_passes() -> None:
    """The limit itself: an axis name and a comparator of exactly 100 characters are valid."""
    axis = registry.load_manifest(
        _json("operation-spec", lambda d: d["spec"]["axes"].__setitem__("a" * 100, d["spec"]["axes"]["tokens"])),
        "operation.json",
    )
    assert "a" * 100 in axis.document["spec"]["axes"]

    run = registry.load_manifest(
        _json("benchmark-run", lambda d: d["spec"]["correctness"].update(comparator="c" * 100)), "run.json"
    )
    assert run.document["spec"]["correctness"]["comparator"] == "c" * 100
