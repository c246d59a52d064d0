"""The node types that call a chat model: ``llm`` (one answer: text, a structured object,
or a chosen tool call) and ``actions`` (a plan of several tool calls, run in order)."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from sea.lang.node import (
    Defined,
    FallibleNode,
    PlaybookIndex,
    Read,
    Unknown,
    key_read,
    keys_defined,
    template_reads,
)
from sea.lang.node_options import (
    INTENT_PATTERNS_DOC,
    MODEL_HINT,
    PROFILE_DOC,
    PROMPT_HINT,
    SPECIALIZED_DOC,
    ContextProfile,
    MemorizeOption,
    ModelType,
    PromptPattern,
    memorize_tags,
    specialized_fits,
)
from sea.lang.uses import Answer, TagUse

SCHEMA_SOURCE_PATTERN = r"^(tool|spell|state):\S"
"""What a ``response_schema_source`` starts with: where the schema comes from, then a name."""


class LLMNode(FallibleNode):
    """Call a chat model: build the context by profile, add the prompt, store the answer."""

    type: Literal["llm"] = Field(description="Node type: call a chat model.")
    action: str | None = Field(
        default=None,
        description="Prompt template (`{var}` references). Sent as a user message wrapped in "
        "`<system>…</system>`. Null: no prompt; the model continues the conversation.",
    )
    context_profile: ContextProfile | None = Field(
        default=None, description=PROFILE_DOC + " Default: `conversation`."
    )
    specialized: str | None = Field(default=None, min_length=1, description=SPECIALIZED_DOC)
    intent_patterns: list[PromptPattern] | None = Field(
        default=None, min_length=1, description=INTENT_PATTERNS_DOC
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
    response_schema_source: str | None = Field(
        default=None,
        pattern=SCHEMA_SOURCE_PATTERN,
        description="Where the answer's JSON Schema comes from when `response_schema` is not "
        "given (SAIVerse): `tool:NAME` (or SAIVerse's `spell:NAME`), the arguments of the "
        "registered tool NAME; `state:KEY`, the schema a variable holds (a dotted path). A "
        "template: `{var}` references are rendered first (`tool:{chosen.name}`). Ignored, "
        "with a warning (SEA064), when `response_schema` is given.",
    )
    choices_from: str | None = Field(
        default=None,
        min_length=1,
        description="A router's narrowing: the state path of a list of playbook names (e.g. "
        "`ranking.candidates` from the `rank_playbooks` tool); the `playbook` property of "
        "the `response_schema` may then name only those of them the pulse offers, under the "
        "grammar. A list that names none of them (or no list) leaves every offered playbook.",
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
        "prompt_template": PROMPT_HINT,
        "prompt": PROMPT_HINT,
        "system_prompt": PROMPT_HINT,
        "model": MODEL_HINT,
        "temperature": "sampling settings belong to the host's model configuration",
    }

    @model_validator(mode="after")
    def _specialized_needs_it(self) -> Self:
        specialized_fits(self.context_profile, self.specialized)
        return self

    def offered_tools(self) -> list[str]:
        """``available_tools``."""
        return list(self.available_tools or [])

    def field_reads(self, base: str) -> Iterator[Read]:
        """The prompt template's variables, the metadata key and what the schema's source
        reads."""
        if self.action:
            yield from template_reads(self.action, f"{base}/action", self.id, prompt=True)
        yield from key_read(self.metadata_key, f"{base}/metadata_key", self.id)
        source = self.response_schema_source
        if source is not None and self.response_schema is None:
            pointer = f"{base}/response_schema_source"
            yield from template_reads(source, pointer, self.id)
            kind, _, key = source.partition(":")
            if kind == "state" and "{" not in key:
                yield from key_read(key, pointer, self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """``output_key``, the targets of ``output_mapping`` and of ``output_keys``."""
        mapped = (self.output_mapping or {}).values()
        tool_mode = (key for entry in self.output_keys or [] for key in entry.values())
        return keys_defined(self.id, self.output_key, *mapped, *tool_mode)

    def streams(self) -> bool:
        """With ``speak``: the answer streams to the host as the persona's utterance."""
        return self.speak

    def answer(self) -> Answer | None:
        """``response_schema``, stored under ``output_key`` and copied by ``output_mapping``."""
        if self.response_schema is None:
            return None
        return Answer(self.response_schema, "response_schema", self.output_key,
                      dict(self.output_mapping or {}))

    def tags_written(self) -> Iterator[TagUse]:
        """The tags of ``memorize``."""
        return memorize_tags(self.memorize)


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
        default=None, min_length=1, description=SPECIALIZED_DOC + " (As on an `llm` node.)"
    )
    intent_patterns: list[PromptPattern] | None = Field(
        default=None, min_length=1, description=INTENT_PATTERNS_DOC + " (As on an `llm` node.)"
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
        "model": MODEL_HINT,
    }

    @model_validator(mode="after")
    def _specialized_needs_it(self) -> Self:
        specialized_fits(self.context_profile, self.specialized)
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

    def tags_written(self) -> Iterator[TagUse]:
        """The tags of ``memorize``."""
        return memorize_tags(self.memorize)
