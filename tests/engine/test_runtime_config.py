"""A runtime's configuration: frozen, checked when it is made, built the same way from Python
and from the command line's project file and flags; the runtime takes it as it is."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from saimemory.records import Persona
from saimemory.sqlite import SQLiteStore
from sea import ModelSet, Runtime, RuntimeConfig, UsageError
from sea.chat.scripted import ScriptedChatModel
from sea.cli import build_parser
from sea.cli._project.resolve import prepare, resolve
from sea.cli._runtime import runtime_args
from sea.engine.limits import Limits


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    made = SQLiteStore(tmp_path / "memory.sqlite")
    yield made  # type: ignore[misc]
    made.close()


def _models() -> ModelSet:
    return ModelSet.single(ScriptedChatModel.from_mapping({}))


def test_the_configuration_settles_its_inputs(store: SQLiteStore, tmp_path: Path) -> None:
    config = RuntimeConfig(store, _models(), library=tmp_path, workspace=str(tmp_path),
                           when_busy="fail", busy_timeout=2, gates={})
    assert config.library.get("meta_user").name == "meta_user"  # the bundled ones after
    assert config.workspace == tmp_path
    assert (config.when_busy, config.busy_timeout) == ("fail", 2)
    assert config.limits == Limits() and config.tools == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.keep_checkpoints = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.gates["x"] = None  # type: ignore[index]


@pytest.mark.parametrize(("options", "words"), [
    ({"library": "nowhere"}, "playbook directory not found: nowhere"),
    ({"workspace": "nowhere"}, "workspace root 'nowhere' does not exist"),
    ({"max_retries": -1}, "max_retries must be a whole number >= 0"),
    ({"when_busy": "later"}, "when_busy must be 'wait' or 'fail'"),
    ({"busy_timeout": -1.0}, "busy_timeout must be >= 0 seconds"),
])
def test_a_mistake_is_a_usage_error_when_the_configuration_is_made(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    options: dict[str, object], words: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    given = {"library": [], **options}
    with pytest.raises(UsageError, match=words):
        RuntimeConfig(store, _models(), **given)  # type: ignore[arg-type]


def test_with_options_is_a_checked_copy(store: SQLiteStore, tmp_path: Path) -> None:
    config = RuntimeConfig(store, _models(), library=[], when_busy="fail", busy_timeout=3)
    kept = config.with_options(keep_checkpoints=True)
    assert kept.keep_checkpoints and not config.keep_checkpoints
    assert (kept.when_busy, kept.busy_timeout, kept.library) == ("fail", 3, config.library)
    with pytest.raises(UsageError, match="max_retries"):
        config.with_options(max_retries=-2)


def test_the_runtime_takes_a_configuration_and_runs_by_it(
    store: SQLiteStore, tmp_path: Path
) -> None:
    config = RuntimeConfig(store, _models(), library=[],
                           checkpoint_path=tmp_path / "checkpoints.sqlite",
                           keep_checkpoints=True)
    with Runtime(config) as runtime:
        assert runtime.config is config and runtime.keeps_checkpoints
        first = runtime.run_pulse(Persona("aoi", "Aoi", ""), "basic_chat", "", pulse_id="a")
        again = runtime.run_continue("a")  # its checkpoints were kept: it ended
        assert first.status == again.status
    with pytest.raises(UsageError, match="Runtime takes a RuntimeConfig"):
        Runtime(store)  # type: ignore[arg-type]


def test_the_command_line_builds_the_configuration_from_the_project_file_and_flags(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "books").mkdir()
    (tmp_path / "room").mkdir()
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {}}))
    (tmp_path / "sea.toml").write_text(
        'playbooks = ["books"]\nworkspace = "room"\nwhen_busy = "fail"\n'
        f'db = "memory.sqlite"\n[model]\nname = "scripted:{script}"\n', encoding="utf-8")
    parser = build_parser(only="run")
    slots = prepare(parser)
    args = parser.parse_args(["run", "--input", "hi", "--busy-timeout", "7",
                              "--limit", "max_steps=9", "--ask-before", "send_mail"])
    resolve(args, slots, {}, tmp_path)
    setup = runtime_args(args)
    config = setup.config(store, keep_checkpoints=True)
    assert [d.name for d in setup.library.dirs][:1] == ["books"]
    assert config.workspace == tmp_path / "room"
    assert (config.when_busy, config.busy_timeout) == ("fail", 7)
    assert config.limits.max_steps == 9
    assert config.limits.approval_tools == frozenset({"send_mail"})
    assert config.keep_checkpoints
    assert str(config.checkpoint_path).endswith("memory.checkpoints.sqlite")
