"""What the host allows plans to do in its workspace: a frozen dataclass with safe defaults.

Every limit is the host's to change (``PlanPolicy(run_allowlist=frozenset({"pytest"}))``);
nothing is read from the environment.
"""

from __future__ import annotations

from dataclasses import dataclass

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
            name looked up on the process's PATH, or an absolute path). Empty: every ``run``
            spec is invalid.
        run_timeout_s: How long a command may run before it is killed (it then fails).
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
    run_timeout_s: float = 60.0
    auto_approve_up_to: Risk | None = None

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
        for suffix in self.forbidden_extensions:
            if not suffix.startswith(".") or suffix != suffix.lower():
                raise ValueError(
                    f"PlanPolicy.forbidden_extensions holds {suffix!r}: give lower-case "
                    "suffixes with their dot, like '.exe'")
