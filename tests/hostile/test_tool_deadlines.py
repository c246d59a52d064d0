"""Every host tool call has a deadline (``Limits.tool_timeout_s``, ``sea run --tool-timeout``)
and ends as a routed failure: a tool or MCP call that never answers, and a tool that raises
``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit`` or another ``BaseException``, fail
their node with a clear ``{error}`` that its ``error_next`` takes; a ``--tools`` module that
exits while it is imported is a usage error (exit 2), not a run that did nothing.

Before: a never-answering call held the turn forever (a synchronous one also kept the
process from exiting), a tool's ``SystemExit`` or ``KeyboardInterrupt`` hung ``sea run``,
``GeneratorExit`` and ``BaseException`` ended in a traceback, and a module calling
``sys.exit(0)`` at import made ``sea run`` exit 0 having run nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from langchain_core.tools import BaseTool, tool

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.scripted import ScriptedChatModel
from sea.cli import main
from sea.engine.limits import Limits
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.llm.models import ModelSet

RELEASE = threading.Event()
"""Set when each test ends: lets a blocked synchronous tool's thread finish."""


@pytest.fixture(autouse=True)
def _release() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


@tool
async def never_async() -> str:
    """Never answers (awaits forever)."""
    await asyncio.Event().wait()
    return "never"


@tool
def never_sync() -> str:
    """Never answers (blocks its thread)."""
    RELEASE.wait(120)
    return "never"


class Custom(BaseException):
    """A BaseException that is none of Python's own."""


def _raising(kind: type[BaseException], *, asynchronous: bool) -> BaseTool:
    if asynchronous:
        async def raise_it_async() -> str:
            """Raises."""
            raise kind("from the tool")

        return tool("raising", description="Raises.")(raise_it_async)

    def raise_it() -> str:
        """Raises."""
        raise kind("from the tool")

    return tool("raising", description="Raises.")(raise_it)


def calling(action: str) -> dict[str, Any]:
    return {
        "name": "calling", "description": "Calls one tool.", "start_node": "call",
        "nodes": [
            {"id": "call", "type": "tool", "action": action, "output_key": "got",
             "error_next": "note"},
            {"id": "note", "type": "set",
             "assignments": {"code": "{error.code}", "why": "{error.message}"}},
        ],
    }


@pytest.fixture
def run(store: SQLiteStore, persona: Persona, tmp_path: Path) -> Iterator[Any]:
    books = tmp_path / "books"
    books.mkdir()
    made: list[Runtime] = []

    def run_one(playbook: dict[str, Any], tools: list[BaseTool],
                limits: Limits | None = None) -> PulseResult:
        (books / f"{playbook['name']}.json").write_text(json.dumps(playbook))
        runtime = Runtime(RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                          tools=tools, library=[books], limits=limits,
                          checkpoint_path=tmp_path / "checkpoints.sqlite"))
        made.append(runtime)
        return runtime.run_pulse(persona, playbook["name"], "go")

    yield run_one
    for runtime in made:
        runtime.close()


# -- deadlines -----------------------------------------------------------------------------------


def test_the_deadline_is_a_limit_with_a_default() -> None:
    assert Limits().tool_timeout_s == 600.0
    with pytest.raises(UsageError, match="tool_timeout_s"):
        Limits(tool_timeout_s=0)


@pytest.mark.parametrize("never", [never_async, never_sync], ids=["async", "sync"])
def test_a_tool_that_never_answers_fails_its_node_at_the_deadline(
    run: Any, never: BaseTool
) -> None:
    result = run(calling(never.name), [never], Limits(tool_timeout_s=0.2))
    assert result.status == "ok", result.error  # error_next took over
    assert result.outputs["code"] == "SEA533" and "got" not in result.outputs
    assert result.outputs["why"] == (
        f"tool {never.name!r} did not answer within 0.2 s (Limits.tool_timeout_s); it was "
        "abandoned (a slower tool needs a higher limit)")


@pytest.mark.parametrize("asynchronous", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt, GeneratorExit, Custom])
def test_a_tool_raising_a_base_exception_is_a_routed_failure(
    run: Any, kind: type[BaseException], asynchronous: bool
) -> None:
    result = run(calling("raising"), [_raising(kind, asynchronous=asynchronous)])
    assert result.status == "ok", result.error
    assert result.outputs["code"] == "SEA532"
    assert result.outputs["why"] == f"tool 'raising' failed: {kind.__name__}: from the tool"


