"""Finding and reading the project file: ``sea.toml``, or the ``[tool.sea]`` table of a
``pyproject.toml``, from the current directory upward.

The file is parsed with ``tomllib`` and checked against :data:`~sea.cli._project.settings.SETTINGS`
before any command uses it: unknown keys (with a did-you-mean), values of the wrong type and
secrets written in the file are errors located by line and column (SEA381-SEA384), all of
them reported at once, and nothing runs.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sea.cli._project.locate import locate
from sea.cli._project.settings import BY_KEY, SETTINGS, TABLES, Kind, Setting, is_secret
from sea.errors import Diagnostic, ProjectFileError, Severity

PROJECT_FILE = "sea.toml"
PYPROJECT_FILE = "pyproject.toml"
PROJECT_ENV = "SEA_PROJECT"
"""The environment variable that names the project file (as ``--project FILE``)."""

MAX_PROJECT_BYTES = 1_000_000
"""The largest project file read (a project file is a page of settings)."""

ENV_REFERENCE_HINT = 'write it as { env = "NAME" } and export NAME in the environment'


@dataclass(frozen=True, slots=True)
class Entry:
    """One setting as the file gives it."""

    setting: Setting
    value: Any
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Project:
    """A project file, read and checked."""

    path: Path
    """The file (absolute)."""
    entries: Mapping[str, Entry]
    """The settings it gives, by key."""
    prefix: tuple[str, ...] = ()
    """Where the settings are in the file: ``("tool", "sea")`` in a ``pyproject.toml``."""
    text: str = ""

    @property
    def root(self) -> Path:
        """The directory relative paths in the file are relative to."""
        return self.path.parent

    def where(self, entry: Entry) -> str:
        """``FILE:LINE``, how ``sea config`` names an entry's source."""
        return f"{self.path}:{entry.line}"

    def diagnostic(self, code: str, message: str, key: list[str],
                   hint: str | None = None) -> Diagnostic:
        """An error at ``key`` (its parts, without the prefix) in the file."""
        line, column = locate(self.text, [*self.prefix, *key])
        return Diagnostic(code, Severity.ERROR, message, file=str(self.path), line=line,
                          column=column, hint=hint)


def find_project(start: Path) -> Path | None:
    """The nearest ``sea.toml``, or ``pyproject.toml`` with a ``[tool.sea]`` table, in
    ``start`` or a directory above it (a ``sea.toml`` wins in one directory)."""
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / PYPROJECT_FILE
        if pyproject.is_file() and _has_sea_table(pyproject):
            return pyproject
    return None


def _has_sea_table(path: Path) -> bool:
    """Whether a ``pyproject.toml`` has a ``[tool.sea]`` table (one that cannot be read or
    parsed is looked at as a project file only if it seems to have one: its errors are
    then reported)."""
    try:
        with path.open("rb") as file:
            head = file.read(MAX_PROJECT_BYTES)
    except OSError:
        return False
    if b"sea" not in head:
        return False
    try:
        tool = tomllib.loads(head.decode("utf-8")).get("tool")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return b"[tool.sea]" in head or b"[tool.sea." in head
    return isinstance(tool, dict) and "sea" in tool


def project_file(given: str | None, ignore: bool, env: Mapping[str, str],
                 cwd: Path) -> Path | None:
    """The project file a command uses: ``--project FILE``, else ``$SEA_PROJECT``, else the
    nearest one (:func:`find_project`); none with ``--no-project``.

    Raises:
        ProjectFileError: the named file does not exist (SEA381).
    """
    if ignore:
        return None
    named = given if given is not None else env.get(PROJECT_ENV) or None
    if named is None:
        return find_project(cwd)
    path = (cwd / Path(named).expanduser())
    if not path.is_file():
        source = "--project" if given is not None else PROJECT_ENV
        raise ProjectFileError([Diagnostic(
            "SEA381", Severity.ERROR, f"{source} {named}: no such file", file=str(path),
            hint=f"give an existing {PROJECT_FILE}, or run `sea init` to make one")])
    return path


