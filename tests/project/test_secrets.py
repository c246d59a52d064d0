"""Secrets are never written in a project file: a model option that looks like one must
name an environment variable (``{ env = "NAME" }``), which is read when a command runs and
never shown."""

from __future__ import annotations

import pytest

from sea.cli import build_parser
from sea.cli._project.resolve import prepare, resolve
from tests.project.conftest import Sea


@pytest.mark.parametrize("name", ["api_key", "openai_api_key", "access_token", "password",
                                  "client_secret", "private_key"])
def test_a_secret_written_in_the_file_is_refused_without_echoing_it(
    sea: Sea, name: str,
) -> None:
    path = sea.write("sea.toml", f'[model]\nname = "openai:gpt-4o-mini"\n'
                     f'options = {{ temperature = 0.2, {name} = "sk-live-0123456789" }}\n')
    done = sea("config")
    assert done.code == 2
    column = len("options = { temperature = 0.2, ") + 1
    assert f"{path}:3:{column}: SEA384 error: 'model.options.{name}' looks like a secret" \
        in done.err
    assert f'hint: {name} = {{ env = "{name.upper()}" }}, and export {name.upper()}' in done.err
    assert "sk-live" not in done.err + done.out


def test_a_secret_in_a_nested_table_is_refused_too(sea: Sea) -> None:
    path = sea.write("sea.toml", '[light_model]\nname = "openai:x"\n\n'
                     '[light_model.options.default_headers]\nx_api_key = "abc"\n')
    done = sea("config")
    assert done.code == 2
    assert f"{path}:5:1: SEA384 error: 'light_model.options.default_headers.x_api_key'" \
        in done.err


def test_an_environment_reference_is_shown_by_name_and_never_by_value(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = sea.write("sea.toml", '[model]\nname = "openai:gpt-4o-mini"\n'
                        'options = { api_key = { env = "MY_KEY" }, temperature = 0 }\n')
    monkeypatch.setenv("MY_KEY", "sk-live-secret")
    done = sea("config", "--json")
    assert done.code == 0, done.err
    assert "sk-live-secret" not in done.out
    assert sea.setting("model.options") == (
        {"api_key": {"env": "MY_KEY"}, "temperature": 0}, f"{project}:3")
    table = sea("config")
    assert table.code == 0 and "MY_KEY" in table.out and "sk-live-secret" not in table.out


def test_a_secret_given_as_a_flag_is_hidden(sea: Sea) -> None:
    value, source = sea.setting("model.options", "run", "--model-option", "api_key=sk-flag",
                                "--model-option", "temperature=0.5")
    assert value == {"api_key": "(hidden)", "temperature": 0.5}
    assert source == "flag --model-option"


def test_a_command_that_runs_reads_the_referenced_variable(sea: Sea) -> None:
    sea.write("sea.toml", '[model]\noptions = { api_key = { env = "MY_KEY" }, '
              'extra = { token = { env = "MY_TOKEN" }, depth = 2 } }\n')
    parser = build_parser("run")
    slots = prepare(parser)
    args = parser.parse_args(["run", "--input", "Hi"])
    resolve(args, slots, {"MY_KEY": "sk-from-env", "MY_TOKEN": "t-from-env"}, sea.root)
    assert args.model_option == [("api_key", "sk-from-env"),
                                 ("extra", {"token": "t-from-env", "depth": 2})]


def test_a_referenced_variable_that_is_not_set_stops_the_command(sea: Sea) -> None:
    path = sea.write("sea.toml", 'db = "memory.sqlite"\n[model]\nname = "scripted:s.json"\n'
                     'options = { api_key = { env = "UNSET_KEY_FOR_TEST" } }\n')
    done = sea("run", "--input", "Hi")
    assert done.code == 2
    assert f"{path}:4:1: SEA385 error: 'model.options' refers to the environment variable " \
           "UNSET_KEY_FOR_TEST, which is not set" in done.err
    assert not (sea.root / "memory.sqlite").exists()
    shown = sea.setting("model.options")  # sea config shows the reference all the same
    assert shown[0] == {"api_key": {"env": "UNSET_KEY_FOR_TEST"}}


def test_an_environment_reference_must_be_alone_in_its_table(sea: Sea) -> None:
    path = sea.write("sea.toml", '[model]\noptions = { api_key = { env = "K", value = "x" } }\n')
    done = sea("config")
    assert done.code == 2
    assert f"{path}:2:13: SEA383 error: 'model.options.api_key' refers to the environment" \
        in done.err
