"""A problem found in a document, before it is given a file and a line:column."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from functools import partial

from sea.errors import Diagnostic, Severity
from sea.lang.locate import Locator


@dataclass(frozen=True, slots=True)
class Issue:
    """A located-by-pointer problem; :meth:`diagnostic` adds the file position."""

    code: str
    message: str
    pointer: str
    _: KW_ONLY
    severity: Severity = Severity.ERROR
    hint: str | None = None
    node_id: str | None = None
    at_key: bool = False
    """Point at the member name (an unknown field) instead of its value."""
    char_offset: int | None = None
    """Position inside a string value (a reference in a template, an expression error)."""

    def diagnostic(self, file: str | None, locator: Locator | None) -> Diagnostic:
        """The diagnostic, with line and column when the source text is known."""
        line = column = None
        if locator is not None:
            line, column = locator.position(
                self.pointer, key=self.at_key, char_offset=self.char_offset
            )
        return Diagnostic(
            code=self.code,
            severity=self.severity,
            message=self.message,
            file=file,
            pointer=self.pointer,
            line=line,
            column=column,
            hint=self.hint,
            node_id=self.node_id,
        )


error = partial(Issue, severity=Severity.ERROR)
"""An error issue: ``error(code, message, pointer, hint=…, node_id=…, at_key=…, char_offset=…)``."""

warning = partial(Issue, severity=Severity.WARNING)
"""A warning issue, with the arguments of :func:`error`."""
