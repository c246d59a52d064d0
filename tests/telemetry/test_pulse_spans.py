"""A pulse as an OpenTelemetry span tree (issue 39): the in-memory SDK receives what a real
runtime's pulses made from their events, with the scripted chat model and a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from opentelemetry import trace
from opentelemetry.trace import SpanKind

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


def _start_order(spans: list[Any]) -> list[Any]:
    return sorted(spans, key=lambda s: s.start_time)


def test_a_meta_user_pulse_is_one_trace_a_span_for_each_thing_that_takes_time(
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
    assert attrs["sea.path"] == ("route", "check", "run", "speak")  # the top playbook's route
    [stored] = [e for e in root.events if e.name == "sea.memory.write"]
    assert (stored.attributes or {})["sea.memory.role"] == "user"  # the input, first
    # each called playbook: the span of the node that called it, its nodes its children
    calls = _start_order(otel.children(root))
    assert [s.name for s in calls] == ["sea.node route (sub_router_user)",
                                       "sea.node run (memory_recall)",
                                       "sea.node speak (sub_speak)"]
    route, run, speak = calls
    assert [(s.attributes or {})["sea.callee"] for s in calls] == [
        "sub_router_user", "memory_recall", "sub_speak"]
    assert (route.attributes or {})["sea.path"] == ("init", "rank", "gate", "plan", "decide")
    assert (run.attributes or {})["sea.node.type"] == "exec"
    # a tool node and an llm node are one span with their call; set and pass are no span
    assert [s.name for s in _start_order(otel.children(route))] == [
        "execute_tool rank_playbooks", "execute_tool plan_memory", "chat scripted"]
    assert not [s for s in spans if (s.attributes or {}).get("sea.node.type") in ("set", "pass")]
    assert [s.name for s in _start_order(otel.children(run))] == [
        "execute_tool memory_search", "sea.node save"]
    # the model calls follow the GenAI conventions
    chats = otel.named("chat ")
    assert [(c.attributes or {})["sea.node"] for c in _start_order(chats)] == [
        "decide", "compose"]
    for chat in chats:
        a = chat.attributes or {}
        assert chat.kind == SpanKind.CLIENT
        assert a["gen_ai.operation.name"] == "chat" and a["sea.node.type"] == "llm"
        assert a["openinference.span.kind"] == "LLM"
        assert a["gen_ai.response.finish_reasons"] == ("stop",)
        assert "gen_ai.usage.input_tokens" in a and "gen_ai.usage.output_tokens" in a
    [compose] = otel.children(speak)
    assert compose.name == "chat scripted"
    assert [e.name for e in compose.events] == ["sea.memory.write"]  # the reply, stored
    tools = [(s.attributes or {})["gen_ai.tool.name"]
             for s in _start_order(otel.named("execute_tool "))]
    assert tools == ["rank_playbooks", "plan_memory", "memory_search"]
    # every span ended, inside its parent
    by_id = {s.context.span_id: s for s in spans if s.context}
    for span in spans:
        assert span.end_time is not None and span.start_time is not None
        if span.parent is not None:
            parent = by_id[span.parent.span_id]
            assert parent.start_time <= span.start_time and span.end_time <= parent.end_time


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
    [pulses] = points["sea.pulse.duration"]  # its count: the pulses
    assert pulses.count == 1  # type: ignore[attr-defined]
    assert dict(pulses.attributes) == {  # type: ignore[attr-defined]
        "sea.playbook": "meta_user", "sea.persona": persona.id, "sea.pulse.status": "ok"}
    [calls] = points["gen_ai.client.operation.duration"]
    assert calls.count == 2  # type: ignore[attr-defined]
    assert "error.type" not in calls.attributes  # type: ignore[attr-defined]
    tokens = points["gen_ai.client.token.usage"]
    assert {p.attributes["gen_ai.token.type"] for p in tokens} == {  # type: ignore[attr-defined]
        "input", "output"}
    # the nodes that are spans (route, rank, plan, decide, run, search, save, speak,
    # compose); set and pass nodes take microseconds and are not measured
    nodes = {p.attributes["sea.node.type"]: p.count  # type: ignore[attr-defined]
             for p in points["sea.node.duration"]}
    assert nodes == {"subplay": 2, "tool": 3, "llm": 2, "exec": 1, "memorize": 1}


def test_durations_fall_in_buckets_of_milliseconds_and_point_to_the_pulse_trace(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path)
    points = otel.metric_points()
    [root] = otel.named("sea.pulse")
    assert root.context is not None
    [pulse] = points["sea.pulse.duration"]
    # not the SDK's default buckets (0, 5, 10, 25... seconds: every pulse in the first)
    bounds, counts = pulse.explicit_bounds, pulse.bucket_counts  # type: ignore[attr-defined]
    assert 0 < bounds[0] < 0.001
    [filled] = [i for i, count in enumerate(counts) if count]
    assert 0 < filled < len(bounds) and bounds[filled] <= 2.5  # a scripted pulse is quick
    [exemplar] = pulse.exemplars  # type: ignore[attr-defined]
    assert exemplar.span_id == root.context.span_id
    assert exemplar.trace_id == root.context.trace_id
    nodes = points["sea.node.duration"]
    assert all(p.explicit_bounds == pulse.explicit_bounds  # type: ignore[attr-defined]
               for p in nodes)
    assert not any(p.exemplars for p in nodes)  # type: ignore[attr-defined]
    [calls] = points["gen_ai.client.operation.duration"]
    assert list(calls.explicit_bounds)[:3] == [0.01, 0.02, 0.04]  # type: ignore[attr-defined]
    [tokens, *_] = points["gen_ai.client.token.usage"]
    assert list(tokens.explicit_bounds)[:3] == [1, 4, 16]  # type: ignore[attr-defined]


def test_personas_past_the_bound_are_counted_as_other(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    _meta_user(otel, store, persona, tmp_path, max_personas=0)
    [pulses] = otel.metric_points()["sea.pulse.duration"]
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
    [pulses] = otel.metric_points()["sea.pulse.duration"]
    assert pulses.count == 1  # type: ignore[attr-defined]


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


def test_a_set_node_is_in_the_route_and_when_it_fails_an_event_of_its_call(
    otel: Otel, store: Any, persona: Persona, tmp_path: Path
) -> None:
    from sea.engine.limits import Limits

    books = tmp_path / "books"
    books.mkdir()
    (books / "echo.json").write_text(json.dumps({
        "name": "echo", "description": "Copies its input twice.", "start_node": "first",
        "nodes": [{"id": "first", "type": "set", "assignments": {"short": "ok"},
                   "next": "copy"},
                  {"id": "copy", "type": "set", "assignments": {"copied": "{input}"}}],
    }))
    config = RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                           library=PlaybookLibrary([books]), limits=Limits(max_value_chars=20),
                           telemetry=otel.telemetry())
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "echo", "a message longer than twenty characters")
    assert result.status == "error"
    [root] = otel.finished()  # set nodes are no spans
    assert (root.attributes or {})["sea.path"] == ("first", "copy")
    [failed] = [e for e in root.events if e.name == "sea.node"]
    assert dict(failed.attributes or {}) == {
        "sea.node": "copy", "sea.node.type": "set", "sea.node.outcome": "failed"}
    assert root.status.status_code.name == "ERROR"
