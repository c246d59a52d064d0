"""Files a person names are read only if they are regular files of a bounded size: a FIFO, a
symbolic link to ``/dev/zero`` or a file over its limit given to ``--persona-file``,
``--prices``, ``--mcp``, ``sea validate --tools FILE.json``, ``--model scripted:FILE``,
``sea replay`` or ``sea memory import`` is refused with exit 2 and a message naming the
file, the limit and the setting that raises it; nothing hangs and nothing is read whole.

Before: each of these read the whole file (``Path.read_bytes``): a FIFO blocked the command
forever, a link to ``/dev/zero`` read until memory ran out.

Every command runs in a subprocess with a timeout and an address-space limit, so a
regression fails the test instead of the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sea.jsonfile import CONFIG_FILES, MEMORY_IMPORTS, TRACE_FILES, ReadLimit

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 60
MEMORY_LIMIT = 2 * 1024**3
"""Address space of the subprocesses: reading ``/dev/zero`` whole would need more."""

VALID_PLAYBOOK = {"name": "fine", "description": "d", "start_node": "a",
                  "nodes": [{"id": "a", "type": "pass"}]}


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def sea(tmp_path: Path, *argv: str, env: dict[str, str] | None = None,
        stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    """``sea ARGV`` in a subprocess that may not hang (timeout) or grow past 2 GB."""
    environment = {**os.environ, "SEA_HOME": str(tmp_path / "home"), **(env or {})}
    try:
        return subprocess.run(
            [sys.executable, "-m", "sea", *argv], cwd=tmp_path, capture_output=True,
            text=True, timeout=LIMIT_S, preexec_fn=_limit_memory, check=False,
            env=environment, stdin=stdin if stdin is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`sea {' '.join(argv)}` still ran after {LIMIT_S}s (blocked on a file)")


Command = Callable[[Path, Path], list[str]]
"""The command line that names ``file`` (in the directory ``tmp``)."""

KINDS: dict[str, tuple[Command, ReadLimit, str]] = {
    "persona file": (lambda f, t: ["run", "-i", "hi", "--db", str(t / "m.sqlite"),
                                   "--persona-file", str(f)], CONFIG_FILES, "persona file"),
    "price file": (lambda f, t: ["run", "-i", "hi", "--db", str(t / "m.sqlite"),
                                 "--prices", str(f)], CONFIG_FILES, "price file"),
    "mcp config": (lambda f, t: ["run", "-i", "hi", "--db", str(t / "m.sqlite"),
                                 "--model", f"scripted:{t / 'script.json'}",  # no local extra
                                 "--mcp", str(f)], CONFIG_FILES, "--mcp config"),
    "tool catalogue": (lambda f, t: ["validate", "--tools", str(f), str(t / "fine.json")],
                       CONFIG_FILES, "tool catalogue"),
    "model script": (lambda f, t: ["run", "-i", "hi", "--db", str(t / "m.sqlite"),
                                   "--model", f"scripted:{f}"], CONFIG_FILES, "model script"),
    "trace": (lambda f, t: ["replay", str(f)], TRACE_FILES, "trace"),
    "memory export": (lambda f, t: ["memory", "import", str(f), "--db", str(t / "m.sqlite")],
                      MEMORY_IMPORTS, "memory export"),
}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "fine.json").write_text(json.dumps(VALID_PLAYBOOK))
    (tmp_path / "script.json").write_text(json.dumps({"default": ["Hi."]}))
    return tmp_path


def _refused(returncode: object, stderr: str, code: str, *words: str) -> None:
    assert returncode == 2, (returncode, stderr)
    assert "Traceback" not in stderr
    assert code in stderr, stderr
    for word in words:
        assert word in stderr, (word, stderr)


LOWERED = 4096
"""A kind's limit lowered by its setting, so that a file over it is small to write."""
HOSTILE = ("fifo", "zero", "big")
_MAINS = """
import contextlib, io, json, os, sys
from sea.cli import main
results = []
for argv, env in json.loads(sys.stdin.read()):
    saved = dict(os.environ)
    os.environ.update(env)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    os.environ.clear()
    os.environ.update(saved)
    results.append({"code": code, "stderr": err.getvalue()})
print(json.dumps(results))
"""


