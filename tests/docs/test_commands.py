"""Every command and program the documentation shows runs, and prints what the page shows.

Each block of ``sea`` commands (``tests/docs/examples.py``) runs in a directory of its own,
in this process (``sea.cli.main``, output captured), its steps in order, with what the page
takes for granted around it (``tests/docs/scenes.py``). Where a step would call a model, the
scripted model answers: through ``SEA_MODEL``, and in place of a model a step names with
``--model`` or ``--light-model``. An id the page abbreviates (``3f2a…``, ``PULSE_ID``) is
the one the block's earlier steps printed. A step ending in ``&`` runs as a process of its
own until the block ends.

A step that needs what a test run does not have is marked, with its reason: a
``postgresql://`` store runs under the ``postgres`` marker (on SEA_TEST_POSTGRES_DSN, in a
schema of its own), and a real model is skipped, naming it.

Each Python program shown runs too (with the scripted model in place of the local one). A
program preceded by ``<!-- skip: REASON -->`` is left out, with its reason.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from sea.cli import main
from tests.docs.examples import DOCS, ROOT, Example, Step, examples
from tests.docs.scenes import DEFAULT_SCRIPT, Outcome, Scene, scene_of

POSTGRES = "postgres"
REAL_MODELS = {
    "llama_cpp.server": "needs the bundled model served by llama-cpp-python's OpenAI-protocol "
                        "server (the `local` extra) on port 8765",
    "base_url=http": "needs a model server at the URL it names",
}
"""A step naming one of these needs what a test run does not have: it is skipped with the
reason."""

_ID = re.compile(r"\b[0-9a-f]{12}(?:[0-9a-f]{20})?\b")
"""A pulse's id (32 hex digits) or a schedule's (12)."""
_ABBREVIATED_ID = re.compile(r"\b[0-9a-f]{4}…|\bPULSE_ID\b")
_MODEL_OPTIONS = ("--model", "--light-model")
_LATENCY = re.compile(r"^\d+\.\d+s$")
_SKIP = re.compile(r"<!-- skip: (.+?) -->\n$")


try:  # imported while collecting: the MCP client binds the error output of the servers it
    # starts to the `sys.stderr` of its import, which inside a test is a capture without a file
    import langchain_mcp_adapters.client  # noqa: F401
except ImportError:
    REAL_MODELS["--mcp"] = "needs the mcp extra (pip install -e '.[mcp]')"


def _needs(step: Step, exported: bool) -> str | None:
    """What a step needs beyond this process: ``postgres``, a real model, or nothing."""
    for word, reason in REAL_MODELS.items():
        if word in step.command:
            return reason
    if exported or "postgresql://" in step.command:
        return POSTGRES
    return None


def _groups(example: Example) -> dict[str | None, tuple[Step, ...]]:
    """The block's steps by what they need (in order; plain shell steps with the others)."""
    groups: dict[str | None, list[Step]] = {}
    exported = False
    for step in example.steps:
        need = _needs(step, exported)
        exported |= step.command.startswith("export ") and need == POSTGRES
        groups.setdefault(need, []).append(step)
    runnable = {need: steps for need, steps in groups.items() if any(s.is_sea for s in steps)}
    return {need: tuple(steps) for need, steps in runnable.items()}


def _cases() -> list[Any]:
    cases = []
    for example in examples():
        for need, steps in _groups(example).items():
            marks: list[pytest.MarkDecorator] = []
            suffix = ""
            if need == POSTGRES:
                marks = [pytest.mark.postgres]
                suffix = "-postgres"
            elif need is not None:
                suffix = "-skipped"
            cases.append(pytest.param(example, need, steps, marks=marks,
                                      id=f"{example.name}{suffix}"))
    return cases


