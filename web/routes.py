"""The pages' routes; `api/app.py` mounts `ROUTES` (the run page answers at the run permalink there).

Every page is at `/<path>` (the served head of main) and `/at/{commit}/<path>` (pinned), with a JSON
twin at `<path>.json` (and by `Accept: application/json` on the page's own URL).
"""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from web.catalog_pages import commit, home, implementation, operation, project, source
from web.cohort_pages import compare, leaderboard, records
from web.render import guarded
from web.run_pages import implementation_badge, kernelindex_run, run_badge
from web.search_page import search
from web.serving_pages import serving_cohort

__all__ = ["ROUTES", "STATIC"]

STATIC = Path(__file__).resolve().parent / "static"


def _both(path: str, handler: object) -> list[BaseRoute]:
    """The head route and its pinned twin."""
    endpoint = guarded(handler)  # type: ignore[arg-type]
    return [Route(path, endpoint, methods=["GET"]), Route(f"/at/{{commit}}{path}", endpoint, methods=["GET"])]


ROUTES: list[BaseRoute] = [
    Route("/index.json", guarded(home), methods=["GET"]),
    Route("/at/{commit}", guarded(home), methods=["GET"]),
    Route("/at/{commit}/index.json", guarded(home), methods=["GET"]),
    Route("/runs/{run_id:uuid}", kernelindex_run, methods=["GET"]),
    *_both("/cohorts/{key}", leaderboard),
    *_both("/records", records),
    *_both("/records.json", records),
    *_both("/compare", compare),
    *_both("/compare.json", compare),
    *_both("/search", search),
    *_both("/search.json", search),
    *_both("/operations/{ident}", operation),
    *_both("/implementations/{ident}", implementation),
    *_both("/projects/{ident}", project),
    *_both("/sources/{slug}", source),
    *_both("/serving/cohorts/{key}", serving_cohort),
    Route("/commits/{commit_id}", guarded(commit), methods=["GET"]),
    *_both("/badges/runs/{ident}.svg", run_badge),
    *_both("/badges/implementations/{ident}.svg", implementation_badge),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]