def test_without_error_next_the_pulse_ends_with_the_deadline_error(run: Any) -> None:
    playbook = {"name": "bare", "description": "Calls one tool.", "start_node": "call",
                "nodes": [{"id": "call", "type": "tool", "action": "never_async"}]}
    result = run(playbook, [never_async], Limits(tool_timeout_s=0.2))
    assert result.status == "error" and result.error is not None
    assert result.error["code"] == "SEA533" and result.error["node"] == "call"


# -- MCP -----------------------------------------------------------------------------------------

SILENT_SERVER = '''
import anyio
from mcp.server.fastmcp import FastMCP

server = FastMCP("silent", log_level="WARNING")


@server.tool()
async def wait_forever() -> str:
    """Never answers."""
    await anyio.sleep_forever()
    return "never"


server.run()
'''


def test_an_mcp_call_that_never_answers_fails_its_node_at_the_deadline(
    run: Any, tmp_path: Path
) -> None:
    pytest.importorskip("langchain_mcp_adapters.client", reason="needs the mcp extra")
    from sea.host.mcp_tools import blocking_mcp_tools

    script = tmp_path / "silent_server.py"
    script.write_text(SILENT_SERVER)
    servers = {"silent": {"transport": "stdio", "command": sys.executable,
                          "args": [str(script)]}}
    with blocking_mcp_tools(servers) as tools:  # type: ignore[arg-type]
        result = run(calling("wait_forever"), tools, Limits(tool_timeout_s=0.2))
    assert result.status == "ok", result.error
    assert result.outputs["code"] == "SEA533"
    assert "'wait_forever' did not answer within 0.2 s" in result.outputs["why"]


# -- through the command line --------------------------------------------------------------------

TOOLS_MODULE = '''
import sys
import threading

from langchain_core.tools import tool


@tool
def stuck() -> str:
    """Never answers."""
    threading.Event().wait()
    return "never"


@tool
def leave() -> str:
    """Exits the process."""
    sys.exit(0)


TOOLS = [stuck, leave]
'''


def _sea(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {}}))
    return subprocess.run(
        [sys.executable, "-m", "sea", "run", *argv, "--input", "go", "--db",
         str(tmp_path / "memory.sqlite"), "--model", f"scripted:{script}", "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
        env={**os.environ, "SEA_HOME": str(tmp_path / "home")},
    )


@pytest.mark.parametrize(("action", "code"), [("stuck", "SEA533"), ("leave", "SEA532")])
def test_sea_run_routes_a_stuck_or_exiting_tool_and_exits(
    tmp_path: Path, action: str, code: str
) -> None:
    (tmp_path / "host_tools.py").write_text(TOOLS_MODULE)
    book = tmp_path / "calling.json"
    book.write_text(json.dumps(calling(action)))
    done = _sea(tmp_path, str(book), "--tools", "host_tools.py", "--tool-timeout", "0.2")
    assert done.returncode == 0, done.stderr
    result = orjson.loads(done.stdout)
    assert result["status"] == "ok"  # error_next took over
    (handled,) = result["handled_errors"]
    assert (handled["node"], handled["code"]) == ("call", code), result
    assert "Traceback" not in done.stderr


def _main(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``sea run ARGV`` in this process (the CLI's main function): its code and output."""
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {}}))
    code = main(["run", *argv, "--input", "go", "--db", str(tmp_path / "memory.sqlite"),
                 "--model", f"scripted:{script}", "--json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("exit_with", ["sys.exit(0)", "sys.exit('bye')", "raise GeneratorExit"])
def test_a_tools_module_that_exits_at_import_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    exit_with: str,
) -> None:
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    module = tmp_path / "exiting_tools.py"
    module.write_text(f"import sys\n{exit_with}\n")
    code, out, err = _main(tmp_path, capsys, "--tools", str(module))
    assert code == 2, (code, out, err)
    assert f"--tools {module}: importing {str(module)!r} failed: " in err
    assert out == "" and not (tmp_path / "memory.sqlite").exists()  # nothing ran


def test_tool_timeout_must_be_a_positive_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        _main(tmp_path, capsys, "--tool-timeout", "0")
    assert info.value.code == 2
    assert "--tool-timeout: expected a number of seconds > 0, got '0'" in capsys.readouterr().err
