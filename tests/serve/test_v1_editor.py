"""What the studio's editor needs: where variables are defined and read (in ``POST
/v1/validate``), a playbook's ETag (a poll for a change on disk), and ``PUT
/v1/playbooks/{name}`` writing the server's own playbooks only, never over a change on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.serve.v1app import App, serving

FLOW = {
    "name": "flow", "description": "Sets a value, reads it and one nobody sets.",
    "start_node": "a",
    "input_schema": [{"name": "topic", "type": "string"}],
    "nodes": [
        {"id": "a", "type": "set", "assignments": {"greeting": "hi {topic}"}, "next": "b"},
        {"id": "b", "type": "set", "assignments": {"out": "{greeting} {missing} {input}"}},
    ],
}


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        yield app


def test_validate_says_where_each_variable_is_defined_and_read(v1: App) -> None:
    answer = v1.post("/v1/validate", json={"text": orjson.dumps(FLOW).decode()}).json()
    found = {item["name"]: item for item in answer["variables"]}
    assert found["greeting"]["defined_by"] == ["a"] and found["greeting"]["read_by"] == ["b"]
    assert found["topic"]["defined_by"] == ["input_schema"] and found["topic"]["read_by"] == ["a"]
    assert found["missing"]["defined"] is False and found["missing"]["read_by"] == ["b"]
    assert found["input"]["defined"] and found["input"]["builtin"]
    assert found["greeting"]["defined"] and not found["greeting"]["builtin"]
    codes = {d["node_id"]: d["code"] for d in answer["diagnostics"]}
    assert codes["b"]  # the undefined read is also the validator's diagnostic on `b`
    assert v1.post("/v1/validate", json={"text": "{"}).json()["variables"] == []


def test_a_playbook_has_an_etag_and_an_unchanged_one_answers_304(v1: App) -> None:
    shown = v1.get("/v1/playbooks/chat")
    etag = shown.headers["etag"]
    assert etag == f'"{shown.json()["sha256"]}"' and shown.json()["writable"]
    same = v1.client.get("/v1/playbooks/chat",
                         headers={**v1.as_("k-read"), "If-None-Match": etag})
    assert same.status_code == 304 and same.headers["etag"] == etag
    (v1.root / "books" / "chat.json").write_bytes(orjson.dumps({**FLOW, "name": "chat"}))
    changed = v1.client.get("/v1/playbooks/chat",
                            headers={**v1.as_("k-read"), "If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert not v1.get("/v1/playbooks/meta_user").json()["writable"]


def _put(v1: App, name: str, text: str, key: str = "k-admin", **headers: str) -> Any:
    return v1.client.put(f"/v1/playbooks/{name}", json={"text": text},
                         headers={**v1.as_(key), **headers})


def test_save_writes_the_servers_playbook_unless_it_changed_on_disk(v1: App) -> None:
    file = v1.root / "books" / "chat.json"
    etag = v1.get("/v1/playbooks/chat").headers["etag"]
    text = orjson.dumps({**FLOW, "name": "chat"}, option=orjson.OPT_INDENT_2).decode()
    saved = _put(v1, "chat", text, **{"If-Match": etag})
    assert saved.status_code == 200, saved.text
    assert file.read_text() == text
    assert saved.json()["sha256"] != etag.strip('"')
    assert v1.get("/v1/playbooks/chat").json()["text"] == text
    stale = _put(v1, "chat", text + " ", **{"If-Match": etag})  # the old version
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "SEA830"
    assert "changed on disk" in stale.json()["error"]["message"]
    assert file.read_text() == text  # not overwritten
    assert not list(file.parent.glob(".chat.json.*"))  # no temporary file left


def test_save_refuses_bundled_playbooks_renames_and_keys_without_author(v1: App) -> None:
    bundled = _put(v1, "meta_user", "{}")
    assert bundled.status_code == 403
    assert bundled.json()["error"]["code"] == "SEA831"
    assert "--playbooks" in bundled.json()["error"]["hint"]
    renamed = _put(v1, "chat", orjson.dumps(FLOW).decode())
    assert renamed.status_code == 422
    assert _put(v1, "chat", "{}", "k-read").status_code == 403
    assert _put(v1, "nope", "{}").status_code == 404
