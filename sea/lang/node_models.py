"""Typed models of a playbook's nodes (the SAIVerse format, made strict).

One :class:`~sea.lang.node.NodeModel` per built-in node type, each declaring what it reads,
defines and draws; their discriminated union on ``type`` (:data:`Node`); and the literals the
document uses. :mod:`sea.lang.models` holds the document around them.
"""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from sea.lang.expressions import ExpressionSyntaxError, compile_expression
from sea.lang.locate import escape_pointer
from sea.lang.node import (
    NAME_PATTERN,
    Defined,
    FallibleNode,
    NodeModel,
    PlaybookIndex,
    Read,
    StrictModel,
    Unknown,
    empty_list,
    key_read,
    keys_defined,
    nested_reads,
    template_reads,
)

ContextProfile = Literal[
    "base_main_specialized", "base_main", "base_specialized",
    "conversation", "router", "worker", "worker_light",
]
"""The context of a model call: one of seed 003's three prompt patterns, or an older name
kept as an alias (``conversation`` = ``base_main``, ``router`` = ``base_main`` on the
lightweight model, ``worker`` = ``base_specialized`` on the normal model, ``worker_light`` =
``base_specialized``); see :mod:`sea.llm.patterns`."""
WITH_SPECIALIZED = frozenset({"base_main_specialized", "base_specialized", "worker",
                              "worker_light"})
"""The profiles whose context holds Specialized (the guidelines a `specialized` names)."""
ModelType = Literal["normal", "lightweight"]
Role = Literal["user", "assistant", "system"]
ParamType = Literal["string", "number", "integer", "boolean", "enum", "object", "array"]

_PROMPT = (
    "the prompt of an llm node is `action` (a template); the system prompt comes from the persona"
)
_MODEL = (
    "models are chosen by the host: set `context_profile` (base_main_specialized, base_main, "
    "base_specialized, or conversation, router, worker, worker_light) or `model_type` "
    "(normal, lightweight)"
)
_PROFILE_DOC = (
    "What the model sees (seed 003's prompt patterns): `base_main_specialized` (normal model; "
    "system prompt, pinned items, short-term memory, history, the stage's guidelines), "
    "`base_main` (normal model; the same without guidelines), `base_specialized` "
    "(lightweight model; system prompt and guidelines only). Older names, kept as aliases: "
    "`conversation` = base_main, `router` = base_main on the lightweight model, `worker` = "
    "base_specialized on the normal model, `worker_light` = base_specialized."
)
_SPECIALIZED_DOC = (
    "The Specialized guidelines of this call (for a profile with Specialized): a stage, "
    "`planning`, `execution`, `review`, `summary` or `extraction` (the bundled guidelines), "
    "or the path of a text file of your own. Without it, the stage of the persona's active "
    "plan is used, if it has one."
)


def _specialized_fits(profile: str | None, specialized: str | None) -> None:
    """Refuse a `specialized` on a node whose context has no Specialized part."""
    if specialized is not None and (profile or "conversation") not in WITH_SPECIALIZED:
        raise ValueError(
            f"`specialized` needs a context_profile with Specialized (base_main_specialized, "
            f"base_specialized, worker, worker_light), not {profile or 'conversation'!r}"
        )
_TEXT = "the text template of this node is `action`"
_TOOL_NAME = "the tool name is `action`"
_CALLEE = "the callee is `playbook`"


class MemorizeOption(StrictModel):
    """What an `llm` node writes to memory after it answers."""

    tags: list[str] = Field(
        default_factory=empty_list,
        description="Tags stored on the prompt and the response (e.g. `conversation`).",
    )


