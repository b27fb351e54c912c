"""Content negotiation's quality values (RFC 9110 section 12.4.2), read one way for every header that has
them: `Accept` (a page or its JSON, GraphQL's media types) and `Accept-Encoding` (brotli or gzip)."""

from __future__ import annotations

__all__ = ["qualities"]


def qualities(header: str | None) -> dict[str, float]:
    """Each item an `Accept` or `Accept-Encoding` value names (lowercase) with its weight: 1 unless `q` says
    otherwise, 0 for a weight that is not a number, the highest where an item is named twice.

    >>> qualities("text/html;q=0.9, application/json, */*;Q=0.1, br;q=x")
    {'text/html': 0.9, 'application/json': 1.0, '*/*': 0.1, 'br': 0.0}
    >>> qualities(None)
    {}
    """
    weights: dict[str, float] = {}
    for item in (header or "").split(","):
        name, _, params = item.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name] = max(weight, weights.get(name, 0.0))
    return weights
