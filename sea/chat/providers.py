"""``provider:model`` strings to chat models (the CLI's ``--model`` and ``--light-model``).

``local`` / ``local:PATH`` (a GGUF file) and ``scripted:FILE`` (a model script) are SEA's own;
every other ``provider:model`` goes to LangChain's ``init_chat_model``, which knows some twenty
providers (openai, anthropic, ollama, google_genai, mistralai, groq, bedrock, ...). Options
(``base_url``, ``temperature``, ``api_key``...) are passed to the model's constructor; a caller
adds its own providers as factories (the CLI adds ``replay:TRACE`` from :mod:`sea.trace.replay`).
Provider packages are imported only when their spec is resolved; a missing one is a
:class:`~sea.chat.errors.ProviderPackageMissing` naming the pip command.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping
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
    "PROVIDER:NAME (any provider of LangChain's init_chat_model)",
    "scripted:FILE",
)

_EXTRAS = {
    "openai": "openai",
    "azure_openai": "openai",
    "anthropic": "anthropic",
    "ollama": "ollama",
}
"""Providers whose package SEA names as an extra (``pip install 'sea-runtime[openai]'``)."""

_PACKAGE = re.compile(r"requires the ([A-Za-z0-9_.-]+) package")


def resolve_model(
    spec: str,
    *,
    options: Mapping[str, Any] | None = None,
    factories: Mapping[str, ModelFactory] | None = None,
) -> BaseChatModel:
    """The chat model a spec string names.

    Args:
        spec: One of :data:`VALID_SPECS` (``PATH``/``FILE`` are file paths).
        options: Keyword arguments for the model's constructor, e.g. ``base_url``,
            ``temperature``, ``api_key`` (for ``local``: the local model's settings).
        factories: Extra or overriding providers, keyed by the part before ``:``. This is
            how a host plugs in model sources this module does not build itself.

    Returns:
        The chat model.

    Raises:
        ModelSpecError: the spec is malformed or names an unknown provider.
        ModelFileNotFound: the file a spec names does not exist.
        ProviderPackageMissing / LocalModelUnavailable: an optional package is missing.
        UsageError: the provider refused the options (its own message).
    """
    provider, colon, argument = spec.strip().partition(":")
    given = dict(options or {})
    if factories and provider in factories:
        _no_options(provider, given)
        return factories[provider](_required(argument, spec))
    if provider == "local":
        return _local(_required(argument, spec) if colon else None, given)
    if provider == "scripted":
        _no_options(provider, given)
        return _scripted(_existing_file(_required(argument, spec), "script"))
    if not provider or not colon:
        problem = "empty spec" if not provider else "no provider (write PROVIDER:NAME)"
        raise _spec_error(spec, problem, factories)
    return _provider_model(provider, _required(argument, spec), given, spec, factories)


def _no_options(provider: str, options: Mapping[str, Any]) -> None:
    if options:
        raise UsageError(
            f"the {provider} model takes no options (got {', '.join(sorted(options))})"
        )


def _spec_error(
    spec: str, problem: str, factories: Mapping[str, ModelFactory] | None = None
) -> ModelSpecError:
    extra = [f"{name}:…" for name in factories or {} if name not in ("local", "scripted")]
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


def _local(path_text: str | None, options: dict[str, Any]) -> BaseChatModel:
    path = None if path_text is None else _gguf_file(path_text)
    if importlib.util.find_spec("llama_cpp") is None:
        raise missing_local_extra("the `llama-cpp-python` package")
    from sea.chat.local import LocalChatModel, default_model_path

    if path is None:
        default_model_path()  # fail now, not at the first call, when the weights are missing
    else:
        options["model_path"] = str(path)
    try:
        return LocalChatModel(**options)
    except ValueError as exc:  # pydantic: an unknown or mistyped option
        raise UsageError(f"invalid option for the local model: {exc}") from exc


def _gguf_file(path_text: str) -> Path:
    """A model file given by the user: it must exist and be in llama.cpp's GGUF format."""
    path = _existing_file(path_text, "model")
    with path.open("rb") as file:
        if file.read(4) != b"GGUF":
            raise ModelSpecError(f"{path} is not a GGUF model file (llama.cpp's format)")
    return path


def _provider_model(
    provider: str,
    name: str,
    options: dict[str, Any],
    spec: str,
    factories: Mapping[str, ModelFactory] | None,
) -> BaseChatModel:
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:  # pragma: no cover - langchain is a dependency
        raise ProviderPackageMissing(
            "model providers need the `langchain` package; install it with "
            "`pip install langchain`"
        ) from exc
    try:
        model: BaseChatModel = init_chat_model(name, model_provider=provider, **options)
    except ImportError as exc:
        raise _missing_package(provider, exc) from exc
    except ValueError as exc:
        if "provider" in str(exc) and "upported" in str(exc):
            raise _spec_error(spec, f"unknown provider {provider!r}", factories) from exc
        raise UsageError(f"cannot create the {provider} model {name!r}: {exc}") from exc
    except Exception as exc:  # e.g. no API key configured: the provider's own message
        raise UsageError(
            f"cannot create the {provider} model {name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    return model


def _missing_package(provider: str, exc: ImportError) -> ProviderPackageMissing:
    extra = _EXTRAS.get(provider)
    found = _PACKAGE.search(str(exc))
    package = found.group(1) if found else f"langchain-{provider.replace('_', '-')}"
    command = f"pip install 'sea-runtime[{extra}]'" if extra else f"pip install {package}"
    return ProviderPackageMissing(
        f"model provider {provider!r} needs the `{package}` package; install it with "
        f"`{command}`"
    )


def _scripted(path: Path) -> BaseChatModel:
    from sea.chat.scripted import ScriptedChatModel

    return ScriptedChatModel.from_file(path)
