"""JSON as a page shows it to a reader: `json.dumps(value, indent=2, ensure_ascii=False)`, made through orjson
where that writes the same text (`kernelindex.registry.canonical.pretty_json`). The pages import it from here: they are
a
frontend of the API and never import the registry."""

from __future__ import annotations

from kernelindex.registry.canonical import pretty_json

__all__ = ["pretty_json"]
