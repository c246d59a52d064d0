"""Errors of the model call path (part of the one tree rooted at :class:`sea.errors.SeaError`).

They live beside the call path because a failed call carries its record.
"""

from __future__ import annotations

from sea.errors import ExecutionError
from sea.llm.records import LLMCallRecord


class ModelError(ExecutionError):
    """A chat model call failed (the provider raised, or the answer was unusable).

    ``record`` is the :class:`~sea.llm.records.LLMCallRecord` of the failed call when the call
    path could make one, so a failed call is still reported.
    """

    code = "SEA520"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        playbook: str | None = None,
        node: str | None = None,
        record: LLMCallRecord | None = None,
    ) -> None:
        super().__init__(message, code=code, playbook=playbook, node=node)
        self.record = record


class StructuredOutputError(ModelError):
    """The model's answer did not match the node's ``response_schema`` after every retry."""

    code = "SEA521"


class ScriptExhausted(ModelError):
    """A scripted chat model has no response left for the node that called it."""

    code = "SEA522"


class BudgetExceeded(ExecutionError):
    """A pulse's model calls went past a budget of the host's ``Limits.budget`` (calls,
    tokens in, tokens out, cost); ``budget`` names it (``max_calls``...).

    Like a size limit it is the node's failure: an ``error_next`` routes it.
    """

    code = "SEA566"

    def __init__(
        self,
        message: str,
        *,
        budget: str,
        playbook: str | None = None,
        node: str | None = None,
    ) -> None:
        super().__init__(message, playbook=playbook, node=node)
        self.budget = budget
        """The ``Budget`` field that was exceeded, e.g. ``max_tokens_in``."""
