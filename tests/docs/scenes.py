"""What each command example of the documentation needs around it: the files a reader is
assumed to have (a playbook of their own, a tool module, a price table), the scripted
model's answers, earlier pulses in the store, and checks of what a step prints beyond what
the page shows.

Only what a page takes for granted is here; the commands themselves, and their flags, are
read from the page (``tests/docs/examples.py``), so renaming a flag is a change of the page.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from tests.docs.examples import DOCS, ROOT


@dataclass(frozen=True)
class Outcome:
    """What one step did: exit code and what it printed."""

    code: int
    out: str
    err: str


class Runner(Protocol):
    """Runs a ``sea`` command in the example's directory (``sea("run", ...)``)."""

    root: Path

    def sea(self, *argv: str) -> Outcome: ...


SPOKEN = "Hello! I'm Aoi."

DEFAULT_SCRIPT: dict[str, list[Any]] = {
    "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "a greeting"}],
    "sub_speak.compose": [SPOKEN],
    "mood_reply.read_mood": [{"cheerful": False}],
    "memory_research.plan": [{"queries": ["hiking"]}],
    "memory_research.summarize": ["We talked about hiking."],
    "sub_intent.analyze": [{
        "action_type": "direct_response", "prompt_pattern": "base_main", "tool_operations": [],
        "file_target": None, "require_approval": False, "confidence": 0.3,
        "reasoning": "'it' names nothing", "specialized_domain": "execution",
        "complexity": "simple"}],
    "meta_auto.reflect": [{"thought": "A quiet day.", "remember": False, "note": ""}],
}
"""The scripted model's answers for every bundled playbook the examples run (each ``sea``
command reads the script afresh, so each pulse gets the first answer of each node)."""

Check = Callable[[Outcome, Runner], None]


@dataclass(frozen=True)
class Scene:
    """What one example (a page's block, found by its first ``sea`` command) needs."""

    page: str
    first: str
    """The start of the block's first ``sea`` command."""
    files: Callable[[Path], None] | None = None
    """Writes the files the page assumes into the example's directory."""
    script: dict[str, list[Any]] = field(default_factory=dict)
    """Answers that replace the default ones for these nodes."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment the example runs in (``SEA_*`` settings)."""
    before: Callable[[Runner], None] | None = None
    """Earlier work the page assumes (pulses in the store), run before the first step."""
    checks: dict[str, Check] = field(default_factory=dict)
    """Checks of a step (by the start of its command) beyond the output the page shows."""
    until: dict[str, Callable[[Outcome], bool]] = field(default_factory=dict)
    """A step (by the start of its command) run again until this holds (a background worker
    is on it), for at most 30 s."""


def page(name: str) -> str:
    """The text of a page of the documentation."""
    return (DOCS / name).read_text(encoding="utf-8")


def _write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def first_playbook() -> str:
    """The playbook of "Your first playbook" (``mood_reply.json``)."""
    found = re.search(r"```json\n(.*?)```", page("getting-started/first-playbook.md"), re.S)
    assert found is not None, "the first playbook page has no JSON playbook example"
    return found.group(1)


NOTES_TOOLS = '''\
from langchain_core.tools import tool


@tool
def note_count(text: str) -> str:
    """How many notes a text holds, one a line."""
    return str(len([line for line in text.splitlines() if line.strip()]))


TOOLS = [note_count]
'''
"""A module of host tools, as the host tools guide's ``my_tools`` and ``tools.py``."""

NOTES_PLAYBOOK = {
    "name": "notes",
    "description": "Counts the notes in the input and says so.",
    "start_node": "count",
    "nodes": [
        {"id": "count", "type": "tool", "action": "note_count", "args": {"text": "{input}"},
         "output_key": "count", "next": "say"},
        {"id": "say", "type": "say", "action": "{count} note(s)"},
    ],
}
"""A playbook that calls the host tool (``my_playbooks/notes.json``)."""

MCP_SERVERS = {"mcpServers": {"notes": {
    "command": sys.executable, "args": [str(ROOT / "tests" / "tools" / "mcp_notes_server.py")]}}}
"""An MCP configuration naming the tests' small MCP server (``servers.json``)."""

SAIVERSE_PLAYBOOK = {
    "name": "legacy", "description": "A SAIVerse-style playbook.", "start_node": "route",
    "nodes": [{"id": "route", "type": "exec", "playbook": "sub_speak"}],
}


def _my_playbooks(root: Path) -> None:
    _write(root, "my_playbooks/mood_reply.json", first_playbook())


def _validating(root: Path) -> None:
    (root / "playbooks").symlink_to(ROOT / "playbooks")
    (root / "schemas").symlink_to(ROOT / "schemas")
    _my_playbooks(root)
    _write(root, "mood_reply.json", first_playbook().replace('"../schemas/', '"schemas/'))
    _write(root, "tools.json", b"[]")
    _write(root, "my_tools.py", NOTES_TOOLS)
    _write(root, "servers.json", orjson.dumps(MCP_SERVERS))


