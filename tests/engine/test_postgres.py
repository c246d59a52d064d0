"""The engine on PostgreSQL: the store and the checkpointer (skipped without a server)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from saimemory.records import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.engine.limits import Limits
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from tests.engine.conftest import PLAYBOOKS
from tests.engine.test_runtime import send_mail

DSN = os.environ.get("SEA_TEST_POSTGRES_DSN")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not DSN, reason="SEA_TEST_POSTGRES_DSN is not set"),
]


@pytest.fixture
def pg_store() -> Iterator[Any]:
    import psycopg

    from saimemory.postgres import PostgresStore

    assert DSN is not None
    schema = f"engine_{uuid.uuid4().hex[:10]}"
    store = PostgresStore(DSN, schema=schema)
    yield store
    store.close()
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_result_flow_and_resume_on_postgres(pg_store: Any, persona: Persona) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    assert DSN is not None
    script = {"responses": {"sub_speak.compose": ["Found it."]}}
    limits = Limits(approval_tools=frozenset({"send_mail"}))

    def runtime(saver: Any) -> Runtime:
        model = ScriptedChatModel.from_mapping(script)
        return Runtime(RuntimeConfig(
            pg_store,
            ModelSet.single(model),
            tools=[send_mail],
            library=PlaybookLibrary([PLAYBOOKS]),
            limits=limits,
        ), checkpointer=saver)

    async def go() -> tuple[Any, Any, Any]:
        async with AsyncPostgresSaver.from_conn_string(DSN) as saver:
            await saver.setup()
            spoke = await runtime(saver).arun_pulse(persona, "flow_main", "cats")
            waiting = await runtime(saver).arun_pulse(persona, "approval_tool", "pg")
            done = await runtime(saver).arun_resume(waiting.pulse_id, True)
            return spoke, waiting, done

    spoke, waiting, done = asyncio.run(go())
    assert spoke.status == "ok", spoke.error
    assert spoke.spoken == ["Found it."]
    contents = [m.content for m in pg_store.pulse_messages(persona.id, spoke.pulse_id)]
    assert any("Result of gather for cats" in c for c in contents)
    assert waiting.status == "waiting"
    assert done.status == "ok", done.error
    assert done.outputs["outcome"] == "sent"



def test_checkpoint_path_may_be_a_postgresql_dsn(pg_store: Any, persona: Persona) -> None:
    """``Runtime(checkpoint_path="postgresql://...")``: a fresh runtime resumes the pulse
    from the database alone (the checkpoint tables live in the DSN's schema)."""
    import psycopg

    assert DSN is not None
    schema = f"ckpt_{uuid.uuid4().hex[:10]}"
    location = f"{DSN}?schema={schema}"
    limits = Limits(approval_tools=frozenset({"send_mail"}))

    def runtime() -> Runtime:
        return Runtime(RuntimeConfig(
            pg_store,
            ModelSet.single(ScriptedChatModel.from_mapping({})),
            tools=[send_mail],
            library=PlaybookLibrary([PLAYBOOKS]),
            checkpoint_path=location,
            limits=limits,
        ))

    try:
        with runtime() as first:
            waiting = first.run_pulse(persona, "approval_tool", "pg-dsn")
        assert waiting.status == "waiting", waiting.error
        with runtime() as second:
            done = second.run_resume(waiting.pulse_id, True)
        assert done.status == "ok", done.error
        assert done.outputs["sent"] == "mailed pg-dsn"
        with psycopg.connect(DSN, autocommit=True) as conn:
            left = conn.execute(
                f'SELECT count(*) FROM "{schema}".checkpoints WHERE thread_id = %s',
                [waiting.pulse_id],
            ).fetchone()
        assert left == (0,)  # an ended pulse's checkpoints are removed
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
