"""Where each option of a command comes from: a flag, else a ``SEA_*`` environment
variable, else the project file, else the built-in default.

The rule is applied once for every command, around argparse: before parsing,
:func:`prepare` swaps the default of each option a setting fills for a marker, so that
after parsing an option the command line did not give is known; :func:`resolve` then fills
it from the environment, the project file or the default it had, converting the value with
the option's own ``type`` and ``choices`` (the checks and the messages of the flag), and
records each option's source for ``sea config``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sea.cli._project.settings import SETTINGS, Kind, Setting, is_secret
from sea.errors import Diagnostic, ProjectFileError, Severity, UsageError

if TYPE_CHECKING:  # the file is read only by a command that takes a setting
    from sea.cli._project.load import Entry, Project

COMMAND_ATTR = "_sea_command"
"""The attribute the parsed arguments carry: the command's words after ``sea``."""

HIDDEN = "(hidden)"
"""How ``sea config`` shows a secret given on the command line."""

_MODEL_FILES = ("scripted:", "local:", "replay:")


class _Unset:
    """The default of an option a setting fills, until it is resolved."""

    def __repr__(self) -> str:
        return "<not given>"


UNSET: Any = _Unset()


@dataclass(frozen=True, slots=True)
class Slot:
    """An option of one command that a setting fills."""

    setting: Setting
    action: argparse.Action
    default: Any
    """The option's built-in default."""

    @property
    def option(self) -> str:
        """How the command line spells the option (``--db``, or ``PLAYBOOK``)."""
        return self.action.option_strings[0] if self.action.option_strings \
            else (self.action.metavar if isinstance(self.action.metavar, str)
                  else self.action.dest.upper())


@dataclass(frozen=True, slots=True)
class Resolved:
    """One setting of a command: its value as ``sea config`` shows it, and its source."""

    setting: Setting
    option: str
    value: Any
    source: str
    """``flag --db``, ``env SEA_DB``, ``FILE:LINE`` or ``default``."""


@dataclass(slots=True)
class Resolution:
    """What :func:`resolve` found: the project file and every setting's source."""

    command: str
    project: Path | None
    settings: list[Resolved] = field(default_factory=list)


def add_project_arguments(parser: argparse.ArgumentParser) -> None:
    """``--project FILE`` and ``--no-project``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--project", metavar="FILE",
        help="the project file (default: $SEA_PROJECT, else the nearest sea.toml, or "
        "pyproject.toml with [tool.sea], from the current directory upward)")
    group.add_argument("--no-project", action="store_true",
                       help="use no project file (flags, SEA_* variables and defaults only)")


def parsers(parser: argparse.ArgumentParser,
            words: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser under ``parser`` with its command's words (``memory recent``)."""
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias
                    continue
                seen.add(id(sub))
                yield " ".join((*words, name)), sub
                yield from parsers(sub, (*words, name))


def prepare(parser: argparse.ArgumentParser, *, lenient: bool = False) -> dict[str, list[Slot]]:
    """Mark the options settings fill in every command of ``parser``, and give those
    commands ``--project`` and ``--no-project``; the slots by command. ``lenient`` makes
    every option optional (``sea config`` shows a command's settings without its
    required options)."""
    found: dict[str, list[Slot]] = {}
    for command, sub in parsers(parser):
        actions = {a.dest: a for a in sub._actions
                   if not a.required and a.help != argparse.SUPPRESS}  # not a hidden old spelling
        slots = []
        for setting in SETTINGS:
            action = actions.get(setting.dest)
            if action is not None and setting.applies_to(command):
                slots.append(Slot(setting, action, action.default))
                action.default = None if isinstance(action, argparse._AppendAction) else UNSET
        if lenient:
            for action in sub._actions:
                action.required = False
        if slots:
            found[command] = slots
            add_project_arguments(sub)
            sub.set_defaults(**{COMMAND_ATTR: command})
    return found


