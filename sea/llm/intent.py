"""Intent analysis (seed 003, IntentAnalyzerLLM): the answer's schema, the rule that
chooses a prompt pattern from it, and when the pulse should ask the user back instead.

The bundled ``sub_intent`` playbook asks the light model for :data:`INTENT_SCHEMA` (the
seed's fields, plus ``complexity``, which the seed's rule reads) and applies
:func:`judge_intent` through the built-in ``judge_intent`` tool, whose threshold the host
sets (:class:`IntentPolicy`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from sea.errors import UsageError
from sea.llm.patterns import Pattern
from sea.llm.specialized import Stage

ActionType = Literal[
    "file_operation", "plan_generation", "direct_response", "code_execution",
    "summary_generation", "content_extraction",
]
ACTION_TYPES: tuple[ActionType, ...] = get_args(ActionType)
Complexity = Literal["simple", "moderate", "complex"]
COMPLEXITIES: tuple[Complexity, ...] = get_args(Complexity)
OPERATIONS = ("read", "write", "create", "delete", "list", "exists", "summarize", "extract",
              "run")
DOMAINS = ("file_analysis", "code_review", "planning", "execution", "review")

INTENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action_type": {"type": "string", "enum": list(ACTION_TYPES)},
        "complexity": {"type": "string", "enum": list(COMPLEXITIES)},
        "prompt_pattern": {
            "type": "string",
            "enum": ["base_main_specialized", "base_main", "base_specialized"],
        },
        "tool_operations": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "enum": list(OPERATIONS)},
                    "args": {"type": "object"},
                },
                "required": ["operation"],
            },
        },
        "file_target": {"type": ["string", "null"], "maxLength": 200},
        "require_approval": {"type": "boolean"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string", "maxLength": 300},
        "specialized_domain": {"type": "string", "enum": list(DOMAINS)},
    },
    "required": ["action_type", "complexity", "confidence", "reasoning"],
}
"""The intent answer: seed 003's IntentAnalyzerLLM output, plus ``complexity``."""


def select_prompt_pattern(action_type: str, complexity: str, confidence: float) -> Pattern:
    """The prompt pattern for an intent (seed 003's selection rule).

    1. Sure (``confidence > 0.9``) and ``simple``: ``base_specialized`` (light and fast).
    2. Planning or running code (``plan_generation``, ``code_execution``), or ``complex``
       work: ``base_main_specialized``.
    3. Anything else: ``base_main``.

    The first rule wins: a sure, simple plan request is ``base_specialized``.
    """
    if confidence > 0.9 and complexity == "simple":
        return "base_specialized"
    if action_type in ("plan_generation", "code_execution") or complexity == "complex":
        return "base_main_specialized"
    return "base_main"


ACTION_STAGES: Mapping[str, Stage] = {
    "plan_generation": "PLANNING",
    "code_execution": "EXECUTION",
    "summary_generation": "SUMMARY",
    "content_extraction": "EXTRACTION",
}
"""The Specialized stage an action type implies."""
DOMAIN_STAGES: Mapping[str, Stage] = {
    "planning": "PLANNING",
    "execution": "EXECUTION",
    "review": "REVIEW",
    "code_review": "REVIEW",
}
"""The Specialized stage a ``specialized_domain`` implies (``file_analysis`` implies none)."""


def intent_stage(action_type: str, domain: str | None) -> Stage | None:
    """The Specialized stage an intent implies: its action type's (:data:`ACTION_STAGES`),
    else its domain's (:data:`DOMAIN_STAGES`), else None. A node that takes the intent's
    pattern uses it when neither the node nor an active plan names a stage."""
    return ACTION_STAGES.get(action_type) or DOMAIN_STAGES.get(domain or "")


@dataclass(frozen=True, slots=True)
class IntentPolicy:
    """The host's policy for intents.

    Attributes:
        clarify_below: An intent with a lower ``confidence`` is not acted on: the pulse asks
            the user a clarifying question instead (seed 003, flow step 6).
    """

    clarify_below: float = 0.5

    def __post_init__(self) -> None:
        value = self.clarify_below
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and 0 <= value <= 1
        ):
            raise UsageError(f"IntentPolicy.clarify_below must be between 0 and 1, got {value!r}")


