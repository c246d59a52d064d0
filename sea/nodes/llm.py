"""``llm``: call a chat model through the one call path and store what it answered.

The prompt (``action``) is rendered with unknown ``{names}`` kept verbatim (prompts quote
examples). The answer goes to ``last`` and to ``output_key``; a structured answer is an
object, and ``output_mapping`` copies parts of it (``args`` → ``selected_args`` lets a
router pass arguments with its choice; a path the answer lacks gives ``None``). A tool the
model chose is stored as ``{name, args, id}`` under the ``function_call`` output key for a
``tool_call`` node; a node offering tools also sets SAIVerse's ``tool_called``,
``has_speak_content``, ``speak_content``, ``tool_name``, ``tool_args`` and
``tool_arg_<name>`` (:func:`sea.lang.saiverse.tool_mode_values`). ``memorize`` stores the
prompt (user) and the answer (assistant) with its tags; ``speak`` streams tokens to the
host and stores the answer as conversation. A tool-call turn's JSON is never stored as a
reply. A node with ``intent_patterns`` builds its context by the pulse's intent's pattern when
it is one of them, with the stage the intent implies (:func:`intent_steer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from saimemory.records import CONVERSATION_TAG
from sea.engine.events import Spoken, TokenChunk
from sea.engine.pulse import Frame, Line, as_text, line_of
from sea.engine.registry import NodeKind
from sea.engine.state import PlaybookState, Update, assign, variables
from sea.engine.waits import NEVER, Waits
from sea.lang import saiverse
from sea.lang.node_models import LLMNode, MemorizeOption
from sea.lang.templates import MISSING, render, resolve_path
from sea.lang.trust import neutralize_outside
from sea.lang.variables import INTENT_PATTERN, INTENT_STAGE
from sea.llm.call import LLMRequest, LLMResult
from sea.llm.context import wrap_system
from sea.llm.patterns import PATTERNS, Pattern
from sea.llm.specialized import STAGES, Stage
from sea.nodes._schema_source import answer_schema
from sea.nodes._utterance import node_metadata


def intent_steer(
    allowed: Sequence[str] | None, state: PlaybookState
) -> tuple[Pattern | None, Stage | None]:
    """The pulse's intent's prompt pattern (the ``prompt_pattern`` variable) when it is one of
    the patterns a node takes (its ``intent_patterns``), and the stage the intent implies
    (``intent_stage``) with it; ``(None, None)`` when the node does not take it."""
    if not allowed:
        return None, None
    found = variables(state)
    chosen = found.get(INTENT_PATTERN)
    pattern = next((p for p in PATTERNS if p == chosen and p in allowed), None)
    if pattern is None:
        return None, None
    named = found.get(INTENT_STAGE)
    return pattern, next((stage for stage in STAGES if stage == named), None)


def build_request(node: LLMNode, state: PlaybookState, frame: Frame) -> LLMRequest:
    """The call path request for this node."""
    prompt = None
    if node.action:
        rendered = render(node.action, variables(state), missing="keep", guard=neutralize_outside)
        prompt = as_text(rendered) or None
    schema = answer_schema(node, state, frame)
    enum = None
    if schema is not None and "playbook" in (schema.get("properties") or {}):
        enum = [playbook.name for playbook in frame.pulse.router_callable()]
        if node.choices_from:
            enum = narrowed(enum, resolve_path(variables(state), node.choices_from))
    tools = frame.pulse.toolbox.select(node.available_tools or [], playbook=frame.name,
                                       node=node.id)
    pattern, stage = intent_steer(node.intent_patterns, state)
    return LLMRequest(
        playbook=frame.name,
        node=node.id,
        persona=frame.pulse.persona,
        profile=node.context_profile,
        model_type=node.model_type,
        prompt=prompt,
        response_schema=schema,
        tools=tools,
        playbook_enum=enum,
        stream=node.streams(),
        pulse_id=frame.pulse.pulse_id,
        scope=frame.scope,
        thread=frame.thread,
        specialized=node.specialized,
        intent_pattern=pattern,
        intent_stage=stage,
        light=frame.sub_line,
    )


def narrowed(offered: list[str], choices: Any) -> list[str]:
    """The offered playbooks among ``choices`` (a list of names), in the order of
    ``choices``; all of ``offered`` when ``choices`` names none of them."""
    if not isinstance(choices, list):
        return offered
    kept = [name for name in dict.fromkeys(choices) if isinstance(name, str) and name in offered]
    return kept or offered


def answer_values(node: LLMNode, result: LLMResult) -> dict[str, Any]:
    """The variables the answer sets (``last`` included)."""
    keys = {k: v for item in node.output_keys or [] for k, v in item.items()}
    values: dict[str, Any] = {}
    if node.available_tools:  # SAIVerse's tool-mode variables (sea.lang.saiverse)
        chosen = result.tool_call
        values.update(saiverse.tool_mode_values(
            None if chosen is None else chosen.name,
            None if chosen is None else chosen.args,
            result.text,
        ))
    call = None if result.tool_call is None else result.tool_call.to_json()
    if "function_call" in keys:
        values[keys["function_call"]] = call  # None on a text turn: no stale call survives
    if call is not None:
        value: Any = call if not result.text else result.text
    elif result.parsed is not None:
        value = result.parsed
    else:
        value = result.text
    if "text" in keys:
        values[keys["text"]] = result.text
    if node.output_key:
        values[node.output_key] = value
    for source, target in (node.output_mapping or {}).items():
        values[target] = _mapped(value, source, node.output_key)
    values["last"] = value
    return values


def _mapped(value: Any, source: str, output_key: str | None) -> Any:
    if output_key and source.startswith(f"{output_key}."):
        source = source[len(output_key) + 1 :]
    if not isinstance(value, dict):
        return None
    found = resolve_path(value, source)
    return None if found is MISSING else found


def memorize_line(option: MemorizeOption | bool | None) -> Line:
    """The line and scope of a node's ``memorize`` option (main-line, committed unless it
    says otherwise)."""
    if isinstance(option, MemorizeOption):
        return line_of(option.line_role, option.scope)
    return line_of(None, None)


def memorize_tags(option: MemorizeOption | bool | None) -> list[str] | None:
    """The tags of a node's ``memorize`` option (None: the node does not memorize)."""
    if option is None or option is False:
        return None
    if isinstance(option, MemorizeOption):
        return list(option.tags)
    return []