def _first_pulse(root: Path) -> None:
    _my_playbooks(root)
    _write(root, "ken.json", orjson.dumps(
        {"id": "ken", "name": "Ken", "system_prompt": "You are Ken, who loves hiking."}))


def _host_tools(root: Path) -> None:
    _write(root, "my_playbooks/notes.json", orjson.dumps(NOTES_PLAYBOOK))
    _write(root, "my_tools.py", NOTES_TOOLS)
    _write(root, "path/to/tools.py", NOTES_TOOLS)
    _write(root, "servers.json", orjson.dumps(MCP_SERVERS))


def _said(text: str) -> Check:
    def check(done: Outcome, _: Runner) -> None:
        assert text in done.out, f"expected {text!r} in:\n{done.out}"
    return check


def _ended_ok(done: Outcome, _: Runner) -> None:
    """The resumed pulse ran to its end (``memory_research`` memorizes; it does not speak)."""
    assert re.search(r"^pulse [0-9a-f]{32}: ok$", done.err, re.M), done.err


def _prices(root: Path) -> None:
    """The budgets guide's ``prices.json``, with the scripted model that stands in for
    gpt-4o-mini priced as it is (a table pricing none of the models in use is refused)."""
    shown = re.search(r"`prices.json` reads `(.*?)`", page("guides/budgets.md"), re.S)
    assert shown is not None, "the budgets guide no longer shows prices.json"
    prices = orjson.loads(shown.group(1).replace("\n", " "))
    prices["models"]["scripted"] = prices["models"]["gpt-4o-mini"]
    _write(root, "prices.json", orjson.dumps(prices))


def _stats_pulses(runner: Runner) -> None:
    """The three ``meta_intent`` pulses the ``sea stats`` example sums up."""
    from tests.llm.stats_example import PRICES, PULSES

    _write(runner.root, "stats-prices.json", orjson.dumps(PRICES))
    for index, (text, light, normal) in enumerate(PULSES):
        specs = []
        for role, script in (("light", light), ("normal", normal)):
            _write(runner.root, f"{role}{index}.json", orjson.dumps({"responses": script}))
            specs.append(f"scripted:{runner.root / f'{role}{index}.json'}")
        done = runner.sea("run", "meta_intent", "--input", text, "--json", "--light-model",
                          specs[0], "--model", specs[1], "--prices", "stats-prices.json")
        assert done.code == 0, done.err


def _hiking(runner: Runner) -> None:
    """A conversation about hiking in aoi's memory."""
    done = runner.sea("run", "--input", "We went hiking on Sunday, Ken and I.", "--json")
    assert done.code == 0, done.err


def _pinned(done: Outcome, _: Runner) -> None:
    assert "Ken loves hiking." in done.out, done.out


def _imported(done: Outcome, runner: Runner) -> None:
    copy = runner.sea("memory", "recent", "--persona", "aoi-copy")
    assert "hiking" in copy.out, copy.out


def _migrated(done: Outcome, runner: Runner) -> None:
    migrated = orjson.loads((runner.root / "my_playbooks" / "legacy.json").read_bytes())
    assert migrated["nodes"][0]["args"] == {"input": "{input}"}


def _project_run(done: Outcome, _: Runner) -> None:
    """The pulse ran into the project's own store (``db`` of its ``sea.toml``)."""
    assert SPOKEN in done.out, done.out
    assert (Path.cwd() / ".sea" / "memory.sqlite").is_file(), sorted(Path.cwd().rglob("*"))


def _project_config(done: Outcome, _: Runner) -> None:
    """``sea config`` names the project file each setting comes from."""
    assert "sea.toml" in done.out, done.out


def _json_spoken(done: Outcome, _: Runner) -> None:
    assert orjson.loads(done.out)["spoken"] == [SPOKEN]


def _outline(runner: Runner) -> None:
    assert (runner.root / "game" / "notes" / "outline.md").read_text() == OUTLINE


def _pipeline_files(root: Path) -> None:
    found = re.search(r"```json\n(.*?)```", page("guides/action-pipelines.md"), re.S)
    assert found is not None, "the action pipelines guide has no playbook"
    _write(root, "draft_from_notes.json", found.group(1))
    _write(root, "notes/todo.md", "- water the garden on Sunday\n")


def _pipeline_script() -> dict[str, list[Any]]:
    shown = re.search(r"`(\{\"actions\": .*?\})`\.", page("guides/action-pipelines.md"), re.S)
    assert shown is not None, "the action pipelines guide shows no plan"
    plan = orjson.loads(shown.group(1).replace("\n", " ").replace('"..."', '"to answer"'))
    return {"draft_from_notes.work": [plan], "sub_speak.compose": ["Water the garden on Sunday."]}


OUTLINE = "# Star Garden\n1. Arrive on the station\n"


def _eval_set(root: Path) -> None:
    """The eval set the evals guide shows (``evals/hello.yaml``)."""
    found = re.search(r"```yaml\n(.*?)```", page("guides/evals.md"), re.S)
    assert found is not None, "the evals guide shows no eval set"
    _write(root, "evals/hello.yaml", found.group(1))


