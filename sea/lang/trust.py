"""The ``<system>`` trust marker: provenance decides trust, not text.

A user-role ``<system>…</system>`` message means "the engine says": a gathering playbook's
memo for the speaker, a node's prompt, a tool result note, a retry instruction. Only text the
engine itself wrote may carry the marker: a template's own literal text, and the engine's
fixed instructions. Text that came from anywhere else (typed input, a value substituted into
a template, a tool's result, a file's content, a model's answer, an imported conversation)
has its tags neutralized before it reaches a model: ``<system>`` and ``</system>``, in any
case, with spaces, attributes or full-width brackets, become ``‹system›`` and ``‹/system›``,
which a model reads as ordinary text. The stored original is kept as it was; neutralizing
happens where text is put into a memo or a prompt, and where the context builder reads a
stored message that the engine did not write (:data:`saimemory.records.ENGINE_MEMO`).
"""

from __future__ import annotations

import re

_TAG = re.compile(r"[<\uff1c](\s*/?\s*system\b[^>\uff1e\n]{0,200})[>\uff1e]", re.IGNORECASE)
_OPEN = "\u2039"  # ‹
_CLOSE = "\u203a"  # ›


def neutralize(text: str) -> str:
    """``text`` with every ``<system>`` / ``</system>`` tag made ordinary text."""
    if "system" not in text.lower():  # the common case costs one scan
        return text
    return _TAG.sub(lambda m: f"{_OPEN}{m.group(1)}{_CLOSE}", text)


def has_marker(text: str) -> bool:
    """Whether ``text`` holds a ``<system>`` or ``</system>`` tag (in any spelling)."""
    return _TAG.search(text) is not None
