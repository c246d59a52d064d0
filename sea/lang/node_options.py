"""The literals and options several node families share: context profiles, model types,
roles, parameter types, the ``memorize`` option, and the hints about them."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator
from typing import Literal

from pydantic import Field

from sea.lang.node import StrictModel, empty_list
from sea.lang.uses import TagUse

ContextProfile = Literal[
    "base_main_specialized", "base_main", "base_specialized",
    "conversation", "router", "worker", "worker_light",
]
"""The context of a model call: one of seed 003's three prompt patterns, or an older name
kept as an alias (``conversation`` = ``base_main``, ``router`` = ``base_main`` on the
lightweight model, ``worker`` = ``base_specialized`` on the normal model, ``worker_light`` =
``base_specialized``); see :mod:`sea.llm.patterns`."""
PromptPattern = Literal["base_main_specialized", "base_main", "base_specialized"]
"""Seed 003's three prompt patterns (:data:`sea.llm.patterns.Pattern`)."""
WITH_SPECIALIZED = frozenset({"base_main_specialized", "base_specialized", "worker",
                              "worker_light"})
"""The profiles whose context holds Specialized (the guidelines a `specialized` names)."""
ModelType = Literal["normal", "lightweight"]
Role = Literal["user", "assistant", "system"]
ParamType = Literal["string", "number", "integer", "boolean", "enum", "object", "array"]

PROMPT_HINT = (
    "the prompt of an llm node is `action` (a template); the system prompt comes from the persona"
)
MODEL_HINT = (
    "models are chosen by the host: set `context_profile` (base_main_specialized, base_main, "
    "base_specialized, or conversation, router, worker, worker_light) or `model_type` "
    "(normal, lightweight)"
)
PROFILE_DOC = (
    "What the model sees (seed 003's prompt patterns): `base_main_specialized` (normal model; "
    "system prompt, pinned items, short-term memory, history, the stage's guidelines), "
    "`base_main` (normal model; the same without guidelines), `base_specialized` "
    "(lightweight model; system prompt and guidelines only). Older names, kept as aliases: "
    "`conversation` = base_main, `router` = base_main on the lightweight model, `worker` = "
    "base_specialized on the normal model, `worker_light` = base_specialized."
)
SPECIALIZED_DOC = (
    "The Specialized guidelines of this call (for a profile with Specialized): a stage, "
    "`planning`, `execution`, `review`, `summary`, `extraction` or `generation` (the bundled "
    "guidelines), "
    "or the path of a text file of your own. Without it, the stage of the persona's active "
    "plan is used, if it has one."
)

INTENT_PATTERNS_DOC = (
    "The prompt patterns this node takes from the pulse's intent in place of its "
    "`context_profile`'s: when the `prompt_pattern` variable (what `sub_intent` chose; passed "
    "on to every playbook called after it) is one of these, the context is built by it; the "
    "model stays the profile's. E.g. `[\"base_main\", \"base_main_specialized\"]` for a "
    "speaker that must keep the conversation. Default: none (the profile alone decides)."
)


def specialized_fits(profile: str | None, specialized: str | None) -> None:
    """Refuse a `specialized` on a node whose context has no Specialized part."""
    if specialized is not None and (profile or "conversation") not in WITH_SPECIALIZED:
        raise ValueError(
            f"`specialized` needs a context_profile with Specialized (base_main_specialized, "
            f"base_specialized, worker, worker_light), not {profile or 'conversation'!r}"
        )


LineRole = Literal["main_line", "sub_line", "meta_judgment"]
"""A message's line (:data:`saimemory.records.LINE_ROLES`; spelled here so that validating a
playbook imports no store records)."""
LineScope = Literal["committed", "discardable", "volatile"]
"""A message's scope (:data:`saimemory.records.LINE_SCOPES`)."""

LINE_ROLE_DOC = (
    "Which line of thought writes the message (SAIVerse's `line_role`): `main_line` (the "
    "persona's own line, the default), `sub_line` (work done aside) or `meta_judgment` (a "
    "judgment about the pulse). Later pulses read only the main line's conversation."
)
SCOPE_DOC = (
    "How long the message matters (SAIVerse's `scope`): `committed` (for good, the default), "
    "`discardable` (to this pulse only: kept, but no later pulse reads it) or `volatile` "
    "(to this pulse only, and deleted when the pulse ends)."
)


class MemorizeOption(StrictModel):
    """What an `llm` node writes to memory after it answers."""

    tags: list[str] = Field(
        default_factory=empty_list,
        description="Tags stored on the prompt and the response (e.g. `conversation`).",
    )
    line_role: LineRole | None = Field(default=None, description=LINE_ROLE_DOC)
    scope: LineScope | None = Field(default=None, description=SCOPE_DOC)


def memorize_tags(option: "MemorizeOption | bool | None") -> Iterator[TagUse]:
    """The tags a node's ``memorize`` option writes (none for ``true``, ``false`` or none)."""
    if isinstance(option, MemorizeOption):
        for position, tag in enumerate(option.tags):
            yield TagUse(tag, ("memorize", "tags", position))
