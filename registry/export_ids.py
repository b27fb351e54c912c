"""Ids of the catalog export's rows: deterministic, UUID-shaped, derived from what a row is."""

from __future__ import annotations

import hashlib

__all__ = ["row_id"]

_HEX = frozenset("0123456789abcdef")


def row_id(text: str) -> str:
    """A UUID-shaped id for a digest (its first 128 bits) or any other text (its sha256's): the same
    input always gives the same id, so the same commit always exports the same bytes.

    >>> row_id("sha256:7f6df4bbbdbeb0960fc8acc7e71c764ea190f2a17cf28da04b8cfc1b45aca308")
    '7f6df4bb-bdbe-b096-0fc8-acc7e71c764e'
    >>> row_id("e775d39b6768675ff8eb086da76420493425c1a4") == row_id("e775d39b6768675ff8eb086da76420493425c1a4")
    True
    """
    hexpart = text.removeprefix("sha256:")
    if len(hexpart) != 64 or not set(hexpart) <= _HEX:
        hexpart = hashlib.sha256(text.encode()).hexdigest()
    return f"{hexpart[:8]}-{hexpart[8:12]}-{hexpart[12:16]}-{hexpart[16:20]}-{hexpart[20:32]}"
