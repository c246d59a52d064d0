"""Replaying a recorded pulse offline and reporting where it went another way.

Models and tools are answered from the trace, and a pulse that waited for a person's answer
(a plan's approval) waits again and is answered as recorded (``settled``); the store is a
fresh SQLite file seeded with the earlier conversation the recorded pulse saw, and with the
short-term memory and cut conversation its contexts were composed from (so a summary is
shown, and brought up to date by the recorded light-model answer, as then); the playbooks
are the current ones, so an edited playbook shows up as a divergence at the first node it
changes.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import orjson
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ValidationError

from saimemory import HistoryBudget, MessageStore, Persona
from saimemory.errors import MemoryStoreError
from saimemory.jsonl import import_jsonl
from saimemory.sqlite import SQLiteStore
from sea.chat.errors import ModelFileNotFound
from sea.chat.scripted import ScriptedChatModel
from sea.engine.events import PulseEnded
from sea.engine.plans.tools import GATED_TOOL
from sea.engine.pulse import Library
from sea.engine.tools.signatures import PLAN_ARGUMENTS
from sea.errors import ReplayError, SeaError, ToolArgumentError
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.jsonfile import TRACE_FILES, ReadLimit, read_json
from sea.jsontypes import json_type
from sea.llm.models import ModelSet
from sea.trace.compare import Divergence, divergence_at
from sea.trace.format import (
    TRACE_VERSION,
    Trace,
    TraceSettled,
    TraceShortTerm,
    TraceTool,
    TraceToolCall,
)
from sea.trace.recorder import TraceRecorder


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What a replay found: the replayed trace, the first divergence, changed playbooks."""

    expected: Trace
    actual: Trace
    divergence: Divergence | None
    changed_playbooks: dict[str, tuple[str, str | None]]
    """Playbooks whose source changed since recording: name → (recorded hash, current)."""
    step: int | None = None
    """The number of the step it diverged at (:func:`sea.trace.compare.divergence_at`)."""

    @property
    def matched(self) -> bool:
        """The replay took the same path with the same requests and outputs."""
        return self.divergence is None


def scripted_model(trace: Trace) -> ScriptedChatModel:
    """A model that gives every recorded answer again, per ``playbook.node``, in order."""
    responses: dict[str, list[Any]] = defaultdict(list)
    for call in trace.llm_calls:
        answers = call.attempts or [call.response]
        responses[f"{call.playbook}.{call.node}"].extend(answers)
    return ScriptedChatModel(responses=dict(responses), model_name="replay")


def replay_model(path_text: str, *, limit: ReadLimit = TRACE_FILES) -> BaseChatModel:
    """The model of a ``replay:TRACE`` spec: the answers recorded in a trace file of at most
    ``limit`` bytes.

    Raises:
        ModelFileNotFound: there is no such file.
        ReplayError: the file is not a pulse trace.
        UsageError: the file is larger than ``limit``.
    """
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ModelFileNotFound(f"trace file not found: {path}")
    return scripted_model(load_trace(path, limit=limit))


MODEL_FACTORIES: Mapping[str, Callable[[str], BaseChatModel]] = {"replay": replay_model}
"""The model specs the trace tools add to the providers' (``replay:TRACE``)."""


class ReplayedToolError(RuntimeError):
    """A tool failed when the pulse was recorded; the replay fails it the same way.

    A recorded failure of the form ``tool 'NAME' failed: TYPE: TEXT`` (what the tool box
    reports when a tool raises) is raised again as a subclass named ``TYPE`` with ``TEXT``,
    so the replayed failure reads exactly as the recorded one.
    """


_RAISED = re.compile(r"(?P<type>[A-Za-z_][A-Za-z0-9_]*): (?P<text>.*)", re.DOTALL)
_REJECTED = ToolArgumentError.code
"""The code of a call the argument check refused: the tool itself never ran."""


def replay_tools(
    calls: Sequence[TraceToolCall], offered: Mapping[str, TraceTool] | None = None,
    also: Sequence[str] = (),
) -> list[BaseTool]:
    """One tool per recorded name, answering its recorded results in order.

    A tool of ``offered`` (the trace's ``tools``: those an ``actions`` node was offered) is
    made even when it was never called, and carries its recorded description and argument
    schema, so that a pipeline's prompt and ``ref:`` normalizations are those of the
    recording and the argument check refuses what it refused then; a recorded call of it that
    the check refused (``SEA531``) never reached the tool, so it is not answered again.
    Other tools accept any of their recorded arguments. A tool named in ``also`` is made
    too (the recording had it, so the playbooks needing it could run), answering none.
    """
    offered = offered or {}
    by_name: dict[str, list[TraceToolCall]] = {name: [] for name in [*offered, *also]}
    for call in calls:
        by_name.setdefault(call.tool, []).append(call)
    return [
        _replay_tool(name, recorded, offered.get(name)) for name, recorded in by_name.items()
    ]


