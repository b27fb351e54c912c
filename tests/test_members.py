"""Layered sets and maps behave exactly like the plain set and dict they stand for, and never
change the parent they share."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kernelindex.registry.members import LAYER_FROM, Layered, LayeredMap, compact, layered_over

KEYS = st.sampled_from([f"k{i}" for i in range(12)])
MAP_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, st.integers(0, 5)),
        st.tuples(st.just("del"), KEYS, st.just(0)),
        st.tuples(st.just("pop"), KEYS, st.just(0)),
        st.tuples(st.just("derive"), KEYS, st.just(0)),
    ),
    max_size=60,
)


def _same_map(layered: Any, plain: dict[str, int]) -> None:
    assert len(layered) == len(plain)
    if isinstance(layered, LayeredMap):
        asked = [f"k{i}" for i in range(14)]
        assert sorted(layered.absent(asked)) == [k for k in sorted(asked) if k not in plain]
    assert dict(layered) == plain
    assert sorted(layered) == sorted(plain)
    assert sorted(layered.items()) == sorted(plain.items())
    assert sorted(layered.values()) == sorted(plain.values())
    for key in (f"k{i}" for i in range(12)):
        assert (key in layered) == (key in plain)
        assert layered.get(key) == plain.get(key)
        assert layered.get(key, -1) == plain.get(key, -1)


@settings(max_examples=300, deadline=None)
@given(base=st.dictionaries(KEYS, st.integers(0, 5)), steps=MAP_STEPS)
def test_a_layered_map_is_the_dict_it_stands_for(base: dict[str, int], steps: list[tuple[str, str, int]]) -> None:
    frozen = dict(base)
    original = dict(base)
    current: Any = LayeredMap(original)
    plain = dict(base)
    generations: list[tuple[Any, dict[str, int]]] = []  # each layer as it was when derived from
    for op, key, value in steps:
        if op == "set":
            current[key] = value
            plain[key] = value
        elif op == "del":
            if key in plain:
                del current[key]
                del plain[key]
            else:
                try:
                    del current[key]
                except KeyError:
                    pass
                else:
                    raise AssertionError("deleting a missing key must raise KeyError")
        elif op == "pop":
            assert current.pop(key, None) == plain.pop(key, None)
        else:  # a derived graph's copy: the parent must stay as it was
            generations.append((current, dict(plain)))
            current = layered_over(current)
        _same_map(current, plain)
    assert original == frozen  # the base is never written
    for layer, snapshot in generations:
        _same_map(layer, snapshot)


def test_layering_starts_at_the_threshold_and_flattens_when_changes_outgrow_the_base() -> None:
    small = {f"k{i}": i for i in range(LAYER_FROM - 1)}
    assert type(layered_over(small)) is dict
    big = {f"k{i}": i for i in range(LAYER_FROM)}
    layer = layered_over(big)
    assert isinstance(layer, LayeredMap) and layer._base is big
    changes = len(big) // 8 + 1
    for i in range(changes):
        layer[f"new{i}"] = i
    flat = layered_over(layer)
    assert type(flat) is dict and flat == dict(layer)
    few = layered_over(big)
    few["x"] = 1
    again = layered_over(few)
    assert isinstance(again, LayeredMap) and again._base is big and again["x"] == 1
    again["y"] = 2
    assert "y" not in few  # a derived layer's changes are its own


SET_STEPS = st.lists(st.tuples(st.sampled_from(["add", "discard", "derive"]), KEYS), max_size=60)


@settings(max_examples=300, deadline=None)
@given(base=st.sets(KEYS), steps=SET_STEPS)
def test_a_layered_set_is_the_set_it_stands_for(base: set[str], steps: list[tuple[str, str]]) -> None:
    frozen = set(base)
    current = Layered(base)
    plain = set(base)
    generations: list[tuple[Layered, set[str]]] = []
    for op, key in steps:
        if op == "add":
            current.add(key)
            plain.add(key)
        elif op == "discard":
            current.discard(key)
            plain.discard(key)
        else:
            generations.append((current, set(plain)))
            current = Layered.over(current)
        assert len(current) == len(plain) and set(current) == plain
        assert all((key in current) == (key in plain) for key in (f"k{i}" for i in range(12)))
    assert base == frozen
    for layer, snapshot in generations:
        assert set(layer) == snapshot and len(layer) == len(snapshot)


def test_absent_says_what_membership_says_for_every_key() -> None:
    """`LayeredMap.absent` asks the base and the changes in bulk: keys of the base, removed ones,
    re-added ones, new ones and unknown ones, as `in` answers each."""
    rng = random.Random(7)
    base = {f"k{n}": n for n in range(200)}
    layer: LayeredMap[str, int] = LayeredMap(base)
    keys = [f"k{n}" for n in range(300)]
    assert layer.absent(keys) == [k for k in keys if k not in layer]  # no changes yet
    for step in range(400):
        key = rng.choice(keys)
        if key in layer and rng.random() < 0.5:
            del layer[key]
        else:
            layer[key] = step
        asked = rng.sample(keys, 50)
        assert sorted(layer.absent(asked)) == sorted(k for k in asked if k not in layer)
    assert base == {f"k{n}": n for n in range(200)}


def test_compact_makes_tuples_below_the_layering_threshold_and_keeps_sets_from_it() -> None:
    """A built index's members become tuples (8 bytes a member) up to one under `LAYER_FROM`; from it they stay
    sets, which a derived graph layers its changes over (asking them for members)."""
    below = {f"d{i}" for i in range(LAYER_FROM - 1)}
    at = {f"d{i}" for i in range(LAYER_FROM)}
    layered = Layered(set(at))
    index: dict[str, Any] = {"below": set(below), "at": at, "one": ("d0",), "layered": layered}
    compact(index)
    assert type(index["below"]) is tuple and sorted(index["below"]) == sorted(below)
    assert index["at"] is at and index["one"] == ("d0",) and index["layered"] is layered
