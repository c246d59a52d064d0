"""The eval set format: what it accepts (the minimal case of the routing set, YAML with
defaults, JSONL) and every mistake reported together, located (file, line, case, field)
with its fix, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from sea.errors import EvalSetError
from sea.eval.cases import load_sets
from tests.eval.conftest import CHAT_SCRIPT, EvalSea


def _problems(tmp_path: Path, name: str, text: str) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvalSetError) as caught:
        load_sets([path])
    return [d.format_human() for d in caught.value.diagnostics]


def test_the_minimal_case_and_yaml_defaults_are_read(tmp_path: Path) -> None:
    (tmp_path / "route.jsonl").write_text(
        '{"id": "dog-name", "input": "Do you remember what my dog\'s name is?", '
        '"lang": "en", "tags": ["memory"], "expect": {"route": "memory_research"}}\n\n'
        '{"id": "ja-1", "input": "こんにちは", "lang": "ja", "expect": {"route_any": '
        '["basic_chat"]}}\n', encoding="utf-8")
    (tmp_path / "more.yaml").write_text("""name: talk
defaults:
  lang: en
  persona: {pins: [likes tea]}
  expect: {status: ok}
cases:
  - id: hi
    input: Hi!
    persona: {messages: [{role: user, content: Hello}]}
    expect: {route: basic_chat}
  - id: two
    turns: [Hi!, "What did I just say?"]
    lang: ja
""", encoding="utf-8")
    cases = {c.key: c for c in load_sets([tmp_path])}
    assert sorted(cases) == ["route/dog-name", "route/ja-1", "talk/hi", "talk/two"]
    dog = cases["route/dog-name"]
    assert (dog.turns, dog.playbook, dog.tags, dog.lang, dog.line) == (
        ("Do you remember what my dog's name is?",), "meta_user", ("memory",), "en", 1)
    assert cases["route/ja-1"].line == 3
    hi = cases["talk/hi"]
    assert hi.expect == {"status": "ok", "route": "basic_chat"}  # merged one level deep
    assert hi.persona == {"pins": ["likes tea"], "messages": [{"role": "user",
                                                               "content": "Hello"}]}
    assert (hi.lang, hi.line) == ("en", 7)
    two = cases["talk/two"]
    assert (two.turns, two.lang, two.expect) == (("Hi!", "What did I just say?"), "ja",
                                                 {"status": "ok"})


def test_every_mistake_of_a_yaml_set_is_located_with_its_fix(tmp_path: Path) -> None:
    found = _problems(tmp_path, "bad.yaml", """name: bad
owner: me
cases:
  - id: one
    input: Hi
    expect:
      rout: basic_chat
  - id: two
  - id: three
    input: Hi
    expect:
      status: done
  - id: bad id
    input: Hi
  - id: one
    input: again
    expect: {reply: {regex: "(unclosed"}}
""")
    where = str(tmp_path / "bad.yaml")
    assert found[0] == (f"{where}:2:1: SEA397 error: unknown set field 'owner' (at /owner)\n"
                        "    hint: the fields of a set are name, description, defaults, cases")
    assert found[1].startswith(f"{where}:7:7: SEA397 error: case 'one': expect: unknown "
                               "field 'rout' (at /expect)")
    assert "hint: the fields here are memos, nodes_not_ran, nodes_ran, plan, reply" in found[1]
    assert found[2].startswith(f"{where}:8:5: SEA397 error: case 'two': the case needs "
                               "exactly one of `input` (one text) or `turns`")
    assert found[3].startswith(f"{where}:12:15: SEA397 error: case 'three': expect.status: "
                               "'done' is not one of")
    assert "hint: use one of ok, error, waiting, cancelled" in found[3]
    assert "case 'bad id': id: 'bad id' does not match" in found[4]
    assert "hint: an id is letters, digits and _ . : - (no spaces)" in found[4]
    assert f"{where}:15:" in found[5] and "SEA398" in found[5]
    assert "expect.reply.regex: not a regex" in found[5]
    assert len(found) == 6  # the duplicate 'one' has a bad regex: it is not read, not doubled


def test_jsonl_mistakes_name_their_line(tmp_path: Path) -> None:
    found = _problems(tmp_path, "bad.jsonl", '{"id": "a", "input": "Hi"}\n'
                      '{"id": "b", "input": \n'
                      '{"id": "a", "input": "Hi", "expect": {"tool_calls": [{"args": {}}]}}\n'
                      '{"id": "c", "input": "Hi", "turns": ["Hi"]}\n'
                      '{"id": "a", "input": "Hi"}\n')
    where = str(tmp_path / "bad.jsonl")
    assert found[0].startswith(f"{where}:2:1: SEA396 error: not JSON")
    assert found[1].startswith(f"{where}:3:1: SEA397 error: case 'a': expect.tool_calls.0: "
                               "'tool' is a required property")
    assert found[2].startswith(f"{where}:4:1: SEA397 error: case 'c': the case needs exactly "
                               "one of `input`")
    assert found[3] == (f"{where}:5:1: SEA398 error: case 'a': case id 'a' is used twice in "
                        "set 'bad' (first at line 1) (at /id)\n"
                        "    hint: give each case of a set its own id")


def test_unreadable_files(tmp_path: Path) -> None:
    assert _problems(tmp_path, "syntax.yaml", "cases:\n  - id: [a\n")[0].startswith(
        f"{tmp_path / 'syntax.yaml'}:3:1: SEA396 error: not YAML")
    assert _problems(tmp_path, "list.yaml", "- id: a\n")[0].endswith(
        "hint: write `name: ...` and `cases:` with one `- id: ...` each")
    assert "an eval set is a .yaml, .yml or .jsonl file" in _problems(
        tmp_path, "set.json", "{}")[0]
    assert "no cases in the eval sets given" in _problems(tmp_path, "empty.jsonl", "\n")[0]
    with pytest.raises(EvalSetError, match="SEA396 error: no such file or directory"):
        load_sets([tmp_path / "missing.yaml"])


def test_the_command_reports_a_bad_set_and_exits_2_without_running(sea: EvalSea) -> None:
    sea.write("bad.yaml", "cases:\n  - id: x\n    input: Hi\n    expect: {route: 3}\n")
    done = sea("eval", "bad.yaml", "--model", sea.model(CHAT_SCRIPT))
    assert done.code == 2
    assert "bad.yaml:4:21: SEA397 error: case 'x': expect.route: 3 is not of " \
        "type 'string'" in done.err
    assert "Traceback" not in done.err
    assert not (sea.root.parent / "home" / "evals").exists()  # nothing ran, nothing stored
    sea.write("good.yaml", "cases:\n  - {id: x, input: Hi, playbook: no_such_playbook}\n")
    done = sea("eval", "good.yaml", "--model", sea.model(CHAT_SCRIPT))
    assert done.code == 2
    assert "good.yaml:2: case 'x': playbook 'no_such_playbook' cannot be used" in done.err
    done = sea("eval", "good.yaml", "--model", sea.model(CHAT_SCRIPT), "--tag", "nope")
    assert done.code == 2 and "--tag nope: no case has it" in done.err