def _replay_tool(name: str, recorded: list[TraceToolCall], spec: TraceTool | None) -> BaseTool:
    if spec is not None:
        recorded = [call for call in recorded if (call.error or {}).get("code") != _REJECTED]
    queue = deque(recorded)

    def answer(**_: Any) -> Any:
        if not queue:
            raise ReplayedToolError(f"the recording has no further call of tool {name!r}")
        call = queue.popleft()
        if not call.ok:
            raise _failure(name, call)
        return call.result

    if spec is None:
        arg_names = sorted({arg for call in recorded for arg in call.args})
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {arg: {} for arg in arg_names},
        }
        description = f"{name} (answered from a recording)"
    else:
        schema = dict(spec.parameters)
        described = schema.get("description")
        # the tool-call schema of a described tool is its schema with the description set
        # to the tool's: keep the recorded text exactly (the catalogue's is stripped)
        description = spec.description
        if isinstance(described, str) and described.strip() == spec.description:
            description = described
    return StructuredTool(name=name, description=description, args_schema=schema, func=answer)


def _failure(name: str, call: TraceToolCall) -> ReplayedToolError:
    """The exception that makes the tool box report the recorded failure again."""
    message = str((call.error or {}).get("message", "failed"))
    prefix = f"tool {name!r} failed: "
    raised = _RAISED.fullmatch(message.removeprefix(prefix))
    if not message.startswith(prefix) or raised is None:
        return ReplayedToolError(message)
    kind = type(raised["type"], (ReplayedToolError,), {"__module__": __name__})
    error: ReplayedToolError = kind(raised["text"])
    return error


class ReplayGate:
    """Settles a replayed gated tool (:mod:`sea.engine.gates`) as the recording did, in
    order: the pulse waits where the recorded one waited, and the node receives the recorded
    value. Past the recorded settlements it waits (a recorded pulse that ended waiting)."""

    def __init__(self, name: str, settled: Sequence[TraceSettled]) -> None:
        self._name = name
        self._queue = deque(settled)

    def request(self, result: Any) -> dict[str, Any] | None:
        """A question where the recording asked one (pure: it peeks)."""
        if self._queue and not self._queue[0].asked:
            return None
        return {"action": f"tool {self._name!r} (answered from a recording)"}

    async def settle(
        self, result: Any, answer: Any, *, playbook: str | None, node: str | None
    ) -> Any:
        """The recorded value the node received."""
        if not self._queue:
            raise ReplayError(f"the recording has no further settled result of tool "
                              f"{self._name!r}")
        return self._queue.popleft().value


def plan_tools(trace: Trace) -> list[str]:
    """Every plan tool, when the recorded pulse called one (it ran with a workspace and had
    them all: the playbooks that need the uncalled ones were offered too), else none."""
    if any(call.tool in PLAN_ARGUMENTS for call in trace.tool_calls):
        return list(PLAN_ARGUMENTS)
    return []


def replay_gates(settled: Sequence[TraceSettled]) -> dict[str, ReplayGate]:
    """A gate for the plan approval tool and every tool the recording settled."""
    names = dict.fromkeys([GATED_TOOL, *(entry.tool for entry in settled)])
    return {name: ReplayGate(name, [e for e in settled if e.tool == name]) for name in names}


def load_trace(path: Path, *, limit: ReadLimit = TRACE_FILES) -> Trace:
    """Read and check a trace file of at most ``limit`` bytes.

    Raises:
        ReplayError: the file cannot be read or is not a trace (the message names what is
            wrong: the JSON type, the format version, or the first fields that are off).
        UsageError: the path is not a regular file, or the file is larger than ``limit``.
    """
    data = read_json(path, "trace", limit=limit, error=ReplayError)
    not_trace = f"{path} is not a SEA trace (a file written by `sea run --record`)"
    if not isinstance(data, dict):
        raise ReplayError(f"{not_trace}: it holds a JSON {json_type(data)}, not an object")
    version = data.get("version")
    if "version" in data and version != TRACE_VERSION:
        raise ReplayError(
            f"{path}: trace format version {version!r} is not supported (this SEA reads "
            f"version {TRACE_VERSION}); record the pulse again"
        )
    try:
        return Trace.model_validate(data)
    except ValidationError as exc:
        raise ReplayError(f"{not_trace}: {_problems(exc)}") from exc


