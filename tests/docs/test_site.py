"""The documentation site builds strictly, and its reference lists everything the code has:
every diagnostic and error code, every command and option, every event type."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")


def _reference() -> ModuleType:
    path = ROOT / "dev" / "docs_reference.py"
    spec = importlib.util.spec_from_file_location("docs_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, env=env, cwd=config.parent, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    pages = sorted(p.relative_to(ROOT / "docs").with_suffix("").as_posix()
                   for p in (ROOT / "docs").rglob("*.md"))
    for name in [*pages, "reference/cli", "reference/codes", "reference/node-types",
                 "reference/event-types"]:
        folder = site / name.removesuffix("index")
        assert (folder / "index.html").is_file(), name


def test_the_site_fetches_nothing_from_the_network(site: Path) -> None:
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html
    assert not re.search(r"<(?:script|link)[^>]+(?:src|href)=\"https?://", html)


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The same validation settings as mkdocs.yml turn a link to a missing page into a failure."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    validation = config[config.index("validation:"):config.index("\nnav:")]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the guide](guides/missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\nstrict: true\n{validation}")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "guides/missing.md" in done.stderr


def _codes_in_source() -> set[str]:
    from sea import errors
    from sea.lang import codes

    found = set(codes.CODES)
    stack: list[type] = [errors.SeaError]
    while stack:
        cls = stack.pop()
        found.add(cls.code)
        stack += cls.__subclasses__()
    for path in (ROOT / "sea").rglob("*.py"):
        found |= set(re.findall(r"\"(SEA\d{3})\"", path.read_text(encoding="utf-8")))
    return found


def test_every_code_is_in_the_reference(site: Path) -> None:
    page = (site / "reference" / "codes" / "index.html").read_text(encoding="utf-8")
    listed = set(re.findall(r"<h2 id=\"(sea\d{3})\"", page))
    missing = {c for c in _codes_in_source() if c.lower() not in listed}
    assert not missing, f"codes missing from reference/codes: {sorted(missing)}"


def test_every_command_and_option_is_in_the_reference() -> None:
    from sea.cli import build_parser

    page = _reference().cli_page()
    sections = dict(re.findall(r"^## `(.+?)`\n(.*?)(?=^## |\Z)", page, re.S | re.M))
    stack: list[tuple[str, argparse.ArgumentParser]] = [("sea", build_parser())]
    checked = 0
    while stack:
        name, parser = stack.pop()
        assert name in sections, f"`{name}` is not in reference/cli"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{name} {sub}", child) for sub, child in action.choices.items()]
            for option in action.option_strings:
                assert f"`{option}`" in sections[name], f"`{name} {option}` is not in reference/cli"
                checked += 1
    assert checked > 100


def test_every_event_type_is_in_the_reference() -> None:
    from sea.engine import events

    page = _reference().events_page()
    stack: list[type] = [events.Event]
    while stack:
        cls = stack.pop()
        stack += cls.__subclasses__()
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str) and kind != "event":
            assert f"## `{kind}`" in page, kind