def resolve(args: argparse.Namespace, slots: Mapping[str, list[Slot]],
            env: Mapping[str, str], cwd: Path, *, strict: bool = True) -> Resolution | None:
    """Fill the options of the parsed command that the command line did not give, from
    ``env``, the project file and the defaults; ``None`` when no setting applies.

    ``strict`` (a command that runs) requires the environment variables the file refers to,
    and makes the directory of a store from the environment or the file (as for the
    default store; a ``--db`` flag's is never made, so a mistyped path creates nothing).

    Raises:
        ProjectFileError: the project file is invalid, or a value in it does not fit its
            option (located).
        UsageError: an environment variable's value does not fit its option (SEA383).
    """
    command = getattr(args, COMMAND_ATTR, None)
    if command is None or command not in slots:
        return None
    from sea.cli._project.load import load_project, project_file

    path = project_file(getattr(args, "project", None), getattr(args, "no_project", False),
                        env, cwd)
    project = None if path is None else load_project(path)
    resolution = Resolution(command, None if project is None else project.path)
    problems: list[Diagnostic] = []
    for slot in slots[command]:
        given = getattr(args, slot.setting.dest)
        if (given is not None) if isinstance(slot.action, argparse._AppendAction) \
                else given is not UNSET:
            resolution.settings.append(
                Resolved(slot.setting, slot.option, _shown(given, slot.setting, None),
                         f"flag {slot.option}"))
            continue
        value, shown, source = _pick(slot, env, cwd, project, problems, strict)
        setattr(args, slot.setting.dest, value)
        resolution.settings.append(Resolved(slot.setting, slot.option, shown, source))
    if problems:
        raise ProjectFileError(problems)
    if strict:
        for found in resolution.settings:
            if found.setting.kind is Kind.STORE and found.source not in ("default", "flag --db") \
                    and isinstance(found.value, str):
                _make_directory(found.value, f"{found.source}: the store {found.value}")
    return resolution


def _pick(slot: Slot, env: Mapping[str, str], cwd: Path, project: Project | None,
          problems: list[Diagnostic], strict: bool) -> tuple[Any, Any, str]:
    """The value of an option the command line did not give, how it is shown, its source."""
    setting = slot.setting
    variable = setting.env
    if variable is not None and env.get(variable, "").strip():
        raw = env[variable]
        value = _convert(slot, _from_env(setting.kind, raw), cwd,
                         lambda message, *_: UsageError(
                             f"environment variable {variable}={raw!r}: {message}",
                             code="SEA383"))
        return value, _shown(value, setting, None), f"env {variable}"
    entry = None if project is None else project.entries.get(setting.key)
    if entry is None or project is None:
        default = list(slot.default) if isinstance(slot.default, list) else slot.default
        return default, _shown(default, setting, None), "default"
    raw_value = entry.value
    if setting.kind is Kind.OPTIONS:
        raw_value = _with_env(project, entry, env, problems, strict)

    def located(message: str, *inner: str) -> ProjectFileError:
        if inner:  # a key of the setting's table: at its own line
            key = ".".join((setting.key, *inner))
            return ProjectFileError([project.diagnostic(
                "SEA383", f"'{key}': {message}", [*setting.key.split("."), *inner])])
        return ProjectFileError([_at(project, entry, "SEA383", f"'{setting.key}': {message}")])

    try:
        value = _convert(slot, raw_value, project.root, located)
    except ProjectFileError as exc:
        problems.extend(exc.diagnostics)
        return slot.default, None, project.where(entry)
    return value, _shown(value, setting, entry.value), project.where(entry)


def _at(project: Project, entry: Entry, code: str, message: str,
        hint: str | None = None) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, file=str(project.path), line=entry.line,
                      column=entry.column, hint=hint)


def _from_env(kind: Kind, raw: str) -> Any:
    """An environment variable's text as the file's value of that kind."""
    if kind is Kind.PATHS:
        return [part for part in raw.split(os.pathsep) if part.strip()]
    if kind in (Kind.NAMES, Kind.TOOLS):
        return [part.strip() for part in raw.split(",") if part.strip()]
    if kind is Kind.ASSIGNMENTS:
        pairs = (part.partition("=") for part in raw.split(",") if part.strip())
        return {name.strip(): value.strip() for name, _, value in pairs}
    return raw.strip()