APPROVAL_OPERATIONS = frozenset({"write", "create", "delete", "run"})
"""Operations that always need a person's approval (seed 003: writes, deletes, code)."""

DIRECT_TOOLS: Mapping[str, str] = {"list": "list_files", "exists": "file_exists"}
"""The operations answered by a tool without a model planning the call (seed 003, flow 4:
list/exists need no LLM), and the workspace tool of each."""


def direct_file_call(intent: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool call that answers a simple file question, chosen from the intent alone.

    An intent whose ``tool_operations`` are exactly one ``list`` or ``exists`` is answered by
    ``list_files`` or ``file_exists`` on its target: the operation's ``args.file_target`` (or
    ``args.path``), else the intent's ``file_target``; ``list`` without one lists the
    workspace root, ``exists`` without one has nothing to look for (None).

    Returns:
        ``{"name", "args", "id"}`` (what a ``tool_call`` node runs), or None when the intent
        is not such a question.
    """
    operations = [op for op in intent.get("tool_operations") or [] if isinstance(op, Mapping)]
    if len(operations) != 1 or operations[0].get("operation") not in DIRECT_TOOLS:
        return None
    operation = operations[0]
    args = operation.get("args")
    args = args if isinstance(args, Mapping) else {}
    target = next((value.strip() for value in (args.get("file_target"), args.get("path"),
                                               intent.get("file_target"))
                   if isinstance(value, str) and value.strip()), None)
    if target is None and operation["operation"] == "exists":
        return None
    name = DIRECT_TOOLS[str(operation["operation"])]
    return {"name": name, "args": {"path": target or "."}, "id": f"intent_{name}"}


def judge_intent(intent: Mapping[str, Any], policy: IntentPolicy) -> dict[str, Any]:
    """The intent as the seed's record, decided: its pattern by the seed's rule, and
    whether to ask the user back.

    Returns:
        The seed's fields (``action_type``, ``prompt_pattern``, ``tool_operations``,
        ``file_target``, ``require_approval``, ``confidence``, ``reasoning``,
        ``specialized_domain``) and ``complexity``, ``clarify`` and ``threshold``.
        ``prompt_pattern`` is :func:`select_prompt_pattern`'s (whatever the model said);
        ``require_approval`` is also true when an operation writes, creates, deletes or
        runs; ``clarify`` is true when the confidence is below ``policy.clarify_below``
        (a missing or unusable confidence counts as 0); ``file_call`` is the tool call that
        answers a simple file question without a model planning it
        (:func:`direct_file_call`), None when the intent is not one or is unsure;
        ``stage`` is the Specialized stage it implies (:func:`intent_stage`).
    """
    raw = intent.get("confidence")
    confidence = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0.0
    if not math.isfinite(confidence):
        confidence = 0.0
    action_type = str(intent.get("action_type") or "direct_response")
    complexity = str(intent.get("complexity") or "moderate")
    operations = [op for op in intent.get("tool_operations") or [] if isinstance(op, Mapping)]
    writes = any(op.get("operation") in APPROVAL_OPERATIONS for op in operations)
    clarify = confidence < policy.clarify_below
    domain = intent.get("specialized_domain") or None
    return {
        "action_type": action_type,
        "prompt_pattern": select_prompt_pattern(action_type, complexity, confidence),
        "tool_operations": [dict(op) for op in operations],
        "file_target": intent.get("file_target") or None,
        "require_approval": bool(intent.get("require_approval")) or writes,
        "confidence": confidence,
        "reasoning": str(intent.get("reasoning") or ""),
        "specialized_domain": domain,
        "complexity": complexity,
        "clarify": clarify,
        "threshold": policy.clarify_below,
        "file_call": None if clarify else direct_file_call(intent),
        "stage": intent_stage(action_type, domain if isinstance(domain, str) else None),
    }
