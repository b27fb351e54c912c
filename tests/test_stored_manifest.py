"""`stored_manifest` judges a file in git from its stored bytes, skipping what those bytes prove:
it must never accept what `load_manifest` and the stored-form check refuse, and what it accepts
must be the very manifest they make. The expected verdicts come from that full path, run on the
same bytes; the hostile cases sit at each limit the bytes stand in for (one inside, one past)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import EMBEDDED_REPO, basic_scenario

from kernelindex import registry
from kernelindex.registry.canonical import stored_json
from kernelindex.registry.errors import InvalidManifest
from kernelindex.registry.manifest import stored_manifest
from kernelindex.registry.parse import MAX_DEPTH, MAX_NODES


def _full(data: bytes) -> registry.Manifest | None:
    """The full path's verdict: a valid manifest in the stored form, or None."""
    try:
        manifest = registry.load_manifest(data, "x.json", "json")
    except InvalidManifest:
        return None
    return manifest if manifest.stored_bytes() == data else None


def _agrees(data: bytes) -> registry.Manifest | None:
    fast = stored_manifest(data, "x.json")
    if fast is not None:
        full = _full(data)
        assert full is not None, "accepted what the full check refuses"
        assert (fast.kind, fast.digest, fast.document) == (full.kind, full.digest, full.document)
        assert json.dumps(fast.document) == json.dumps(full.document)  # the same types too
    return fast


def _run() -> dict[str, Any]:
    return copy.deepcopy(basic_scenario().runs[0])


def _implementation() -> dict[str, Any]:
    return copy.deepcopy(basic_scenario().implementations[0])


def _stored(document: dict[str, Any]) -> bytes:
    return stored_json(document)


def test_a_clean_manifest_takes_the_short_way() -> None:
    for document in (_run(), _implementation()):
        assert _agrees(_stored(document)) is not None


@pytest.mark.parametrize("character", ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "\ufffe", "\uffff"])
@pytest.mark.parametrize("where", ["value", "key"])
def test_characters_xml_forbids_are_refused(character: str, where: str) -> None:
    document = _implementation()
    if where == "value":
        document["spec"]["callable"]["symbol"] = f"kernel{character}a"
    else:
        document["metadata"]["labels"] = {f"team{character}": "x"}
    data = _stored(document)
    assert _full(data) is None
    assert _agrees(data) is None


@pytest.mark.parametrize("character", ["\t", "\n", "\r", "\x7f", "\u2028", "\\", "\\b", "\\u0000"])
def test_characters_xml_allows_are_accepted(character: str) -> None:
    document = _implementation()
    document["spec"]["callable"]["entrypoint"] = f"kernel{character}a"
    data = _stored(document)
    assert _agrees(data) is not None or _full(data) is None


@pytest.mark.parametrize("where", ["metadata", "spec"])
def test_a_null_is_refused_where_an_optional_field_may_be_left_out(where: str) -> None:
    document = _implementation()
    if where == "metadata":
        document["metadata"]["description"] = None
    else:
        document["spec"]["callable"]["entrypoint"] = None
    data = _stored(document)
    assert _full(data) is None
    assert _agrees(data) is None
    if where == "metadata":
        assert _agrees(data.replace(b"null", b'"null"')) is not None  # the word in a string is text


@pytest.mark.parametrize(("value", "valid"), [(2**53 - 1, True), (2**53, False), (10**15, True), (2**63, False)])
def test_integers_at_the_limit_of_a_double(value: int, valid: bool) -> None:
    document = _run()
    document["spec"]["timing"]["latencyNs"]["median"] = value
    data = _stored(document)
    assert (_full(data) is not None) is valid
    assert (_agrees(data) is not None) is valid


def test_no_more_values_than_a_manifest_may_hold() -> None:
    document = _implementation()
    fixed = sum(1 for _ in _values(document)) - len(document["spec"]["support"]["hardwareArchitectures"])
    for extra, valid in ((0, True), (1, False)):
        architectures = sorted(f"sm_{n:05d}" for n in range(MAX_NODES - fixed + extra))
        document["spec"]["support"]["hardwareArchitectures"] = architectures
        assert sum(1 for _ in _values(document)) == MAX_NODES + extra
        data = _stored(document)
        full = _full(data)
        if not valid:
            assert full is None
        assert (_agrees(data) is not None) is (full is not None)


def _values(value: Any) -> Any:
    yield value
    if isinstance(value, dict):
        for child in value.values():
            yield from _values(child)
    elif isinstance(value, list):
        for child in value:
            yield from _values(child)


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1])
def test_nesting_at_the_limit(depth: int) -> None:
    document = _implementation()
    nested: Any = "x"
    for _ in range(depth - 2):  # labels sits two levels down
        nested = [nested]
    document["metadata"]["labels"] = {"deep": nested}
    data = _stored(document)
    assert _full(data) is None  # labels hold strings: refused either way, never accepted here
    assert _agrees(data) is None


def test_what_normalization_would_change_is_not_the_stored_form() -> None:
    run = _run()
    run["spec"]["timing"]["latencyNs"]["median"] = 8120.0  # normalized to 8120
    implementation = _implementation()
    implementation["spec"]["support"]["hardwareArchitectures"] = ["sm_90", "sm_100"]  # sorted when normalized
    for document in (run, implementation):
        data = _stored(document)
        assert _full(data) is None
        assert _agrees(data) is None


def test_bytes_that_are_not_the_stored_form() -> None:
    data = _stored(_run())
    cases = [
        b"\xef\xbb\xbf" + data,  # a BOM
        data.replace(b'"name": "run-a1"', b'"name": "run-a1",\n    "name": "run-a2"'),  # a duplicate key
        data.replace(b"run-a1", b"run-\xff1"),  # not UTF-8
        data.replace(b"run-a1", b"run-\\ud800"),  # a lone surrogate
        data.replace(b"8120", b"1e400"),  # not finite
        data.rstrip(b"\n"),  # no trailing newline
        json.dumps(_run(), indent=2).encode() + b"\n",  # keys not sorted
        data.replace(b"8120", b"8120.0"),
        b"",
        b"[]\n",
    ]
    for case in cases:
        assert _full(case) is None
        assert _agrees(case) is None


def test_every_manifest_of_a_sample_of_the_embedded_registry() -> None:
    store = registry.GitStore(EMBEDDED_REPO)
    head = store.head()
    assert head is not None
    entries = list(store.entries(head))[::50]
    for entry, data in zip(entries, store.read_blobs([e.oid for e in entries]), strict=True):
        manifest = _agrees(data)
        assert manifest is not None, entry.path
        assert manifest.path == entry.path
