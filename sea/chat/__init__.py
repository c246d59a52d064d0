"""Chat models for SEA: the bundled local model and ``provider:model`` specs.

Importing this package loads neither llama-cpp nor any provider package.
"""

from sea.chat.providers import resolve_model

__all__ = ["resolve_model"]
