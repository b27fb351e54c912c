"""`kernelindex.web.environment.PageEnvironment` reads and writes what Jinja2's own environment does: the same templates
rendered by both, over dicts whose keys shadow dict methods, missing keys, and other objects; and every value
escaped and shown as Jinja2's autoescaping with a finalize function shows it, character for character."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from jinja2 import ChainableUndefined, DictLoader, Environment, StrictUndefined, UndefinedError
from markupsafe import Markup

from kernelindex.web.environment import PageEnvironment

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
    env = cls(loader=DictLoader(TEMPLATES), undefined=undefined, autoescape=True)
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


def _marked(value: Any) -> Any:
    """A stand-in for the pages' `shown`: changes text (so a value it skipped would show), never markup."""
    return value.replace("\x08", "[BS]") if isinstance(value, str) else value


def _finalize(value: Any) -> Any:
    return value if isinstance(value, Markup) else _marked(value)


OUTPUTS = {
    "value": "{{ v }}",
    "text": "<p title='{{ v }}'>{{ v }}</p>",
    "filtered": "{{ v | string | upper }}",
    "set block": "{% set s %}<b>{{ v }}</b>{% endset %}{{ s }}|{{ s | length }}",
    "macro": "{% macro m(x) %}<i>{{ x }}</i>{% endmacro %}{{ m(v) }}|{{ m(m(v)) }}",
    "caller": "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}{{ v }}{% endcall %}",
    "safe": "{{ v | safe }}|{{ v | e }}",
    "joined": "{{ v ~ '<&>' }}",
    "loop": "{% for c in [v, v] %}{{ loop.index }}{{ c }}{% endfor %}",
    "constant": "{{ '<a&b>' }}{{ 3 }}",
}

OUTPUT_VALUES: list[Any] = [
    "plain ascii",
    "<script>alert('x')</script> & \"quoted\"",
    "N\x08VIDIA",
    "caf\u00e9 \u2014 \U0001f600",
    "\x00\x1f\x7f",
    "",
    Markup("<em>markup</em> &amp;"),
    42,
    1.5,
    None,
    True,
    ["<", ">"],
    {"k": "<v>"},
]


@pytest.mark.parametrize("value", OUTPUT_VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(OUTPUT_VALUES)])
@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_every_output_is_escaped_and_shown_as_jinjas_autoescape_shows_it(name: str, value: Any) -> None:
    page = PageEnvironment(loader=DictLoader(OUTPUTS), shown=_marked)
    jinja = Environment(loader=DictLoader(OUTPUTS), autoescape=True, finalize=_finalize)
    assert page.get_template(name).render(v=value) == jinja.get_template(name).render(v=value)


def test_every_character_is_escaped_as_markupsafe_escapes_it() -> None:
    """Each code point but surrogates, alone and inside text, against MarkupSafe's own `escape`."""
    from markupsafe import escape

    page = PageEnvironment(shown=_marked).escape_output
    for start in range(0, 0x110000, 4096):
        text = "".join(chr(c) for c in range(start, start + 4096) if not 0xD800 <= c <= 0xDFFF)
        assert page(text) == str(escape(_marked(text)))
        assert all(page(c) == str(escape(_marked(c))) for c in text[:128])
    assert type(page("<a>")) is str


def test_a_page_environment_always_autoescapes() -> None:
    with pytest.raises(ValueError, match="autoescape"):
        PageEnvironment(autoescape=False)
    with pytest.raises(ValueError, match="finalize"):
        PageEnvironment(finalize=str)
    assert PageEnvironment().from_string("{{ v }}").render(v="<&>") == "&lt;&amp;&gt;"
