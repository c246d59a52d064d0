"""A pulse's trace exported over OTLP/HTTP to a receiver people run, Arize Phoenix (from
PyPI, started here on a loopback port), and read back through Phoenix's REST API.

Phoenix is heavy (its own web app and database): ``make test-otel`` installs it in a
virtual environment of its own and gives its command as ``SEA_PHOENIX``; without it (or
``phoenix`` on the PATH) the test is skipped, saying why. The spans Phoenix returned are
written to ``build/otel/phoenix-spans.json`` (the README shows an excerpt).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saimemory.records import NewMessage, Persona
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.telemetry import from_environment
from tests.telemetry.test_pulse_spans import MOCHI

pytestmark = pytest.mark.otel_receiver
ROOT = Path(__file__).parents[2]


def _phoenix() -> str | None:
    return os.environ.get("SEA_PHOENIX") or shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    command = _phoenix()
    if command is None:
        pytest.skip("Arize Phoenix is not installed (make test-otel installs it)")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port())}
    log = (tmp_path / "phoenix.log").open("w")
    process = subprocess.Popen([command, "serve"], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _get(f"{url}/v1/projects")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.close()
                    pytest.fail("Phoenix did not start:\n"
                                + (tmp_path / "phoenix.log").read_text()[-3000:])
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_a_pulse_exported_over_otlp_is_read_back_from_phoenix(
    phoenix: str, store: Any, persona: Persona
) -> None:
    store.append(NewMessage(persona.id, "user", "My cat is called Mochi.", ("conversation",)))
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix, "OTEL_METRICS_EXPORTER": "none",
               "OTEL_SERVICE_NAME": "sea-tests"}
    telemetry = from_environment(environ)
    assert telemetry is not None
    config = RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping(MOCHI)),
                           library=PlaybookLibrary.bundled(), telemetry=telemetry)
    with Runtime(config) as runtime:
        result = runtime.run_pulse(persona, "meta_user", "Do you remember my cat?")
    telemetry.shutdown()  # the batch is sent
    assert result.status == "ok", result.error
    deadline, spans = time.monotonic() + 30, []
    while time.monotonic() < deadline:
        spans = _get(f"{phoenix}/v1/projects/default/spans?limit=200")["data"]
        if any(s["attributes"].get("sea.pulse.id") == result.pulse_id for s in spans):
            break
        time.sleep(0.5)
    [root] = [s for s in spans if s["attributes"].get("sea.pulse.id") == result.pulse_id]
    assert root["name"] == "sea.pulse meta_user"
    trace = [s for s in spans if s["context"]["trace_id"] == root["context"]["trace_id"]]
    by_id = {s["context"]["span_id"]: s for s in trace}
    assert root["parent_id"] is None and root["span_kind"] == "AGENT"
    assert root["attributes"]["sea.pulse.status"] == "ok"
    chats = [s for s in trace if s["name"] == "chat scripted"]
    assert len(chats) == 2 and all(s["span_kind"] == "LLM" for s in chats)
    for chat in chats:
        assert chat["attributes"]["gen_ai.operation.name"] == "chat"
        assert by_id[chat["parent_id"]]["name"].startswith("sea.node ")
    tools = sorted(s["name"] for s in trace if s["span_kind"] == "TOOL")
    assert tools == ["execute_tool memory_search", "execute_tool plan_memory",
                     "execute_tool rank_playbooks"]
    assert "Mochi" not in json.dumps(trace)  # no prompt left this process
    out = ROOT / "build" / "otel"
    out.mkdir(parents=True, exist_ok=True)
    (out / "phoenix-spans.json").write_text(json.dumps(trace, indent=1))
