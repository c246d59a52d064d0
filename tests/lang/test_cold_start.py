"""Commands that only read playbooks or memory start without the model machinery: no
LangGraph, LangChain or model runtime is imported by ``sea validate``, ``sea graph``,
``sea memory`` or ``sea --version`` (their start-up time is most of what a user waits)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from sea import __version__

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("langgraph", "langchain_core", "langchain", "llama_cpp", "procrastinate", "mcp",
         "prompt_toolkit")


def _env() -> dict[str, str]:
    """A bare environment, with the test's own verdict cache."""
    return {"PYTHONPATH": str(ROOT), "PATH": "", "SEA_CACHE_DIR": os.environ["SEA_CACHE_DIR"]}


def _imported(*words: str) -> tuple[list[str], list[str]]:
    """The heavy modules, then those of pydantic, jsonschema and re2, ``sea WORDS`` imported."""
    script = textwrap.dedent(f"""
        import json
        import sys
        from sea.cli import main
        try:
            main(sys.argv[1:])
        except SystemExit:
            pass
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
        print(json.dumps(sorted(m for m in ("pydantic", "jsonschema", "re2") if m in sys.modules)))
    """)
    done = subprocess.run([sys.executable, "-c", script, *words], capture_output=True,
                          text=True, cwd=ROOT, env=_env(), check=True)
    heavy, light = done.stdout.strip().splitlines()[-2:]
    return json.loads(heavy), json.loads(light)


@pytest.mark.parametrize("words", [
    ("validate", "playbooks"),
    ("validate", "tests/data/saiverse"),
    ("validate", "--strict", "playbooks"),
    ("graph", "meta_user"),
    ("memory", "recent", "--persona", "aoi", "--db", "{db}"),
    ("--version",),
])
def test_reading_commands_import_no_model_machinery(tmp_path: Path, words: tuple[str, ...]) -> None:
    args = [w.replace("{db}", str(tmp_path / "memory.sqlite")) for w in words]
    heavy, _ = _imported(*args)
    assert heavy == []


@pytest.mark.parametrize("words", [
    ("validate", "playbooks"),
    ("validate", "--strict", "playbooks"),
    ("validate", "tests/data/valid"),
    ("graph", "meta_user"),
])
def test_validating_valid_playbooks_imports_no_jsonschema(words: tuple[str, ...]) -> None:
    # jsonschema only explains a rejected document or schema: a valid one is checked by the
    # strict models and the metaschema check of sea.lang.metaschema; RE2 runs patterns only
    assert _imported(*words) == ([], ["pydantic"])


def test_validating_valid_playbooks_imports_no_name_matching() -> None:
    # difflib only suggests a name for a wrong one
    assert _loaded("difflib", "validate", "--no-cache", "playbooks") == []


def test_a_verdict_read_from_the_cache_imports_no_document_models() -> None:
    assert _imported("validate", "playbooks") == ([], ["pydantic"])  # checked, then kept
    assert _imported("validate", "playbooks") == ([], [])


def _loaded(prefix: str, *words: str) -> list[str]:
    """The modules named ``prefix...`` that ``sea WORDS`` imported."""
    script = ("import sys; from sea.cli import main; main(sys.argv[1:]); import json; "
              f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({prefix!r}))))")
    done = subprocess.run([sys.executable, "-c", script, *words], capture_output=True,
                          text=True, cwd=ROOT, env=_env(), check=True)
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_validate_reads_the_store_s_tags_not_its_records() -> None:
    assert _loaded("saimemory", "validate", "playbooks") == [
        "saimemory", "saimemory.errors", "saimemory.tags"
    ]


def test_version_reads_no_package_metadata() -> None:
    assert _loaded("importlib.metadata", "--version") == []


def test_the_version_is_the_installed_one() -> None:
    try:
        installed = metadata.version("sea-runtime")
    except metadata.PackageNotFoundError:
        pytest.skip("sea-runtime is not installed")
    assert __version__ == installed


def test_version_imports_neither_pydantic_nor_jsonschema() -> None:
    assert _imported("--version") == ([], [])
