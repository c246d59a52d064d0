"""Host tools from the command line: ``--tools MODULE[:ATTR]`` and the ``--mcp`` file's form.

The modules are real files in a temporary directory on ``sys.path``; the pulses run through
``sea.cli.main`` with a scripted model and a real SQLite store.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from saimemory.sqlite import SQLiteStore
from sea.cli import main
from sea.errors import UsageError
from sea.host.mcp_config import mcp_config, read_mcp_config
from sea.host.mcp_tools import tool_result
from sea.host.tool_modules import module_tools

ROOT = Path(__file__).resolve().parents[2]

TOOLS_MODULE = '''
from langchain_core.tools import tool


@tool
def reverse(text: str) -> str:
    """The text backwards."""
    return text[::-1]


@tool
def length(text: str) -> int:
    """How many characters the text has."""
    return len(text)


TOOLS = [reverse, length]
ONE = reverse
NUMBER = 7


def make_tools():
    return [length]


def needs_an_argument(x):
    return [reverse]
'''

PLAYBOOK = {
    "name": "mirror",
    "description": "Reverses the user's words and remembers the result.",
    "input_schema": [],
    "start_node": "flip",
    "nodes": [
        {"id": "flip", "type": "tool", "action": "reverse", "args": {"text": "{input}"},
         "output_key": "flipped", "next": "note"},
        {"id": "note", "type": "memorize", "role": "assistant",
         "action": "mirrored: {flipped}", "tags": ["mirror"]},
    ],
}

Write = Callable[[str], str]


@pytest.fixture
def write_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Write:
    """Writes a module under a fresh name into a directory on ``sys.path``; its name."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(source: str) -> str:
        name = f"host_tools_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return write


def names(spec: str) -> list[str]:
    return [tool.name for tool in module_tools(spec)]


def test_attribute_may_be_a_list_a_tool_or_a_factory(write_module: Write) -> None:
    module = write_module(TOOLS_MODULE)
    assert names(f"{module}:TOOLS") == ["reverse", "length"]
    assert names(f"{module}:ONE") == ["reverse"]
    assert names(f"{module}:make_tools") == ["length"]


def test_without_attribute_the_module_tools_list_is_used(write_module: Write) -> None:
    assert names(write_module(TOOLS_MODULE)) == ["reverse", "length"]


def test_without_tools_list_every_top_level_tool_is_used(write_module: Write) -> None:
    module = write_module(TOOLS_MODULE.replace("TOOLS = [reverse, length]", ""))
    assert names(module) == ["reverse", "length"]


def test_a_python_file_may_be_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "pocket" / "my_tools.py"
    path.parent.mkdir()
    path.write_text(TOOLS_MODULE, encoding="utf-8")
    assert names(f"{path}:ONE") == ["reverse"]
    assert names(str(path)) == ["reverse", "length"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("{m}:MISSING", "has no attribute 'MISSING' (it has: reverse, length, TOOLS, ONE)"),
        ("{m}:NUMBER", "NUMBER is a int; expected a tool, a list of tools, or a function"),
        ("{m}:needs_an_argument", "a function taking arguments (needs_an_argument)"),
        ("no_such_module_anywhere:TOOLS", "no module named 'no_such_module_anywhere'"),
        ("{m}.sub:TOOLS", "no module named"),
        (":TOOLS", "expected MODULE[:ATTR]"),
    ],
)
def test_a_bad_module_spec_is_a_usage_error_naming_it(
    write_module: Write, spec: str, expected: str
) -> None:
    spec = spec.format(m=write_module(TOOLS_MODULE))
    with pytest.raises(UsageError) as caught:
        module_tools(spec)
    assert caught.value.message.startswith(f"--tools {spec}: ")
    assert expected in caught.value.message


