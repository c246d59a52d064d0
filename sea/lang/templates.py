"""Templates: ``{a.b.0}`` references into the state, rendered with JSON typing.

Rules:

* A reference is ``{path}`` where ``path`` is dotted segments of word characters whose first
  segment does not start with a digit: ``{input}``, ``{plan.steps.0.title}``, ``{items.length}``.
* A template that is exactly one reference returns the referenced value with its type.
* Text around references gives a string: dicts and lists render as compact JSON, ``None`` as
  the empty string, booleans as ``true``/``false``.
* ``{{`` renders ``{``; ``}}`` renders ``}`` when it closes an escaped ``{{`` (so
  ``{{name}}`` gives ``{name}``), and stays ``}}`` otherwise, so JSON examples such as
  ``{"a": {"b": 1}}`` inside a prompt survive untouched.
* Braces that do not form a reference (``{"a": 1}``, ``{ x }``) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal

from sea.errors import SeaError
from sea.jsontypes import json_text


class _Missing:
    """Type of :data:`MISSING`."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()
"""Returned by :func:`resolve_path` when the path does not exist in the state."""

MissingPolicy = Literal["error", "keep"]
Guard = Callable[[str, Sequence[tuple[int, int]]], str]
"""What :func:`render` may apply to a rendered text, given the spans of the template's own
text in it."""

REFERENCE_PATTERN = re.compile(r"\{((?!\d)\w+(?:\.\w+)*)\}")
_LENGTH = "length"