class LLMNode(FallibleNode):
    """Call a chat model: build the context by profile, add the prompt, store the answer."""

    type: Literal["llm"] = Field(description="Node type: call a chat model.")
    action: str | None = Field(
        default=None,
        description="Prompt template (`{var}` references). Sent as a user message wrapped in "
        "`<system>…</system>`. Null: no prompt; the model continues the conversation.",
    )
    context_profile: ContextProfile | None = Field(
        default=None, description=_PROFILE_DOC + " Default: `conversation`."
    )
    specialized: str | None = Field(default=None, min_length=1, description=_SPECIALIZED_DOC)
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

    mermaid_shape: ClassVar[tuple[str, str]] = ("(", ")")
    known_mistakes: ClassVar[Mapping[str, str]] = {
        "tools": "did you mean `available_tools`? (SAIVerse silently dropped `tools`)",
        "prompt_template": _PROMPT,
        "prompt": _PROMPT,
        "system_prompt": _PROMPT,
        "model": _MODEL,
        "temperature": "sampling settings belong to the host's model configuration",
    }

    @model_validator(mode="after")
    def _specialized_needs_it(self) -> Self:
        _specialized_fits(self.context_profile, self.specialized)
        return self

    def offered_tools(self) -> list[str]:
        """``available_tools``."""
        return list(self.available_tools or [])

    def field_reads(self, base: str) -> Iterator[Read]:
        """The prompt template's variables and the metadata key."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id, prompt=True)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key``, the targets of ``output_mapping`` and of ``output_keys``."""
        mapped = (self.output_mapping or {}).values()
        tool_mode = (key for entry in self.output_keys or [] for key in entry.values())
        return keys_defined(self.id, self.output_key, *mapped, *tool_mode)


class ToolNode(FallibleNode):
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

    mermaid_shape: ClassVar[tuple[str, str]] = ("[/", "/]")
    known_mistakes: ClassVar[Mapping[str, str]] = {
        "tool": _TOOL_NAME,
        "name": _TOOL_NAME,
        "tool_name": _TOOL_NAME,
        "arguments": "did you mean `args`?",
        "params": "did you mean `args`?",
    }

    def tools_needed(self) -> list[str]:
        """The tool it calls."""
        return [self.action]

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables and the legacy ``args_input`` paths."""
        yield from nested_reads(self.args, f"{base}/args", self.id)
        for key, value in (self.args_input or {}).items():
            if isinstance(value, str):
                yield from key_read(value, f"{base}/args_input/{escape_pointer(key)}", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key`` and ``output_keys``."""
        return keys_defined(self.id, self.output_key, *(self.output_keys or []))

    def detail(self) -> str | None:
        """The tool's name."""
        return self.action


class ToolCallNode(FallibleNode):
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

    mermaid_shape: ClassVar[tuple[str, str]] = ("[/", "/]")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The state key holding the chosen call."""
        return key_read(self.call_source, f"{base}/call_source", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key``."""
        return keys_defined(self.id, self.output_key)


MAX_ACTIONS = 32
"""The most actions one ``actions`` node may let the model plan."""


