"""The three prompt patterns of seed 003, and the context profiles that name them.

A pattern says which parts a model call's context is made of:

* ``base_main_specialized``: Base + Main + Specialized (planning, multi-step work, review);
* ``base_main``: Base + Main (conversation, simple tasks);
* ``base_specialized``: Base + Specialized (light, fast work: summaries, extraction).

**Base** is the persona's system prompt and the host's safety rules; **Main** the
conversation history with the persona's pinned items and its short-term memory;
**Specialized** the guidelines of the task's stage (:mod:`sea.llm.specialized`). The node's
own prompt always comes last.

A node names its context with ``context_profile``: one of the patterns, or one of the older
profile names, kept as aliases. The profile also chooses the model:

==================== ========================= ============
profile               pattern                   model
==================== ========================= ============
base_main_specialized base_main_specialized     normal
base_main             base_main                 normal
base_specialized      base_specialized          lightweight
conversation          base_main                 normal
router                base_main                 lightweight
worker                base_specialized          normal
worker_light          base_specialized          lightweight
==================== ========================= ============
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from saimemory.errors import UnknownProfileError

Pattern = Literal["base_main_specialized", "base_main", "base_specialized"]
PATTERNS: tuple[Pattern, ...] = get_args(Pattern)
"""The three prompt patterns, fullest first."""

ModelKind = Literal["normal", "lightweight"]
"""Which of the host's two models a profile uses."""


@dataclass(frozen=True, slots=True)
class Profile:
    """What a ``context_profile`` name means: its pattern and its model.

    Attributes:
        name: The profile's name.
        pattern: The prompt pattern of its context.
        model: ``normal`` or ``lightweight``.
        alias: The name is one of the older profile names (kept so playbooks stay valid).
    """

    name: str
    pattern: Pattern
    model: ModelKind
    alias: bool = False

    @property
    def has_main(self) -> bool:
        """The context holds Main: history, pinned items, short-term memory."""
        return self.pattern in ("base_main_specialized", "base_main")

    @property
    def has_specialized(self) -> bool:
        """The context holds Specialized: the stage's guidelines."""
        return self.pattern in ("base_main_specialized", "base_specialized")


PROFILES: Mapping[str, Profile] = {
    "base_main_specialized": Profile("base_main_specialized", "base_main_specialized", "normal"),
    "base_main": Profile("base_main", "base_main", "normal"),
    "base_specialized": Profile("base_specialized", "base_specialized", "lightweight"),
    "conversation": Profile("conversation", "base_main", "normal", alias=True),
    "router": Profile("router", "base_main", "lightweight", alias=True),
    "worker": Profile("worker", "base_specialized", "normal", alias=True),
    "worker_light": Profile("worker_light", "base_specialized", "lightweight", alias=True),
}
"""Every ``context_profile`` name: the three patterns, then the older names (aliases)."""

DEFAULT_PROFILE = "conversation"
"""The context of a node without ``context_profile`` (Base + Main on the model its
``model_type`` names)."""


def profile_named(name: str) -> Profile:
    """The profile of this name.

    Raises:
        UnknownProfileError: no profile has this name (MEM007).
    """
    found = PROFILES.get(name)
    if found is None:
        raise UnknownProfileError(
            f"unknown context profile {name!r}; expected one of {', '.join(PROFILES)}"
        )
    return found