class TemplateError(SeaError):
    """A template references a variable that the state does not have."""

    code = "SEA510"

    def __init__(self, message: str, *, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


@dataclass(frozen=True, slots=True)
class Reference:
    """One ``{path}`` reference found in a template."""

    path: str
    """The dotted path inside the braces."""
    start: int
    """Offset of the opening brace in the template."""
    end: int
    """Offset just after the closing brace."""

    @property
    def root(self) -> str:
        """The first segment of the path: the state variable that is read."""
        return self.path.split(".", 1)[0]


def _step(value: Any, segment: str) -> Any:
    if isinstance(value, Mapping):
        if segment in value:
            return value[segment]
        return len(value) if segment == _LENGTH else MISSING
    if isinstance(value, (list, tuple)):
        if segment == _LENGTH:
            return len(value)
        if segment.isdigit() and int(segment) < len(value):
            return value[int(segment)]
        return MISSING
    if isinstance(value, str) and segment == _LENGTH:
        return len(value)
    return MISSING


def resolve_path(state: Mapping[str, Any], path: str) -> Any:
    """Walk a dotted path through nested dicts and lists.

    Args:
        state: The variables (nested JSON-like values).
        path: Dotted path such as ``a.b.0.c``; list elements are addressed by index and
            ``length`` gives the length of a list, string or dict (unless the dict has a
            real ``length`` key).

    Returns:
        The value, or :data:`MISSING` when any segment does not exist.
    """
    value: Any = state
    for segment in path.split("."):
        value = _step(value, segment)
        if value is MISSING:
            return MISSING
    return value


@lru_cache(maxsize=4096)
def _tokens(template: str) -> tuple[tuple[str, str, int, int], ...]:
    """Split a template into ``("text", text, start, end)`` and ``("ref", path, start, end)``.

    A template is split once: the checks and every later render share the result.
    """
    return tuple(_split(template))


def clear_template_cache() -> None:
    """Forget every split template (for measurements of a first check)."""
    _tokens.cache_clear()


_BRACE = re.compile(r"[{}]")
"""Only braces mean anything in a template: the text between two of them is copied whole."""


def _split(template: str) -> Iterator[tuple[str, str, int, int]]:
    escaped_open = 0
    text_start = 0
    buffer: list[str] = []
    i = 0
    length = len(template)
    while i < length:
        brace = _BRACE.search(template, i)
        if brace is None:
            buffer.append(template[i:])
            break
        if brace.start() > i:
            buffer.append(template[i : brace.start()])
            i = brace.start()
        if template.startswith("{{", i):
            buffer.append("{")
            escaped_open += 1
            i += 2
            continue
        if escaped_open and template.startswith("}}", i):
            buffer.append("}")
            escaped_open -= 1
            i += 2
            continue
        if template[i] == "{":
            match = REFERENCE_PATTERN.match(template, i)
            if match is not None:
                if buffer:
                    yield "text", "".join(buffer), text_start, i
                    buffer = []
                yield "ref", match.group(1), i, match.end()
                i = text_start = match.end()
                continue
        buffer.append(template[i])
        i += 1
    if buffer:
        yield "text", "".join(buffer), text_start, length


def references(template: str) -> list[Reference]:
    """Every reference in a template, in order (escaped braces excluded)."""
    return [
        Reference(path=value, start=start, end=end)
        for kind, value, start, end in _tokens(template)
        if kind == "ref"
    ]


def to_text(value: Any) -> str:
    """How a value appears inside text: JSON for containers, ``""`` for None."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json_text(value)


def _missing(path: str) -> TemplateError:
    return TemplateError(
        f"template references `{{{path}}}` but the state has no `{path}`", variable=path
    )


def render(
    template: str,
    state: Mapping[str, Any],
    *,
    missing: MissingPolicy = "error",
    escape: Callable[[str], str] | None = None,
    guard: Guard | None = None,
) -> Any:
    """Render a template against the state.

    Args:
        template: The template text.
        state: The variables.
        missing: ``"error"`` raises :class:`TemplateError` for a reference the state does
            not have; ``"keep"`` leaves ``{name}`` verbatim.
        escape: Applied to the text of every substituted value (not to the template's own
            text), e.g. :func:`sea.lang.trust.neutralize` for text bound for a model. With
            it the result is always text.
        guard: Applied to the whole rendered text with the ``(start, end)`` spans of the
            template's own text in it, e.g. :func:`sea.lang.trust.neutralize_outside`: what
            two adjacent values make together (``{a}{b}``) is seen as well as what each
            makes alone. With it the result is always text.

    Returns:
        The referenced value itself (any type) when the template is exactly one reference
        and there is neither ``escape`` nor ``guard``, otherwise a string.

    Raises:
        TemplateError: A reference is missing and ``missing="error"``.
    """
    if "{" not in template and "}" not in template:
        return template if guard is None else guard(template, [(0, len(template))])
    parts = _tokens(template)
    if len(parts) == 1 and parts[0][0] == "ref" and guard is None:
        value = resolve_path(state, parts[0][1])
        if value is MISSING:
            if missing == "error":
                raise _missing(parts[0][1])
            return template
        return value if escape is None else escape(to_text(value))
    out: list[str] = []
    literal: list[tuple[int, int]] = []  # where the template's own text is in the result
    size = 0
    for kind, value, start, end in parts:
        found = MISSING if kind == "text" else resolve_path(state, value)
        if kind == "text" or found is MISSING:
            if kind == "ref" and missing == "error":
                raise _missing(value)
            piece = value if kind == "text" else template[start:end]
            if literal and literal[-1][1] == size:  # one span for adjacent own text
                literal[-1] = (literal[-1][0], size + len(piece))
            else:
                literal.append((size, size + len(piece)))
        else:
            text = to_text(found)
            piece = text if escape is None else escape(text)
        out.append(piece)
        size += len(piece)
    rendered = "".join(out)
    return rendered if guard is None else guard(rendered, literal)


def render_value(value: Any, state: Mapping[str, Any], *, missing: MissingPolicy = "error") -> Any:
    """Render every string inside nested dicts and lists (keys are not templated).

    Non-string scalars are returned as they are.
    """
    if isinstance(value, str):
        return render(value, state, missing=missing)
    if isinstance(value, Mapping):
        return {key: render_value(item, state, missing=missing) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return [render_value(item, state, missing=missing) for item in value]
    return value


def value_references(value: Any) -> list[Reference]:
    """Every reference in every string nested inside ``value`` (for static checks)."""
    if isinstance(value, str):
        return references(value)
    if isinstance(value, Mapping):
        return [ref for item in value.values() for ref in value_references(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in value_references(item)]
    return []
