"""The command line of a ``run`` spec, checked where SEA can see it.

A spec's content is split into words like a POSIX shell would (but never given to one), its
first word must be on the host's allow-list and is started by the absolute path that name
had when the policy was built (:attr:`PlanPolicy.run_commands`), and no argument may name a
path outside the workspace: not the word itself, the value of an ``--option=value`` or
``NAME=value``, nor the value glued to a short option (``-C../x``). Paths are resolved from
the command's folder with the links they go through, so a folder swapped for a link out of
the workspace is caught too. A home folder (``~``) is always outside. What a command does
with paths it builds itself is beyond this check: that is the host's sandbox
(:attr:`PlanPolicy.run_wrapper`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

from saimemory.plans import ActionSpec
from sea.engine.plans.policy import PlanPolicy


def command_argv(
    spec: ActionSpec, policy: PlanPolicy, refuse: Callable[[str], None], *, root: Path,
    cwd: Path,
) -> list[str]:
    """The words of a ``run`` spec's command line, or ``[]`` after ``refuse(issue)`` for
    each reason it may not run (``cwd``: the folder it runs in, inside ``root``)."""
    try:
        argv = shlex.split(spec.content or "")
    except ValueError as exc:
        refuse(f"the command line cannot be split into words: {exc}")
        return []
    if not argv:
        refuse("run needs content: the command line to run")
        return []
    if not policy.run_allowlist:
        refuse("run specs need the host's allow-list of commands, and none is set; "
               "ask the host to allow the command")
        return []
    if argv[0] not in policy.run_allowlist:
        refuse(f"command {argv[0]!r} is not on the host's allow-list "
               f"({', '.join(sorted(policy.run_allowlist))})")
        return []
    if argv[0] not in policy.run_commands:
        refuse(f"command {argv[0]!r} is on the host's allow-list but was not found in its "
               f"run path ({policy.run_path!r}) when the policy was built; ask the host to "
               "install it or to list it by its absolute path")
        return []
    fine = True
    top = Path(os.path.realpath(root))
    for word in argv[1:]:
        for path in _paths_in(word):
            why = _outside(path, top, cwd)
            if why:
                refuse(f"argument {word!r} names a path outside the workspace ({why}); a "
                       "command may be given paths inside the workspace only")
                fine = False
                break
    return argv if fine else []


def launch_argv(argv: list[str], policy: PlanPolicy) -> list[str]:
    """What starts ``argv`` (checked by :func:`command_argv`): the host's sandbox wrapper,
    the command's absolute path fixed when the policy was built, and its arguments."""
    return [*policy.run_wrapper, policy.run_commands[argv[0]], *argv[1:]]


def launch_env(policy: PlanPolicy) -> dict[str, str]:
    """The command's whole environment: the host's ``run_env``, with ``PATH`` the policy's
    absolute run path unless ``run_env`` sets it."""
    return {"PATH": policy.run_search_path, **policy.run_env}


def _paths_in(word: str) -> Iterator[str]:
    """What in ``word`` a command may take for a path."""
    yield word
    if "=" in word:
        yield word.partition("=")[2]
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        yield word[2:]


def _outside(path: str, top: Path, cwd: Path) -> str:
    """Why ``path`` (from ``cwd``) is outside ``top``, or ``""`` when it is inside."""
    if not path:
        return ""
    if path.startswith("~"):
        return f"{path.split('/')[0]} is a home folder"
    if "\0" in path:
        return "it holds a NUL character"
    try:
        real = Path(os.path.realpath(os.path.join(cwd, path)))
    except (OSError, ValueError):
        real = Path(os.path.normpath(os.path.join(cwd, path)))
    if real == top or real.is_relative_to(top):
        return ""
    return f"{path} is {real}"
