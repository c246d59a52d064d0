"""The located diagnostic record: one problem of a playbook document, where it is and how
to fix it (raised together in a :class:`sea.errors.PlaybookError`, which re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    """How bad a diagnostic is: errors fail validation, warnings only with ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a playbook document, with its exact location and a fix hint."""

    code: str
    """Stable code, e.g. ``SEA012``."""
    severity: Severity
    message: str
    """What is wrong, in one sentence."""
    file: str | None = None
    """The file the document came from, if any."""
    pointer: str = ""
    """RFC 6901 JSON pointer into the document (``""`` is the whole document)."""
    line: int | None = None
    """1-based line in the source text."""
    column: int | None = None
    """1-based column in the source text."""
    hint: str | None = None
    """How to fix it."""
    node_id: str | None = None
    """The id of the node the problem belongs to, when there is one."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form used by ``sea validate --format json``."""
        return {
            "file": self.file,
            "code": self.code,
            "severity": str(self.severity),
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
        }

    def format_human(self) -> str:
        """Compiler-style text: ``file:line:col: CODE severity: message`` plus the hint."""
        where = self.file or "<playbook>"
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        text = f"{where}: {self.code} {self.severity}: {self.message}"
        if self.pointer:
            text += f" (at {self.pointer})"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text
