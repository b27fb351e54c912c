"""The stored payloads of the attack on the exits, opened in a real browser (Debian's Chromium, headless,
driven by Playwright, every host but loopback unresolvable): every page type of a registry whose every text
field, link field and free key holds them (tests/hostile.py), every link on each page clicked, both badges
opened as documents. No script runs: no dialog opens, no page error is raised, and the browser itself
reads every link of every page as http(s) or this site. The pages' policy reports no violation (they hold
nothing inline to violate it); GraphiQL's narrower one neither, through its dialogs and editors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile import LINKS, PAYLOADS, Built, base_documents, build, classify
from probes import probe_all
from server import Running, serve

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
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Built]]:
    documents = base_documents()
    leaves = [classify(document) for document in documents]
    path = tmp_path_factory.mktemp("hostile") / "manifests.git"
    built = build(path, documents, leaves, PAYLOADS, LINKS, list(PAYLOADS), LINKS[0])
    with serve(built.path) as running:
        yield running, built


class Watched:
    """A browser context whose every dialog, page error and policy violation is recorded."""

    def __init__(self, playwright: Any) -> None:
        self.browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        self.context = self.browser.new_context()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.violations: list[str] = []

    def page(self) -> Any:
        page = self.context.new_page()

        def dialog(found: Any) -> None:
            self.dialogs.append(found.message)
            found.dismiss()

        page.on("dialog", dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "console",
            lambda message: self.violations.append(message.text) if "Content Security Policy" in message.text else None,
        )
        return page


@pytest.fixture(scope="module")
def watched() -> Iterator[Watched]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        opened = Watched(playwright)
        yield opened
        opened.browser.close()


def _pages(running: Running, built: Built) -> dict[str, str]:
    names = built.digests
    run = names["example-meridian-rmsnorm-b200"]
    kinds = {kind: digest for name, digest in names.items() for kind in [built.kinds[name]]}
    cohort = running.graphql("query($id: String!) { run(id: $id) { cohort { key } } }", {"id": run}).json()
    return {
        "home": "/",
        "run": f"/at/{built.main}/runs/{run}",
        "run, the second": f"/at/{built.main}/runs/{names['example-meridian-rmsnorm-b200-again']}",
        "leaderboard": f"/cohorts/{cohort['data']['run']['cohort']['key']}",
        "records": "/records",
        "operation": f"/operations/{kinds['OperationSpec']}",
        "implementation": f"/implementations/{kinds['ImplementationRevision']}",
        "project": f"/projects/{kinds['SoftwareProject']}",
        "source": "/sources/hostile-source",
        "commit": f"/commits/{built.main}",
        "search": "/search?q=%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E",
        "serving run": f"/at/{built.main}/runs/{kinds['ServingRun']}",
    }


_LINK_PROTOCOLS = "() => Array.from(document.querySelectorAll('a[href], img[src], link[href], script[src]'))"
_LINK_PROTOCOLS += ".map(e => new URL(e.href || e.src, document.baseURI)).map(u => [u.protocol, u.host])"


def test_clicking_every_link_and_opening_every_badge_runs_no_script(
    hostile: tuple[Running, Built], watched: Watched
) -> None:
    running, built = hostile
    origin = running.url.split("//", 1)[1]

    def visit(name: str, path: str) -> tuple[str, Any]:
        def attack() -> bool:
            page = watched.page()
            page.goto(running.url + path, wait_until="load")
            seen = page.evaluate(_LINK_PROTOCOLS)  # as the browser itself reads each URL
            assert all(protocol in ("http:", "https:") for protocol, _ in seen), (name, seen)
            links = page.locator("a[href]")
            outbound = [
                i for i in range(links.count()) if not links.nth(i).get_attribute("href").startswith(("/", "#"))
            ]
            for index in outbound:  # each link built from data, clicked on a fresh copy of the page
                page.goto(running.url + path, wait_until="load")
                page.locator("a[href]").nth(index).click(no_wait_after=True, timeout=5_000)
                page.wait_for_timeout(150)
            page.close()
            assert any(host != origin for _, host in seen) or name != "run", name  # its attestation's evidence
            return not watched.dialogs and not watched.errors

        return name, attack

    def badge(name: str, path: str) -> tuple[str, Any]:
        def attack() -> bool:
            page = watched.page()
            response = page.goto(running.url + path, wait_until="load")
            assert response is not None and response.status == 200
            page.wait_for_timeout(200)
            page.close()
            return not watched.dialogs and not watched.errors

        return name, attack

    implementation = next(d for n, d in built.digests.items() if built.kinds[n] == "ImplementationRevision")
    run = built.digests["example-meridian-rmsnorm-b200"]
    cases = [visit(name, path) for name, path in _pages(running, built).items()]
    cases += [badge("run badge", f"/badges/runs/{run}.svg")]
    cases += [badge("implementation badge", f"/badges/implementations/{implementation}.svg")]
    assert probe_all("exits: stored payloads in Chromium", cases) == []
    assert watched.dialogs == [] and watched.errors == []
    assert watched.violations == []  # nothing inline on any page, so nothing the policy had to stop


def test_graphiql_works_under_its_policy_without_a_violation(watched: Watched, hostile: tuple[Running, Built]) -> None:
    """The narrowest policy under which GraphiQL works offline: its editors, its explorer, its dialogs (which
    insert style elements), a query run, with no violation reported."""
    running, _ = hostile
    page = watched.page()
    page.goto(running.url + "/graphql?query=%7B%20commit%20%7B%20id%20%7D%20%7D", wait_until="networkidle")
    page.wait_for_selector(".graphiql-container", timeout=60_000)
    labels = page.eval_on_selector_all("button[aria-label]", "found => found.map(e => e.getAttribute('aria-label'))")
    for label in labels:
        if "Execute" in label or "tab" in label.lower():
            continue
        page.locator(f"button[aria-label='{label}']").first.click(timeout=5_000)
        page.wait_for_timeout(300)
        page.keyboard.press("Escape")
    page.locator(".graphiql-execute-button").click()
    page.wait_for_function("() => document.querySelector('.graphiql-response')?.innerText.includes('\"id\"')")
    page.close()
    assert watched.violations == [] and watched.errors == []
