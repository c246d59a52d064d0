"""Typed models of a playbook's nodes (the SAIVerse format, made strict).

One model per node type, a discriminated union on ``type`` (:data:`Node`), and the names,
patterns and literals the document uses. :mod:`sea.lang.models` holds the document around them
and re-exports everything here; import from there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

NAME_PATTERN = r"^[a-z0-9_]+$"
NODE_ID_PATTERN = r"^[A-Za-z0-9_\-]+$"

ContextProfile = Literal["conversation", "router", "worker", "worker_light"]
ModelType = Literal["normal", "lightweight"]
Operator = Literal["eq", "ne", "gt", "gte", "lt", "lte"]
Role = Literal["user", "assistant", "system"]
ParamType = Literal["string", "number", "integer", "boolean", "enum", "object", "array"]


class StrictModel(BaseModel):
    """Base of every document model: unknown fields are errors; instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ConditionalNext(StrictModel):
    """Branching: compare a state value with case keys, JSON-typed."""

    field: str = Field(
        description="Dotted path of the state value to compare, e.g. `decision.playbook`. "
        "A list element is `items.0`; `items.length` is the list's length."
    )
    operator: Operator = Field(
        default="eq",
        description="How the value is compared with each case key: eq, ne, gt, gte, lt, lte. "
        "Ordering operators compare numbers; the first matching case wins.",
    )
    cases: dict[str, str | None] = Field(
        description="Case key → target node id (null ends the playbook). Keys are JSON-typed: "
        '`"true"` matches boolean true, `"5"` matches the number 5, `"null"` matches a missing or '
        'null value, other keys match strings. A key `"default"` is the fallback (legacy form). '
        "Keys may contain `{var}` references, rendered against the state."
    )
    default: str | None = Field(
        default=None,
        description="Target node id when no case matches (null or absent ends the playbook, "
        'unless `cases` has a `"default"` key).',
    )


class _Node(StrictModel):
    id: str = Field(
        pattern=NODE_ID_PATTERN,
        description="Unique id of the node within the playbook (letters, digits, `_`, `-`).",
    )
    next: str | None = Field(
        default=None,
        description="Id of the node to run next; null or absent ends the playbook. "
        "Ignored when `conditional_next` is given.",
    )
    conditional_next: ConditionalNext | None = Field(
        default=None, description="Branch on a state value instead of a fixed `next`."
    )


class _FallibleNode(_Node):
    error_next: str | None = Field(
        default=None,
        description="Id of the node to run when this node fails; the error is recorded in "
        "state under `error` (code, message, node). Without it, a failure ends the pulse.",
    )


class MemorizeOption(StrictModel):
    """What an `llm` node writes to memory after it answers."""

    tags: list[str] = Field(
        default_factory=list,
        description="Tags stored on the prompt and the response (e.g. `conversation`).",
    )


class LLMNode(_FallibleNode):
    """Call a chat model: build the context by profile, add the prompt, store the answer."""

    type: Literal["llm"] = Field(description="Node type: call a chat model.")
    action: str | None = Field(
        default=None,
        description="Prompt template (`{var}` references). Sent as a user message wrapped in "
        "`<system>…</system>`. Null: no prompt; the model continues the conversation.",
    )
    context_profile: ContextProfile | None = Field(
        default=None,
        description="What the model sees: `conversation` (normal model, system prompt + history "
        "+ this pulse), `router` (lightweight model, same context), `worker` / `worker_light` "
        "(system prompt + this prompt only).",
    )
    model_type: ModelType = Field(
        default="normal",
        description="`normal` or `lightweight` model; a `context_profile` decides it when given.",
    )
    response_schema: dict[str, Any] | None = Field(
        default=None,
        description="JSON Schema of a structured answer. The answer is validated and stored as "
        "an object under `output_key`.",
    )
    output_key: str | None = Field(
        default=None, description="State key that receives the answer (text or object)."
    )
    output_mapping: dict[str, str] | None = Field(
        default=None,
        description="Path in the structured answer → state key to copy it to, "
        'e.g. `{"playbook": "selected_playbook"}`.',
    )
    output_keys: list[dict[str, str]] | None = Field(
        default=None,
        description='Where tool-mode results go: one-key objects `{"text": KEY}`, '
        '`{"function_call": KEY}` (the chosen call as `{name, args}`) or `{"thought": KEY}`.',
    )
    available_tools: list[str] | None = Field(
        default=None,
        description="Tools the model may choose to call; the chosen call is stored for a "
        "`tool_call` node.",
    )
    memorize: MemorizeOption | bool | None = Field(
        default=None,
        description="Store the prompt and the answer in memory with these tags "
        "(`true`: no extra tags).",
    )
    speak: bool = Field(
        default=False,
        description="Stream the answer to the host as the persona's utterance.",
    )
    metadata_key: str | None = Field(
        default=None,
        description="State key of an object merged into the spoken message's metadata.",
    )
    important: bool | None = Field(
        default=None, description="Also store the answer as conversation (legacy flag)."
    )