class ActionsNode(FallibleNode):
    """Let the model plan several tool calls in one answer and run them in order.

    The model answers ``{"actions": [{"action_id", "tool", "parameters"}], "reason"}``; a
    parameter may be ``"ref:<action_id>"`` to receive an earlier action's result,
    normalized to the type the parameter expects.
    """

    type: Literal["actions"] = Field(
        description="Node type: plan several tool calls in one model answer and run them."
    )
    action: str = Field(
        description="The task, a template (`{var}` references): what the actions should "
        "achieve. The available tools, their parameters and the `ref:` rule are added to it."
    )
    available_tools: list[str] = Field(
        min_length=1,
        description="Names of the tools the model may plan with; no other tool can appear in "
        "its prompt or its plan.",
    )
    max_actions: int = Field(
        default=8,
        ge=1,
        le=MAX_ACTIONS,
        description=f"The most actions one plan may hold (1 to {MAX_ACTIONS}).",
    )
    output_key: str | None = Field(
        default=None,
        description="State key that receives the outcomes: a list of `{action_id, tool, "
        "status (ok, failed, skipped), result or error, normalized}`.",
    )
    context_profile: ContextProfile | None = Field(
        default=None,
        description="What the model sees while planning (as on an `llm` node; default "
        "`conversation`).",
    )
    specialized: str | None = Field(
        default=None, min_length=1, description=_SPECIALIZED_DOC + " (As on an `llm` node.)"
    )
    model_type: ModelType = Field(
        default="normal",
        description="`normal` or `lightweight` model; a `context_profile` decides it when given.",
    )
    memorize: MemorizeOption | bool | None = Field(
        default=None,
        description="Store the prompt and the plan in memory with these tags "
        "(`true`: no extra tags).",
    )

    mermaid_shape: ClassVar[tuple[str, str]] = ("[[", "]]")
    known_mistakes: ClassVar[Mapping[str, str]] = {
        "tools": "did you mean `available_tools`?",
        "prompt": "the task of an actions node is `action` (a template)",
        "response_schema": "an actions node builds its response schema from its tools",
        "model": _MODEL,
    }

    @model_validator(mode="after")
    def _specialized_needs_it(self) -> Self:
        _specialized_fits(self.context_profile, self.specialized)
        return self

    def offered_tools(self) -> list[str]:
        """``available_tools``."""
        return list(self.available_tools)

    def field_reads(self, base: str) -> Iterator[Read]:
        """The task template's variables."""
        return template_reads(self.action, f"{base}/action", self.id, prompt=True)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key``."""
        return keys_defined(self.id, self.output_key)

    def detail(self) -> str | None:
        """The tools it may use."""
        return ", ".join(self.available_tools)


class SetNode(NodeModel):
    """Assign state variables, in order."""

    type: Literal["set"] = Field(description="Node type: assign variables.")
    assignments: dict[str, Any] = Field(
        description="Variable → value, applied in order (later ones see earlier ones). "
        "Strings are templates; a string starting with `=` is an expression, e.g. "
        "`=count + 1`. Other JSON values are stored as they are."
    )

    def field_reads(self, base: str) -> Iterator[Read]:
        """The variables of each assignment: an expression's names, a template's references."""
        for key, value in self.assignments.items():
            pointer = f"{base}/assignments/{escape_pointer(key)}"
            if isinstance(value, str) and value.startswith("="):
                try:
                    expression = compile_expression(value[1:])
                except ExpressionSyntaxError:
                    continue
                for name in sorted(expression.variables):
                    found = value.find("{" + name)
                    yield Read(name, pointer, self.id, found if found >= 0 else None, False, name)
            else:
                yield from nested_reads(value, pointer, self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """Every assigned variable."""
        return keys_defined(self.id, *self.assignments)


class PassNode(NodeModel):
    """Do nothing; used to branch."""

    type: Literal["pass"] = Field(description="Node type: do nothing (a branching point).")

    mermaid_shape: ClassVar[tuple[str, str]] = ("{", "}")


class CallNode(FallibleNode):
    """A node that calls a playbook (``subplay``, ``exec``): arguments and memory scope."""

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
        description="`inline`: run in this pulse's memory scope. `subagent`: run in a "
        "sub-thread of the persona's memory of its own (what the callee writes goes there; "
        "its model calls see that thread and its arguments, not the main conversation), "
        "closed when it ends however it ends; what it came to returns as "
        "`_subagent_chronicle`. Subagent calls nest at most `Limits.max_subagent_depth` (2).",
    )
    subagent_chronicle: bool = Field(
        default=True,
        description="With `execution: subagent`: `_subagent_chronicle` is the light model's "
        "summary of the sub-thread (true) or a bounded transcript of it (false; also when "
        "the model fails).",
    )
    isolate_pulse_context: bool = Field(
        default=False,
        description="The callee's llm nodes see history but not this pulse's earlier messages.",
    )

    mermaid_shape: ClassVar[tuple[str, str]] = ("[[", "]]")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables."""
        return nested_reads(self.args, f"{base}/args", self.id)

    def _outputs_of(self, names: list[str]) -> Iterator[Defined]:
        for name in names:
            yield Defined(
                name.split(".", 1)[0],
                f"the output_schema of the playbook called by node `{self.id}`",
            )


