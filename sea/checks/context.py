"""What the static checks may consult besides the playbook: other playbooks and tools."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from sea.errors import UsageError


@dataclass(frozen=True)
class Signature:
    """What a caller needs to know about a playbook it calls."""

    name: str
    params: Mapping[str, bool] = field(default_factory=dict)
    """Declared parameter → required (without a default)."""
    outputs: tuple[str, ...] = ()
    """Keys of ``output_schema`` copied back into the caller."""
    router_callable: bool = False


class PlaybookIndex(Protocol):
    """The playbooks a playbook may call (a :class:`sea.library.PlaybookLibrary`)."""

    def names(self) -> list[str]:
        """Every playbook name."""
        ...

    def signature(self, name: str) -> Signature | None:
        """The playbook's signature, ``None`` if there is no such playbook."""
        ...


@dataclass(frozen=True)
class ToolCatalogue:
    """Tool name → JSON Schema of its arguments (``None``: arguments unknown)."""

    tools: Mapping[str, Mapping[str, Any] | None]

    @classmethod
    def from_json(cls, data: Any) -> ToolCatalogue:
        """Accept ``{"tools": [{"name", "parameters"|"args_schema"|"input_schema"}]}``, a
        list of such objects, or a mapping of name → argument schema.

        Raises:
            UsageError: The data has none of these shapes.
        """
        if isinstance(data, dict) and isinstance(data.get("tools"), list):
            data = data["tools"]
        if isinstance(data, list):
            tools: dict[str, Mapping[str, Any] | None] = {}
            for entry in data:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise UsageError("tool catalogue: every entry needs a string `name`")
                schema = next(
                    (entry[k] for k in ("parameters", "args_schema", "input_schema") if k in entry),
                    None,
                )
                tools[entry["name"]] = schema if isinstance(schema, dict) else None
            return cls(tools)
        if isinstance(data, dict):
            return cls({k: v if isinstance(v, dict) else None for k, v in data.items()})
        raise UsageError("tool catalogue: expected a JSON object or list of tools")

    @classmethod
    def load(cls, path: Path) -> ToolCatalogue:
        """Read a catalogue file.

        Raises:
            UsageError: The file is missing or not a valid catalogue.
        """
        try:
            return cls.from_json(orjson.loads(path.read_bytes()))
        except OSError as exc:
            raise UsageError(f"tool catalogue {path}: {exc.strerror or exc}") from exc
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"tool catalogue {path}: invalid JSON ({exc})") from exc


@dataclass(frozen=True)
class CheckContext:
    """Optional knowledge for the checks: without it, the cross-file checks are skipped."""

    library: PlaybookIndex | None = None
    tools: ToolCatalogue | None = None
