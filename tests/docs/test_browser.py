"""The documentation site works in a real browser: built strictly, served over HTTP on a
loopback port, its front page, a guide and the reference pages open with no failed request
and no script error, the navigation leads from page to page, and the search finds a page.

Each page is kept as a screenshot in ``build/docs-screenshots/`` (git-ignored) for a person
to look at. Runs under the ``browser`` marker (``make test-browser``), with Debian's
chromium (``/usr/bin/chromium``, or ``SEA_TEST_CHROMIUM``) and Python's playwright; skipped,
saying why, when either is missing (``playwright install`` is never needed).
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.docs.examples import ROOT

CHROMIUM = os.environ.get("SEA_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = ROOT / "build" / "docs-screenshots"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).is_file(),
                       reason=f"chromium is not installed ({CHROMIUM}; apt-get install chromium)"),
]
pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (pip install -e '.[docs]')")

PAGES = {
    "home": ("", "SEA"),
    "guide-writing-playbooks": ("guides/writing-playbooks/", "Writing playbooks"),
    "reference-cli": ("reference/cli/", "Command line"),
    "reference-node-types": ("reference/node-types/", "Node types"),
    "reference-codes": ("reference/codes/", "codes"),
    "reference-event-types": ("reference/event-types/", "Event types"),
    "reference-api": ("reference/api/", "Python API"),
}
"""Each page looked at: its screenshot's name, its path in the site, words its title holds."""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged (a failed one fails the test instead)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site, built strictly, served on a loopback port: its base URL."""
    from tests.docs.test_site import _build

    site = tmp_path_factory.mktemp("site")
    done = _build(ROOT / "mkdocs.yml", site)
    assert done.returncode == 0, done.stderr
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, headless, through playwright."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A new page whose failed requests and script errors are collected as ``problems``."""
    opened = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    opened.on("console", lambda message: problems.append(f"console: {message.text}")
              if message.type == "error" else None)
    opened.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    opened.on("response", lambda response: problems.append(
        f"HTTP {response.status}: {response.url}") if response.status >= 400 else None)
    opened.problems = problems
    yield opened
    opened.close()


def _shoot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)


@pytest.mark.parametrize("name", list(PAGES))
def test_each_page_opens_and_shows_its_content(name: str, served: str, page: Any) -> None:
    path, title = PAGES[name]
    page.goto(served + path, wait_until="networkidle")
    assert title in page.title(), page.title()
    heading = page.locator("article h1").first
    assert heading.is_visible(), f"{path}: no visible heading"
    text = page.locator("article").inner_text()
    assert "\\|" not in text, f"{path}: a table cell shows its escaped `|`"
    nav = page.locator("nav.md-nav--primary")
    assert nav.locator("a").count() > 20, f"{path}: the navigation lists too few pages"
    _shoot(page, name)
    assert page.problems == [], page.problems


def test_the_navigation_leads_from_the_front_page_to_a_guide_and_back(
    served: str, page: Any
) -> None:
    page.goto(served, wait_until="networkidle")
    page.locator("nav.md-nav--primary a", has_text="Your first playbook").first.click()
    page.wait_for_url("**/getting-started/first-playbook/")
    assert page.locator("article h1").first.inner_text().rstrip("¶") == "Your first playbook"
    page.locator("a.md-footer__link--next").click()  # the footer's "next" link
    page.wait_for_url("**/getting-started/first-pulse/")
    page.locator("nav.md-nav--primary a", has_text="Command line").first.click()
    page.wait_for_url("**/reference/cli/")
    _shoot(page, "navigated-reference-cli")
    page.locator("a.md-header__button.md-logo").click()
    page.wait_for_url(served)
    assert page.problems == [], page.problems


def test_the_search_finds_a_page(served: str, page: Any) -> None:
    page.goto(served, wait_until="networkidle")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    # typed key by key, as a person does: the search answers keystrokes, not a filled value
    page.locator("input.md-search__input").press_sequentially("checkpoints", delay=30)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=15_000)
    assert results.count() > 0
    _shoot(page, "search-checkpoints")
    results.first.locator("a").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url != served and page.url.startswith(served), page.url
    assert page.problems == [], page.problems


def test_on_a_phone_the_navigation_opens_from_the_menu(served: str, browser: Any) -> None:
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(served + "getting-started/first-pulse/", wait_until="networkidle")
        menu = phone.locator("label.md-header__button[for='__drawer']")
        assert menu.is_visible(), "no menu button on a narrow screen"
        _shoot(phone, "phone-first-pulse")
        menu.click()  # it opens on the page's own section
        phone.wait_for_timeout(1000)  # the drawer slides in
        _shoot(phone, "phone-menu")
        phone.locator("nav.md-nav--primary a", has_text="A project of your own").first.click()
        phone.wait_for_url("**/getting-started/project/")
    finally:
        phone.close()
