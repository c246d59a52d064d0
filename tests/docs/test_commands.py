"""Every command and program the documentation shows is real: each `sea ...` line parses with
the command line's own parser, and each Python program runs (with the scripted model in place
of the local one). A block preceded by ``<!-- skip: REASON -->`` is left out, with its reason."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sea.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
_SKIP = re.compile(r"<!-- skip: (.+?) -->\n$")


def _commands() -> list[tuple[str, str]]:
    """Each `sea ...` line of an indented or console block: (page, command)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8").replace("\\\n", " ")
        for line in re.findall(r"^(?:    |\$ )(?:\$ )?(sea .*)$", text, re.M):
            for part in re.sub(r"\s+#.*$", "", line).split(";"):
                command = re.sub(r"\s*&\s*$", "", part.strip())
                found.append((page.relative_to(ROOT).as_posix(), command))
    return found


def _programs() -> list[tuple[str, str, str | None]]:
    """Each ```python block: (page, code, skip reason or None)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"```python\n(.*?)```", text, re.S):
            skip = _SKIP.search(text[: match.start()])
            found.append((page.relative_to(ROOT).as_posix(), match.group(1),
                          skip.group(1) if skip else None))
    return found


def test_the_docs_show_commands_and_programs() -> None:
    assert len(_commands()) > 40
    assert len(_programs()) >= 3


@pytest.mark.parametrize(("page", "command"), _commands())
def test_every_command_shown_parses(
    page: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets = (ROOT / "docs" / "guides" / "budgets.md").read_text(encoding="utf-8")
    prices = re.search(r"`prices.json` reads `(.*?)`", budgets, re.S)
    assert prices is not None, "the budgets guide no longer shows prices.json"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prices.json").write_text(prices.group(1).replace("\n", " "), encoding="utf-8")
    words = shlex.split(command.replace("…", "0123456789abcdef"))
    try:
        build_parser().parse_args(words[1:])
    except SystemExit as exit_:
        pytest.fail(f"{page}: `{command}` does not parse (exit {exit_.code})")


@pytest.mark.parametrize(("page", "code", "skip"), _programs())
def test_every_program_shown_runs(page: str, code: str, skip: str | None, tmp_path: Path) -> None:
    if skip:
        pytest.skip(f"{page}: {skip}")
    (tmp_path / "my_playbooks").mkdir()
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "chat"}],
        "sub_speak.compose": ["Hello, Ken!"]}}))
    program = code.replace('resolve_model("local")', f'resolve_model("scripted:{script}")')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SEA_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{page}:\n{done.stderr}"
    if "print(result.status, result.spoken)" in code:
        assert done.stdout.splitlines()[0] == "ok ['Hello, Ken!']"