class SubplayNode(CallNode):
    """Call a named playbook like a function."""

    type: Literal["subplay"] = Field(description="Node type: call a playbook by name.")
    playbook: str = Field(pattern=NAME_PATTERN, description="Name of the playbook to call.")

    known_mistakes: ClassVar[Mapping[str, str]] = {"name": _CALLEE, "playbook_name": _CALLEE}

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """The callee's ``output_schema`` (unknown without the library or the callee)."""
        signature = library.signature(self.playbook) if library is not None else None
        if signature is None:
            yield Unknown(f"node `{self.id}` (playbook {self.playbook})")
            return
        yield from self._outputs_of(list(signature.outputs))

    def detail(self) -> str | None:
        """The callee's name."""
        return self.playbook


class ExecNode(CallNode):
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

    known_mistakes: ClassVar[Mapping[str, str]] = {
        "action": (
            "exec takes the playbook name from the state key in `playbook_source`; to call a "
            "fixed playbook use a `subplay` node with `playbook`"
        )
    }

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables and the key naming the callee."""
        yield from super().field_reads(base)
        yield from key_read(self.playbook_source, f"{base}/playbook_source", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """The ``output_schema`` of every playbook it may call."""
        if library is None:
            yield Unknown(f"node `{self.id}` (playbook chosen at run time)")
            return
        names = self.allowed_playbooks
        outputs: list[str] = []
        for name in names if names is not None else library.names():
            signature = library.signature(name)
            if signature is not None and (names is not None or signature.router_callable):
                outputs.extend(signature.outputs)
        yield from self._outputs_of(outputs)

    def detail(self) -> str | None:
        """Where the callee's name comes from."""
        return f"from {self.playbook_source}"


class MemorizeNode(NodeModel):
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

    mermaid_shape: ClassVar[tuple[str, str]] = ("[(", ")]")
    known_mistakes: ClassVar[Mapping[str, str]] = {"content": _TEXT, "text": _TEXT}

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id, prompt=True)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)


class _UtteranceNode(NodeModel):
    action: str | None = Field(
        default=None,
        description="Template of the text; absent: the value of `last`.",
    )

    mermaid_shape: ClassVar[tuple[str, str]] = (">", "]")
    known_mistakes: ClassVar[Mapping[str, str]] = {"text": _TEXT}

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id)


class SpeakNode(_UtteranceNode):
    """Say something as the persona: stored as conversation and sent to the host."""

    type: Literal["speak"] = Field(description="Node type: the persona speaks (stored, emitted).")
    metadata_key: str | None = Field(
        default=None,
        description="State key of an object stored in the message's metadata and sent as "
        "the event's metadata (e.g. media attachments).",
    )
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        yield from super().field_reads(base)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)


class SayNode(_UtteranceNode):
    """Send text to the host without storing it."""

    type: Literal["say"] = Field(description="Node type: send text to the host (not stored).")
    metadata_key: str | None = Field(
        default=None, description="State key of an object sent as the event's metadata."
    )

    def field_reads(self, base: str) -> Iterator[Read]:
        """The text template's variables and the metadata key."""
        yield from super().field_reads(base)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)


class ThinkNode(_UtteranceNode):
    """Store an internal thought (tag `internal`)."""

    type: Literal["think"] = Field(description="Node type: store an internal thought.")
    important: bool | None = Field(default=None, description="Legacy flag, no effect.")


Node = Annotated[
    LLMNode
    | ToolNode
    | ToolCallNode
    | ActionsNode
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

BUILTIN_NODE_MODELS: tuple[type[NodeModel], ...] = (
    LLMNode,
    ToolNode,
    ToolCallNode,
    ActionsNode,
    SetNode,
    PassNode,
    SubplayNode,
    ExecNode,
    MemorizeNode,
    SpeakNode,
    SayNode,
    ThinkNode,
)
"""The built-in node types, in the order the schema lists them (:data:`Node` is their union)."""
