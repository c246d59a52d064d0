"""``=`` expressions of ``set`` nodes, in CEL (the Common Expression Language).

CEL is safe and not Turing-complete: no loops, no I/O, no access to Python. An expression is
compiled once, when the playbook loads; syntax errors are located diagnostics.

SAIVerse wrote expressions with template references, ``={loop_count} + 1`` or
``={plan.total_phases} - 1``. Such references become CEL *variables* bound to the referenced
value (they are never pasted into the source), so text in the state cannot change what an
expression does. Plain CEL identifiers (``count + 1``) read top-level state variables.

Numbers follow CEL, with one relaxation for JSON data: when an operation fails only because
it mixes integers and doubles (``0.5 * 2``), it is evaluated again with every integer as a
double. Integer arithmetic stays integer (``7 / 2`` is ``3``; write ``double(x) / 2.0``).
CEL maps have no order, so an object an expression returns has its keys sorted (the same
text in every run, which replay relies on).
Besides CEL's own functions (``size``, ``int``, ``double``, ``string``, ``contains``, …) the
pure functions ``len``, ``min``, ``max`` and ``abs`` are available.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from sea.errors import SeaError
from sea.lang.templates import MISSING, REFERENCE_PATTERN, resolve_path

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_REF_PREFIX = "__ref"
_MACRO_VAR = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,")
_CEL_POSITION = re.compile(r"<input>:(\d+):(\d+):\s*(.*)")
_INT_LITERAL = re.compile(r"(?<![\w.])(\d+)(?![\w.])")

MAX_EXPRESSION_LENGTH: Final = 4_096
"""The longest expression (the text after ``=``), in characters."""
MAX_EXPRESSION_DEPTH: Final = 100
"""The deepest an expression may nest, counting brackets and the operators chained at one
level (``1 + 1 + 1`` is three deep: CEL builds it as nested calls). The native CEL parser
and evaluator recurse on that depth, and a deep enough expression crashes the process
(about 10,000 chained ``+`` do, in a thread with a small stack far fewer), so it is
checked, iteratively, before the parser sees the text."""
_SHOWN = 40


def _fn_min(*values: Any) -> Any:
    return min(values[0]) if len(values) == 1 else min(values)


def _fn_max(*values: Any) -> Any:
    return max(values[0]) if len(values) == 1 else max(values)


_FUNCTIONS: dict[str, Callable[..., Any]] = {"len": len, "min": _fn_min, "max": _fn_max, "abs": abs}


_CEL_LOADING = threading.Lock()
"""Held while the extension loads: its initialisation panics when two threads run it at
once (pulses running together check their playbooks in worker threads)."""


@lru_cache(maxsize=1)
def _cel() -> ModuleType:
    """The CEL extension module (loaded once, whichever thread asks first)."""
    with _CEL_LOADING:
        return _load_cel()


def _load_cel() -> ModuleType:
    """Load the CEL extension module.

    The ``cel`` package's ``__init__`` also imports its interactive command line (and
    prompt_toolkit with it), about 0.1 s of start-up that ``sea validate`` does not need, so
    the compiled extension ``cel.cel`` is loaded directly when it can be found.
    """
    loaded = sys.modules.get("cel.cel")
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("cel")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(location) / f"cel{suffix}"
            if not path.is_file():
                continue
            ext = importlib.util.spec_from_file_location("cel.cel", path)
            if ext is None or ext.loader is None:
                continue
            module = importlib.util.module_from_spec(ext)
            ext.loader.exec_module(module)
            sys.modules["cel.cel"] = module
            return module
    import cel

    return cel


class ExpressionSyntaxError(SeaError):
    """An expression does not parse; ``offset`` is 0-based in the source after ``=``."""

    code = "SEA032"

    def __init__(self, message: str, *, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class ExpressionTooLarge(ExpressionSyntaxError):
    """An expression is longer or nests deeper than the language allows
    (:data:`MAX_EXPRESSION_LENGTH`, :data:`MAX_EXPRESSION_DEPTH`); it is never parsed."""

    code = "SEA037"


class ExpressionError(SeaError):
    """An expression could not be evaluated (a missing variable, a type mismatch, …)."""

    code = "SEA511"


@dataclass(frozen=True, slots=True)
class _Translation:
    source: str
    """CEL source with every reference replaced by a variable."""
    refs: tuple[tuple[str, str], ...]
    """(CEL variable, state path) pairs."""
    breaks: tuple[tuple[int, int], ...]
    """(offset in ``source``, offset in the original) at the start of every changed span."""
    code_spans: tuple[tuple[int, int], ...]
    """Spans of ``source`` outside string literals."""

    def original_offset(self, offset: int) -> int:
        """Map an offset in the translated source back to the original text."""
        best = (0, 0)
        for translated, original in self.breaks:
            if translated <= offset:
                best = (translated, original)
        return best[1] + (offset - best[0])


def _string_end(source: str, start: int) -> int:
    """Offset just after the string literal starting at ``start`` (or the end of input)."""
    quote = source[start]
    raw = start > 0 and source[start - 1] in "rR"
    delim = quote * 3 if source.startswith(quote * 3, start) else quote
    i = start + len(delim)
    while i < len(source):
        if source[i] == "\\" and not raw:
            i += 2
            continue
        if source.startswith(delim, i):
            return i + len(delim)
        i += 1
    return len(source)


def _translate(original: str) -> _Translation:
    out: list[str] = []
    size = 0
    refs: dict[str, str] = {}
    breaks: list[tuple[int, int]] = [(0, 0)]
    spans: list[tuple[int, int]] = []
    span_start = 0
    i = 0
    while i < len(original):
        char = original[i]
        if char in "'\"":
            spans.append((span_start, size))
            end = _string_end(original, i)
            out.append(original[i:end])
            size += end - i
            i = end
            span_start = size
            continue
        match = REFERENCE_PATTERN.match(original, i) if char == "{" else None
        if match is None:
            out.append(char)
            size += 1
            i += 1
            continue
        name = refs.setdefault(match.group(1), f"{_REF_PREFIX}{len(refs)}")
        breaks.append((size, i))
        out.append(name)
        size += len(name)
        breaks.append((size, match.end()))
        i = match.end()
    source = "".join(out)
    spans.append((span_start, size))
    return _Translation(
        source=source,
        refs=tuple((var, path) for path, var in refs.items()),
        breaks=tuple(breaks),
        code_spans=tuple(spans),
    )


def _syntax_error(
    translation: _Translation, original: str, exc: Exception
) -> ExpressionSyntaxError:
    text = str(exc)
    found = _CEL_POSITION.search(text)
    offset = 0
    detail = text.splitlines()[0] if text else "invalid expression"
    if found is not None:
        line, column = int(found.group(1)), int(found.group(2))
        lines = translation.source.split("\n")
        offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
        offset = min(translation.original_offset(offset), len(original))
        detail = found.group(3).split(" expecting ")[0].strip()
    return ExpressionSyntaxError(
        f"expression `={original}` does not parse: {detail}", offset=offset
    )


def to_cel(value: Any, where: str) -> Any:
    """Convert a state value to a value CEL accepts (JSON types only).

    Raises:
        ExpressionError: The value (or something inside it) has no CEL equivalent.
    """
    if value is None or isinstance(value, (bool, str, float, bytes)):
        return value
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ExpressionError(f"`{where}` = {value} is outside the 64-bit integer range")
        return value
    if isinstance(value, (list, tuple)):
        return [to_cel(item, f"{where}.{i}") for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): to_cel(item, f"{where}.{k}") for k, item in value.items()}
    raise ExpressionError(
        f"`{where}` holds a {type(value).__name__} value, which expressions cannot use"
    )


def _promote(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [_promote(item) for item in value]
    if isinstance(value, dict):
        return {k: _promote(item) for k, item in value.items()}
    return value


def _promoted_source(translation: _Translation) -> str:
    """The source with integer literals as doubles (not list indices)."""
    source = translation.source
    pieces: list[str] = []
    last = 0
    for start, end in translation.code_spans:
        pieces.append(source[last:start])
        code = source[start:end]

        def repl(m: re.Match[str], code: str = code) -> str:
            before = code[: m.start()].rstrip()
            if before.endswith("[") and re.search(r"[\w\])]\s*\[$", before):
                return m.group(0)
            return m.group(1) + ".0"

        pieces.append(_INT_LITERAL.sub(repl, code))
        last = end
    pieces.append(source[last:])
    return "".join(pieces)


@dataclass(eq=False)
class Expression:
    """A compiled expression; evaluate it against the state any number of times."""

    source: str
    """The original text after ``=``."""
    _translation: _Translation
    _program: Any
    _bare: frozenset[str]
    _functions: dict[str, Callable[..., Any]]
    _promoted: Any = field(default=None)

    @property
    def variables(self) -> frozenset[str]:
        """Root names of the state variables the expression reads."""
        roots = {path.split(".", 1)[0] for _, path in self._translation.refs}
        return frozenset(roots | self._bare)

    @property
    def paths(self) -> tuple[str, ...]:
        """The dotted paths of ``{…}`` references, in order of first use."""
        return tuple(path for _, path in self._translation.refs)

    def _context(self, state: Mapping[str, Any]) -> dict[str, Any]:
        context: dict[str, Any] = {}
        for var, path in self._translation.refs:
            value = resolve_path(state, path)
            if value is MISSING:
                raise ExpressionError(
                    f"expression `={self.source}` reads `{{{path}}}` but the state has no `{path}`"
                )
            context[var] = to_cel(value, path)
        for name in self._bare:
            if name not in state:
                raise ExpressionError(
                    f"expression `={self.source}` reads `{name}` but the state has no `{name}`"
                )
            context[name] = to_cel(state[name], name)
        return context

    def _run(self, program: Any, context: dict[str, Any]) -> Any:
        if self._functions:
            return program.execute(_cel().Context(variables=context, functions=self._functions))
        return program.execute(context)

    def _describe(self, context: Mapping[str, Any]) -> str:
        names = dict((var, path) for var, path in self._translation.refs)
        shown = [
            f"{names.get(var, var)}: {_type_name(value)}" for var, value in sorted(context.items())
        ]
        return f" (values: {', '.join(shown)})" if shown else ""

    def evaluate(self, state: Mapping[str, Any]) -> Any:
        """Evaluate against the state.

        Raises:
            ExpressionError: A variable is missing, a value has the wrong type, a division by
                zero, an overflow: never a silent default.
        """
        context = self._context(state)
        try:
            return _key_sorted(self._run(self._program, context))
        except Exception as exc:  # CEL raises TypeError, ValueError, RuntimeError, KeyError, …
            retried = self._retry_promoted(exc, context)
            if retried is not MISSING:
                return _key_sorted(retried)
            detail = str(exc).split(". ")[0].strip() or type(exc).__name__
            raise ExpressionError(
                f"expression `={self.source}` failed: {detail}{self._describe(context)}"
            ) from exc

    def _retry_promoted(self, exc: Exception, context: dict[str, Any]) -> Any:
        message = str(exc)
        if not isinstance(exc, TypeError) or ("double" not in message and "float" not in message):
            return MISSING
        try:
            if self._promoted is None:
                self._promoted = _cel().compile(_promoted_source(self._translation))
            return self._run(self._promoted, {k: _promote(v) for k, v in context.items()})
        except Exception:
            return MISSING


def _key_sorted(value: Any) -> Any:
    """``value`` with the keys of every object in sorted order (CEL's maps are unordered:
    their order changes from one process to the next)."""
    if isinstance(value, list):
        return [_key_sorted(item) for item in value]
    if isinstance(value, dict):
        return {key: _key_sorted(value[key]) for key in sorted(value)}
    return value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "double", str: "string", list: "list", dict: "map"}.get(
        type(value), type(value).__name__
    )


_BRACKETS_OPEN, _BRACKETS_CLOSE = "([{", ")]}"
_OPERATORS = frozenset("+-*/%!?.<>=&|")
_RUN_OPERATORS = frozenset("<>=&|")
"""Characters of the operators written with two (``<=``, ``==``, ``&&``…): a run is one."""


def _head(source: str) -> str:
    """The start of ``source``, for a message about a long expression."""
    return source if len(source) <= _SHOWN else source[:_SHOWN] + "…"


def _token(source: str, i: int, end: int) -> tuple[str, int]:
    """The kind of the token at ``i`` (``open``, ``close``, ``comma``, ``operator`` or
    ``other``) and its length."""
    char = source[i]
    if char in _BRACKETS_OPEN:
        return "open", 1
    if char in _BRACKETS_CLOSE:
        return "close", 1
    if char == ",":
        return "comma", 1
    step = 1
    if char.isalpha() or char == "_":
        while i + step < end and (source[i + step].isalnum() or source[i + step] == "_"):
            step += 1
        return ("operator" if source[i : i + step] == "in" else "other"), step
    if char not in _OPERATORS:
        return "other", 1
    if char == "." and 0 < i < end - 1 and source[i - 1].isdigit() and source[i + 1].isdigit():
        return "other", 1  # a decimal point
    while char in _RUN_OPERATORS and i + step < end and source[i + step] in _RUN_OPERATORS:
        step += 1
    return "operator", step


def _depth(translation: _Translation, limit: int) -> int | None:
    """The offset in the translated source where the nesting passes ``limit``, or None.

    An upper bound of the depth of CEL's syntax tree, in one pass without recursion: every
    open bracket is a level, and every operator (``+``, ``.``, ``?``, ``in``, a run such as
    ``<=``) adds one at its level; a comma starts a new sibling at its level.
    """
    source = translation.source
    levels = [0]
    chained = 0  # the operators counted at every open level
    for start, end in translation.code_spans:
        i = start
        while i < end:
            kind, step = _token(source, i, end)
            if kind == "open":
                levels.append(0)
            elif kind == "close" and len(levels) > 1:
                chained -= levels.pop()
            elif kind == "comma":
                chained -= levels[-1]
                levels[-1] = 0
            elif kind == "operator":
                levels[-1] += 1
                chained += 1
            if len(levels) - 1 + chained > limit:
                return i
            i += step
    return None


def _check_size(source: str, translation: _Translation) -> None:
    """Raise :class:`ExpressionTooLarge` if ``source`` passes a limit of the language."""
    deep_at = _depth(translation, MAX_EXPRESSION_DEPTH)
    if deep_at is not None:
        raise ExpressionTooLarge(
            f"expression `={_head(source)}` nests more than {MAX_EXPRESSION_DEPTH} levels deep "
            "(brackets and chained operators; the expression depth limit)",
            offset=min(translation.original_offset(deep_at), len(source)),
        )


@lru_cache(maxsize=1024)
def compile_expression(source: str) -> Expression:
    """Compile the text after a ``set`` value's leading ``=`` (once per text: the checks and
    the compiled graph share the program).

    The limits of the language are checked first, without recursion, so that no text can
    crash the parser.

    Raises:
        ExpressionTooLarge: The text is longer than :data:`MAX_EXPRESSION_LENGTH` or nests
            deeper than :data:`MAX_EXPRESSION_DEPTH` (a subclass of the next).
        ExpressionSyntaxError: The text does not parse (with the 0-based ``offset``).
    """
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise ExpressionTooLarge(
            f"expression `={_head(source)}` has {len(source):,} characters, more than "
            f"{MAX_EXPRESSION_LENGTH:,} (the expression length limit)",
            offset=MAX_EXPRESSION_LENGTH,
        )
    translation = _translate(source)
    if not translation.source.strip():
        raise ExpressionSyntaxError(f"expression `={source}` is empty", offset=0)
    _check_size(source, translation)
    try:
        program = _cel().compile(translation.source)
    except Exception as exc:
        raise _syntax_error(translation, source, exc) from exc
    bound = set(_MACRO_VAR.findall(translation.source))
    bare = frozenset(
        name
        for name in program.variables()
        if not name.startswith(_REF_PREFIX) and name not in bound
    )
    used = {name: fn for name, fn in _FUNCTIONS.items() if name in program.functions()}
    return Expression(
        source=source, _translation=translation, _program=program, _bare=bare, _functions=used
    )