def _eval_report(_: Outcome, runner: Runner) -> None:
    """The JSON run and the JUnit report of the guide's first step: both cases passed twice."""
    run = orjson.loads((runner.root / "run.json").read_bytes())
    (model,) = run["models"].values()
    assert {k: c["passed"] for k, c in model["cases"].items()} == {
        "hello/hi": 2, "hello/after-a-chat": 2}, model["cases"]
    assert 'tests="2" failures="0"' in (runner.root / "report.xml").read_text()

SCENES: tuple[Scene, ...] = (
    Scene("getting-started/first-playbook.md", "sea validate", files=_validating),
    Scene("getting-started/first-pulse.md", "sea run", files=_first_pulse,
          checks={"sea run --json": _json_spoken,
                  "sea run my_playbooks/mood_reply.json": _said(SPOKEN)}),
    Scene("getting-started/first-pulse.md", "sea run memory_research", checks={
        "sea resume": _ended_ok}),
    Scene("getting-started/project.md", "sea init",
          checks={"sea run": _project_run, "sea config": _project_config}),
    Scene("guides/action-pipelines.md", "sea run draft_from_notes.json",
          files=lambda root: _pipeline_files(root), script=_pipeline_script(),
          checks={"sea run": _said("Water the garden on Sunday.")}),
    Scene("guides/budgets.md", "sea run", files=_prices, checks={"sea run": _said(SPOKEN)}),
    Scene("guides/budgets.md", "sea stats", before=_stats_pulses),
    Scene("guides/tokens-and-caching.md",
          "sea run --input \"Do you remember my cat?\" --db first.sqlite",
          checks={"sea stats": _said("2 model calls, 0 failed")}),
    Scene("guides/tokens-and-caching.md", "sea stats --advise", before=_stats_pulses),
    Scene("guides/coming-from-saiverse.md", "sea migrate",
          files=lambda root: _write(root, "my_playbooks/legacy.json",
                                    orjson.dumps(SAIVERSE_PLAYBOOK, option=orjson.OPT_INDENT_2)),
          checks={"sea migrate my_playbooks/": _said('"args": {"input": "{input}"}'),
                  "sea migrate --write": _migrated}),
    Scene("guides/evals.md", "sea eval", files=_eval_set, script={
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "small talk"}] * 2,
        "sub_speak.compose": [SPOKEN] * 2}, checks={"sea eval evals/hello.yaml --model local "
                                                     "--repeat": _eval_report}),
    Scene("guides/evals.md", "sea serve --evals", files=_eval_set, script={
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "small talk"}],
        "sub_speak.compose": [SPOKEN]}),
    Scene("guides/host-tools.md", "sea run my_playbooks/notes.json", files=_host_tools,
          checks={"sea run": _said("note(s)")}),
    Scene("guides/many-personas.md", "sea worker",
          script={"sub_router_user.decide": [{"playbook": "memory_research",
                                              "reason": "asks about the past"}]},
          env={"SEA_ASK_BEFORE": "memory_search"},
          until={"sea pulse show": lambda done: "waiting" in done.out}),
    Scene("guides/memory.md", "sea memory recent", before=_hiking, checks={
        "sea memory recent": _said("hiking"),
        "sea memory search": _said("hiking"),
        "sea memory import": _imported,
        "sea memory pins": _pinned}),
    Scene("guides/plans-and-approvals.md", "sea run --workspace", script={
        "sub_router_user.decide": [{"playbook": "sub_plan", "reason": "changes a file"}],
        "sub_plan.decide": [{"step": "new"}],
        "sub_plan.draft": [{"title": "Game outline", "content": "Write the outline.",
                            "specs": [{"kind": "create", "path": "notes/outline.md",
                                       "content": OUTLINE}]}],
        "sub_speak.compose": ["I wrote the outline into notes/outline.md."]},
          checks={"sea resume": lambda done, runner: _outline(runner),
                  "sea plan show": _said('"Game outline": completed (current)')}),
    Scene("guides/observability.md", "sea run --otel",
          checks={"sea run": _said('"name": "sea.pulse meta_user"')}),
    Scene("guides/recording.md", "sea run", checks={"sea replay": _said("replay matched")}),
    Scene("guides/writing-playbooks.md", "sea run meta_intent"),
    Scene("guides/serving.md", "sea serve --playbooks", files=_my_playbooks),
    Scene("guides/serving-many.md", "sea serve --db"),
    Scene("guides/studio-review.md", "sea serve --workspace"),
    Scene("guides/serving-security.md", "sea keys add", checks={
        "sea keys list": _said("alice"),
        "sea keys revoke": _said("alice")}),
)


def scene_of(page_name: str, first: str) -> Scene:
    """The scene of the example whose first ``sea`` command is ``first``."""
    found = [s for s in SCENES if s.page == page_name and first.startswith(s.first)]
    assert found, (f"{page_name}: no scene in tests/docs/scenes.py for the example starting "
                   f"`{first}`: add one (what the example needs around it)")
    return max(found, key=lambda s: len(s.first))

