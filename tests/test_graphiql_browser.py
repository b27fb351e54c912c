"""GraphiQL renders in headless Chromium with every host but loopback unresolvable: the page and
its assets come from the registry itself, a `?query=` link prefills the editor, and a query runs.
Debian's `chromium` (.ci/run installs it), driven by Playwright, which downloads no browser here."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from server import Running, serve

from kernelindex.core.settings import EMBEDDED_REPO

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


@pytest.fixture(scope="module")
def api() -> Iterator[Running]:
    with serve(EMBEDDED_REPO) as running:
        yield running


def test_graphiql_renders_offline_prefilled_and_runs_a_query(api: Running) -> None:
    from playwright.sync_api import sync_playwright

    query = "{ commit { id } }"
    requested: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requested.append(r.url))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{api.url}/graphql?query={quote(query)}", wait_until="networkidle")
            page.wait_for_selector(".graphiql-container", timeout=60_000)
            editor = page.locator(".graphiql-query-editor .CodeMirror-code").inner_text()
            assert "commit" in editor and "id" in editor
            page.locator(".graphiql-execute-button").click()
            page.wait_for_function(
                "() => document.querySelector('.graphiql-response')?.innerText.includes('committedAt')"
                " || document.querySelector('.graphiql-response')?.innerText.includes('\"id\"')",
                timeout=30_000,
            )
            answer = page.locator(".graphiql-response").inner_text()
        finally:
            browser.close()
    head = api.service.snapshots.head.commit
    assert head in answer
    assert not errors, errors  # no "Cookies is not defined", nothing left half-loaded
    assert not failed, failed
    assert all(url.startswith((api.url, "data:")) for url in requested), requested
