"""The pulse's bounds in the project file: ``[limits]`` fills ``--limit`` (each pair checked
as the option checks it) and ``tool_timeout`` fills ``--tool-timeout``."""

from __future__ import annotations

import pytest

from tests.project.conftest import Sea

LOOP = ('{"name": "count_up", "description": "Counts to three, then speaks.", '
        '"start_node": "start", "nodes": ['
        '{"id": "start", "type": "set", "assignments": {"n": 0}, "next": "step"}, '
        '{"id": "step", "type": "set", "assignments": {"n": "=n + 1"}, '
        '"conditional_next": {"field": "n", "cases": {"3": "done"}, "default": "step"}}, '
        '{"id": "done", "type": "speak", "action": "Counted to {n}."}]}')


def test_limits_from_each_source(sea: Sea, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sea.setting("limits") == ({}, "default")
    project = sea.write("sea.toml", 'tool_timeout = 5\n[limits]\nmax_steps = 40\n'
                        'unlisted_exec = "ask"\n')
    assert sea.setting("limits") == ({"max_steps": 40, "unlisted_exec": "ask"},
                                     f"{project}:2")
    assert sea.setting("tool_timeout") == (5.0, f"{project}:1")
    monkeypatch.setenv("SEA_LIMITS", "max_visits=7, max_steps=9")
    assert sea.setting("limits") == ({"max_visits": 7, "max_steps": 9}, "env SEA_LIMITS")
    assert sea.setting("limits", "run", "--limit", "max_depth=3") == \
        ({"max_depth": 3}, "flag --limit")


def test_a_wrong_limit_in_the_file_is_located_with_the_options_own_check(sea: Sea) -> None:
    path = sea.write("sea.toml", '[limits]\nmax_visit = 3\n')
    done = sea("run", "--input", "Hi")
    assert done.code == 2
    assert f"{path}:2:1: SEA383 error: 'limits.max_visit': no limit named 'max_visit'" in done.err
    assert "did you mean `max_visits`" in done.err
    path.write_text('[limits]\nmax_steps = true\n')
    done = sea("run", "--input", "Hi")
    assert done.code == 2 and "'limits' must be a table of numbers and words" in done.err


def test_the_file_s_limits_bound_the_pulse(sea: Sea) -> None:
    sea.write("books/count_up.json", LOOP)
    sea.write("script.json", '{"default": []}')
    sea.write("sea.toml", 'db = "memory.sqlite"\nplaybooks = ["books"]\n'
              'default_playbook = "count_up"\n[model]\nname = "scripted:script.json"\n'
              '[limits]\nmax_visits = 2\n')
    done = sea("run", "--input", "go", "--json")
    assert done.code == 1, done.err
    assert "max_visits" in done.out
    done = sea("run", "--input", "go", "--json", "--limit", "max_visits=5")
    assert done.code == 0, done.err
    assert "Counted to 3." in done.out
