"""The fault and abuse suite's tally: each probe family records how many attacks it tried and how
many were refused cleanly; `conftest.pytest_terminal_summary` prints the table after the run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

__all__ = ["TALLY", "probe_all"]

TALLY: dict[str, list[int]] = defaultdict(lambda: [0, 0])
"""family -> [tried, refused cleanly]"""


def probe_all(family: str, cases: Iterable[tuple[str, Callable[[], bool]]]) -> list[str]:
    """Run each (name, attack) of a family; an attack returns True when it was refused cleanly.
    Returns the names of the attacks that got through (the test asserts there are none)."""
    failed = []
    for name, attack in cases:
        TALLY[family][0] += 1
        if attack():
            TALLY[family][1] += 1
        else:
            failed.append(name)
    return failed