def _with_env(project: Project, entry: Entry, env: Mapping[str, str],
              problems: list[Diagnostic], strict: bool) -> dict[str, Any]:
    """A table of model options with each ``{ env = "NAME" }`` replaced by NAME's value
    (by the reference itself when not ``strict``: ``sea config`` never reads a secret)."""
    from sea.cli._project.load import env_reference

    def filled(value: Any) -> Any:
        name = env_reference(value)
        if name is not None:
            if name in env:
                return env[name] if strict else value
            if strict:
                problems.append(_at(
                    project, entry, "SEA385",
                    f"'{entry.setting.key}' refers to the environment variable {name}, "
                    "which is not set", hint=f"export {name}=... before running sea"))
            return value
        if isinstance(value, dict):
            return {k: filled(v) for k, v in value.items()}
        return value

    return {k: filled(v) for k, v in entry.value.items()}


def _convert(slot: Slot, raw: Any, base: Path,
             failure: Callable[..., Exception]) -> Any:
    """``raw`` (a file's or an environment variable's value) as the parsed option's value:
    paths made absolute against ``base``, then the option's ``choices`` and ``type``
    (``failure(message)`` makes the error; ``failure(message, name)`` for the key ``name``
    of a table of assignments)."""
    kind = slot.setting.kind
    if kind is Kind.OPTIONS:
        return list(raw.items())
    if kind is Kind.ASSIGNMENTS:
        return [_one(slot, f"{name}={value}", base, _for_key(failure, name))
                for name, value in raw.items()]
    if kind in (Kind.PATHS, Kind.NAMES, Kind.TOOLS):
        return [_one(slot, item, base, failure) for item in raw]
    return _one(slot, raw, base, failure)


def _for_key(failure: Callable[..., Exception], name: str) -> Callable[[str], Exception]:
    """``failure`` for the key ``name`` of a table."""
    return lambda message: failure(message, name)


def _one(slot: Slot, raw: Any, base: Path, failure: Callable[[str], Exception]) -> Any:
    kind = slot.setting.kind
    text = str(raw)
    if kind in (Kind.PATH, Kind.PATHS) or kind is Kind.STORE and "://" not in text:
        text = str(base / Path(text).expanduser())
    elif kind is Kind.PLAYBOOK and text.endswith(".json"):
        text = str(base / Path(text).expanduser())
    elif kind is Kind.MODEL:
        text = _model_spec(text, base)
    elif kind is Kind.TOOLS:
        module, colon, attr = text.partition(":")
        if module.endswith((".py", ".json")):  # a module's file, or sea validate's catalogue
            text = str(base / Path(module).expanduser()) + colon + attr
    action = slot.action
    if action.choices is not None and text not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise failure(f"expected one of {choices}, got {text!r}")
    if callable(action.type):
        try:
            return action.type(text)
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise failure(str(exc)) from None
    return text


def _model_spec(spec: str, base: Path) -> str:
    """A model spec whose file (``scripted:FILE``...) is relative to ``base``."""
    for prefix in _MODEL_FILES:
        if spec.startswith(prefix) and spec[len(prefix):].strip():
            return prefix + str(base / Path(spec[len(prefix):]).expanduser())
    return spec


def _make_directory(location: str, source: str) -> None:
    if "://" in location:
        return
    directory = Path(location).expanduser().parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{source}: cannot create its directory {directory}: {exc.strerror}",
            code="SEA383") from None


def _shown(value: Any, setting: Setting, written: Any) -> Any:
    """A value as ``sea config`` shows it: files by path, model options as a table with
    each secret as its ``{ env = ... }`` reference (from the file) or hidden (a flag's)."""
    if setting.kind is Kind.OPTIONS:
        if isinstance(written, dict):
            return written
        return {k: HIDDEN if is_secret(k) and isinstance(v, str) else v
                for k, v in (value or [])}
    if setting.kind is Kind.ASSIGNMENTS:
        return dict(value or [])
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return _plain(value)


def _plain(value: Any) -> Any:
    """A parsed option's value as JSON: a file option by its path, a path as text."""
    path = getattr(value, "path", value)
    return str(path) if isinstance(path, Path) else value