class ToolNode(_FallibleNode):
    """Call a named tool with arguments."""

    type: Literal["tool"] = Field(description="Node type: call a tool.")
    action: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] | None = Field(
        default=None,
        description="Arguments; string values are templates (`{var}`; a string that is exactly "
        "one reference keeps the value's type).",
    )
    args_input: dict[str, Any] | None = Field(
        default=None,
        description="Legacy arguments: every string value is a state path (`a.b.0`), other "
        "values are literals. Prefer `args`.",
    )
    output_key: str | None = Field(
        default=None, description="State key that receives the tool's result."
    )
    output_keys: list[str] | None = Field(
        default=None,
        description="State keys for the elements of a tuple result, in order.",
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


class ToolCallNode(_FallibleNode):
    """Run the tool call an `llm` node chose."""

    type: Literal["tool_call"] = Field(description="Node type: run the tool call an llm chose.")
    call_source: str = Field(
        default="fc",
        description="State key holding the chosen call `{name, args}` (the llm node's "
        "`function_call` output key).",
    )
    output_key: str | None = Field(
        default=None, description="State key that receives the tool's result."
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


class SetNode(_Node):
    """Assign state variables, in order."""

    type: Literal["set"] = Field(description="Node type: assign variables.")
    assignments: dict[str, Any] = Field(
        description="Variable → value, applied in order (later ones see earlier ones). "
        "Strings are templates; a string starting with `=` is an expression, e.g. "
        "`=count + 1`. Other JSON values are stored as they are."
    )


class PassNode(_Node):
    """Do nothing; used to branch."""

    type: Literal["pass"] = Field(description="Node type: do nothing (a branching point).")


class _CallNode(_FallibleNode):
    args: dict[str, Any] | None = Field(
        default=None,
        description="Arguments for the callee's `input_schema`; string values are templates.",
    )
    propagate_output: bool = Field(
        default=False,
        description="Append the callee's outputs (spoken and memorized texts) to this "
        "playbook's outputs.",
    )
    execution: Literal["inline", "subagent"] = Field(
        default="inline",
        description="`inline`: run in this pulse's memory scope. `subagent`: run with an "
        "isolated scope (as `isolate_pulse_context`).",
    )
    subagent_chronicle: bool = Field(
        default=True, description="Legacy: summary of a subagent run (accepted, no effect)."
    )
    isolate_pulse_context: bool = Field(
        default=False,
        description="The callee's llm nodes see history but not this pulse's earlier messages.",
    )


class SubplayNode(_CallNode):
    """Call a named playbook like a function."""

    type: Literal["subplay"] = Field(description="Node type: call a playbook by name.")
    playbook: str = Field(pattern=NAME_PATTERN, description="Name of the playbook to call.")


class ExecNode(_CallNode):
    """Call a playbook chosen at run time (by a router)."""

    type: Literal["exec"] = Field(description="Node type: call a playbook chosen at run time.")
    playbook_source: str = Field(
        default="selected_playbook",
        description="State key holding the name of the playbook to call.",
    )
    args_source: str = Field(
        default="selected_args",
        description="State key holding an object of arguments, laid over `args`.",
    )
    allowed_playbooks: list[str] | None = Field(
        default=None,
        description="Playbooks this node may call. Absent: any router-callable playbook.",
    )


class MemorizeNode(_Node):
    """Write a message to the persona's memory."""

    type: Literal["memorize"] = Field(description="Node type: write a message to memory.")
    action: str = Field(
        default="{last}",
        description="Template of the text to store. Objects and lists render as JSON.",
    )
    role: Role = Field(
        default="assistant",
        description="Role of the stored message. Results for the speaker: `user` with text "
        "wrapped in `<system>…</system>`.",
    )
    tags: list[str] | None = Field(default=None, description="Tags stored on the message.")
    metadata_key: str | None = Field(
        default=None, description="State key of an object merged into the message's metadata."
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


class _UtteranceNode(_Node):
    action: str | None = Field(
        default=None,
        description="Template of the text; absent: the value of `last`.",
    )


class SpeakNode(_UtteranceNode):
    """Say something as the persona: stored as conversation and sent to the host."""

    type: Literal["speak"] = Field(description="Node type: the persona speaks (stored, emitted).")
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


class SayNode(_UtteranceNode):
    """Send text to the host without storing it."""

    type: Literal["say"] = Field(description="Node type: send text to the host (not stored).")
    metadata_key: str | None = Field(
        default=None, description="State key of an object sent as the event's metadata."
    )


class ThinkNode(_UtteranceNode):
    """Store an internal thought (tag `internal`)."""

    type: Literal["think"] = Field(description="Node type: store an internal thought.")
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


Node = Annotated[
    LLMNode
    | ToolNode
    | ToolCallNode
    | SetNode
    | PassNode
    | SubplayNode
    | ExecNode
    | MemorizeNode
    | SpeakNode
    | SayNode
    | ThinkNode,
    Field(discriminator="type"),
]

NODE_MODELS: dict[str, type[_Node]] = {
    "llm": LLMNode,
    "tool": ToolNode,
    "tool_call": ToolCallNode,
    "set": SetNode,
    "pass": PassNode,
    "subplay": SubplayNode,
    "exec": ExecNode,
    "memorize": MemorizeNode,
    "speak": SpeakNode,
    "say": SayNode,
    "think": ThinkNode,
}
"""Node type → its model; the loader picks a node's model by its `type` before validating."""

FALLIBLE_TYPES = frozenset({"llm", "tool", "tool_call", "subplay", "exec"})
"""Node types that can fail and therefore accept `error_next`."""
