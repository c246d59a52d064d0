"""Hostile playbook files: a bad file, a FIFO, a symlink to ``/dev/zero`` or a huge file named
``*.json`` never hangs, exhausts memory or takes its siblings down; repeated JSON keys are
reported instead of silently keeping the last.

Anything that could block (a FIFO) or read forever (``/dev/zero``) runs in a subprocess
with a timeout and a memory limit, so a regression fails the test instead of the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sea.cli import main
from sea.lang.files import MAX_PLAYBOOK_BYTES
from sea.lang.library import PlaybookLibrary
from sea.lang.loader import check_document

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 60
MEMORY_LIMIT = 2 * 1024**3
"""Address space of the subprocesses: reading ``/dev/zero`` whole would need more."""


def playbook(name: str, **fields: object) -> dict[str, object]:
    """A minimal valid playbook (one ``pass`` node) with extra or replaced fields."""
    return {"name": name, "description": "d", "start_node": "a",
            "nodes": [{"id": "a", "type": "pass"}], **fields}


def caller(name: str, callee: str) -> dict[str, object]:
    """A playbook that calls ``callee`` (so checking it consults the library's signatures)."""
    return playbook(name, nodes=[{"id": "a", "type": "subplay", "playbook": callee}])


def write(path: Path, document: dict[str, object]) -> Path:
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return path


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def sea_process(*argv: str) -> subprocess.CompletedProcess[str]:
    """``sea ARGV`` in a subprocess that may not hang (timeout) or grow past 2 GB."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "sea", *argv], cwd=ROOT, capture_output=True, text=True,
            timeout=LIMIT_S, preexec_fn=_limit_memory, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`sea {' '.join(argv)}` still ran after {LIMIT_S}s (blocked on a file)")


def python_process(code: str) -> subprocess.CompletedProcess[str]:
    """Python ``code`` in a subprocess with the same limits."""
    try:
        return subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
            timeout=LIMIT_S, preexec_fn=_limit_memory, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the library scan still ran after {LIMIT_S}s (blocked on a file)")


@pytest.fixture
def siblings(tmp_path: Path) -> Path:
    """A directory with a good playbook and one that calls the (hostile) file ``target``."""
    write(tmp_path / "good.json", playbook("good"))
    write(tmp_path / "caller.json", caller("caller", "target"))
    return tmp_path


def diagnostics(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert "Traceback" not in done.stderr, done.stderr
    found: list[dict[str, object]] = json.loads(done.stdout)
    return found


def test_a_number_for_input_schema_is_a_located_diagnostic_and_siblings_are_checked(
    siblings: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: TypeError traceback from sea/lang/library.py (`'float' object is not iterable`)
    write(siblings / "target.json", playbook("target", input_schema=1.5))
    write(siblings / "broken.json", caller("broken", "nowhere"))
    assert main(["validate", "--json", str(siblings)]) == 1
    out, err = capsys.readouterr()
    found = {(Path(str(d["file"])).name, d["code"], d["pointer"]): d for d in json.loads(out)}
    assert {name for name, _, _ in found} == {"target.json", "broken.json"}  # good, caller: ok
    target = found[("target.json", "SEA012", "/input_schema")]
    assert isinstance(target["line"], int) and isinstance(target["column"], int)
    assert ("broken.json", "SEA050", "/nodes/0/playbook") in found  # a sibling, still checked
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "fields",
    [
        {"input_schema": 1.5},
        {"input_schema": 3, "output_schema": 7, "router_callable": "yes"},
        {"description": 3, "input_schema": True},
    ],
)
def test_odd_values_never_break_the_library(tmp_path: Path, fields: dict[str, object]) -> None:
    # before: TypeError (`'float' object is not iterable`, `'int' ...`, `'bool' ...`)
    write(tmp_path / "target.json", playbook("target", **fields))
    write(tmp_path / "caller.json", caller("caller", "target"))
    library = PlaybookLibrary([tmp_path])
    signature = library.signature("target")
    assert signature is not None and signature.params == {} and signature.outputs == ()
    assert library.check("target").errors  # the file's own check reports the values
    library.check("caller")  # its check consults the signature: no exception
    assert [p.name for p in library.router_callable()] == []


def test_a_fifo_in_a_playbook_directory_is_skipped_with_a_warning(siblings: Path) -> None:
    # before: `sea validate DIR` blocked forever opening the FIFO (the caller's check reads
    # the library)
    os.mkfifo(siblings / "target.json")
    done = sea_process("validate", str(siblings))
    assert "Traceback" not in done.stderr
    assert "target.json: SEA006 warning: the path is a FIFO" in done.stdout
    assert "caller.json:" in done.stdout and "SEA050" in done.stdout  # its callee is skipped
    assert "2 files checked: 1 error, 1 warning" in done.stderr and done.returncode == 1


def test_a_named_fifo_is_an_error_not_a_hang(tmp_path: Path) -> None:
    # before: blocked forever
    os.mkfifo(tmp_path / "pipe.json")
    done = sea_process("validate", "--json", str(tmp_path / "pipe.json"))
    assert [(d["code"], d["severity"]) for d in diagnostics(done)] == [("SEA006", "error")]
    assert done.returncode == 1


def test_a_symlink_to_dev_zero_is_skipped_without_reading_it(siblings: Path) -> None:
    # before: read until MemoryError (here: the 2 GB limit), in the library scan
    (siblings / "target.json").symlink_to("/dev/zero")
    done = sea_process("validate", "--json", str(siblings))
    found = {(Path(str(d["file"])).name, d["code"], d["severity"]) for d in diagnostics(done)}
    assert found == {("target.json", "SEA006", "warning"), ("caller.json", "SEA050", "error")}
    named = sea_process("validate", "--json", str(siblings / "target.json"))
    assert [d["code"] for d in diagnostics(named)] == ["SEA006"] and named.returncode == 1


def test_the_library_lists_good_playbooks_beside_a_fifo_and_dev_zero(tmp_path: Path) -> None:
    # before: PlaybookLibrary.names() blocked on the FIFO (or read /dev/zero forever)
    write(tmp_path / "good.json", playbook("good"))
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "link.json").symlink_to(tmp_path / "good.json")  # followed: a regular file
    code = (
        "from pathlib import Path\n"
        "from sea.lang.library import PlaybookLibrary\n"
        f"library = PlaybookLibrary([Path({str(tmp_path)!r})])\n"
        "print(library.names(), sorted(Path(d.file).name for d in library.skipped()),\n"
        "      [p.name for p in library.router_callable()])\n"
    )
    done = python_process(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['good'] ['pipe.json', 'zero.json'] []"


def test_a_file_over_the_size_limit_is_not_read(siblings: Path) -> None:
    # before: read and parsed whole, whatever its size
    big = playbook("target", description="x" * (MAX_PLAYBOOK_BYTES + 1))
    write(siblings / "target.json", big)
    done = sea_process("validate", "--json", str(siblings))
    found = {(Path(str(d["file"])).name, d["code"], d["severity"]) for d in diagnostics(done)}
    assert ("target.json", "SEA007", "warning") in found
    named = sea_process("validate", "--json", str(siblings / "target.json"))
    assert [d["code"] for d in diagnostics(named)] == ["SEA007"]


def test_a_repeated_key_is_a_located_error() -> None:
    # before: accepted; the last `description` won silently
    text = (
        '{"name": "dup",\n'
        ' "description": "what it says",\n'
        ' "start_node": "a",\n'
        ' "nodes": [{"id": "a", "type": "pass", "id": "b"}],\n'
        ' "description": "what it does"}\n'
    )
    result = check_document(text, file="dup.json")
    assert result.playbook is None
    repeated = [(d.pointer, d.line, d.column) for d in result.diagnostics if d.code == "SEA008"]
    assert repeated == [("/nodes/0/id", 4, 40), ("/description", 5, 2)]
    first = next(d for d in result.diagnostics if d.pointer == "/description")
    assert "first on line 2" in first.message
    # an escaped quote before a colon, inside a value, is no key at all
    text = '{"name": "ok", "description": "say \\": this", "start_node": "a",' \
           ' "nodes": [{"id": "a", "type": "pass"}]}'
    result = check_document(text, file="ok.json")
    assert result.playbook is not None and result.diagnostics == []
