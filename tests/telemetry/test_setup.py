"""``--otel``'s telemetry from the standard ``OTEL_*`` variables, and the mistakes a user
can make there: a clear SeaError with a stable code, never a traceback."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

from saimemory.records import Persona
from sea.chat.scripted import ScriptedChatModel
from sea.cli import main
from sea.errors import UsageError
from sea.host.config import RuntimeConfig
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet
from sea.telemetry import Telemetry, from_environment


def test_otel_sdk_disabled_gives_no_telemetry() -> None:
    assert from_environment({"OTEL_SDK_DISABLED": "true"}) is None


@pytest.mark.parametrize("environ", [
    {"OTEL_TRACES_EXPORTER": "zipkin"},
    {"OTEL_METRICS_EXPORTER": "prometheus"},
    {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
])
def test_an_exporter_or_protocol_sea_cannot_use_is_refused(environ: dict[str, str]) -> None:
    with pytest.raises(UsageError) as info:
        from_environment(environ)
    assert info.value.code == "SEA352"
    assert next(iter(environ)) in info.value.message


def test_the_endpoint_and_service_name_come_from_the_environ_given() -> None:
    telemetry = from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/",
                                  "OTEL_SERVICE_NAME": "my-host",
                                  "SEA_OTEL_CAPTURE_CONTENT": "true"})
    assert telemetry is not None and telemetry.capture_content
    provider: Any = telemetry.tracer_provider
    assert provider.resource.attributes["service.name"] == "my-host"
    [processor] = provider._active_span_processor._span_processors
    assert processor.span_exporter._endpoint == "http://127.0.0.1:9/v1/traces"
    telemetry.shutdown()



def test_the_console_exporter_writes_to_the_stdout_of_when_it_is_made(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's console exporter defaults to the ``sys.stdout`` of when the SDK was
    imported: a host (or a test) that replaced stdout since would lose the spans."""
    import opentelemetry.sdk.trace.export  # noqa: F401  (imported before stdout changes)

    now = io.StringIO()
    monkeypatch.setattr(sys, "stdout", now)
    telemetry = from_environment({"OTEL_TRACES_EXPORTER": "console",
                                  "OTEL_METRICS_EXPORTER": "none"})
    assert telemetry is not None
    telemetry.tracer_provider.get_tracer("test").start_span("a.span").end()
    telemetry.shutdown()
    assert '"name": "a.span"' in now.getvalue()


def test_a_bad_bound_or_telemetry_object_is_a_usage_error(store: Any) -> None:
    with pytest.raises(UsageError, match="max_personas"):
        Telemetry(max_personas=-1)
    with pytest.raises(UsageError, match="telemetry must be"):
        RuntimeConfig(store, ModelSet.single(ScriptedChatModel.from_mapping({})),
                      library=PlaybookLibrary.bundled(), telemetry="yes")  # type: ignore[arg-type]


def test_sea_run_otel_with_a_bad_setting_says_so_and_exits_2(
    tmp_path: Path, persona: Persona, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    script = tmp_path / "script.json"  # a scripted model: the local one may not be installed
    script.write_text('{"default": ["hello"]}')
    code = main(["run", "--otel", "--input", "hi", "--db", str(tmp_path / "m.sqlite"),
                 "--model", f"scripted:{script}", "--no-project"])
    err = capsys.readouterr().err
    assert code == 2 and "SEA352" in err and "Traceback" not in err