@dataclass
class Reader:
    """A reader typing one example's steps, in a directory of its own."""

    root: Path
    scene: Scene
    capfd: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch
    model: str
    dsn: str | None = None
    ids: list[str] = field(default_factory=list)
    background: list[subprocess.Popen[str]] = field(default_factory=list)
    starting: list[tuple[subprocess.Popen[str], str, str]] = field(default_factory=list)
    """The background steps not yet up: (process, command, what it says once it is)."""

    def sea(self, *argv: str) -> Outcome:
        """``sea ARGV`` in this process; the ids it prints are kept for later steps."""
        self.capfd.readouterr()
        code = main(list(argv))
        captured = self.capfd.readouterr()
        self.ids += _printed_id(captured.out, captured.err)
        return Outcome(code, captured.out, captured.err)

    def words(self, step: Step) -> list[str]:
        """The step's words, with the ids, models and store of this run put in."""
        text = step.command
        if _ABBREVIATED_ID.search(text):
            assert self.ids, f"`{text}`: no earlier step printed an id"
            text = _ABBREVIATED_ID.sub(self.ids[-1], text)
        if self.dsn is not None:
            text = re.sub(r"postgresql://[^\s\"']+", self.dsn, text)
        words = shlex.split(text)
        for index, word in enumerate(words[:-1]):
            if word in _MODEL_OPTIONS and not words[index + 1].startswith("scripted:"):
                words[index + 1] = self.model
        if words[1:2] == ["serve"]:  # a port of the page's may be taken here: any free one
            words = [w for i, w in enumerate(words) if "--port" not in words[i - 1: i + 1]]
            words += ["--port", "0"]
        return words

    def run(self, step: Step) -> None:
        """Run one step and check it."""
        words = self.words(step)
        if not step.is_sea:
            self._shell(words)
            return
        if step.background:
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            process = subprocess.Popen(
                [sys.executable, "-m", "sea", *words[1:]], cwd=Path.cwd(), env=env, text=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            self.background.append(process)
            if words[1] in _READY:  # a later step (or the stop) waits until it is up
                self.starting.append((process, step.command, _READY[words[1]]))
            return
        self.ready()
        done = self.sea(*words[1:])
        for start, holds in self.scene.until.items():
            deadline = time.monotonic() + 30
            while step.command.startswith(start) and not holds(done):
                assert time.monotonic() < deadline, f"`{step.command}` still says:\n{done.out}"
                time.sleep(0.2)
                done = self.sea(*words[1:])
        assert done.code == 0, f"`{step.command}` exited {done.code}:\n{done.err}"
        _check_shown(step, done)
        for start, check in self.scene.checks.items():
            if step.command.startswith(start):
                check(done, self)

    def _shell(self, words: list[str]) -> None:
        if words[0] == "mkdir":
            Path(words[1]).mkdir()
        elif words[0] == "cd":
            self.monkeypatch.chdir(words[1])
        elif words[0] == "export":
            name, _, value = words[1].partition("=")
            self.monkeypatch.setenv(name, value)
        else:
            pytest.fail(f"the examples' runner does not know the command `{shlex.join(words)}`")

    def ready(self) -> None:
        """Wait until the background steps started since the last wait are up (the ones
        started one after the other start at once)."""
        while self.starting:
            _wait_until_ready(*self.starting.pop(0))

    def stop(self) -> None:
        """End the steps left running (as Ctrl-C or SIGTERM would) once they are up; they must
        end cleanly."""
        self.ready()
        for process in self.background:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=30)
            assert process.returncode == 0, err


_READY = {"serve": "listening on", "worker": "pulse(s) at once"}
"""What a background command says on stderr once it is up."""


def _wait_until_ready(process: subprocess.Popen[str], command: str, ready: str) -> None:
    assert process.stderr is not None
    said = []
    for line in process.stderr:  # ends when the process does
        said.append(line)
        if ready in line:
            return
    raise AssertionError(f"`{command}` exited {process.wait()} before it was up:\n"
                         + "".join(said))


def _printed_id(out: str, err: str) -> list[str]:
    """The id a command printed, for a later step's ``3f2a…``: a JSON result's
    ``pulse_id``, else the first id of its output (``sea submit``, ``sea schedule add`` and
    ``list``), else the last of its messages (the resume command a waiting pulse prints).
    Spans printed by ``--otel`` (a console exporter's JSON over many lines) are not one."""
    if out.startswith("{") and out.splitlines()[0] != "{":
        found = orjson.loads(out.splitlines()[0]).get("pulse_id")
        return [found] if isinstance(found, str) else []
    ids = _ID.findall(out)
    return ids[:1] if ids else _ID.findall(err)[-1:]


