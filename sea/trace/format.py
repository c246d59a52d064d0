"""The trace file of one recorded pulse: what it saw, what it did, in order.

These pydantic models are the source of ``schemas/trace.schema.json``. Every entry that
happened during the pulse carries ``seq``, its position in the pulse's event order, so that
a replay can report the *first* point where it went another way.

Fields added since version 1 was first published (the ``actions`` nodes' ``plans``,
``actions`` and ``tools``, a tool call's ``action_id``, ``plan_events``, the
``short_term`` memory Main was composed from, ``subagents``, the ``settled`` answers of a
pulse that waited) are optional, so traces written before them still load; such a trace
simply has no pipelines to compare, no cut conversation, and no answers to replay.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

TRACE_VERSION: Final[Literal[1]] = 1


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TracePersona(_Entry):
    """The persona the pulse ran for."""

    id: str = Field(description="Persona id (the store's key).")
    name: str = Field(description="Persona name.")
    system_prompt: str = Field(default="", description="The persona's system prompt.")


class TraceShortTerm(_Entry):
    """The short-term memory a pulse's contexts were composed from, when its history budget
    cut earlier conversation (a replay seeds its fresh store with it, so that Main, and the
    light model's update of the summary, are composed as they were)."""

    summary: str | None = Field(
        default=None,
        description="The persona's short-term memory (rolling summary) when the pulse started "
        "(null: it had none).",
    )
    cut: list[dict[str, Any]] = Field(
        description="Conversation older than `history` that the contexts read, as SAIMemory "
        "JSON lines, oldest first: the cut messages the summary did not cover yet (the newest "
        "ones an update reads), or, when it covered them all, the newest cut message."
    )
    covered: bool = Field(
        default=False,
        description="The summary covered every message of `cut` (no update was due).",
    )


class TraceNode(_Entry):
    """A node the pulse ran, in the order it ran."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str = Field(description="Playbook of the node.")
    node: str = Field(description="Node id.")
    type: str = Field(description="Node type.")
    depth: int = Field(description="Nesting depth (0: the top-level playbook).")


class TraceMessage(_Entry):
    """A message as sent to a model."""

    role: str = Field(description="`system`, `user`, `assistant` or `tool`.")
    content: str = Field(description="The text sent.")


class TraceLLMCall(_Entry):
    """One model call: the request, the answer, and what it cost."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str = Field(description="Playbook of the calling node.")
    node: str = Field(description="Calling node id.")
    model: str = Field(description="Model name.")
    messages: list[TraceMessage] = Field(description="Messages sent (last attempt).")
    response: Any = Field(
        description="The answer: text, structured object, or `{tool_calls, content}`."
    )
    attempts: list[Any] = Field(
        default_factory=list,
        description="Every answer of the call in order (several when a structured answer was "
        "rejected and asked for again).",
    )
    tokens_in: int = Field(description="Input tokens.")
    tokens_out: int = Field(description="Output tokens.")
    latency_s: float = Field(description="Wall time of the call in seconds.")
    retries: int = Field(description="How many times the model was asked again.")
    outcome: str = Field(description="`ok`, `error` or `cancelled`.")
    error: str | None = Field(default=None, description="What went wrong, if anything.")
    pattern: str | None = Field(
        default=None,
        description="The prompt pattern of the context: `base_main_specialized`, `base_main` "
        "or `base_specialized`.",
    )
    stage: str | None = Field(
        default=None, description="The Specialized guidelines' stage (or `file:PATH`), if any."
    )
    intent_pattern: str | None = Field(
        default=None,
        description="The prompt pattern the pulse's intent chose, when the calling node took "
        "it in place of its profile's (`pattern` is then this one); null: the profile decided.",
    )
    context: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The parts of the composed context, in order, each `{part, tokens, "
        "detail}` (`part`: base, pins, short_term, specialized, history, prompt; `tokens` "
        "estimated at four characters each).",
    )
    model_kind: str | None = Field(
        default=None, description="`light`, `normal` or `fallback`: the model that answered."
    )
    cost: float = Field(default=0.0, description="What the call cost (the host's prices).")
    fallback: str | None = Field(
        default=None,
        description="The model that answered after the first one failed (none: no fallback).",
    )


class TraceToolCall(_Entry):
    """One tool call and its result."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str = Field(description="Playbook of the calling node.")
    node: str = Field(description="Calling node id.")
    tool: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(description="Arguments after checking and normalization.")
    ok: bool = Field(description="Whether the tool returned a result.")
    result: Any = Field(default=None, description="The tool's result when `ok`.")
    error: dict[str, Any] | None = Field(default=None, description="The failure otherwise.")
    action_id: str | None = Field(
        default=None,
        description="The action of an `actions` node this call carried out (null for other "
        "nodes' calls).",
    )


class TraceSettled(_Entry):
    """A gated tool's result settled (the ``tool_settled`` event): a plan's approval request
    answered by a person (``asked``) or at once by the host's policy. A replay waits where
    the recording waited, is answered with the recorded ``answer`` and gives the node the
    recorded ``value``."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str = Field(description="Playbook of the calling node.")
    node: str = Field(description="Calling node id.")
    tool: str = Field(description="Tool name.")
    action_id: str | None = Field(
        default=None, description="The action of an `actions` node (null for other nodes).")
    asked: bool = Field(description="Whether the pulse waited for a person's answer.")
    answer: Any = Field(default=None, description="The answer (null when nobody was asked).")
    value: Any = Field(default=None, description="What the node received.")


class TraceTool(_Entry):
    """A tool as an ``actions`` node's model was offered it (what its prompt and its ``ref:``
    normalization are made from)."""

    description: str = Field(description="The tool's description.")
    parameters: dict[str, Any] = Field(description="The JSON Schema of its arguments.")


class TracePlan(_Entry):
    """The plan an ``actions`` node ran (the ``actions_planned`` event)."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str = Field(description="Playbook of the node.")
    node: str = Field(description="Node id.")
    actions: list[dict[str, Any]] = Field(
        description="The planned actions, `{action_id, tool, parameters}`, in order."
    )
    reason: str = Field(description="The model's reason for the plan.")
    offered: list[str] = Field(
        default_factory=list,
        description="Names of the tools the model was offered, in order (their descriptions "
        "and schemas are in the trace's `tools`).",
    )


class TraceNormalization(_Entry):
    """What a ``ref:`` parameter received (the ``ref_resolved`` event)."""

    parameter: str = Field(description="The parameter.")
    ref: str = Field(description="The action id whose result it received.")
    rule: str = Field(description="The normalization rule applied, e.g. `string.json`.")
    from_type: str = Field(description="JSON type of the earlier action's result.")
    to_type: str = Field(description="JSON type of the argument passed.")
    detail: str | None = Field(default=None, description="E.g. the lengths of a cut text.")


class TraceAction(_Entry):
    """One planned action of an ``actions`` node and what became of it."""

    seq: int = Field(
        description="Position in the pulse's event order (of its start; of its end when "
        "it was skipped)."
    )
    playbook: str = Field(description="Playbook of the node.")
    node: str = Field(description="Node id.")
    action_id: str = Field(description="The action's id in its plan.")
    tool: str = Field(description="Tool name.")
    parameters: dict[str, Any] = Field(
        description="The parameters as planned (`ref:<action_id>` values unresolved)."
    )
    arguments: dict[str, Any] | None = Field(
        default=None,
        description="The arguments the tool was called with (null: it was not called).",
    )
    normalized: list[TraceNormalization] = Field(
        default_factory=list, description="What each `ref:` parameter received, in order."
    )
    status: str = Field(
        description="`ok`, `failed`, `skipped` (an earlier action failed), or `incomplete` "
        "(the pulse ended before the action did)."
    )
    error: dict[str, Any] | None = Field(
        default=None, description="Why it failed or was skipped (`code`, `message`)."
    )


class TraceMemoryWrite(_Entry):
    """One message the pulse wrote to memory."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str | None = Field(description="Writing playbook (none: the runtime itself).")
    node: str | None = Field(description="Writing node (none: the runtime itself).")
    role: str = Field(description="Role of the stored message.")
    content: str = Field(description="Text of the stored message.")
    tags: list[str] = Field(description="Tags of the stored message.")


class TraceSubagent(_Entry):
    """A subagent call that ended: its thread and the chronicle that came back."""

    seq: int = Field(description="Position in the pulse's event order (its end).")
    playbook: str = Field(description="Calling playbook.")
    node: str = Field(description="Calling node.")
    callee: str = Field(description="The playbook that ran as a subagent.")
    thread: str = Field(description="The sub-thread it ran in.")
    status: str = Field(description="How it ended: ok, error or cancelled.")
    chronicle: str = Field(description="What came back as `_subagent_chronicle`.")
    source: str = Field(description="`model` (the light model's summary) or `transcript`.")
    error: str | None = Field(
        default=None, description="Why a summary was asked for and not made."
    )


class TracePlanEvent(_Entry):
    """A plan event (seed 002's telemetry) of the pulse, kept for the reader: a replay
    answers tools from the trace, so it makes no plan events and they are not compared."""

    seq: int = Field(description="Position in the pulse's event order.")
    playbook: str | None = Field(description="Playbook of the node whose tool call made it.")
    node: str | None = Field(description="That node.")
    event: str = Field(description="`plan_proposed`, `specs_set`, `approved`, ...")
    plan_id: str = Field(description="The plan.")
    actor: str = Field(description="`ai`, `user` or `system`.")
    status: str = Field(description="The plan's status after it.")
    at: str = Field(description="When (ISO 8601).")
    reason: str = Field(default="", description="Why, when given.")
    counts: dict[str, int] = Field(default_factory=dict, description="Specs, files, ...")
    risk_score: float = Field(default=0.0, description="Risk score of the specs concerned.")


class Trace(_Entry):
    """A recorded pulse."""

    schema_: str | None = Field(
        default=None, alias="$schema", description="The trace JSON Schema, for editors."
    )
    version: Literal[1] = Field(description="Trace format version.")
    pulse_id: str = Field(description="Id of the recorded pulse (reused by a replay).")
    recorded_at: str = Field(description="When the pulse started (ISO 8601, UTC).")
    playbook: str = Field(description="The top-level playbook.")
    playbook_hashes: dict[str, str] = Field(
        description="sha256 of the source of every playbook the pulse ran, by name."
    )
    persona: TracePersona = Field(description="The persona.")
    input: str = Field(description="The user's input.")
    args: dict[str, Any] = Field(default_factory=dict, description="Top-level arguments.")
    playbook_dirs: list[str] = Field(
        default_factory=list,
        description="Directories searched for playbooks before the bundled ones when recorded.",
    )
    history: list[dict[str, Any]] = Field(
        description="The earlier conversation the pulse could see, as SAIMemory JSON lines "
        "(a replay seeds a fresh store with it)."
    )
    pins: list[str] = Field(
        default_factory=list,
        description="The persona's pinned items when the pulse started (a replay pins them "
        "in its fresh store).",
    )
    short_term: TraceShortTerm | None = Field(
        default=None,
        description="The short-term memory and the cut conversation Main was composed from "
        "(null: the history budget cut nothing, or short-term memory was off).",
    )
    nodes: list[TraceNode] = Field(description="Nodes run, in order.")
    llm_calls: list[TraceLLMCall] = Field(description="Model calls, in order.")
    tool_calls: list[TraceToolCall] = Field(description="Tool calls, in order.")
    plans: list[TracePlan] = Field(
        default_factory=list, description="Plans of `actions` nodes, in order."
    )
    actions: list[TraceAction] = Field(
        default_factory=list, description="Actions of `actions` nodes, in order."
    )
    tools: dict[str, TraceTool] = Field(
        default_factory=dict,
        description="Every tool an `actions` node was offered, by name (a replay's tools "
        "carry these descriptions and argument schemas).",
    )
    memory_writes: list[TraceMemoryWrite] = Field(description="Memory writes, in order.")
    plan_events: list[TracePlanEvent] = Field(
        default_factory=list, description="Plan events (seed 002's telemetry), in order."
    )
    subagents: list[TraceSubagent] = Field(
        default_factory=list, description="Subagent calls and their chronicles, in order."
    )
    settled: list[TraceSettled] = Field(
        default_factory=list,
        description="Gated tool results settled (plan approvals: the answers), in order.",
    )
    spoken: list[str] = Field(description="What the persona said.")
    status: str = Field(description="How the pulse ended: ok, error, cancelled or waiting.")
    error: dict[str, Any] | None = Field(default=None, description="The pulse's error, if any.")
    duration_s: float = Field(description="Wall time of the pulse in seconds.")


TRACE_SCHEMA_FILE = "trace.schema.json"
TRACE_SCHEMA_ID = "urn:sea:schema:trace:1"


def trace_schema() -> dict[str, Any]:
    """The trace JSON Schema (``schemas/trace.schema.json``), built from :class:`Trace`."""
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": TRACE_SCHEMA_ID,
    }
    schema.update(Trace.model_json_schema(by_alias=True, mode="validation"))
    schema["title"] = "SEA pulse trace"
    return schema
