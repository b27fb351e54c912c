"""The HTML pages: a frontend of the GraphQL schema (one named document per page), beside `api/`.

`api/app.py` mounts `web.routes.ROUTES`; the run permalink answers with `web.run_pages.run_page` for a browser.
"""

__all__: list[str] = []
