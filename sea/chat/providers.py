"""``provider:model`` strings to chat models (the CLI's ``--model`` and ``--light-model``).

Valid specs: ``local``, ``local:PATH`` (a GGUF file), ``openai:NAME``, ``anthropic:NAME``,
``ollama:NAME`` and ``scripted:FILE`` (a model script); a caller adds its own providers as
factories (the CLI adds ``replay:TRACE`` from :mod:`sea.trace.replay`). Provider packages are
imported only
when their spec is resolved; a missing one is a :class:`~sea.chat.errors.ProviderPackageMissing`
naming the pip command.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel

from sea.chat.errors import (
    ModelFileNotFound,
    ModelSpecError,
    ProviderPackageMissing,
    missing_local_extra,
)
from sea.errors import UsageError

ModelFactory = Callable[[str], BaseChatModel]
"""Builds a chat model from the part of a spec after ``provider:``."""

VALID_SPECS = (
    "local",
    "local:PATH",
    "openai:NAME",
    "anthropic:NAME",
    "ollama:NAME",
    "scripted:FILE",
)


@dataclass(frozen=True, slots=True)
class _Provider:
    module: str
    class_name: str
    extra: str
    package: str


_PROVIDERS = {
    "openai": _Provider("langchain_openai", "ChatOpenAI", "openai", "langchain-openai"),
    "anthropic": _Provider(
        "langchain_anthropic", "ChatAnthropic", "anthropic", "langchain-anthropic"
    ),
    "ollama": _Provider("langchain_ollama", "ChatOllama", "ollama", "langchain-ollama"),
}


_BUILT_IN = frozenset(form.partition(":")[0] for form in VALID_SPECS)


def resolve_model(
    spec: str, *, factories: Mapping[str, ModelFactory] | None = None
) -> BaseChatModel:
    """The chat model a spec string names.

    Args:
        spec: One of :data:`VALID_SPECS` (``PATH``/``FILE``/``TRACE`` are file paths).
        factories: Extra or overriding providers, keyed by the part before ``:``. This is
            how a host plugs in model sources this module does not build itself.

    Raises:
        ModelSpecError: the spec is malformed or names an unknown provider.
        ModelFileNotFound: the file a spec names does not exist.
        ProviderPackageMissing / LocalModelUnavailable: an optional extra is missing.
        Whatever a factory raises for its argument.
    """
    provider, colon, argument = spec.strip().partition(":")
    if factories and provider in factories:
        return factories[provider](_required(argument, spec))
    if provider == "local":
        return _local(_required(argument, spec) if colon else None)
    if provider in _PROVIDERS:
        return _provider_model(_PROVIDERS[provider], _required(argument, spec))
    if provider == "scripted":
        return _scripted(_existing_file(_required(argument, spec), "script"))
    problem = f"unknown provider {provider!r}" if provider else "empty spec"
    raise _spec_error(spec, problem, factories or {})


def _spec_error(
    spec: str, problem: str, factories: Mapping[str, ModelFactory] | None = None
) -> ModelSpecError:
    extra = [f"{name}:…" for name in factories or {} if name not in _BUILT_IN]
    forms = ", ".join([*VALID_SPECS, *extra])
    return ModelSpecError(f"invalid model spec {spec!r}: {problem}; valid forms: {forms}")


def _required(argument: str, spec: str) -> str:
    value = argument.strip()
    if not value:
        raise _spec_error(spec, "a name or a path is required after ':'")
    return value


def _existing_file(path_text: str, what: str) -> Path:
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ModelFileNotFound(f"{what} file not found: {path}")
    return path


def _local(path_text: str | None) -> BaseChatModel:
    path = None if path_text is None else _gguf_file(path_text)
    if importlib.util.find_spec("llama_cpp") is None:
        raise missing_local_extra("the `llama-cpp-python` package")
    from sea.chat.local import LocalChatModel, default_model_path

    if path is None:
        default_model_path()  # fail now, not at the first call, when the weights are missing
        return LocalChatModel()
    return LocalChatModel(model_path=str(path))


def _gguf_file(path_text: str) -> Path:
    """A model file given by the user: it must exist and be in llama.cpp's GGUF format."""
    path = _existing_file(path_text, "model")
    with path.open("rb") as file:
        if file.read(4) != b"GGUF":
            raise ModelSpecError(f"{path} is not a GGUF model file (llama.cpp's format)")
    return path


def _provider_model(provider: _Provider, name: str) -> BaseChatModel:
    try:
        module = importlib.import_module(provider.module)
    except ImportError as exc:
        raise ProviderPackageMissing(
            f"model provider {provider.extra!r} needs the `{provider.package}` package; "
            f"install it with `pip install 'sea-runtime[{provider.extra}]'`"
        ) from exc
    model_class: Any = getattr(module, provider.class_name)
    try:
        model: BaseChatModel = model_class(model=name)
    except Exception as exc:  # e.g. no API key configured: the provider's own message
        raise UsageError(
            f"cannot create the {provider.extra} model {name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    return model


def _scripted(path: Path) -> BaseChatModel:
    from sea.chat.scripted import ScriptedChatModel

    return ScriptedChatModel.from_file(path)
