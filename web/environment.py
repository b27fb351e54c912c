"""The pages' Jinja2 environment: Jinja2's own, with a shorter way to the values of GraphQL answers and to
their escaped text.

Imported on the first page drawn (`kernelindex.web.render.templates`): a server that only answers GraphQL never loads
jinja2.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from types import CodeType
from typing import Any

from jinja2 import Environment, Template
from markupsafe import Markup, escape

try:  # MarkupSafe's own escaping of a str, in C, without the Markup around it (MarkupSafe 3)
    from markupsafe._speedups import _escape_inner
except ImportError:  # no C extension, or a MarkupSafe that names it otherwise: the public function, as a str

    def _escape_inner(s: str, /) -> str:
        return str(escape(s))


__all__ = ["PageEnvironment"]

_DICT_ATTRIBUTES = frozenset(dir(dict))
"""What `getattr` finds on any dict (its methods): for every other name, Jinja2 reads the dict's item."""


def _unchanged(value: Any) -> Any:
    return value


class PageTemplate(Template):
    """A template whose `{{ value }}` outputs are escaped by its environment's `escape_output`.

    Jinja2's compiled template calls `escape(...)` (MarkupSafe's) on each output when autoescaping: it makes a
    `Markup` of each value, through `Markup.__new__` in Python (~0.7 us; py-spy of 580 first-time leaderboard
    pages: 12% of a page's time, for its ~1,000 values), only for the template to join them into one str. The
    name is a global of the compiled template's module, replaced here by the same escaping giving a plain str."""

    @classmethod
    def from_code(
        cls,
        environment: Environment,
        code: CodeType,
        globals: MutableMapping[str, Any],
        uptodate: Callable[[], bool] | None = None,
    ) -> Template:
        template = super().from_code(environment, code, globals, uptodate)
        if isinstance(environment, PageEnvironment):
            # The module's namespace: every render function of the template (blocks, macros) reads it.
            template.root_render_func.__globals__["escape"] = environment.escape_output
        return template


class PageEnvironment(Environment):
    """Templates read answers as `run.implementation.displayName`: dicts, every step. Jinja2 asks `getattr` first
    and reads the item once that raised AttributeError; the exception cost ~1 µs a step, and a run page takes
    hundreds (py-spy of 1,000 first-time run pages: 20% of rendering). A dict's item is read first here unless
    the name is a dict attribute, which is exactly when Jinja2's own order finds something else.

    It always autoescapes, and `shown` is what Jinja2 calls a finalize function (a value as a page may show
    it), applied to every value but markup inside the escaping (`escape_output`): the same text as Jinja2's
    `Environment(autoescape=True, finalize=...)` with one call a value rather than three."""

    template_class = PageTemplate

    def __init__(self, *args: Any, shown: Callable[[Any], Any] = _unchanged, **kwargs: Any) -> None:
        if kwargs.get("finalize") is not None or kwargs.get("autoescape", True) is not True:
            raise ValueError("pages always autoescape, and `shown` is their finalize")
        super().__init__(*args, **{**kwargs, "autoescape": True})

        def escape_output(value: Any) -> str:
            """A `{{ value }}`: `shown` then escaped (MarkupSafe's `escape`, as a str), markup as it is."""
            if type(value) is str:
                # Most values are plain ASCII text, told at once (a leaderboard page shows ~1,000 values).
                return _escape_inner(value if value.isascii() and value.isprintable() else shown(value))
            if hasattr(value, "__html__"):
                return Markup(value.__html__())  # a macro's output: markup already made of escaped values
            return _escape_inner(str(shown(value)))

        self.escape_output = escape_output

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)
