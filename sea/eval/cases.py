"""Eval sets: their files (YAML or JSONL), their cases, and the located errors of both.

A YAML set is a mapping ``{name, description?, defaults?, cases: [...]}`` (``defaults`` is
merged into each case, one level deep for ``persona`` and ``expect``); a JSONL set holds one
case object per line. Every case is checked against ``schemas/evalset.schema.json`` and every
problem of every file is reported together (:class:`~sea.errors.EvalSetError`), each with
its file, line, case id, field and fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import orjson

from sea.diagnostics import Diagnostic, Severity
from sea.errors import EvalSetError
from sea.jsonfile import CONFIG_FILES, ReadLimit
from sea.resources import schemas_dir

SCHEMA_FILE = "evalset.schema.json"
DEFAULT_PLAYBOOK = "meta_user"
UNREADABLE, SHAPE, SET = "SEA396", "SEA397", "SEA398"
_SET_KEYS = ("name", "description", "defaults", "cases")


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One case: whose memory, what the user says, what is expected.

    Attributes:
        id: Unique in its set.
        set: The set's name.
        turns: The inputs, one pulse each (the expectations judge the last).
        playbook: The entry playbook.
        persona: The persona and its seeded memory (the case's ``persona`` object).
        expect: The expectations (the case's ``expect`` object).
        tags: Free labels (``memory``, ``ja``...).
        lang: The language of the input, if given.
        file: Where the case was written, and its line.
        line: The case's line in ``file``.
    """

    id: str
    set: str
    turns: tuple[str, ...]
    playbook: str
    persona: Mapping[str, Any]
    expect: Mapping[str, Any]
    tags: tuple[str, ...] = ()
    lang: str | None = None
    file: str = ""
    line: int | None = None

    @property
    def key(self) -> str:
        """``set/id``: the case's name across sets (runs and baselines use it)."""
        return f"{self.set}/{self.id}"


@dataclass(slots=True)
class _Source:
    """A file's cases as read, each with its line and a way to locate a field's line."""

    path: str
    name: str
    cases: list[tuple[Any, int | None, Any]] = field(default_factory=list)
    """(case, its line, its YAML node or None)."""


@cache
def case_schema() -> dict[str, Any]:
    """The eval case's JSON Schema (``schemas/evalset.schema.json``)."""
    data: dict[str, Any] = orjson.loads((schemas_dir() / SCHEMA_FILE).read_bytes())
    return data


def load_sets(paths: Sequence[str | Path], *, limit: ReadLimit = CONFIG_FILES) -> list[EvalCase]:
    """Every case of every file (a directory stands for its ``*.yaml``, ``*.yml`` and
    ``*.jsonl`` files), checked.

    Raises:
        EvalSetError: any problem in any file, all of them located.
    """
    problems: list[Diagnostic] = []
    cases: list[EvalCase] = []
    for path in _files(paths, problems):
        source = _read(path, limit, problems)
        if source is not None:
            cases.extend(_cases(source, problems))
    seen: dict[str, EvalCase] = {}
    for case in cases:
        first = seen.setdefault(case.key, case)
        if first is not case:
            problems.append(_diag(SET, f"case id {case.id!r} is used twice in set {case.set!r} "
                                  f"(first at line {first.line})", case.file, case.line,
                                  "/id", "give each case of a set its own id", case.id))
    if not cases and not problems:
        problems.append(_diag(SET, "no cases in the eval sets given", ", ".join(map(str, paths)),
                              None, "", "add cases (a YAML `cases:` list or JSONL lines)"))
    if problems:
        raise EvalSetError(problems)
    return cases


