"""A worker's pulse continues the trace of the request that submitted it (W3C trace context
through the queue's job), and an answer sent through the queue is the parent of the
resumed drive, which links to the span that waited: one trace from submit to end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from saimemory import Persona
from sea.engine.limits import Limits
from sea.queue import PulseQueue
from tests.telemetry.conftest import Otel
from tests.workers.conftest import DSN
from tests.workers.test_queue import FAST, _until, _with_worker

AOI = Persona("aoi", "Aoi", "You are Aoi.")


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_a_worker_pulse_is_one_trace_from_submit_to_end(
    otel: Otel, queue_dsn: str, tmp_path: Path
) -> None:
    script = {"responses": {"sub_router_user.decide": [{"playbook": "basic_chat",
                                                        "reason": "hi"}],
                            "sub_speak.compose": ["Hello, Aoi here."]}}
    telemetry = otel.telemetry()

    async def work(queue: PulseQueue) -> Any:
        with telemetry.span("POST /pulses", route="/pulses"):  # as a server's request
            pulse_id = await queue.submit(AOI, "meta_user", "hi")
        untraced = await queue.submit(AOI, "meta_user", "again")  # outside any span
        return await _until(queue, pulse_id, "done"), await _until(queue, untraced, "done")

    script["responses"]["sub_router_user.decide"] *= 2
    script["responses"]["sub_speak.compose"] *= 2
    done, alone = asyncio.run(_with_worker(queue_dsn, tmp_path, script, work, FAST,
                                           telemetry=telemetry))
    [request] = otel.named("POST /pulses")
    roots = {(s.attributes or {})["sea.pulse.id"]: s for s in otel.named("sea.pulse")}
    pulse = roots[done.id]
    assert request.context is not None and pulse.context is not None
    assert pulse.context.trace_id == request.context.trace_id
    assert pulse.parent is not None and pulse.parent.span_id == request.context.span_id
    assert (pulse.attributes or {})["sea.pulse.status"] == "ok"
    inside = [s for s in otel.finished()
              if s.context is not None and s.context.trace_id == request.context.trace_id]
    assert {s.name for s in inside} >= {"sea.node route (sub_router_user)", "chat scripted"}
    other = roots[alone.id]
    assert other.parent is None and other.context is not None
    assert other.context.trace_id != request.context.trace_id  # a trace of its own


@pytest.mark.postgres
@pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set")
def test_an_answer_through_the_queue_resumes_in_its_requests_trace_linked_to_the_wait(
    otel: Otel, queue_dsn: str, tmp_path: Path
) -> None:
    from tests.engine.test_runtime import send_mail

    tracer = otel.tracer_provider.get_tracer("a host")

    async def work(queue: PulseQueue) -> Any:
        pulse_id = await queue.submit(AOI, "approval_tool", "bob")
        await _until(queue, pulse_id, "waiting")
        with tracer.start_as_current_span("POST /answer"):
            await queue.resume(pulse_id, True)
        return await _until(queue, pulse_id, "done")

    asyncio.run(_with_worker(queue_dsn, tmp_path, {"responses": {}}, work, FAST,
                             tools=[send_mail], telemetry=otel.telemetry(),
                             limits=Limits(approval_tools=frozenset({"send_mail"}))))
    waited, resumed = sorted(otel.named("sea.pulse"), key=lambda s: s.start_time or 0)
    [answer] = otel.named("POST /answer")
    assert (waited.attributes or {})["sea.pulse.status"] == "waiting"
    assert (resumed.attributes or {})["sea.pulse.mode"] == "resume"
    assert answer.context is not None and resumed.parent is not None
    assert resumed.parent.span_id == answer.context.span_id
    assert waited.context is not None
    [link] = resumed.links
    assert link.context.span_id == waited.context.span_id
