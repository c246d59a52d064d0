"""``/v1/personas/{id}/messages|search|threads|pins``: a persona's memory over HTTP, with the
messages real pulses wrote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.server import REPLY
from tests.serve.test_agent_chat_ui import events_of
from tests.serve.v1app import App, serving

BASE = "/v1/personas/aoi"


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[App]:
    with serving(tmp_path) as app:
        for text in ("tell me about kumquats", "and about loquats"):
            stream = v1_pulse(app, text)
            assert stream[-1]["event"] == "end", stream
        yield app


def v1_pulse(app: App, text: str) -> list[dict[str, object]]:
    """A pulse of aoi, streamed to its end."""
    answer = app.client.post(f"{BASE}/pulses", json={"input": text},
                             headers={**app.as_("k-admin"), "Accept": "text/event-stream"})
    return events_of(answer.text)


def test_recent_messages_narrowed_by_thread_tag_and_before(v1: App) -> None:
    items = v1.get(f"{BASE}/messages", "k-read").json()["items"]
    said = [(m["role"], m["content"]) for m in items if "conversation" in m["tags"]]
    assert said == [("user", "tell me about kumquats"), ("assistant", REPLY),
                    ("user", "and about loquats"), ("assistant", REPLY)]
    assert [m["id"] for m in items] == sorted(m["id"] for m in items)
    last_two = v1.get(f"{BASE}/messages", params={"limit": 2}).json()["items"]
    assert [m["id"] for m in last_two] == [m["id"] for m in items[-2:]]
    earlier = v1.get(f"{BASE}/messages",
                     params={"limit": 2, "before": last_two[0]["id"]}).json()["items"]
    assert [m["id"] for m in earlier] == [m["id"] for m in items[-4:-2]]
    users = v1.get(f"{BASE}/messages", params={"tag": "conversation", "limit": 1,
                                               "before": last_two[-1]["id"]}).json()["items"]
    assert [m["content"] for m in users] == ["and about loquats"]
    main = items[0]["thread"]
    assert v1.get(f"{BASE}/messages", params={"thread": main}).json()["items"] == items
    assert v1.get(f"{BASE}/messages", params={"thread": "other"}).json()["items"] == []
    assert v1.get(f"{BASE}/messages", params={"limit": 0}).status_code == 422


def test_search_and_threads(v1: App) -> None:
    hits = v1.get(f"{BASE}/search", "k-read", params={"q": "kumquats"}).json()["items"]
    assert [h["message"]["content"] for h in hits] == ["tell me about kumquats"]
    assert v1.get(f"{BASE}/search", params={"q": "kumquats loquats"}).json()["items"] == []
    both = v1.get(f"{BASE}/search", params={"q": "kumquats loquats", "mode": "any"}).json()
    assert len(both["items"]) == 2
    tagged = v1.get(f"{BASE}/search", params={"q": "kumquats", "tag": "nope"}).json()
    assert tagged["items"] == []
    assert v1.get(f"{BASE}/search").status_code == 422  # q is needed
    threads = v1.get(f"{BASE}/threads", "k-read").json()["items"]
    assert threads[0]["parent"] is None


def test_pins_are_added_listed_and_removed_with_the_memory_role(v1: App) -> None:
    assert v1.get(f"{BASE}/pins", "k-read").json()["items"] == []
    made = v1.post(f"{BASE}/pins", json={"text": "Likes citrus."})
    assert made.status_code == 201 and made.json()["text"] == "Likes citrus."
    assert [p["text"] for p in v1.get(f"{BASE}/pins").json()["items"]] == ["Likes citrus."]
    for n in range(4):
        assert v1.post(f"{BASE}/pins", json={"text": f"fact {n}"}).status_code == 201
    sixth = v1.post(f"{BASE}/pins", json={"text": "one too many"})
    assert sixth.status_code == 409 and sixth.json()["error"]["code"] == "MEM011"
    pin_id = made.json()["id"]
    assert v1.delete(f"{BASE}/pins/{pin_id}").json() == {"removed": pin_id}
    gone = v1.delete(f"{BASE}/pins/{pin_id}")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "SEA820"
    assert v1.post(f"{BASE}/pins", "k-read", json={"text": "x"}).status_code == 403
    assert v1.delete(f"{BASE}/pins/1", "k-read").status_code == 403


def test_memory_routes_need_their_roles_and_hide_other_tenants(v1: App) -> None:
    reads = [("get", f"{BASE}/{p}") for p in ("messages", "search?q=x", "threads", "pins")]
    writes = [("post", f"{BASE}/pins"), ("delete", f"{BASE}/pins/1")]
    for method, path in reads + writes:
        assert v1.call(method, path, "k-none", {"text": "x"}).status_code == 403, path
        answer = v1.call(method, path, "k-globex", {"text": "x"})
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "SEA820", path
        other = v1.call(method, path.replace("/aoi", "/zed"), "k-admin", {"text": "x"})
        assert other.status_code == 404, path
