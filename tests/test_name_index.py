"""The name index a cold build makes on first read holds what `ColdBuild.take` made as nodes arrived."""

from __future__ import annotations

from kernelindex.registry.graph_build import ColdBuild
from kernelindex.registry.name_index import NameIndex
from kernelindex.registry.nodes import Operation


def _op(digest: str, name: str) -> Operation:
    return Operation(digest, "0" * 40, name, None, "rmsnorm")


def test_names_are_made_on_first_read_in_the_order_nodes_came() -> None:
    builder = ColdBuild("c" * 40, 0)
    graph = builder.graph
    builder.take([_op("sha256:b", "shared"), _op("sha256:a", "alone"), _op("sha256:c", "shared")])
    assert isinstance(graph.names, NameIndex) and not graph.names.made
    assert graph.named("shared") == ("sha256:b", "sha256:c")  # as they came, not sorted
    assert graph.names.made
    assert dict(graph.names.items()) == {"shared": ("sha256:b", "sha256:c"), "alone": "sha256:a"}


def test_a_digest_taken_twice_names_as_take_always_did() -> None:
    """From the first digest met again, `take` keeps the index itself: the first node's name keeps
    the digest (the nodes alone, which keep the last node, could not say so), and so does the second's."""
    builder = ColdBuild("c" * 40, 0)
    graph = builder.graph
    builder.take([_op("sha256:a", "first"), _op("sha256:b", "other"), _op("sha256:a", "renamed")])
    assert dict(graph.names.items()) == {"first": "sha256:a", "other": "sha256:b", "renamed": "sha256:a"}
    again = _op("sha256:d", "twice")
    builder.take([again, again])
    assert graph.named("twice") == ("sha256:d", "sha256:d")


def test_take_after_a_read_keeps_the_index_current() -> None:
    builder = ColdBuild("c" * 40, 0)
    graph = builder.graph
    builder.take([_op("sha256:a", "one")])
    assert graph.named("one") == ("sha256:a",)
    builder.take([_op("sha256:b", "one"), _op("sha256:c", "two")])
    assert dict(graph.names.items()) == {"one": ("sha256:a", "sha256:b"), "two": "sha256:c"}


def test_taken_in_two_streams_before_a_read() -> None:
    """A cold build takes every other kind, then the runs: one index over both, made when read."""
    builder = ColdBuild("c" * 40, 0)
    graph = builder.graph
    builder.take([_op("sha256:a", "one")])
    builder.take([_op("sha256:b", "one")])
    assert isinstance(graph.names, NameIndex) and not graph.names.made
    assert graph.named("one") == ("sha256:a", "sha256:b")
