"""Specialized: the guidelines of a task's stage, bundled as one text file per stage.

Stages (seed 003): ``PLANNING``, ``EXECUTION``, ``REVIEW``, ``SUMMARY``, ``EXTRACTION``,
``GENERATION`` (content to be written, the ``generate_content`` mode).
The stage of a call whose pattern holds Specialized is, in order:

1. the node's ``specialized`` field: a stage name (any case, ``"planning"``) or the path of
   a text file of the author's own guidelines;
2. else, when the persona has a current plan that is active, the stage of its status
   (:data:`PLAN_STAGES`: proposed → PLANNING, pending_review → REVIEW, approved, scheduled
   and executing → EXECUTION; a completed or aborted plan is not active);
3. else, when the node took the pulse's intent's pattern, the stage the intent implies
   (:func:`sea.llm.intent.intent_stage`: a plan request → PLANNING...);
4. else none: the Specialized part is then only the node's own prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from saimemory.plans import PlanStatus
from sea.errors import UsageError
from sea.resources import guidelines_dir

Stage = Literal["PLANNING", "EXECUTION", "REVIEW", "SUMMARY", "EXTRACTION", "GENERATION"]
STAGES: tuple[Stage, ...] = get_args(Stage)
"""Every stage, in the order a task goes through them."""

PLAN_STAGES: Mapping[PlanStatus, Stage | None] = {
    "proposed": "PLANNING",
    "pending_review": "REVIEW",
    "approved": "EXECUTION",
    "scheduled": "EXECUTION",
    "executing": "EXECUTION",
    "completed": None,
    "aborted": None,
}
"""The stage of a current plan, by its status (None: the plan is not active)."""

MAX_GUIDELINE_BYTES = 64 * 1024
"""The largest guidelines file a node may name."""


def stage_named(text: str) -> Stage | None:
    """The stage ``text`` names (any case), or None when it names none."""
    upper = text.strip().upper()
    for stage in STAGES:
        if stage == upper:
            return stage
    return None


def plan_stage(status: str | None) -> Stage | None:
    """The stage of a current plan of this status (None: no plan, or not active)."""
    for known, stage in PLAN_STAGES.items():
        if known == status:
            return stage
    return None


@dataclass(frozen=True, slots=True)
class Specialized:
    """The Specialized part of one call: where it came from and its text.

    Attributes:
        label: The stage (``PLANNING``...) or ``file:PATH`` for an author's file.
        text: The guidelines.
        source: ``node`` (the node named it), ``plan`` (the current plan's status) or
            ``intent`` (the pulse's intent).
    """

    label: str
    text: str
    source: Literal["node", "plan", "intent"]


@dataclass(slots=True)
class Guidelines:
    """Reads guidelines: the bundled ones by stage, an author's by path (cached).

    Args:
        directory: Where ``<stage>.txt`` files live (default: the bundled guidelines).
        root: The directory a relative path in a node's ``specialized`` is read from
            (default: the process's working directory).
    """

    directory: Path | None = None
    root: Path | None = None
    _cache: dict[str, str] = field(default_factory=dict, repr=False)

    def stage_text(self, stage: Stage) -> str:
        """The guidelines of ``stage``.

        Raises:
            UsageError: the guidelines file is missing or unreadable.
        """
        directory = self.directory if self.directory is not None else guidelines_dir()
        return self._read(directory / f"{stage.lower()}.txt")

    def for_node(self, value: str) -> Specialized:
        """The Specialized part a node's ``specialized`` field names.

        Raises:
            UsageError: a path that is not a readable UTF-8 text file of at most
                :data:`MAX_GUIDELINE_BYTES`.
        """
        stage = stage_named(value)
        if stage is not None:
            return Specialized(stage, self.stage_text(stage), "node")
        path = Path(value).expanduser()
        if not path.is_absolute() and self.root is not None:
            path = self.root / path
        return Specialized(f"file:{value}", self._read(path), "node")

    def for_plan(self, status: str | None) -> Specialized | None:
        """The Specialized part of a current plan of this status, if it is active."""
        stage = plan_stage(status)
        if stage is None:
            return None
        return Specialized(stage, self.stage_text(stage), "plan")

    def for_intent(self, stage: Stage) -> Specialized:
        """The Specialized part of the stage the pulse's intent implies."""
        return Specialized(stage, self.stage_text(stage), "intent")

    def _read(self, path: Path) -> str:
        key = str(path)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        named = ", ".join(s.lower() for s in STAGES)
        try:
            if not path.is_file():
                raise UsageError(
                    f"specialized guidelines {str(path)!r} are not a file (a stage is one of "
                    f"{named}, else a path to a text file)"
                )
            if path.stat().st_size > MAX_GUIDELINE_BYTES:
                raise UsageError(
                    f"specialized guidelines {str(path)!r} are larger than "
                    f"{MAX_GUIDELINE_BYTES:,} bytes"
                )
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read specialized guidelines {str(path)!r}: {exc}") from exc
        self._cache[key] = text
        return text
