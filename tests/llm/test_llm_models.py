"""Model choice: a context profile decides, else the node's model type."""

from __future__ import annotations

import pytest

from sea.chat.scripted import ScriptedChatModel
from sea.errors import UsageError
from sea.llm.models import ModelSet, model_name


def test_single_model_serves_both_roles() -> None:
    model = ScriptedChatModel()
    models = ModelSet.single(model)
    assert models.select("router", "normal") is model
    assert models.select("conversation", "normal") is model


def test_profile_overrides_model_type() -> None:
    normal, light = ScriptedChatModel(model_name="n"), ScriptedChatModel(model_name="l")
    models = ModelSet(normal=normal, lightweight=light)
    assert models.select("router", "normal") is light
    assert models.select("conversation", "lightweight") is normal
    assert models.select(None, "lightweight") is light
    assert models.kind_for("worker_light", "normal") == "lightweight"


def test_unknown_names_are_usage_errors() -> None:
    models = ModelSet.single(ScriptedChatModel())
    with pytest.raises(UsageError, match="unknown context profile 'chat'"):
        models.kind_for("chat", "normal")
    with pytest.raises(UsageError, match="unknown model type 'huge'"):
        models.kind_for(None, "huge")


def test_model_name_prefers_the_model_id() -> None:
    assert model_name(ScriptedChatModel(model_name="demo-1")) == "demo-1"
