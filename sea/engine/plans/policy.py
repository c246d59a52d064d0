"""What the host allows plans to do in its workspace: a frozen dataclass with safe defaults.

Every limit is the host's to change (``PlanPolicy(run_allowlist=frozenset({"pytest"}),
run_path=os.environ["PATH"])``); nothing is read from the environment.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from saimemory.plans import RISKS, Risk

DEFAULT_FORBIDDEN_EXTENSIONS = frozenset({
    ".exe", ".dll", ".so", ".dylib", ".bin", ".com", ".msi", ".bat", ".cmd", ".ps1",
    ".pem", ".key", ".p12", ".pfx", ".keystore",
})
"""Executables, libraries and key files: never created, written, read or deleted by a plan."""

DEFAULT_PROTECTED_NAMES = frozenset({".git", ".env"})
"""Names a plan's path may not go through (a repository's metadata, a secrets file)."""

RISK_WEIGHTS: dict[Risk, float] = {"low": 0.1, "medium": 0.4, "high": 1.0}
"""A spec's weight in a preview's risk score (the highest weight of the specs shown)."""


@dataclass(frozen=True, slots=True)
class PlanPolicy:
    """The host's limits for plans.

    Attributes:
        forbidden_extensions: File suffixes (lower case, with the dot) no spec may touch.
        protected_names: Path components no spec may go through.
        max_content_bytes: The most bytes (UTF-8) a ``create``/``write`` may put in a file.
        large_file_bytes: Overwriting or deleting a file this large or larger is high risk.
        medium_content_bytes: A ``create``/``write`` of this many bytes or more is at least
            medium risk (below it, a new file is low risk; overwriting is always medium).
        max_read_bytes: The largest file a ``read`` spec reads.
        max_diff_bytes: Files (old or new) larger than this get no line diff in previews.
        max_diff_chars: The longest diff text kept per spec (cut beyond, marked truncated).
        max_diff_lines: The most lines (old and new together) of the part of a file a spec
            changes that get a line diff in previews; a larger changed part gets none, its
            lines added and removed are counted instead (a line diff takes time quadratic
            in these lines at worst). The lines a file keeps at its start and end are not
            counted.
        max_output_chars: The most characters of a read file or of a command's output kept.
        max_specs: The most specs a plan may have.
        run_allowlist: The commands ``run`` specs may start (``argv[0]`` exactly as listed: a
            name looked up in ``run_path`` once, when the policy is built, or an absolute
            path). Empty: every ``run`` spec is invalid.
        run_path: The folders (joined by ``os.pathsep``, as ``PATH``) the names of
            ``run_allowlist`` and ``run_wrapper`` are looked up in when the policy is built,
            and the ``PATH`` commands get (unless ``run_env`` sets one). Relative entries are
            skipped. Default: ``os.defpath``; a host passes its own ``PATH`` to use it.
        run_env: The whole environment of a command besides ``PATH`` (nothing of the host's
            own environment is passed on unless it is here). Default: empty.
        run_wrapper: A sandbox put in front of every command (``("bwrap", "--ro-bind", "/",
            "/", "--bind", WORKSPACE, WORKSPACE, "--")``, ``("firejail", "--quiet")``...):
            the command runs as ``[*run_wrapper, command's absolute path, *arguments]``. Its
            first word, unless absolute, is looked up in ``run_path`` when the policy is
            built. SEA checks the arguments it can see; a command that builds paths of its
            own (a test suite, a script) is confined only by such a sandbox.
        run_timeout_s: How long a command may run before it is killed with every process
            it started (its process group; it then fails).
        auto_approve_up_to: The highest risk an approval by ``ai`` or ``system`` (a host
            policy rather than a person) may cover; ``None``: only a person approves.
            High-risk specs always need a person, whatever this says.
    """

    forbidden_extensions: frozenset[str] = DEFAULT_FORBIDDEN_EXTENSIONS
    protected_names: frozenset[str] = DEFAULT_PROTECTED_NAMES
    max_content_bytes: int = 1024 * 1024
    large_file_bytes: int = 256 * 1024
    medium_content_bytes: int = 4096
    max_read_bytes: int = 10 * 1024 * 1024
    max_diff_bytes: int = 1024 * 1024
    max_diff_chars: int = 20_000
    max_diff_lines: int = 4000
    max_output_chars: int = 20_000
    max_specs: int = 100
    run_allowlist: frozenset[str] = frozenset()
    run_path: str = os.defpath
    run_env: Mapping[str, str] = field(default_factory=dict, hash=False)
    run_wrapper: tuple[str, ...] = ()
    run_timeout_s: float = 60.0
    auto_approve_up_to: Risk | None = None
    run_commands: Mapping[str, str] = field(init=False, hash=False, compare=False, repr=False)
    """Each allow-listed command found when the policy was built → its absolute path (the
    binary a ``run`` spec starts, whatever the ``PATH`` or the workspace hold later)."""

    def __post_init__(self) -> None:
        for name in ("max_content_bytes", "large_file_bytes", "medium_content_bytes",
                     "max_read_bytes", "max_diff_bytes", "max_diff_chars", "max_diff_lines",
                     "max_output_chars", "max_specs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"PlanPolicy.{name} must be an integer >= 1, got {value!r}")
        if not self.run_timeout_s > 0:
            raise ValueError(f"PlanPolicy.run_timeout_s must be > 0, got {self.run_timeout_s!r}")
        if self.auto_approve_up_to is not None and self.auto_approve_up_to not in RISKS:
            raise ValueError(
                f"PlanPolicy.auto_approve_up_to must be one of {RISKS} or None, "
                f"got {self.auto_approve_up_to!r}")
        self._fix_commands()
        for suffix in self.forbidden_extensions:
            if not suffix.startswith(".") or suffix != suffix.lower():
                raise ValueError(
                    f"PlanPolicy.forbidden_extensions holds {suffix!r}: give lower-case "
                    "suffixes with their dot, like '.exe'")

    @property
    def run_search_path(self) -> str:
        """The absolute entries of ``run_path`` (the ``PATH`` a command gets)."""
        return os.pathsep.join(_absolute_dirs(self.run_path))

    def _fix_commands(self) -> None:
        """Check the ``run_*`` fields and look the allow-listed names up, once."""
        env = dict(self.run_env)
        for name, value in env.items():
            if (not isinstance(name, str) or not isinstance(value, str) or not name
                    or "=" in name or "\0" in name or "\0" in value):
                raise ValueError(f"PlanPolicy.run_env holds {name!r}: {value!r}; give names "
                                 "without '=' and text values")
        object.__setattr__(self, "run_env", MappingProxyType(env))
        wrapper = tuple(self.run_wrapper)
        if wrapper:
            found = _lookup(wrapper[0], self.run_path)
            if found is None:
                raise ValueError(f"PlanPolicy.run_wrapper: {wrapper[0]!r} was not found in "
                                 f"run_path ({self.run_path!r}); give its absolute path")
            wrapper = (found, *wrapper[1:])
        object.__setattr__(self, "run_wrapper", wrapper)
        commands: dict[str, str] = {}
        for name in self.run_allowlist:
            if "/" in name and not os.path.isabs(name):
                raise ValueError(f"PlanPolicy.run_allowlist holds {name!r}: give a command "
                                 "name (looked up in run_path) or an absolute path")
            found = _lookup(name, self.run_path)
            if found is not None:
                commands[name] = found
        object.__setattr__(self, "run_commands", MappingProxyType(commands))


def _absolute_dirs(path: str) -> list[str]:
    return [entry for entry in path.split(os.pathsep) if os.path.isabs(entry)]


def _lookup(name: str, path: str) -> str | None:
    """The absolute path of executable ``name`` (itself when absolute) in ``path``'s
    absolute folders, or ``None``."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    if "/" in name or not name:
        return None
    folders = os.pathsep.join(_absolute_dirs(path))
    found = shutil.which(name, path=folders) if folders else None
    return os.path.abspath(found) if found is not None else None
