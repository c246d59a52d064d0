"""A project file that cannot be used stops every command that reads it before anything
runs: each problem located by line and column, with the expected type or a did-you-mean,
exit code 2, no traceback."""

from __future__ import annotations

import pytest

from tests.project.conftest import Sea


def refused(sea: Sea, *argv: str) -> str:
    """Run ``sea ARGV`` (default ``sea config``) expecting a usage error; its stderr."""
    done = sea(*(argv or ("config",)))
    assert done.code == 2, (done.out, done.err)
    assert "Traceback" not in done.err
    return done.err


def test_an_unknown_key_is_located_with_a_did_you_mean(sea: Sea) -> None:
    path = sea.write("sea.toml", 'db = "m.sqlite"\n\nmodle = "local"\n')
    err = refused(sea)
    assert f"{path}:3:1: SEA382 error: unknown key 'modle' in the project file" in err
    assert "hint: did you mean 'model'?" in err


def test_an_unknown_key_in_a_table_is_located_at_its_own_line_and_column(sea: Sea) -> None:
    path = sea.write("sea.toml", '[budget]\nmax_calls = 3\n   max_token_out = 9\n')
    err = refused(sea)
    assert f"{path}:3:4: SEA382 error: unknown key 'budget.max_token_out'" in err
    assert "did you mean 'max_tokens_out'?" in err


def test_a_table_key_written_at_the_top_level_is_told_where_it_belongs(sea: Sea) -> None:
    path = sea.write("sea.toml", 'concurrency = 4\n')
    err = refused(sea)
    assert f"{path}:1:1: SEA382 error: unknown key 'concurrency'" in err
    assert "'concurrency' belongs in [worker]" in err


def test_a_value_of_the_wrong_type_names_the_expected_type(sea: Sea) -> None:
    path = sea.write("sea.toml", 'playbooks = "books"\n[model]\nname = 7\n')
    err = refused(sea)
    assert f"{path}:1:1: SEA383 error: 'playbooks' must be an array of strings, e.g. " \
           "[\"playbooks\"], not the string 'books'" in err
    assert f"{path}:3:1: SEA383 error: 'model.name' must be a non-empty string" in err
    assert "not the number 7" in err


def test_a_table_given_as_a_value_is_refused(sea: Sea) -> None:
    path = sea.write("sea.toml", 'budget = 5\n')
    assert f"{path}:1:1: SEA383 error: 'budget' is a table, not the number 5" in refused(sea)


@pytest.mark.parametrize(("line", "message"), [
    ("[budget]\nmax_calls = -1\n", "'budget.max_calls': expected a whole number >= 0, got '-1'"),
    ('when_busy = "later"\n', "'when_busy': expected one of wait, fail, got 'later'"),
    ("[model]\nstructured_method = \"xml\"\n", "'model.structured_method': expected one of "
     "auto, json_schema"),
])
def test_a_value_out_of_its_options_range_gets_the_options_own_check(
    sea: Sea, line: str, message: str,
) -> None:
    path = sea.write("sea.toml", line)
    err = refused(sea)
    assert f"{path}:{line.count(chr(10))}:1: SEA383 error: {message}" in err


def test_a_missing_file_the_project_names_is_located(sea: Sea) -> None:
    path = sea.write("sea.toml", '\nprices = "prices.json"\n')
    err = refused(sea)
    assert f"{path}:2:1: SEA383 error: 'prices': " in err
    assert str(sea.root / "prices.json") in err


def test_every_problem_is_reported_at_once(sea: Sea) -> None:
    sea.write("sea.toml", 'modle = "x"\n[budget]\nmax_calls = "3"\n[worker]\nticks = 1\n')
    err = refused(sea)
    assert err.count("error:") == 3
    assert "SEA382" in err and "SEA383" in err


def test_toml_syntax_errors_are_located(sea: Sea) -> None:
    path = sea.write("sea.toml", 'db = "m.sqlite"\nmodel = local\n')
    err = refused(sea)
    assert f"{path}:2:9: SEA381 error: not valid TOML: Invalid value" in err


def test_errors_in_a_pyproject_are_located_in_the_pyproject(sea: Sea) -> None:
    path = sea.write("pyproject.toml", '[project]\nname = "x"\n\n[tool.sea.model]\n'
                     'nmae = "local"\n')
    err = refused(sea)
    assert f"{path}:5:1: SEA382 error: unknown key 'model.nmae'" in err
    assert "did you mean 'name'?" in err


def test_a_broken_project_file_stops_a_command_before_it_touches_anything(sea: Sea) -> None:
    sea.write("sea.toml", 'db = "store/memory.sqlite"\n[budget]\nmax_calls = true\n')
    err = refused(sea, "memory", "recent")
    assert "'budget.max_calls' must be a whole number, not a boolean (true)" in err
    assert not (sea.root / "store").exists()
    assert not (sea.root.parent / "home").exists()
    err = refused(sea, "run", "--input", "Hi", "--model", "scripted:none.json")
    assert "SEA383" in err
    assert not (sea.root / "store").exists()


def test_a_bad_environment_value_names_the_variable(
    sea: Sea, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEA_MAX_CALLS", "many")
    err = refused(sea)
    assert "SEA383 error: environment variable SEA_MAX_CALLS='many': expected a whole " \
           "number, got 'many'" in err


def test_a_value_that_does_not_fit_makes_no_store_directory(sea: Sea) -> None:
    sea.write("sea.toml", 'db = "store/memory.sqlite"\nwhen_busy = "later"\n')
    err = refused(sea, "run", "--input", "Hi")
    assert "'when_busy': expected one of wait, fail, got 'later'" in err
    assert not (sea.root / "store").exists()


def test_a_store_whose_directory_cannot_be_made_is_a_usage_error(sea: Sea) -> None:
    sea.write("blocker", "a file where a directory should be")
    path = sea.write("sea.toml", 'db = "blocker/memory.sqlite"\n')
    err = refused(sea, "memory", "recent")
    assert f"SEA383 error: {path}:1: the store {sea.root / 'blocker' / 'memory.sqlite'}: " \
           f"cannot create its directory {sea.root / 'blocker'}" in err
