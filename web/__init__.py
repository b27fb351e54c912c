"""The HTML pages: a frontend of the GraphQL schema (one named document per page), beside `api/`.

Each page module holds its endpoints (`api/app/routes.py` declares where they answer); `render` runs a page's
document through the query service and answers HTML, or the page's JSON twin. `web` depends on the query
service, the schema's answers and `kernelindex.http`'s responses, never on the application that composes it.
"""

__all__: list[str] = []