def test_a_module_that_fails_to_import_is_a_usage_error(write_module: Write) -> None:
    broken = write_module("raise RuntimeError('no config here')\n")
    with pytest.raises(UsageError, match="importing .* failed: RuntimeError: no config here"):
        module_tools(broken)
    needy = write_module("import a_package_nobody_installed\n")
    with pytest.raises(UsageError, match="needs the module 'a_package_nobody_installed'"):
        module_tools(needy)
    empty = write_module("X = 1\n")
    with pytest.raises(UsageError, match="has no TOOLS and no tools at its top level"):
        module_tools(empty)


def _run_files(tmp_path: Path) -> tuple[Path, Path]:
    """The playbook file and an empty model script, for ``sea run``."""
    book = tmp_path / "mirror.json"
    book.write_bytes(orjson.dumps(PLAYBOOK))
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {}}))
    return book, script


def _sea(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_sea_run_calls_a_module_tool_and_memory_keeps_its_result(
    write_module: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write_module(TOOLS_MODULE)
    book, script = _run_files(tmp_path)
    db = tmp_path / "memory.sqlite"
    code, err = _sea(capsys, "run", str(book), "--input", "stressed", "--db", str(db),
                     "--model", f"scripted:{script}", "--tools", f"{module}:TOOLS", "--json")
    assert code == 0, err
    store = SQLiteStore(db)
    try:
        texts = [m.content for m in store.recent("aoi")]
    finally:
        store.close()
    assert "mirrored: desserts" in texts


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (["--tools", "no_such_module_anywhere"], "--tools no_such_module_anywhere: no module"),
        (["--tools", "catalogue.json"],
         "--tools catalogue.json: a JSON tool catalogue only describes tools"),
        (["--mcp", "missing.json"], "cannot read the --mcp config missing.json"),
        (["--tools", "{m}:ONE", "--tools", "{m}:TOOLS"],
         "two tools are named 'reverse': one from --tools {m}:ONE, one from --tools {m}:TOOLS"),
    ],
)
def test_sea_run_with_a_bad_tool_source_exits_2_naming_it(
    write_module: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    option: list[str], expected: str,
) -> None:
    module = write_module(TOOLS_MODULE)
    book, script = _run_files(tmp_path)
    given = [word.format(m=module) for word in option]
    code, err = _sea(capsys, "run", str(book), "--input", "hi", "--db",
                     str(tmp_path / "memory.sqlite"), "--model", f"scripted:{script}", *given)
    assert code == 2
    assert "SEA300 error: " + expected.format(m=module) in err
    assert "Traceback" not in err
    assert not (tmp_path / "memory.sqlite").exists()


def test_sea_validate_knows_the_module_tools_and_their_arguments(
    write_module: Write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write_module(TOOLS_MODULE)
    book = tmp_path / "mirror.json"
    book.write_bytes(orjson.dumps(PLAYBOOK))
    assert _sea(capsys, "validate", "--strict", "--tools", module, str(book))[0] == 0
    wrong = {**PLAYBOOK, "nodes": [{**PLAYBOOK["nodes"][0], "args": {"txt": "{input}"}},
                                   PLAYBOOK["nodes"][1]]}
    book.write_bytes(orjson.dumps(wrong))
    capsys.readouterr()
    assert main(["validate", "--tools", f"{module}:TOOLS", str(book)]) == 1
    assert "SEA061 error: tool `reverse` has no argument `txt`" in capsys.readouterr().out
    assert main(["validate", "--tools", f"{module}:make_tools", str(book)]) == 1
    assert "SEA060 error: tool `reverse` is not" in capsys.readouterr().out


def test_an_mcp_config_given_as_a_catalogue_is_pointed_to_mcp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "servers.json"
    config.write_bytes(orjson.dumps({"mcpServers": {"x": {"command": "x"}}}))
    code, err = _sea(capsys, "validate", "--tools", str(config), str(tmp_path))
    assert code == 2
    assert "is an MCP server configuration, not a tool catalogue; give it with --mcp" in err


def test_validate_with_a_json_catalogue_still_imports_no_langchain(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        from sea.cli import main
        code = main(["validate", "--tools", sys.argv[1], sys.argv[2]])
        print(code, sorted(m for m in ("langchain_core", "langgraph", "mcp") if m in sys.modules))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "tests" / "data" / "tools.json"),
         str(ROOT / "tests" / "data" / "valid")],
        capture_output=True, text=True, check=True, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "", "SEA_CACHE_DIR": os.environ["SEA_CACHE_DIR"]},
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"


