"""Importers, one module per upstream source of manifests."""

from __future__ import annotations

from registry.importers.kernelindex_export import import_export
from registry.importers.seed_pages import import_seed_pages

__all__ = ["import_export", "import_seed_pages"]
