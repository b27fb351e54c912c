"""Importers, one module per upstream source of manifests."""

from __future__ import annotations

from kernelindex.registry.importers.kernelindex_export import import_export
from kernelindex.registry.importers.liger import plan_liger
from kernelindex.registry.importers.plan import ImportPlan, commit_plan
from kernelindex.registry.importers.seed_pages import import_seed_pages

__all__ = ["ImportPlan", "commit_plan", "import_export", "import_seed_pages", "plan_liger"]