def load_project(path: Path) -> Project:
    """The project file at ``path``, read and checked.

    Raises:
        ProjectFileError: it cannot be read, is not TOML (SEA381), or has unknown keys,
            values of the wrong type or secrets (SEA382-SEA384).
    """
    path = path.resolve()
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProjectFileError([_syntax_error(path, exc)]) from None
    prefix: tuple[str, ...] = ()
    if path.name == PYPROJECT_FILE:
        tool = data.get("tool", {})
        data = tool.get("sea", {}) if isinstance(tool, dict) else {}
        prefix = ("tool", "sea")
    project = Project(path, {}, prefix, text)
    problems: list[Diagnostic] = []
    entries: dict[str, Entry] = {}
    _check(project, data, [], problems, entries)
    if problems:
        raise ProjectFileError(problems)
    return Project(path, entries, prefix, text)


def _read(path: Path) -> str:
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_PROJECT_BYTES + 1)
    except OSError as exc:
        raise ProjectFileError([Diagnostic(
            "SEA381", Severity.ERROR, f"cannot read the project file: {exc.strerror}",
            file=str(path))]) from None
    if len(raw) > MAX_PROJECT_BYTES:
        raise ProjectFileError([Diagnostic(
            "SEA381", Severity.ERROR,
            f"the project file has more than {MAX_PROJECT_BYTES:,} bytes", file=str(path),
            hint="a project file holds settings; keep prompts and data in their own files")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProjectFileError([Diagnostic(
            "SEA381", Severity.ERROR, f"the project file is not UTF-8 text ({exc.reason})",
            file=str(path))]) from None


def _syntax_error(path: Path, exc: tomllib.TOMLDecodeError) -> Diagnostic:
    """tomllib's message ends with ``(at line L, column C)``: that is the location."""
    import re

    message = str(exc)
    found = re.search(r"\(at line (\d+), column (\d+)\)$", message)
    if found is not None:
        message = message[: found.start()].rstrip()
    return Diagnostic(
        "SEA381", Severity.ERROR, f"not valid TOML: {message}", file=str(path),
        line=int(found.group(1)) if found else None,
        column=int(found.group(2)) if found else None,
        hint="see https://toml.io for the syntax; strings are quoted: name = \"local\"")


def _check(project: Project, data: Mapping[str, Any], table: list[str],
           problems: list[Diagnostic], entries: dict[str, Entry]) -> None:
    """Check ``data`` (the file's top level, or one of its tables) key by key."""
    for name, value in data.items():
        key = [*table, name]
        dotted = ".".join(key)
        setting = BY_KEY.get(dotted)
        if setting is not None:
            before = len(problems)
            _check_value(project, setting, value, key, problems)
            if len(problems) == before:
                line, column = locate(project.text, [*project.prefix, *key])
                entries[dotted] = Entry(setting, value, line, column)
        elif not table and name in TABLES:
            if isinstance(value, dict):
                _check(project, value, key, problems, entries)
            else:
                problems.append(project.diagnostic(
                    "SEA383", f"'{name}' is a table, not {_type_name(value)}", key,
                    hint=f"write its keys under a [{name}] header"))
        else:
            problems.append(project.diagnostic(
                "SEA382", f"unknown key '{dotted}' in the project file", key,
                hint=_unknown_hint(table, name)))


def _unknown_hint(table: list[str], name: str) -> str:
    from sea.lang.hints import did_you_mean

    prefix = ".".join(table)
    siblings = [s.key.rpartition(".")[2] for s in SETTINGS
                if s.key.rpartition(".")[0] == prefix]
    if not table:
        siblings += sorted(TABLES)
    close = did_you_mean(name, siblings)
    if close is not None:
        return f"did you mean '{close}'?"
    homes = [s.key for s in SETTINGS if s.key.rpartition(".")[2] == name]
    if homes:
        home = homes[0].rpartition(".")[0]
        return f"'{name}' belongs in [{home}]" if home else f"'{name}' is a top-level key"
    known = ", ".join(siblings)
    return f"the keys here are: {known}" if known else "remove it"


_EXPECTED: dict[Kind, str] = {
    Kind.TEXT: "a non-empty string",
    Kind.PATH: "a non-empty string (a path, relative to the project file)",
    Kind.STORE: 'a non-empty string (a SQLite file, e.g. ".sea/memory.sqlite", or a '
                "postgresql:// DSN)",
    Kind.PLAYBOOK: 'a non-empty string (a playbook\'s name, or a FILE.json)',
    Kind.MODEL: 'a non-empty string (a model spec, e.g. "local" or "openai:gpt-4o-mini")',
    Kind.PATHS: 'an array of strings, e.g. ["playbooks"]',
    Kind.NAMES: 'an array of strings, e.g. ["write_file"]',
    Kind.TOOLS: 'an array of strings, e.g. ["tools.py:TOOLS"]',
    Kind.INTEGER: "a whole number",
    Kind.NUMBER: "a number",
    Kind.OPTIONS: 'a table, e.g. { temperature = 0.2, api_key = { env = "OPENAI_API_KEY" } }',
    Kind.ASSIGNMENTS: 'a table of numbers and words, e.g. { max_steps = 1000, unlisted_exec '
                      '= "ask" }',
}


def _fits(kind: Kind, value: Any) -> bool:
    if kind in (Kind.TEXT, Kind.PATH, Kind.STORE, Kind.PLAYBOOK, Kind.MODEL):
        return isinstance(value, str) and bool(value.strip())
    if kind in (Kind.PATHS, Kind.NAMES, Kind.TOOLS):
        return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
    if kind is Kind.INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is Kind.NUMBER:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is Kind.ASSIGNMENTS:
        return isinstance(value, dict) and all(
            isinstance(v, int | str) and not isinstance(v, bool) for v in value.values())
    return isinstance(value, dict)


def _check_value(project: Project, setting: Setting, value: Any, key: list[str],
                 problems: list[Diagnostic]) -> None:
    if not _fits(setting.kind, value):
        problems.append(project.diagnostic(
            "SEA383", f"'{setting.key}' must be {_EXPECTED[setting.kind]}, not "
            f"{_type_name(value)}", key))
        return
    if setting.kind is Kind.OPTIONS:
        for name, option in value.items():
            _check_option(project, [*key, name], option, problems)


def _check_option(project: Project, key: list[str], value: Any,
                  problems: list[Diagnostic]) -> None:
    """A model option: any TOML value but a date, ``{ env = "NAME" }`` for a secret."""
    name = key[-1]
    if env_reference(value) is not None:
        return
    if isinstance(value, dict) and "env" in value:
        problems.append(project.diagnostic(
            "SEA383", f"'{'.'.join(key)}' refers to the environment as {{ env = \"NAME\" }} "
            "with nothing else in the table", key, hint=ENV_REFERENCE_HINT))
    elif isinstance(value, str) and is_secret(name):
        problems.append(project.diagnostic(
            "SEA384", f"'{'.'.join(key)}' looks like a secret and is written in the project "
            "file; a project file names secrets, it never holds them", key,
            hint=f'{name} = {{ env = "{_env_name(name)}" }}, and export {_env_name(name)} '
            "(remove the secret from the file, and from its history if it was committed)"))
    elif isinstance(value, dict):
        for inner, option in value.items():
            _check_option(project, [*key, inner], option, problems)
    elif isinstance(value, list):
        return
    elif not isinstance(value, str | int | float | bool):
        problems.append(project.diagnostic(
            "SEA383", f"'{'.'.join(key)}' is {_type_name(value)}; a model option is a "
            "string, number, boolean, array or table", key))


def env_reference(value: Any) -> str | None:
    """The variable's name when ``value`` is ``{ env = "NAME" }``."""
    if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str) \
            and value["env"].strip():
        return str(value["env"])
    return None


def _env_name(option: str) -> str:
    return option.upper()


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"the string {value!r}" if value.strip() else "an empty string"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "an array" if all(isinstance(v, str) for v in value) else \
            "an array with a value that is not a non-empty string"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"
