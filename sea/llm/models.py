"""The two chat models a runtime is given, and which one a node gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel

from sea.errors import UsageError
from sea.llm.context import PROFILE_MODEL
from sea.llm.structured import MethodMemory

ModelKind = Literal["normal", "lightweight"]
"""Which of the two models; a context profile decides it (``sea.llm.context.PROFILE_MODEL``)."""


@dataclass(frozen=True, slots=True)
class ModelSet:
    """The host's models: ``normal`` for conversation and work, ``lightweight`` for routing.

    Attributes:
        normal: The model of ``conversation`` and ``worker`` nodes.
        lightweight: The model of ``router`` and ``worker_light`` nodes.
        structured: The structured-output method of each model (see
            :mod:`sea.llm.structured`).
    """

    normal: BaseChatModel
    lightweight: BaseChatModel
    structured: MethodMemory = field(default_factory=MethodMemory, compare=False)
    """How each model is asked for structured answers: negotiated and remembered, or
    forced (``MethodMemory("json_mode")``)."""

    @classmethod
    def single(cls, model: BaseChatModel, structured: MethodMemory | None = None) -> ModelSet:
        """One model for both roles (a host with one model, the CLI's default)."""
        return cls(normal=model, lightweight=model, structured=structured or MethodMemory())

    def kind_for(self, profile: str | None, model_type: str) -> ModelKind:
        """The model kind a node gets: its profile decides when given, else its model type.

        Raises:
            UsageError: ``profile`` or ``model_type`` is not a known name.
        """
        if profile is not None:
            if profile not in PROFILE_MODEL:
                known = ", ".join(PROFILE_MODEL)
                raise UsageError(f"unknown context profile {profile!r} (known: {known})")
            return "lightweight" if PROFILE_MODEL[profile] == "lightweight" else "normal"
        if model_type == "normal":
            return "normal"
        if model_type == "lightweight":
            return "lightweight"
        raise UsageError(f"unknown model type {model_type!r} (known: normal, lightweight)")

    def select(self, profile: str | None, model_type: str) -> BaseChatModel:
        """The model a node with this profile and model type calls."""
        kind = self.kind_for(profile, model_type)
        return self.normal if kind == "normal" else self.lightweight


def model_name(model: BaseChatModel) -> str:
    """A readable name of a chat model for records: its model id, else its provider type."""
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)  # provider classes name this differently
        if isinstance(value, str) and value:
            return value
    return model._llm_type