def _files(paths: Sequence[str | Path], problems: list[Diagnostic]) -> list[Path]:
    found: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            found += sorted(p for p in path.iterdir()
                            if p.suffix in (".yaml", ".yml", ".jsonl") and p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            problems.append(_diag(UNREADABLE, "no such file or directory", str(given), None, "",
                                  "give an eval set file (.yaml, .yml, .jsonl) or a directory"))
    return found


def _read(path: Path, limit: ReadLimit, problems: list[Diagnostic]) -> _Source | None:
    where = str(path)
    if path.suffix not in (".yaml", ".yml", ".jsonl"):
        problems.append(_diag(UNREADABLE, "an eval set is a .yaml, .yml or .jsonl file", where,
                              None, "", "rename the file or convert it"))
        return None
    try:
        size = path.stat().st_size
        if size > limit.max_bytes:
            problems.append(_diag(UNREADABLE, f"the file is {size} bytes, over the limit of "
                                  f"{limit.max_bytes}", where, None, "",
                                  "split the set into several files"))
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(_diag(UNREADABLE, f"cannot be read: {exc}", where, None, "",
                              "give a readable UTF-8 file"))
        return None
    if path.suffix == ".jsonl":
        return _jsonl(where, path.stem, text, problems)
    return _yaml(where, path.stem, text, problems)


def _jsonl(where: str, name: str, text: str, problems: list[Diagnostic]) -> _Source:
    source = _Source(where, name)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            source.cases.append((orjson.loads(line), number, None))
        except orjson.JSONDecodeError as exc:
            problems.append(_diag(UNREADABLE, f"not JSON: {exc}", where, number, "",
                                  "write one JSON object per line"))
    return source


def _yaml(where: str, name: str, text: str, problems: list[Diagnostic]) -> _Source | None:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.append(_diag(UNREADABLE, f"not YAML: {getattr(exc, 'problem', None) or exc}",
                              where, mark.line + 1 if mark else None, "",
                              "fix the YAML syntax (indentation, quotes, colons)"))
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        problems.append(_diag(SHAPE, "a YAML eval set is a mapping with a `cases` list", where,
                              1, "", "write `name: ...` and `cases:` with one `- id: ...` each"))
        return None
    for key in data:
        if key not in _SET_KEYS:
            problems.append(_diag(SHAPE, f"unknown set field {key!r}", where,
                                  _line(node, [str(key)], key=True), f"/{key}",
                                  f"the fields of a set are {', '.join(_SET_KEYS)}"))
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append(_diag(SHAPE, "`defaults` must be a mapping of case fields", where,
                              _line(node, ["defaults"]), "/defaults", "e.g. defaults: {lang: en}"))
        defaults = {}
    source = _Source(where, str(data.get("name") or name))
    for index, case in enumerate(data["cases"]):
        path = ["cases", str(index)]
        merged = _merged(defaults, case) if isinstance(case, dict) else case
        found = _line(node, path)
        source.cases.append((merged, found[0] if found else None, (node, path)))
    return source


def _merged(defaults: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    for key, value in case.items():
        base = defaults.get(key)
        merged[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) \
            else value
    if "turns" in case:
        merged.pop("input", None)
    if "input" in case:
        merged.pop("turns", None)
    return merged


def _cases(source: _Source, problems: list[Diagnostic]) -> Iterable[EvalCase]:
    validator = jsonschema.Draft202012Validator(case_schema())
    for data, line, located in source.cases:
        case_id = data.get("id") if isinstance(data, dict) else None
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        for error in _leaves(errors):
            inner = [str(p) for p in error.absolute_path]
            at: int | tuple[int, int] | None = line
            if located is not None:
                node, base = located
                at = _line(node, [*base, *inner]) or line
            problems.append(_diag(SHAPE, _message(error), source.path, at,
                                  "/" + "/".join(inner), _hint(error),
                                  case_id if isinstance(case_id, str) else None))
        if errors:
            continue
        bad = _regex_problems(data)
        for pointer, message in bad:
            problems.append(_diag(SET, message, source.path, line, pointer,
                                  "write a valid (Python) regular expression", data["id"]))
        if bad:
            continue
        persona = data.get("persona") or {}
        yield EvalCase(
            id=data["id"], set=source.name,
            turns=tuple(data["turns"]) if "turns" in data else (data["input"],),
            playbook=data.get("playbook", DEFAULT_PLAYBOOK), persona=persona,
            expect=data.get("expect") or {}, tags=tuple(data.get("tags") or ()),
            lang=data.get("lang"), file=source.path, line=line,
        )


def _leaves(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """One error per mistake: a ``oneOf`` is explained by its deepest context, except the
    case's own input/turns choice, which is said as such."""
    shown: list[jsonschema.ValidationError] = []
    for error in errors:
        if error.validator == "oneOf" and error.context and len(error.absolute_path) > 0:
            best = jsonschema.exceptions.best_match(iter(error.context))
            shown.append(best if best is not None else error)
        else:
            shown.append(error)
    return shown


def _message(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path) or "the case"
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message)
        return f"{where}: unknown field {extra[0]!r}" if extra else f"{where}: {error.message}"
    if error.validator == "oneOf" and not error.absolute_path:
        return "the case needs exactly one of `input` (one text) or `turns` (a list of texts)"
    if error.validator == "required":
        return f"{where}: {error.message}"
    return f"{where}: {error.message}"


def _hint(error: jsonschema.ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        return "the fields here are " + ", ".join(known)
    if error.validator == "enum":
        choices: Any = error.validator_value
        return "use one of " + ", ".join(str(v) for v in choices)
    if error.validator == "oneOf" and not error.absolute_path:
        return 'e.g. "input": "Hi!" or "turns": ["Hi!", "What did I just say?"]'
    if error.validator == "type":
        return f"write a {error.validator_value}"
    if error.validator == "required":
        return "add the missing field"
    if error.validator == "pattern" and error.absolute_path and \
            error.absolute_path[-1] == "id":
        return "an id is letters, digits and _ . : - (no spaces)"
    description = schema.get("description")
    return str(description) if description else "see schemas/evalset.schema.json"


def _regex_problems(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    expect = data.get("expect") or {}
    patterns: list[tuple[str, str]] = []
    if "regex" in (expect.get("reply") or {}):
        patterns.append(("/expect/reply/regex", expect["reply"]["regex"]))
    for index, call in enumerate(expect.get("tool_calls") or ()):
        if call.get("match") == "pattern":
            for name, value in (call.get("args") or {}).items():
                patterns.append((f"/expect/tool_calls/{index}/args/{name}", str(value)))
    found = []
    for pointer, pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            found.append((pointer, f"{pointer[1:].replace('/', '.')}: not a regex: {exc}"))
    return found


def _line(node: Any, path: Sequence[str], *, key: bool = False) -> tuple[int, int] | None:
    """The 1-based line and column of the YAML node at ``path`` (its nearest ancestor's
    when absent); with ``key``, of the last part's key rather than its value."""
    import yaml

    current = node
    for index, part in enumerate(path):
        if isinstance(current, yaml.MappingNode):
            last = key and index == len(path) - 1
            nxt = next((k if last else v for k, v in current.value if str(k.value) == part),
                       None)
        elif isinstance(current, yaml.SequenceNode) and part.isdigit() and \
                int(part) < len(current.value):
            nxt = current.value[int(part)]
        else:
            nxt = None
        if nxt is None:
            break
        current = nxt
    mark = current.start_mark
    return int(mark.line) + 1, int(mark.column) + 1


def _diag(code: str, message: str, file: str | None, where: int | tuple[int, int] | None,
          pointer: str, hint: str, case_id: str | None = None) -> Diagnostic:
    """A located problem; ``where`` is a line, or a line and column."""
    text = f"case {case_id!r}: {message}" if case_id else message
    line, column = where if isinstance(where, tuple) else (where, None)
    return Diagnostic(code, Severity.ERROR, text, file=file, pointer=pointer, line=line,
                      column=column, hint=hint, node_id=case_id)
