"""`web.environment.PageEnvironment` reads what Jinja2's own environment reads, name for name: the same
templates rendered by both, over dicts whose keys shadow dict methods, missing keys, and other objects."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from jinja2 import ChainableUndefined, DictLoader, Environment, StrictUndefined, UndefinedError

from web.environment import PageEnvironment

TEMPLATES = {
    "plain": "{{ d.name }}|{{ d.missing }}|{{ d.nested.value }}",
    "shadowing": "{{ d.items is callable }}|{{ d.get('name') }}|{{ d.keys() | list | length }}|{{ d['items'] }}",
    "dunder": "{{ d.__class__.__name__ }}",
    "loop": "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
    "default": "{{ d.missing | default('none') }}|{{ d.name is defined }}|{{ d.missing is defined }}",
}


class Record:
    name = "attribute"


VALUES: list[Any] = [
    {"name": "H100", "nested": {"value": 3}},
    {"name": "x", "items": "shadowed", "get": "also", "keys": 1},
    {},
    OrderedDict(name="ordered", items="shadowed"),  # a dict subclass: Jinja2's own way
    Record(),
    None,
    "text",
    [1, 2],
]


def _render(cls: type[Environment], undefined: type[Any], name: str, value: Any) -> str:
    env = cls(loader=DictLoader(TEMPLATES), undefined=undefined)
    try:
        return env.get_template(name).render(d=value)
    except (UndefinedError, TypeError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("undefined", [ChainableUndefined, StrictUndefined], ids=["chainable", "strict"])
@pytest.mark.parametrize("value", VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(VALUES)])
@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_read_is_jinjas_own(name: str, value: Any, undefined: type[Any]) -> None:
    assert _render(PageEnvironment, undefined, name, value) == _render(Environment, undefined, name, value)


def test_a_key_named_like_a_dict_method_is_still_the_method() -> None:
    shown = _render(PageEnvironment, ChainableUndefined, "shadowing", {"items": "shadowed"})
    assert shown == "True|None|1|shadowed"
