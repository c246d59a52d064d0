"""A migration of one document (``sea migrate``): read it, refuse what is not a playbook,
apply the rewrites (:mod:`sea.lang.migrate.rules`) and then the one SEA's own checks ask
for, and give the outcome (:class:`Migration`: the new text, its diff, what changed).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import orjson

from sea.errors import Diagnostic, Severity
from sea.lang import codes
from sea.lang.checks.context import CheckContext
from sea.lang.issues import error
from sea.lang.jsonedit import JsonTextEditor, OverlappingEdit
from sea.lang.loader import check_document
from sea.lang.locate import Locator, join_pointer, unescape_pointer
from sea.lang.migrate.rules import Change, Rewrite, rewrite


@dataclass(frozen=True)
class Migration:
    """The outcome of migrating one document."""

    file: str | None
    original: str
    migrated: str | None
    """The rewritten text (equal to ``original`` when nothing needed changing); ``None``
    when the document could not be migrated (see ``diagnostics``)."""
    changes: tuple[Change, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    bom: bool = False
    """The file started with a UTF-8 byte order mark (kept when written back)."""

    @property
    def failed(self) -> bool:
        """The document could not be migrated."""
        return self.migrated is None

    @property
    def changed(self) -> bool:
        """The migration rewrote something."""
        return self.migrated is not None and self.migrated != self.original

    def diff(self) -> str:
        """A unified diff from the original to the migrated text (``""`` if unchanged)."""
        if not self.changed or self.migrated is None:
            return ""
        name = self.file or "<playbook>"
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True),
            self.migrated.splitlines(keepends=True),
            fromfile=name,
            tofile=name,
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def data(self) -> bytes:
        """The migrated text as the file's bytes (UTF-8, the original's BOM kept)."""
        if self.migrated is None:
            raise ValueError("nothing to write: the document could not be migrated")
        return ("\ufeff" if self.bom else "").encode() + self.migrated.encode("utf-8")


def _failure(
    file: str | None, text: str, code: str, message: str, pointer: str, hint: str
) -> Diagnostic:
    return error(code, message, pointer, hint=hint).diagnostic(file, Locator(text))


def _not_a_playbook(document: dict[str, Any], text: str, file: str | None) -> Diagnostic | None:
    if isinstance(document.get("nodes"), list):
        return None
    return _failure(
        file,
        text,
        codes.MISSING_FIELD,
        "not a playbook: the document has no `nodes` list",
        "/nodes" if "nodes" in document else "",
        'a playbook looks like {"name": …, "description": …, "start_node": …, "nodes": [...]}',
    )


def _outputs_never_defined(plan: Rewrite, positions: set[int]) -> None:
    outputs = plan.document["output_schema"]
    keep = [i for i in range(len(outputs)) if i not in positions]
    plan.editor.replace_items("/output_schema", keep)
    for i in sorted(positions):
        plan.note(
            join_pointer("output_schema", i),
            f"removed `{outputs[i]}` from output_schema: nothing defines it, so callers never "
            "received it",
        )


def _second_pass(plan: Rewrite, text: str, context: CheckContext | None) -> None:
    """The rewrite SEA's own checks ask for: output_schema keys nothing defines (SAIVerse
    copied nothing back for them) are removed."""
    never = {
        int(d.pointer.rsplit("/", 1)[1])
        for d in check_document(text, context=context).diagnostics
        if d.code == codes.OUTPUT_NEVER_DEFINED
    }
    if never and isinstance(plan.document.get("output_schema"), list):
        _outputs_never_defined(plan, never)


def _parse(data: bytes | str) -> tuple[str, Any, bool] | None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
        return text, orjson.loads(text), raw.startswith(b"\xef\xbb\xbf")
    except (UnicodeDecodeError, orjson.JSONDecodeError):
        return None


def _refusal(document: Any, text: str, file: str | None) -> Diagnostic | None:
    """Why a parsed document cannot be migrated (not a playbook, repeated names)."""
    if not isinstance(document, dict):
        return None  # the loader says it (see migrate_text)
    locator = Locator(text)
    repeated = locator.duplicate_keys()
    if repeated:
        pointer, _, again = repeated[0]
        line, column = locator.line_column(again)
        name = unescape_pointer(pointer.rsplit("/", 1)[-1])
        return Diagnostic(
            code=codes.DUPLICATE_KEY,
            severity=Severity.ERROR,
            message=f"member `{name}` is given twice in one object; which one is meant is "
            "unclear, so the file is not migrated",
            file=file,
            pointer=pointer,
            line=line,
            column=column,
            hint="remove one of them, then migrate again",
        )
    return _not_a_playbook(document, text, file)


def _apply(plan: Rewrite, file: str | None) -> str | Diagnostic:
    try:
        return plan.editor.result()
    except OverlappingEdit as exc:  # two rules touched one span: leave the file as it is
        return _failure(
            file, plan.editor.text, codes.INVALID_VALUE,
            f"the file could not be migrated ({exc})", "",
            "migrate it by hand; `sea validate` names what SEA does not accept",
        )


def migrate_text(
    data: bytes | str, *, file: str | None = None, context: CheckContext | None = None
) -> Migration:
    """Migrate one document; never raises for bad input.

    Args:
        data: The file's bytes (or text).
        file: The file name shown in diagnostics and in the diff.
        context: The playbooks a ``subplay`` may call (``context.library``: which parameters
            a callee declares, what it returns); without a library, only ``exec`` nodes get
            explicit arguments.
    """
    parsed = _parse(data)
    if parsed is None or not isinstance(parsed[1], dict):
        # the loader locates the problem (invalid UTF-8 or JSON, not an object)
        errors = tuple(check_document(data, file=file).errors)
        return Migration(file, parsed[0] if parsed else "", None, diagnostics=errors)
    text, document, bom = parsed
    refusal = _refusal(document, text, file)
    if refusal is not None:
        return Migration(file, text, None, diagnostics=(refusal,), bom=bom)
    index = context.library if context is not None else None
    first = Rewrite(document, JsonTextEditor(text, document), index)
    rewrite(first)
    migrated = _apply(first, file)
    if isinstance(migrated, Diagnostic):
        return Migration(file, text, None, diagnostics=(migrated,), bom=bom)
    editor = JsonTextEditor(migrated, orjson.loads(migrated))  # a parse of its own each
    second = Rewrite(orjson.loads(migrated), editor, index)
    _second_pass(second, migrated, context)
    final = _apply(second, file)
    if isinstance(final, Diagnostic):
        return Migration(file, text, None, diagnostics=(final,), bom=bom)
    return Migration(file, text, final, (*first.changes, *second.changes), bom=bom)
