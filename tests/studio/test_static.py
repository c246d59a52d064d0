"""The studio's files as the server sends them: at ``/studio/``, each with the strict
Content Security Policy and an ETag, no inline script, every page module present, the
vendored libraries byte for byte what ``VENDORED.md`` records, and small."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")

from fastapi.testclient import TestClient

from sea.serve.studio import CSP, STATIC
from tests.serve.v1app import serving

FILES = sorted(path for path in STATIC.rglob("*") if path.is_file())


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with serving(tmp_path_factory.mktemp("studio")) as app:
        yield app.client


def test_the_studio_is_served_at_its_address_with_the_policy(client: TestClient) -> None:
    moved = client.get("/studio", follow_redirects=False)
    assert moved.status_code == 308 and moved.headers["location"] == "/studio/"
    page = client.get("/studio/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self';" in CSP and "unsafe" not in CSP
    assert page.headers["x-frame-options"] == "DENY"
    assert '<script type="module" src="app.js">' in page.text


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(STATIC)))
def test_every_file_goes_out_with_the_policy_and_an_etag(client: TestClient, path: Path) -> None:
    answer = client.get(f"/studio/{path.relative_to(STATIC).as_posix()}")
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CSP
    again = client.get(f"/studio/{path.relative_to(STATIC).as_posix()}",
                       headers={"if-none-match": answer.headers["etag"]})
    assert again.status_code == 304


def test_no_page_has_an_inline_script_or_style() -> None:
    for page in STATIC.rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), page
        assert "<style" not in text and " style=" not in text, page
        assert " on" + "click=" not in text.lower(), page


def test_the_static_files_need_no_key_and_the_api_still_does(client: TestClient) -> None:
    assert client.get("/studio/app.js").status_code == 200
    assert client.get("/v1/personas").status_code == 401


def test_every_page_module_the_navigation_names_exists() -> None:
    named = re.findall(r"module: '\./(pages/[\w-]+\.js)'", (STATIC / "pages.js").read_text())
    assert named, "pages.js names no page"
    for module in named:
        assert (STATIC / module).is_file(), module


def test_the_vendored_files_are_the_ones_recorded() -> None:
    table = (STATIC / "vendor" / "VENDORED.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", table, re.MULTILINE)
    assert {name for name, _ in rows} == {path.name for path in (STATIC / "vendor").glob("*.*js")}
    for name, recorded in rows:
        actual = hashlib.sha256((STATIC / "vendor" / name).read_bytes()).hexdigest()
        assert actual == recorded, f"{name}: SHA-256 {actual}, VENDORED.md says {recorded}"
        licence = {"dagre.esm.js": "dagre.LICENSE",
                   "htm-preact-standalone.mjs": "htm.LICENSE"}[name]
        assert (STATIC / "vendor" / licence).is_file()


def test_the_studio_stays_small() -> None:
    total = sum(path.stat().st_size for path in FILES
                if path.suffix in {".js", ".mjs", ".css", ".html"})
    assert total < 300_000, f"the studio's files weigh {total} bytes"
