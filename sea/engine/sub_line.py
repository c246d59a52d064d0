"""A ``subplay`` on SAIVerse's sub line (``"line": "sub"``).

The callee runs in a memory scope of its own (:func:`sea.engine.calls.child_scope`), from
a copy of the messages the caller has written in this pulse so far: each message of the
caller's scope and thread that is not of the conversation (the conversation of the pulse
every scope sees already) is written again into the callee's scope, on the sub line and
volatile, so the copies are gone when the pulse ends. Its model calls use the lightweight
model and everything it writes is of the sub line (:attr:`sea.engine.pulse.Frame.sub_line`),
which no later pulse reads. Its ``report_to_parent`` comes back as a user message of the
engine, wrapped in ``<system>`` with the report's own text neutralized (a model wrote it),
stored on the main line with the ``conversation`` tag so later pulses see it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from saimemory.records import CONVERSATION_TAG, PROVENANCE_PREFIXES, NewMessage
from saimemory.tx import main_thread_id
from sea.engine.pulse import Frame, as_text
from sea.engine.state import variables
from sea.lang.models import REPORT_KEY
from sea.lang.trust import neutralize
from sea.llm.base import wrap_system

REPORT_NOTE = "Report from the sub line `{callee}` (not visible to the user):"
"""The engine's own words before a sub line's report."""


async def copy_messages(frame: Frame, child: Frame) -> int:
    """Copy the caller's messages of this pulse into the callee's scope (see above); the
    number copied."""
    pulse = frame.pulse
    store = frame.services.store
    persona = pulse.persona.id
    thread = frame.thread or main_thread_id(persona)
    written = await asyncio.to_thread(store.pulse_messages, persona, pulse.pulse_id)
    copies = [
        NewMessage(
            persona=persona, role=m.role, content=m.content,
            tags=tuple(t for t in m.tags if not t.startswith(PROVENANCE_PREFIXES)),
            metadata=m.metadata, pulse_id=m.pulse_id, scope=child.scope, thread=frame.thread,
            playbook=m.playbook, node=m.node, line_role="sub_line", line_scope="volatile",
        )
        for m in written
        if m.scope == frame.scope and m.thread == thread and CONVERSATION_TAG not in m.tags
    ]
    if copies:
        pulse.wrote_volatile = True
        await asyncio.to_thread(store.append_many, copies)
    return len(copies)


async def report_back(frame: Frame, node: str, callee: str, final: Mapping[str, Any],
                      report: Any) -> None:
    """Store the sub line's report (``report``, else the callee's ``report_to_parent``
    variable) as the engine's ``<system>`` message on the caller's line; nothing when
    there is none."""
    if report is None:
        report = variables(final).get(REPORT_KEY)
    text = as_text(report).strip() if report is not None else ""
    if not text:
        return
    content = wrap_system(f"{REPORT_NOTE.format(callee=callee)}\n{neutralize(text)}")
    await frame.remember(node, "user", content, (CONVERSATION_TAG,))