SERVER = {"command": "python", "args": ["server.py"]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([], 'expected a JSON object {"mcpServers": {NAME: SERVER, ...}}'),
        ({"mcp_servers": {}}, "found 'mcp_servers'"),
        ({"mcpServers": {}}, "'mcpServers' must be an object naming at least one server"),
        ({"mcpServers": {"a": SERVER}, "servers": {"b": SERVER}}, "expected a JSON object"),
        ({"mcpServers": {"a": {"args": []}}}, "server 'a': give `command`"),
        ({"mcpServers": {"a": {**SERVER, "autostart": True}}},
         "unknown field 'autostart' for a stdio server (expected args, command, cwd, env"),
        ({"mcpServers": {"a": {**SERVER, "args": "server.py"}}},
         "`args` must be a list of strings"),
        ({"mcpServers": {"a": {**SERVER, "env": {"N": 1}}}}, "`env` must be an object of strings"),
        ({"mcpServers": {"a": {"command": ""}}}, "`command` must be a non-empty string"),
        ({"servers": {"a": {"type": "websocket", "url": "ws://x"}}},
         "unknown transport 'websocket'"),
        ({"servers": {"a": {"type": "http", "transport": "sse", "url": "http://x"}}}, "disagree"),
        ({"servers": {"a": {"url": "ftp://x"}}}, "must start with http:// or https://"),
        ({"servers": {"a": {"url": "http://x", "timeout": 0}}}, "`timeout` must be a number"),
    ],
)
def test_a_bad_mcp_config_is_a_usage_error_naming_the_field(data: object, expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        mcp_config(data, source="--mcp servers.json")
    assert caught.value.message.startswith("--mcp servers.json: ")
    assert expected in caught.value.message


def test_both_common_config_forms_become_client_connections(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_bytes(orjson.dumps({"mcpServers": {
        "notes": {**SERVER, "env": {"TOKEN": "x"}},
        "search": {"url": "https://example.org/mcp", "headers": {"A": "b"}, "timeout": 5},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }}))
    assert read_mcp_config(path) == {
        "notes": {"transport": "stdio", "command": "python", "args": ["server.py"],
                  "env": {"TOKEN": "x"}},
        "search": {"transport": "streamable_http", "url": "https://example.org/mcp",
                   "headers": {"A": "b"}, "timeout": 5.0},
        "old": {"transport": "sse", "url": "http://127.0.0.1:9/sse"},
    }
    explicit = {"servers": {"notes": {"transport": "stdio", "command": "python"}}}
    assert mcp_config(explicit) == {"notes": {"transport": "stdio", "command": "python",
                                              "args": []}}
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="is not valid JSON"):
        read_mcp_config(path)


def test_mcp_results_become_plain_data() -> None:
    text = [{"type": "text", "text": "first", "id": "lc_1"}, {"type": "text", "text": "second"}]
    assert tool_result(text) == "first\nsecond"
    as_json = [{"type": "text", "text": '{\n  "words": 2\n}', "id": "lc_2"}]
    assert tool_result(as_json, {"structured_content": {"words": 2}}) == {"words": 2}
    wrapped = [{"type": "text", "text": "2", "id": "lc_3"}]
    assert tool_result(wrapped, {"structured_content": {"result": 2}}) == "2"
    image = [{"type": "text", "text": "a chart", "id": "lc_4"},
             {"type": "image", "base64": "iVBOR", "mime_type": "image/png", "id": "lc_5"}]
    assert tool_result(image) == [{"type": "text", "text": "a chart"},
                                  {"type": "image", "base64": "iVBOR", "mime_type": "image/png"}]
    assert tool_result([]) == ""