def _hostile_file(directory: Path, hostile: str) -> Path:
    path = directory / f"{hostile}.json"
    if hostile == "fifo":
        os.mkfifo(path)
    elif hostile == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_bytes(b"{" + b" " * LOWERED + b"}")
    return path


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """What ``sea`` said and returned for each kind of file and each hostile file: the CLI's
    ``main`` with real files, all in one subprocess (each command would pay the start-up of
    the engine's modules again), with a timeout and a memory limit that a FIFO read or a
    ``/dev/zero`` read would break."""
    cases = []
    for kind, (command, limit, _) in KINDS.items():
        for hostile in HOSTILE:
            directory = tmp_path_factory.mktemp(f"{kind.replace(' ', '_')}_{hostile}")
            (directory / "fine.json").write_text(json.dumps(VALID_PLAYBOOK))
            (directory / "script.json").write_text(json.dumps({"default": ["Hi."]}))
            path = _hostile_file(directory, hostile)
            env = {"SEA_HOME": str(directory / "home"), limit.setting: str(LOWERED)}
            cases.append(((kind, hostile), command(path, directory), env))
    rules = _hostile_file(tmp_path_factory.mktemp("safety_rules"), "fifo")
    cases.append((("safety rules", "fifo"), ["run", "-i", "hi", "--safety-rules", str(rules)],
                  {"SEA_HOME": str(rules.parent / "home")}))
    try:
        done = subprocess.run(
            [sys.executable, "-c", _MAINS], cwd=ROOT, capture_output=True, text=True,
            input=json.dumps([[argv, env] for _, argv, env in cases]), timeout=LIMIT_S,
            preexec_fn=_limit_memory, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the commands still ran after {LIMIT_S}s (blocked on a file)")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return {case[0]: result for case, result in zip(cases, results, strict=True)}


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_is_refused_without_being_opened(
    refusals: dict[tuple[str, str], dict[str, Any]], kind: str
) -> None:
    done = refusals[kind, "fifo"]
    _refused(done["code"], done["stderr"], "SEA331", f"{KINDS[kind][2]} ", "fifo.json",
             "a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_to_dev_zero_is_refused_without_being_read(
    refusals: dict[tuple[str, str], dict[str, Any]], kind: str
) -> None:
    done = refusals[kind, "zero"]
    _refused(done["code"], done["stderr"], "SEA331", f"{KINDS[kind][2]} ", "zero.json",
             "a character device, not a regular file")


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_over_its_limit_is_refused_naming_the_limit_and_its_setting(
    refusals: dict[tuple[str, str], dict[str, Any]], kind: str
) -> None:
    done = refusals[kind, "big"]
    _refused(done["code"], done["stderr"], "SEA332", f"{KINDS[kind][2]} ", "big.json",
             f"{LOWERED + 2:,} bytes", f"{LOWERED:,}-byte limit", f"set {KINDS[kind][1].setting}")


@pytest.mark.parametrize(("kind", "hostile"), [("mcp config", "fifo"), ("memory export", "zero"),
                                               ("tool catalogue", "big")])
def test_python_m_sea_refuses_them_too(workdir: Path, kind: str, hostile: str) -> None:
    command, limit, what = KINDS[kind]
    path = _hostile_file(workdir, hostile)
    done = sea(workdir, "validate", "--mcp", str(path), str(workdir / "fine.json")) \
        if kind == "mcp config" else \
        sea(workdir, *command(path, workdir), env={limit.setting: str(LOWERED)})
    _refused(done.returncode, done.stderr, "SEA331" if hostile != "big" else "SEA332",
             f"{what} {path}")
    assert not (workdir / "m.sqlite").exists()  # refused before the store was opened


def test_a_configuration_just_over_the_default_limit_is_refused(workdir: Path) -> None:
    command, limit, what = KINDS["tool catalogue"]
    big = workdir / "big.json"
    big.write_bytes(b"{" + b" " * limit.max_bytes + b"}")
    done = sea(workdir, *command(big, workdir))
    _refused(done.returncode, done.stderr, "SEA332", f"{what} {big}",
             f"{limit.max_bytes:,}-byte limit", f"set {limit.setting}")


def test_the_setting_raises_the_limit(workdir: Path) -> None:
    catalogue = workdir / "tools.json"
    catalogue.write_text(json.dumps({"lookup": {"type": "object", "description": "x" * 2000}}))
    command = KINDS["tool catalogue"][0](catalogue, workdir)
    refused = sea(workdir, *command, env={"SEA_MAX_CONFIG_BYTES": "1000"})
    _refused(refused.returncode, refused.stderr, "SEA332", "1,000-byte limit",
             "set SEA_MAX_CONFIG_BYTES")
    raised = sea(workdir, *command, env={"SEA_MAX_CONFIG_BYTES": "100000"})
    assert raised.returncode == 0, raised.stderr


@pytest.mark.parametrize("value", ["lots", "0"])
def test_a_setting_that_is_not_a_number_of_bytes_is_refused(workdir: Path, value: str) -> None:
    command = KINDS["memory export"][0](workdir / "export.jsonl", workdir)
    done = sea(workdir, *command, env={"SEA_MAX_IMPORT_BYTES": value})
    _refused(done.returncode, done.stderr, "SEA333",
             f"SEA_MAX_IMPORT_BYTES={value!r} is not a number of bytes")


def test_safety_rules_that_are_a_fifo_are_refused_without_being_opened(
    refusals: dict[tuple[str, str], dict[str, Any]]
) -> None:
    done = refusals["safety rules", "fifo"]
    assert done["code"] == 2, done["stderr"]
    assert "fifo.json is a FIFO (named pipe), not a regular file" in done["stderr"]


def test_an_import_from_endless_standard_input_stops_at_the_limit(workdir: Path) -> None:
    with open("/dev/zero", "rb") as zeros:
        done = sea(workdir, "memory", "import", "-", "--db", str(workdir / "m.sqlite"),
                   env={"SEA_MAX_IMPORT_BYTES": "1000000"}, stdin=zeros.fileno())
    _refused(done.returncode, done.stderr, "SEA332", "standard input",
             "more than 1,000,000 bytes", "set SEA_MAX_IMPORT_BYTES")


def test_an_import_is_read_a_line_at_a_time_and_stops_at_the_limit(workdir: Path) -> None:
    line = {"persona": "aoi", "role": "user", "content": "hello", "tags": [],
            "created_at": "2026-01-01T00:00:00+00:00"}
    export = workdir / "export.jsonl"
    export.write_text("".join(json.dumps({**line, "content": f"hello {i}"}) + "\n"
                              for i in range(50)))
    size = export.stat().st_size
    db = str(workdir / "m.sqlite")
    refused = sea(workdir, "memory", "import", str(export), "--db", db,
                  env={"SEA_MAX_IMPORT_BYTES": str(size - 1)})
    _refused(refused.returncode, refused.stderr, "SEA332", f"{size:,} bytes",
             "set SEA_MAX_IMPORT_BYTES")
    done = sea(workdir, "memory", "import", str(export), "--db", db,
               env={"SEA_MAX_IMPORT_BYTES": str(size)})
    assert done.returncode == 0, done.stderr
    assert "imported 50 messages" in done.stderr
