"""The pages' Jinja2 environment: Jinja2's own, with a shorter way to the values of GraphQL answers.

Imported on the first page drawn (`web.render.templates`): a server that only answers GraphQL never loads jinja2.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment

__all__ = ["PageEnvironment"]

_DICT_ATTRIBUTES = frozenset(dir(dict))
"""What `getattr` finds on any dict (its methods): for every other name, Jinja2 reads the dict's item."""


class PageEnvironment(Environment):
    """Templates read answers as `run.implementation.displayName`: dicts, every step. Jinja2 asks `getattr` first
    and reads the item once that raised AttributeError; the exception cost ~1 µs a step, and a run page takes
    hundreds (py-spy of 1,000 first-time run pages: 20% of rendering). A dict's item is read first here unless
    the name is a dict attribute, which is exactly when Jinja2's own order finds something else."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)