class LLMKind(NodeKind[LLMNode]):
    """Runs ``llm`` nodes."""

    model = LLMNode
    one_call = "model"

    def waits(self, node: LLMNode) -> Waits:
        """Never asks a person (a tool it chooses is called by a ``tool_call`` node)."""
        return NEVER

    async def run(self, node: LLMNode, state: PlaybookState, frame: Frame) -> Update:
        """Call the model, then store and speak as the node asks."""
        request = build_request(node, state, frame)
        metadata = node_metadata(frame, node.id, node.metadata_key, state)  # before the call
        pulse = frame.pulse

        async def on_token(text: str) -> None:
            pulse.emit(TokenChunk(pulse.pulse_id, frame.name, node.id, text))

        result = await pulse.caller.call(request, on_token=on_token if node.streams() else None)
        update = assign(answer_values(node, result))
        reply = result.text if result.tool_call is not None else as_text(update["last"])
        await self._store(node, frame, request.prompt, reply, metadata)
        if node.speak and reply:
            frame.emit(Spoken(pulse.pulse_id, frame.name, node.id, reply, True, metadata))
            update["spoken"] = [reply]
        return update

    async def _store(
        self,
        node: LLMNode,
        frame: Frame,
        prompt: str | None,
        reply: str,
        metadata: dict[str, Any],
    ) -> None:
        tags = memorize_tags(node.memorize)
        line = memorize_line(node.memorize)
        if tags is not None and prompt:
            await frame.remember(node.id, "user", wrap_system(prompt), tags, line=line)
        reply_tags = list(tags or [])
        if node.speak or (tags is None and node.important):
            reply_tags.append(CONVERSATION_TAG)
        if reply and (tags is not None or CONVERSATION_TAG in reply_tags):
            await frame.remember(node.id, "assistant", reply, reply_tags, metadata, line)


KIND = LLMKind()
