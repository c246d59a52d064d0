"""Built-in tools of seed 003: pinned items, the light model's summary and extraction, content
generation, and the decision on an intent.

* ``pin_item`` / ``unpin_item``: keep (or drop) one of the persona's pinned items, which
  every context with Main shows (at most five; a sixth is refused, naming the five).
* ``summarize_conversation``: the recent conversation summarized on the light model
  (``base_specialized`` with the SUMMARY guidelines).
* ``extract``: what was asked for, taken from a text on the light model (``base_specialized``
  with the EXTRACTION guidelines).
* ``generate_content``: the content a request asks for (a file's text, a note), written on
  the normal model with ``base_main_specialized`` and the GENERATION guidelines: it sees the
  conversation, so it knows what the user asked for (seed 003's ``generate_content`` mode).
* ``judge_intent``: an intent (the ``sub_intent`` answer) as seed 003's record, with its
  prompt pattern chosen by the seed's rule and ``clarify`` when its confidence is below the
  host's threshold (:func:`sea.llm.intent.judge_intent`).

The model calls of ``summarize_conversation``, ``extract`` and ``generate_content`` go through
the pulse's call path, so they are recorded (at the calling node) and count against the
pulse's budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from saimemory import MessageStore, Persona
from saimemory.pins import Pin
from sea.engine.tools.box import ToolMaker
from sea.engine.tools.engine_tool import engine_tool
from sea.engine.tools.model_signatures import MODEL_TOOL_ARGUMENTS
from sea.lang.trust import neutralize
from sea.llm.call import LLMCaller, LLMRequest
from sea.llm.intent import IntentPolicy, judge_intent


def model_tools(
    *, store: MessageStore, persona: Persona, caller: LLMCaller, intent: IntentPolicy
) -> list[BaseTool]:
    """The tools for one pulse of ``persona``, calling models through its ``caller``."""
    return [make() for make in model_tool_makers(
        store=store, persona=persona, caller=caller, intent=intent).values()]


def model_tool_makers(
    *, store: MessageStore, persona: Persona, caller: LLMCaller, intent: IntentPolicy
) -> dict[str, ToolMaker]:
    """:func:`model_tools`, each made when first needed (for a :class:`ToolBox`)."""
    return {
        "pin_item": partial(_pin_tool, store, persona.id),
        "unpin_item": partial(_unpin_tool, store, persona.id),
        "summarize_conversation": partial(_summarize_tool, store, persona, caller),
        "extract": partial(_extract_tool, persona, caller),
        "generate_content": partial(_generate_tool, persona, caller),
        "judge_intent": partial(_judge_tool, intent),
    }


def _pin_json(pin: Pin) -> dict[str, Any]:
    return {"id": pin.id, "text": pin.text}


def _pin_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(text: str) -> dict[str, Any]:
        pin = store.pin(persona_id, text)
        return {"pinned": _pin_json(pin), "pins": [_pin_json(p) for p in store.pins(persona_id)]}

    return _sync(run, "pin_item", "Pin one fact, goal or preference the persona keeps in mind "
                 "in every conversation (at most five; returns them all).")


def _unpin_tool(store: MessageStore, persona_id: str) -> BaseTool:
    def run(id: int) -> dict[str, Any]:
        removed = store.unpin(persona_id, id)
        return {"removed": removed, "pins": [_pin_json(p) for p in store.pins(persona_id)]}

    return _sync(run, "unpin_item", "Drop one of the persona's pinned items by its id.")


def _summarize_tool(store: MessageStore, persona: Persona, caller: LLMCaller) -> BaseTool:
    async def run(
        limit: int = 20, focus: str | None = None, *, config: RunnableConfig
    ) -> dict[str, Any]:
        pulse = _meta(config, "sea_pulse_id")
        messages = await asyncio.to_thread(
            store.conversation_before, persona.id, before=None, limit=limit
        )
        lines = "\n".join(f"{m.role}: {neutralize(m.content)}" for m in messages)
        aim = f"\nKeep above all: {neutralize(focus)}" if focus else ""
        prompt = f"Summarize this conversation (oldest first).{aim}\n\n{lines or '(empty)'}"
        text = await _light_call(caller, persona, config, prompt, "summary", pulse)
        return {"summary": text, "messages": len(messages)}

    return _async(run, "summarize_conversation", "Summarize the recent conversation, briefly, "
                  "on the light model.")


def _extract_tool(persona: Persona, caller: LLMCaller) -> BaseTool:
    async def run(text: str, what: str, *, config: RunnableConfig) -> dict[str, Any]:
        prompt = (f"Take from the text below: {neutralize(what)}\n\n"
                  f"Text:\n{neutralize(text)}")
        found = await _light_call(caller, persona, config, prompt, "extraction",
                                  _meta(config, "sea_pulse_id"))
        return {"extracted": found}

    return _async(run, "extract", "Take what is asked for from a text (names, dates, "
                  "figures, ...), on the light model.")


def _generate_tool(persona: Persona, caller: LLMCaller) -> BaseTool:
    async def run(
        request: str, material: str | None = None, *, config: RunnableConfig
    ) -> dict[str, Any]:
        given = f"\n\nMaterial:\n{neutralize(material)}" if material else ""
        prompt = (f"Write the content asked for below; answer with the content alone.\n\n"
                  f"Request: {neutralize(request)}{given}")
        text = await _model_call(caller, persona, config, prompt, "generation",
                                 _meta(config, "sea_pulse_id"), "base_main_specialized")
        return {"content": text}

    return _async(run, "generate_content", "Write content that was asked for (a file's text, "
                  "a note, a message draft), from the conversation and the material given.")


def _judge_tool(policy: IntentPolicy) -> BaseTool:
    def run(intent: dict[str, Any]) -> dict[str, Any]:
        return judge_intent(intent, policy)

    return _sync(run, "judge_intent", "Decide on an intent: its prompt pattern by seed 003's "
                 "rule, and whether to ask the user a clarifying question first.")


async def _light_call(
    caller: LLMCaller, persona: Persona, config: RunnableConfig, prompt: str, stage: str,
    pulse_id: str | None,
) -> str:
    return await _model_call(caller, persona, config, prompt, stage, pulse_id,
                             "base_specialized")


async def _model_call(
    caller: LLMCaller, persona: Persona, config: RunnableConfig, prompt: str, stage: str,
    pulse_id: str | None, profile: str,
) -> str:
    request = LLMRequest(
        playbook=_meta(config, "sea_playbook") or "tool",
        node=_meta(config, "sea_node") or "tool",
        persona=persona,
        profile=profile,
        prompt=prompt,
        pulse_id=pulse_id,
        specialized=stage,
    )
    return (await caller.call(request)).text.strip()


def _meta(config: RunnableConfig | None, key: str) -> str | None:
    value = ((config or {}).get("metadata") or {}).get(key)
    return value if isinstance(value, str) else None


def _sync(run: Callable[..., Any], name: str, description: str) -> BaseTool:
    return engine_tool(
        func=run, name=name, description=description, args_schema=MODEL_TOOL_ARGUMENTS[name]
    )


def _async(run: Callable[..., Awaitable[Any]], name: str, description: str) -> BaseTool:
    return engine_tool(
        coroutine=run, name=name, description=description,
        args_schema=MODEL_TOOL_ARGUMENTS[name],
    )
