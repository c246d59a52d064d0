"""Load a playbook document: bytes → JSON → JSON Schema → models → static checks, once.

Every problem becomes a :class:`~sea.errors.Diagnostic` with the file, the JSON pointer, the
line:column in the source text, a stable code and a hint. All problems are reported, errors
first, each in source order. Bad input never raises from :func:`check_document`.

Files are read by :func:`read_playbook_bytes` only: a regular file (a symlink is followed
only to one) of at most :data:`sea.lang.files.MAX_PLAYBOOK_BYTES`, so a FIFO, a device such as
``/dev/zero`` or a huge file named ``*.json`` never hangs or exhausts the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson
from pydantic import ValidationError as ModelError

from sea.errors import Diagnostic, PlaybookError, Severity
from sea.jsontypes import json_type
from sea.lang import codes
from sea.lang.checks import CheckContext, run_checks
from sea.lang.files import read_playbook_bytes
from sea.lang.issues import Issue, error
from sea.lang.locate import Locator, escape_pointer, join_pointer, unescape_pointer
from sea.lang.models import Playbook
from sea.lang.validation import SchemaValidation, schema_validation
from sea.lang.vocabulary import BUILTIN_NODE_TYPES, NodeTypes


@dataclass(frozen=True)
class LoadResult:
    """The outcome of checking one document."""

    playbook: Playbook | None
    """The playbook when the document has no errors (warnings allowed), else ``None``."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    salvaged: Playbook | None = None
    """The playbook as far as it could be built, errors or not (what the schema refused left
    out, e.g. a node with an unknown type): enough to draw a document while it is edited;
    never to run."""

    @property
    def errors(self) -> list[Diagnostic]:
        """The diagnostics of severity error."""
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        """The diagnostics of severity warning."""
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]


def _file_error(
    code: str, message: str, file: str | None, line: int, column: int, hint: str
) -> Diagnostic:
    """A diagnostic about the file as a whole, before it has a JSON pointer."""
    return Diagnostic(
        code=code,
        severity=Severity.ERROR,
        message=message,
        file=file,
        line=line,
        column=column,
        hint=hint,
    )


def _decode(data: bytes | str, file: str | None) -> tuple[str | None, list[Diagnostic]]:
    if isinstance(data, str):
        return data.removeprefix("\ufeff"), []
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        return None, [
            _file_error(
                codes.INVALID_UTF8,
                f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                file,
                line,
                column,
                "the file starts with a UTF-16 byte order mark; save it as UTF-8"
                if utf16
                else "save the file as UTF-8",
            )
        ]


def _parse(text: str, file: str | None) -> tuple[Any, list[Diagnostic]]:
    try:
        return orjson.loads(text), []
    except orjson.JSONDecodeError as exc:
        message = str(exc).split(":", 1)[0] if str(exc) else "invalid JSON"
        return None, [
            _file_error(
                codes.INVALID_JSON,
                f"invalid JSON: {message}",
                file,
                exc.lineno,
                exc.colno,
                "check for a missing comma, quote or bracket just before this point",
            )
        ]


MAX_DEPTH = 64
"""Deepest nesting of objects and arrays a document may have (playbooks need far less)."""


_MEMBER_END = re.compile(r'"[ \t\n\r]*:')
"""A quote, then a colon: the end of an object member's name, unless the quote is escaped."""


def _member_count(text: str) -> int:
    """An upper bound of the object members of a JSON text: its unescaped quotes followed by
    a colon (one per member; a string value adds one only when it starts with a colon)."""
    count = 0
    for match in _MEMBER_END.finditer(text):
        start = end = match.start()
        while start > 0 and text[start - 1] == "\\":
            start -= 1
        count += (end - start) % 2 == 0
    return count


def _key_count(document: Any) -> int:
    """How many keys the decoded objects of ``document`` have in all (iterative walk)."""
    count = 0
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
    return count


def _duplicate_keys(
    text: str, document: Any, file: str | None, locator: Locator
) -> list[Diagnostic]:
    """``SEA008`` for every member name repeated in its object (the parser keeps the last
    silently). The source is scanned again only when there are more members than decoded
    keys, which only a repeated name (or a string value starting with a colon) causes."""
    if _member_count(text) <= _key_count(document):
        return []
    found = []
    for pointer, first, again in locator.duplicate_keys():
        name = unescape_pointer(pointer.rsplit("/", 1)[-1])
        first_line, _ = locator.line_column(first)
        line, column = locator.line_column(again)
        found.append(
            Diagnostic(
                code=codes.DUPLICATE_KEY,
                severity=Severity.ERROR,
                message=f"`{name}` is given twice in this object (first on line {first_line}); "
                "JSON keeps only the last one",
                file=file,
                pointer=pointer,
                line=line,
                column=column,
                hint="remove one of them, or merge what they say into one member",
            )
        )
    return found