def _comparable(lines: list[str]) -> list[list[str]]:
    """Each line's words, latencies and rules made alike (their widths vary with them)."""
    rows = []
    for line in lines:
        words = ["LATENCY" if _LATENCY.match(w) else w for w in line.split()]
        rows.append(["RULE"] if words and set(words[0]) == {"─"} else words)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _pattern(shown: str) -> re.Pattern[str]:
    """A line shown: ``…`` or ``...`` (an abbreviated id too) stands for any text."""
    parts = re.split(r"…|\.\.\.", _ABBREVIATED_ID.sub("…", shown.strip()))
    return re.compile(r"\s*" + ".*".join(re.escape(p) for p in parts) + r"\s*$")


def _check_shown(step: Step, done: Outcome) -> None:
    """The output the page shows is what the step printed: a console transcript line by line
    (latencies aside), comment lines each a line printed, in order."""
    if step.console:
        printed = (done.out + done.err).rstrip("\n").splitlines()
        assert _comparable(list(step.shown)) == _comparable(printed), (
            f"`{step.command}` printed:\n{done.out}{done.err}")
        return
    lines = iter((done.out + done.err).splitlines())
    for shown in step.shown:
        pattern = _pattern(shown)
        assert any(pattern.match(line) for line in lines), (
            f"`{step.command}` printed no line `{shown}` (in order):\n{done.out}{done.err}")


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A DSN whose ``?schema=`` is fresh (dropped afterwards)."""
    from tests.workers.conftest import DSN, drop_schema

    if not DSN:
        pytest.skip("SEA_TEST_POSTGRES_DSN is not set")
    schema = f"docs_{uuid.uuid4().hex[:10]}"
    yield f"{DSN}{'&' if '?' in DSN else '?'}schema={schema}"
    drop_schema(schema)


def test_the_docs_show_commands_and_programs() -> None:
    found = examples()
    assert sum(step.is_sea for example in found for step in example.steps) > 40
    assert len(_programs()) >= 3


@pytest.mark.parametrize(("example", "need", "steps"), _cases())
def test_every_command_shown_runs(
    example: Example, need: str | None, steps: tuple[Step, ...], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    if need not in (None, POSTGRES):
        pytest.skip(f"{example.name}: {need}")
    scene = scene_of(example.page, example.first)
    root = tmp_path / "example"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SEA_DB", raising=False)
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {**DEFAULT_SCRIPT, **scene.script}}))
    model = f"scripted:{script}"
    monkeypatch.setenv("SEA_MODEL", model)
    for name, value in scene.env.items():
        monkeypatch.setenv(name, value)
    dsn = request.getfixturevalue("postgres_dsn") if need == POSTGRES else None
    reader = Reader(root, scene, capfd, monkeypatch, model, dsn)
    if scene.files is not None:
        scene.files(root)
    if scene.before is not None:
        scene.before(reader)
    try:
        for step in steps:
            reader.run(step)
    finally:
        reader.stop()


def _programs() -> list[tuple[str, str, str | None]]:
    """Each ```python block: (page, code, skip reason or None)."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"```python\n(.*?)```", text, re.S):
            skip = _SKIP.search(text[: match.start()])
            found.append((page.relative_to(ROOT).as_posix(), match.group(1),
                          skip.group(1) if skip else None))
    return found


@pytest.mark.parametrize(("page", "code", "skip"), _programs())
def test_every_program_shown_runs(
    page: str, code: str, skip: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The program runs in this process, as ``python -c`` would run it in a new directory."""
    if skip:
        pytest.skip(f"{page}: {skip}")
    (tmp_path / "my_playbooks").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SEA_HOME", str(tmp_path / "home"))
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "chat"}],
        "sub_speak.compose": ["Hello, Ken!"]}}))
    program = code.replace('resolve_model("local")', f'resolve_model("scripted:{script}")')
    exec(compile(program, page, "exec", dont_inherit=True), {"__name__": "__main__"})
    if "print(result.status, result.spoken)" in code:
        assert capsys.readouterr().out.splitlines()[0] == "ok ['Hello, Ken!']"
