"""Importers, one module per upstream source of manifests."""

from __future__ import annotations

from registry.importers.kernelindex_export import import_export
from registry.importers.liger import plan_liger
from registry.importers.plan import ImportPlan, commit_plan
from registry.importers.seed_pages import import_seed_pages

__all__ = ["ImportPlan", "commit_plan", "import_export", "import_seed_pages", "plan_liger"]