_SHOWN_PROBLEMS = 4


def _problems(exc: ValidationError) -> str:
    """The first few validation errors as ``field: what is wrong``, and how many more."""
    errors = exc.errors()
    shown = [
        f"{'.'.join(str(p) for p in error['loc']) or 'the document'}: {error['msg'].lower()}"
        for error in errors[:_SHOWN_PROBLEMS]
    ]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def seed_history(store: MessageStore, trace: Trace) -> None:
    """Write the earlier conversation the recorded pulse saw into ``store``, after the cut
    conversation and with the short-term memory its contexts were composed from.

    Raises:
        ReplayError: the trace's ``history`` (or ``short_term.cut``) lines are not SAIMemory
            messages.
    """
    short_term = trace.short_term
    cut = short_term.cut if short_term is not None else []
    try:
        import_jsonl(store, [orjson.dumps(line) for line in [*cut, *trace.history]])
        if short_term is not None and short_term.summary is not None:
            store.save_short_term(trace.persona.id, short_term.summary,
                                  _covered_through(store, trace.persona.id, short_term))
    except MemoryStoreError as exc:
        raise ReplayError(
            f"the trace's history (the earlier conversation of persona {trace.persona.id!r}) "
            f"cannot be imported: {exc}"
        ) from exc


def _covered_through(store: MessageStore, persona: str, short_term: TraceShortTerm) -> int:
    """The id (in the replay's store) of the newest message the recorded summary covers: the
    last cut message when it covered them all, else none of them (0)."""
    if not (short_term.covered and short_term.cut):
        return 0
    uid = short_term.cut[-1].get("uid")
    found = [m.id for m in store.iter_messages(persona) if m.uid == uid]
    if not found:
        raise ReplayError(f"the trace's short_term.cut message {uid!r} was not imported")
    return found[0]


async def areplay(trace: Trace, library: Library, *, budget: HistoryBudget) -> ReplayReport:
    """Run the recorded pulse again against ``library`` and compare it with ``trace``."""
    persona = Persona(trace.persona.id, trace.persona.name, trace.persona.system_prompt)
    with TemporaryDirectory(prefix="sea-replay-") as tmp:
        store = SQLiteStore(Path(tmp) / "memory.sqlite")
        try:
            seed_history(store, trace)
            for text in trace.pins:
                store.pin(trace.persona.id, text)
            model = scripted_model(trace)
            runtime = Runtime(RuntimeConfig(
                store,
                ModelSet(normal=model, lightweight=model),
                tools=replay_tools(trace.tool_calls, trace.tools, plan_tools(trace)),
                library=library,
                checkpoint_path=Path(tmp) / "checkpoints.sqlite",
                history_budget=budget,
                gates=replay_gates(trace.settled),
            ))
            recorder = TraceRecorder(
                persona, trace.playbook, trace.input, trace.pulse_id, trace.history,
                args=dict(trace.args), pins=list(trace.pins), short_term=trace.short_term,
            )
            answers = deque(entry.answer for entry in trace.settled if entry.asked)
            events = runtime.astream_pulse(
                persona, trace.playbook, trace.input, pulse_id=trace.pulse_id, args=trace.args
            )
            while True:  # answered as the recording was, each time it waits
                waiting = False
                async for event in events:
                    recorder.observe(event)
                    if isinstance(event, PulseEnded):
                        waiting = event.status == "waiting"
                if not (waiting and answers):
                    break
                events = runtime.astream_resume(trace.pulse_id, answers.popleft())
            actual = recorder.trace(current_hashes(library, recorder.playbooks_run()))
        finally:
            store.close()
    found = divergence_at(trace, actual)
    return ReplayReport(trace, actual, None if found is None else found[1],
                        _changed(trace.playbook_hashes, library),
                        None if found is None else found[0])


def current_hashes(library: Library, names: list[str]) -> dict[str, str]:
    """The current source hash of each named playbook."""
    return {name: library.content_hash(name) for name in names}


def _changed(recorded: Mapping[str, str], library: Library) -> dict[str, tuple[str, str | None]]:
    changed: dict[str, tuple[str, str | None]] = {}
    for name, old in recorded.items():
        try:
            new: str | None = library.content_hash(name)
        except SeaError:  # a playbook removed since recording is a change, not a crash
            new = None
        if new != old:
            changed[name] = (old, new)
    return changed