def _too_deep(document: Any) -> str | None:
    """Pointer to a value nested deeper than :data:`MAX_DEPTH`, if any (iterative walk)."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, pointer, depth = stack.pop()
        if depth > MAX_DEPTH:
            return pointer
        if isinstance(value, dict):
            stack.extend(
                (v, f"{pointer}/{escape_pointer(k)}", depth + 1)
                for k, v in value.items()
                if isinstance(v, (dict, list))
            )
        elif isinstance(value, list):
            stack.extend(
                (v, f"{pointer}/{i}", depth + 1)
                for i, v in enumerate(value)
                if isinstance(v, (dict, list))
            )
    return None


MAX_DIAGNOSTICS: Final = 100
"""The most diagnostics reported for one file; the rest are counted in one more."""


def capped(diagnostics: list[Diagnostic], file: str | None) -> list[Diagnostic]:
    """The first :data:`MAX_DIAGNOSTICS` of the sorted ``diagnostics`` (errors come first),
    then, when there were more, a ``SEA090`` that counts the rest ("and N more")."""
    if len(diagnostics) <= MAX_DIAGNOSTICS:
        return diagnostics
    rest = diagnostics[MAX_DIAGNOSTICS:]
    errors = sum(1 for d in rest if d.severity is Severity.ERROR)
    counts = ", ".join(
        f"{n:,} {word}{'s' if n != 1 else ''}"
        for n, word in ((errors, "error"), (len(rest) - errors, "warning"))
        if n
    )
    summary = Diagnostic(
        code=codes.TOO_MANY_DIAGNOSTICS,
        severity=Severity.ERROR if errors else Severity.WARNING,
        message=f"and {len(rest):,} more problems in this file ({counts}), not listed",
        file=file,
        hint=f"only the first {MAX_DIAGNOSTICS} problems of a file are listed; fix them and "
        "validate again",
    )
    return [*diagnostics[:MAX_DIAGNOSTICS], summary]


def _sort_key(diagnostic: Diagnostic) -> tuple[int, int, int, str]:
    return (
        0 if diagnostic.severity is Severity.ERROR else 1,
        diagnostic.line or 0,
        diagnostic.column or 0,
        diagnostic.code,
    )


def _build(
    document: dict[str, Any], validation: SchemaValidation, types: NodeTypes
) -> tuple[Playbook | None, list[Issue]]:
    if validation.playbook is not None:
        return validation.playbook, []
    candidate = validation.salvaged if validation.issues else document
    if candidate is None:
        return None, []
    try:
        return types.document.model_validate(candidate), []
    except ModelError as exc:
        if validation.issues:
            return None, []
        return None, [
            error(
                codes.INVALID_VALUE,
                err["msg"].removeprefix("Value error, "),
                join_pointer(*_untagged(err["loc"], candidate)),
            )
            for err in exc.errors()
        ]


def _untagged(loc: tuple[Any, ...], document: dict[str, Any]) -> tuple[Any, ...]:
    """A model error's location without the node type pydantic puts after a node's index
    (the union member it tried): ``nodes/1/subplay/line`` is ``nodes/1/line``."""
    if len(loc) > 2 and loc[0] == "nodes" and isinstance(loc[1], int):
        nodes = document.get("nodes")
        node = nodes[loc[1]] if isinstance(nodes, list) and loc[1] < len(nodes) else None
        if isinstance(node, dict) and node.get("type") == loc[2]:
            return (*loc[:2], *loc[3:])
    return loc


def check_document(
    data: bytes | str,
    *,
    file: str | None = None,
    context: CheckContext | None = None,
    types: NodeTypes = BUILTIN_NODE_TYPES,
) -> LoadResult:
    """Check a document completely; never raises for bad input.

    Args:
        data: The document's bytes (or text).
        file: The file name shown in diagnostics.
        context: What else the checks may consult (the playbook library, a tool catalogue).
        types: The node types the document may use (a registry's ``node_types()``).

    Returns:
        The playbook (None when it has errors) and every diagnostic, best first.
    """
    text, diagnostics = _decode(data, file)
    if text is None:
        return LoadResult(None, diagnostics)
    document, diagnostics = _parse(text, file)
    if diagnostics:
        return LoadResult(None, diagnostics)
    locator = Locator(text)
    if not isinstance(document, dict):
        issue = error(
            codes.NOT_AN_OBJECT,
            f"the document must be a JSON object (a playbook), not a JSON {json_type(document)}",
            "",
            hint='a playbook looks like {"name": …, "description": …, "start_node": …, '
            '"nodes": [...]}',
        )
        return LoadResult(None, [issue.diagnostic(file, locator)])
    deep = _too_deep(document)
    if deep is not None:
        issue = error(
            codes.TOO_DEEP,
            f"the document nests objects and arrays more than {MAX_DEPTH} levels deep",
            deep,
            hint="flatten the structure; playbooks and response schemas need far less nesting",
        )
        return LoadResult(None, [issue.diagnostic(file, locator)])
    repeated = _duplicate_keys(text, document, file, locator)
    validation = schema_validation(document, types)
    playbook, issues = _build(document, validation, types)
    issues = validation.issues + issues
    if playbook is not None:
        found = run_checks(
            playbook,
            context or CheckContext(),
            partial=validation.partial,
            trimmed=bool(validation.trimmed),
        )
        issues += [placed for i in found if (placed := validation.place(i)) is not None]
    diagnostics = sorted(
        [*repeated, *(i.diagnostic(file, locator) for i in issues)], key=_sort_key
    )
    ok = not any(d.severity is Severity.ERROR for d in diagnostics)
    return LoadResult(playbook if ok else None, capped(diagnostics, file), salvaged=playbook)


def load_playbook_file(
    path: Path, *, context: CheckContext | None = None, types: NodeTypes = BUILTIN_NODE_TYPES
) -> Playbook:
    """Load and check one playbook file.

    Args:
        path: The playbook's file.
        context: What else the checks may consult (the playbook library, a tool catalogue).
        types: The node types the document may use (a registry's ``node_types()``).

    Returns:
        The validated playbook.

    Raises:
        PlaybookError: The file is missing, unreadable, not a regular file, too large
            (see :func:`read_playbook_bytes`) or has errors (all diagnostics).
    """
    data = read_playbook_bytes(path)
    result = check_document(data, file=str(path), context=context, types=types)
    if result.playbook is None:
        raise PlaybookError(result.diagnostics)
    return result.playbook


