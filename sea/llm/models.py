"""The chat models a runtime is given, which one a node gets, and what is tried when it
fails."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel

from sea.errors import UsageError
from sea.llm.patterns import PROFILES, ModelKind
from sea.llm.structured import MethodMemory

__all__ = ["ModelKind", "ModelSet", "model_name"]


@dataclass(frozen=True, slots=True)
class ModelSet:
    """The host's models: ``normal`` for conversation and work, ``lightweight`` for routing
    and light work, and optionally a fallback chain.

    When a call fails on its model (the provider raised, kept answering with rate limits,
    or gave no valid structured answer after its retries), it is tried again once on the
    next model of its chain: a ``lightweight`` call goes on to ``normal`` (seed 003: a light
    failure falls back to the standard model), then to each model of ``fallbacks`` in
    order. A model already tried is not tried again, so a host with one model has no
    fallback unless it names one.

    Attributes:
        normal: The model of ``base_main_specialized``, ``base_main``, ``conversation`` and
            ``worker`` nodes.
        lightweight: The model of ``base_specialized``, ``router`` and ``worker_light``
            nodes.
        fallbacks: Models tried, in order, after a call's own model (and, for a light call,
            the normal model) failed.
        structured: The structured-output method of each model (see
            :mod:`sea.llm.structured`).
    """

    normal: BaseChatModel
    lightweight: BaseChatModel
    fallbacks: tuple[BaseChatModel, ...] = ()
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
            found = PROFILES.get(profile)
            if found is None:
                known = ", ".join(PROFILES)
                raise UsageError(f"unknown context profile {profile!r} (known: {known})")
            return found.model
        if model_type == "normal":
            return "normal"
        if model_type == "lightweight":
            return "lightweight"
        raise UsageError(f"unknown model type {model_type!r} (known: normal, lightweight)")

    def select(self, profile: str | None, model_type: str) -> BaseChatModel:
        """The model a node with this profile and model type calls."""
        kind = self.kind_for(profile, model_type)
        return self.normal if kind == "normal" else self.lightweight

    def chain(self, kind: ModelKind) -> list[tuple[BaseChatModel, str]]:
        """The models a call of ``kind`` tries, in order, each with the kind a record names
        it by (``light``, ``normal`` or ``fallback``); no model twice."""
        first = self.normal if kind == "normal" else self.lightweight
        ordered = [(first, "normal" if kind == "normal" else "light"), (self.normal, "normal")]
        ordered += [(model, "fallback") for model in self.fallbacks]
        chain: list[tuple[BaseChatModel, str]] = []
        for model, label in ordered:
            if all(model is not seen for seen, _ in chain):
                chain.append((model, label))
        return chain


def model_name(model: BaseChatModel) -> str:
    """A readable name of a chat model for records: its model id, else its provider type."""
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)  # provider classes name this differently
        if isinstance(value, str) and value:
            return value
    return model._llm_type
