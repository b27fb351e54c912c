"""Commit messages and trailers, people and times; the errors' shapes."""

from __future__ import annotations

import pygit2
import pytest

from kernelindex import registry
from kernelindex.registry.provenance import format_message, identity_problem, parse_trailers, trailer_pairs


@pytest.mark.parametrize(
    ("message", "trailers"),
    [
        ("Subject\n\nSource: x\n", (("Source", "x"),)),
        ("Subject\n\nBody text.\n\nSource: x\nLicense: Apache-2.0\n", (("Source", "x"), ("License", "Apache-2.0"))),
        ("Subject\n", ()),  # a subject alone has no trailers
        ("Source: x\n", ()),
        ("Subject\n\nBody\nSource: x\n", ()),  # a paragraph with prose is not a trailer block
        ("Subject\n\nSource-Snapshot: sha256:ab 000_x.txt\n", (("Source-Snapshot", "sha256:ab 000_x.txt"),)),
        ("Subject\n\nA: 1\nA: 2\n", (("A", "1"), ("A", "2"))),
    ],
    ids=repr,
)
def test_parse_trailers(message: str, trailers: tuple[tuple[str, str], ...]) -> None:
    assert parse_trailers(message) == trailers


def test_format_then_parse_round_trips() -> None:
    trailers = (("Source", "community"), ("Signed-off-by", "A <a@example.com>"), ("Integrity-Warning", "x y"))
    message = format_message("  Add a run  ", "Some words.\n", trailers)
    assert message == (
        "Add a run\n\nSome words.\n\nSource: community\nSigned-off-by: A <a@example.com>\nIntegrity-Warning: x y\n"
    )
    assert parse_trailers(message) == trailers


@pytest.mark.parametrize(
    ("subject", "trailers"),
    [
        ("", ()),
        ("two\nlines", ()),
        ("ok", (("Bad Key", "x"),)),
        ("ok", (("Key", "multi\nline"),)),
        ("ok", (("Key", "  "),)),
    ],
    ids=repr,
)
def test_format_message_refuses_what_git_would_mangle(subject: str, trailers: tuple[tuple[str, str], ...]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        format_message(subject, "", trailers)


def test_trailer_pairs_drops_missing_values() -> None:
    assert trailer_pairs([("A", "1"), ("B", None), ("C", ""), ("D", "4")]) == (("A", "1"), ("D", "4"))


def test_person_times() -> None:
    person = registry.Person("A", "a@example.com", 1_700_000_000, 120)
    assert person.when_utc == "2023-11-14T22:13:20Z"
    assert person.when.isoformat() == "2023-11-15T00:13:20+02:00"


def test_commit_meta_message() -> None:
    when = registry.Person("A", "a@example.com", 0)
    meta = registry.CommitMeta(when, when, "Subject", "Body", (("Source", "s"),))
    assert meta.message == "Subject\n\nBody\n\nSource: s\n"


def test_errors_are_registry_errors_and_builtins() -> None:
    problem = registry.Problem("run.json", "$.spec", "unknown field 'x'")
    invalid = registry.InvalidManifest([problem, registry.Problem("run.json", "", "second")])
    assert isinstance(invalid, registry.RegistryError)
    assert isinstance(invalid, ValueError)
    assert (invalid.source, invalid.path, invalid.reason) == ("run.json", "$.spec", "unknown field 'x'")
    assert str(invalid) == "run.json: $.spec: unknown field 'x'\nrun.json: second"
    rejected = registry.RejectedChange([problem])
    assert isinstance(rejected, ValueError)
    with pytest.raises(ValueError, match="at least one problem"):
        registry.InvalidManifest([])
    missing = registry.ManifestNotFound("x", "abc")
    assert isinstance(missing, LookupError)
    assert str(missing) == "manifest not found: 'x' at abc"
    ambiguous = registry.AmbiguousName("n", [f"d{i}" for i in range(7)])
    assert str(ambiguous) == "name 'n' is ambiguous: 7 manifests match (d0, d1, d2, d3, d4 ...); use a digest"
    assert isinstance(registry.RevisionNotFound("r"), LookupError)
    assert isinstance(registry.StoreNotFound("/p"), FileNotFoundError)
    assert str(registry.StoreBusy(20)).startswith("main moved 20 times")


IDENTITIES = [
    ("A", "a@b"),
    (".", "a@b"),  # git keeps a name of a full stop
    ("A", "."),
    ("A", ""),
    (" ", "a@b"),
    ("\x01", "a@b"),
    (",;:", "a@b"),
    ('"', "a@b"),
    ("'\\", "a@b"),
    ("A<", "a@b"),
    ("A", "a>b"),
    ("  Ann  ", " a@b "),
    ("Ünïcode ☃", "u@b"),
]


@pytest.mark.parametrize(("name", "email"), IDENTITIES)
def test_identity_problem_refuses_exactly_what_git_cannot_record(name: str, email: str) -> None:
    """The independent source is libgit2 itself, through pygit2: an identity it refuses is refused here."""
    try:
        pygit2.Signature(name, email, 0, 0)
        accepted = True
    except ValueError:  # pygit2.InvalidError
        accepted = False
    assert (identity_problem(name, email) is None) == accepted


def test_identity_problem_also_refuses_line_breaks_git_would_write_into_the_header() -> None:
    assert identity_problem("A\nB", "a@b") == "the name holds a line break"
    assert identity_problem("A", "a@b\r") == "the email holds a line break"


def test_first_trailers_are_what_trailer_reads_key_by_key() -> None:
    person = registry.Person("A", "a@example.com", 0)
    trailers = (("Source", "x"), ("LICENSE", "MIT"), ("source", "y"), ("License", "Apache-2.0"), ("Source-URL", "u"))
    info = registry.CommitInfo("c" * 40, (), person, person, "Add\n", trailers)
    assert info.first_trailers() == {"source": "x", "license": "MIT", "source-url": "u"}
    for key in ("Source", "source", "SOURCE", "License", "Source-URL", "Attribution", "Source-Snapshot"):
        assert info.first_trailers().get(key.lower()) == info.trailer(key)
