"""The headers docs/security.md promises, read from the page itself: the independent source the header tests
(and the golden answers' changes) take their expected values from, so the documentation and the server
cannot drift apart."""

from __future__ import annotations

import re

from helpers import PROJECT_ROOT

__all__ = ["documented_headers"]


def documented_headers() -> dict[str, dict[str, str]]:
    """By answer (`pages`, `graphiql`, `svg`, `other`): each a fenced block after a `<!-- headers: NAME -->`
    marker, as header names (lower case) and values."""
    text = (PROJECT_ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    found = {}
    for name, block in re.findall(r"<!-- headers: (\w+) -->\s*```[a-z]*\n(.*?)```", text, re.S):
        lines = (line.partition(":") for line in block.splitlines())
        found[name] = {key.strip().lower(): value.strip() for key, _, value in lines}
    assert set(found) == {"pages", "graphiql", "svg", "other"}, found
    return found
