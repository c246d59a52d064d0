"""Fixtures of the studio's browser tests: one real ``sea serve`` (scripted model, the test
playbooks), one chromium for the run, a fresh page per test that fails the test on any
console error or failed request, and a full-page screenshot of each scenario in
``build/ui-screenshots/``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.server import ROOT, Server, start_server

CHROMIUM = os.environ.get("SEA_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = ROOT / "build" / "ui-screenshots"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-quic"]


def _playwright() -> Any:
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"chromium is not installed ({CHROMIUM}; apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api",
                               reason="playwright is not installed (pip install -e '.[docs]')")


@pytest.fixture(scope="session")
def studio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``sea serve`` for the studio's tests."""
    _playwright()
    root = tmp_path_factory.mktemp("studio-serve")
    (root / "workspace").mkdir()  # the plans' files (plan review)
    (root / "traces").mkdir()  # recorded traces (regression)
    running = start_server(root, "--workspace", str(root / "workspace"),
                           "--traces", str(root / "traces"), "--evals", str(root / "evals"),
                           "--max-calls", "40")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Debian's chromium, headless, through playwright (never a downloaded browser)."""
    sync_api = _playwright()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Studio:
    """A page of the studio and what went wrong on it."""

    def __init__(self, page: Any, server: Server) -> None:
        self.page = page
        self.server = server
        self.problems: list[str] = []
        page.on("console", lambda message: message.type == "error"
                and self.problems.append(f"console: {message.text}"))
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda request: self._failed(request))

    def _failed(self, request: Any) -> None:
        failure = request.failure or ""
        if "ERR_ABORTED" in failure:  # a stream the page closed itself (navigation, Stop)
            return
        self.problems.append(f"request failed: {request.url} {failure}")

    def open(self, fragment: str = "#/personas", *, key: bool = True) -> Any:
        """Open the studio at ``fragment`` (with the server's key in it, as a link would)."""
        suffix = fragment
        if key:
            suffix += ("&" if "?" in fragment else "?") + f"key={self.server.token}"
        self.page.goto(f"{self.server.url}/studio/{suffix}")
        return self.page

    def shot(self, name: str) -> Path:
        """A full-page screenshot, kept for people to look at."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def studio(chromium: Any, studio_server: Server) -> Iterator[Studio]:
    """A fresh browser context and page (1280×800, UTC, English, reduced motion)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800},
                                   device_scale_factor=1, locale="en-US",
                                   timezone_id="UTC", reduced_motion="reduce")
    page = context.new_page()
    page.set_default_timeout(15_000)
    opened = Studio(page, studio_server)
    try:
        yield opened
        assert not opened.problems, "\n".join(opened.problems)
    finally:
        context.close()


@pytest.fixture
def http(studio: Studio) -> Iterator[httpx.Client]:
    """The API of the studio's server, with its key (what another client would do)."""
    with httpx.Client(base_url=studio.server.url, headers=studio.server.headers,
                      timeout=30) as client:
        yield client
