"""A pulse as an OpenTelemetry span tree (issue 39): the in-memory SDK receives what a real
runtime's pulses made from their events, with the scripted chat model and a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry import trace

from saimemory.records import NewMessage, Persona
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.telemetry.conftest import Otel

SECRET = "My cat is called Mochi."
MOCHI = {
    "responses": {
        "sub_router_user.decide": [
            {"playbook": "memory_recall", "args": {"query": "Mochi"}, "reason": "asked"}
        ],
        "sub_speak.compose": ["Your cat is Mochi!"],
    }
}


def _meta_user(otel: Otel, store: Any, persona: Persona, tmp_path: Path,
               **options: Any) -> Any:
    store.append(NewMessage(persona.id, "user", SECRET, ("conversation",)))
    model = ScriptedChatModel.from_mapping(MOCHI)
    config = RuntimeConfig(store, ModelSet.single(model), library=PlaybookLibrary.bundled(),
                           checkpoint_path=tmp_path / "cp.sqlite",
                           telemetry=otel.telemetry(**options))
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    assert result.status == "ok", result.error
    return result


def test_a_meta_user_pulse_is_one_trace_pulse_playbooks_nodes_calls(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    result = _meta_user(otel, store, persona, tmp_path)
    spans = otel.finished()
    assert len({s.context.trace_id for s in spans if s.context}) == 1
    [root] = otel.named("sea.pulse")
    assert root.parent is None
    assert root.name == "sea.pulse meta_user"
    attrs = root.attributes or {}
    assert attrs["sea.pulse.id"] == result.pulse_id and attrs["sea.persona"] == persona.id
    assert attrs["sea.pulse.status"] == "ok" and attrs["sea.pulse.model_calls"] == 2
    [top] = [s for s in otel.children(root) if s.name.startswith("sea.playbook")]
    assert top.name == "sea.playbook meta_user"
    [stored] = [e for e in root.events if e.name == "sea.memory.write"]
    assert (stored.attributes or {})["sea.memory.role"] == "user"  # the input, first
    nodes = [s for s in otel.children(top) if s.name.startswith("sea.node")]
    assert nodes, "the top playbook's nodes are its children"
    # each called playbook hangs under the node that called it
    called = otel.named("sea.playbook sub_speak")
    assert len(called) == 1
    by_id = {s.context.span_id: s for s in spans if s.context}
    assert called[0].parent is not None
    caller = by_id[called[0].parent.span_id]
    assert caller.name.startswith("sea.node ") and caller.parent is not None
    assert by_id[caller.parent.span_id].name == "sea.playbook meta_user"
    # the model calls follow the GenAI conventions, under the node that made them
    chats = otel.named("chat ")
    assert len(chats) == 2
    for chat in chats:
        a = chat.attributes or {}
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.response.finish_reasons"] == ("stop",)
        assert "gen_ai.usage.input_tokens" in a and "gen_ai.usage.output_tokens" in a
        assert chat.parent is not None
        parent = by_id[chat.parent.span_id]
        assert (parent.attributes or {})["sea.node"] == a["sea.node"]
    tools = [(s.attributes or {})["gen_ai.tool.name"] for s in otel.named("execute_tool ")]
    assert tools == ["rank_playbooks", "plan_memory", "memory_search"]
    [compose] = [s for s in otel.named("sea.node compose")]
    assert [e.name for e in compose.events] == ["sea.memory.write"]  # the reply, stored
    # every node span ended inside its playbook's span, every span ended
    for span in spans:
        assert span.end_time is not None and span.start_time is not None


def test_prompts_and_answers_are_absent_unless_the_host_opts_in(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path)
    dumped = json.dumps([dict(s.attributes or {}) for s in otel.finished()], default=str)
    dumped += json.dumps([[dict(e.attributes or {}) for e in s.events]
                          for s in otel.finished()], default=str)
    assert "Mochi" not in dumped and "gen_ai.input.messages" not in dumped
    assert "What is my cat called" not in dumped


def test_with_capture_content_the_prompts_and_answers_are_in_the_spans(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path, capture_content=True)
    [speak] = [s for s in otel.named("chat ")
               if (s.attributes or {})["sea.node"] == "compose"]
    a = speak.attributes or {}
    assert SECRET in str(a["gen_ai.input.messages"])
    assert "Your cat is Mochi!" in str(a["gen_ai.output.messages"])


def test_the_metrics_count_pulses_calls_tokens_and_node_durations(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path)
    points = otel.metric_points()
    [pulses] = points["sea.pulses"]
    assert pulses.value == 1  # type: ignore[attr-defined]
    assert dict(pulses.attributes) == {  # type: ignore[attr-defined]
        "sea.playbook": "meta_user", "sea.persona": persona.id, "sea.pulse.status": "ok"}
    [calls] = points["gen_ai.client.operation.duration"]
    assert calls.count == 2  # type: ignore[attr-defined]
    assert "error.type" not in calls.attributes  # type: ignore[attr-defined]
    tokens = points["gen_ai.client.token.usage"]
    assert {p.attributes["gen_ai.token.type"] for p in tokens} == {  # type: ignore[attr-defined]
        "input", "output"}
    assert sum(p.count for p in points["sea.node.duration"]) > 10  # type: ignore[attr-defined]


def test_personas_past_the_bound_are_counted_as_other(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path, max_personas=0)
    [pulses] = otel.metric_points()["sea.pulses"]
    assert pulses.attributes["sea.persona"] == "_other"  # type: ignore[attr-defined]


class _SeesTheSpan(BaseCallbackHandler):
    """A LangChain callback on the host's model: which OpenTelemetry span is current when
    the model is called (where an OpenTelemetry-based LangChain tracer puts its span)."""

    def __init__(self) -> None:
        self.current: list[str] = []
        self.ended = 0

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        span = trace.get_current_span()
        self.current.append(getattr(span, "name", "?"))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.ended += 1


def test_langchain_callbacks_run_inside_the_model_calls_nested_under_the_node_span(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    seen = _SeesTheSpan()
    model = ScriptedChatModel.from_mapping(MOCHI)
    model.callbacks = [seen]
    config = RuntimeConfig(store, ModelSet.single(model), library=PlaybookLibrary.bundled(),
                           telemetry=otel.telemetry())
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    assert result.status == "ok", result.error
    assert seen.current == ["sea.node decide", "sea.node compose"]
    assert seen.ended == 2
    assert not trace.get_current_span().get_span_context().is_valid  # nothing left behind


def test_a_pulse_sampled_out_makes_no_span_and_still_counts(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    otel.tracer_provider = TracerProvider(sampler=ALWAYS_OFF)
    _meta_user(otel, store, persona, tmp_path)
    assert otel.finished() == []
    [pulses] = otel.metric_points()["sea.pulses"]
    assert pulses.value == 1  # type: ignore[attr-defined]


def test_telemetry_on_no_op_providers_leaves_the_sink_as_it_is() -> None:
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    from sea.telemetry import Telemetry

    off = Telemetry(tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider())
    trace_ = off.pulse("p1", "start")

    def sink(event: object) -> None:
        return None

    assert trace_.watch(sink) is sink and trace_.traceparent is None


class _Broken:
    """A tracer provider whose tracer fails at every span but the first (a host's bug)."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        tracer = self.real.get_tracer(*args, **kwargs)

        class Tracer:
            def start_span(self, name: str, *a: Any, **k: Any) -> Any:
                if name.startswith("sea.pulse"):
                    return tracer.start_span(name, *a, **k)
                raise RuntimeError("the host's tracer broke")

        return Tracer()


def test_a_failing_tracer_never_fails_the_pulse(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    otel.tracer_provider = _Broken(otel.tracer_provider)  # type: ignore[assignment]
    result = _meta_user(otel, store, persona, tmp_path)
    assert result.spoken == ["Your cat is Mochi!"]
    [root] = otel.named("sea.pulse")
    assert (root.attributes or {})["sea.pulse.status"] == "ok"
