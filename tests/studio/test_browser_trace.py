"""The studio's pulses (a timeline, a trace downloaded and opened again), memory (search,
pins), stats and regression pages in a real browser."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.serve.server import REPLY
from tests.serve.test_agent_chat_ui import events_of
from tests.studio.conftest import Studio
from tests.studio.test_browser_review import persona

pytestmark = pytest.mark.browser


def ran(http: httpx.Client, who: str, text: str) -> str:
    """A pulse of ``who`` on the chat playbook, streamed to its end; its id."""
    with http.stream("POST", f"/v1/personas/{who}/pulses", json={"input": text},
                     headers={"Accept": "text/event-stream"}) as response:
        events = events_of(response.read().decode())
    assert events[-1]["event"] == "end", events
    pulse_id: str = events[0]["data"]["pulse_id"]
    return pulse_id


def test_a_pulse_is_a_timeline_its_trace_downloads_and_opens_again(
        studio: Studio, http: httpx.Client, tmp_path: Any) -> None:
    from playwright.sync_api import expect

    who = persona(http, "trace-b")
    pulse_id = ran(http, who, "こんにちは")
    page = studio.open(f"#/pulses/{pulse_id}")
    timeline = page.get_by_role("list", name="Timeline of the pulse")
    rows = timeline.get_by_role("listitem")
    expect(rows).to_have_count(5)
    for index, kind in enumerate(["memory_write", "node", "llm", "memory_write", "spoken"]):
        expect(rows.nth(index)).to_have_attribute("data-kind", kind)
    expect(rows.nth(0)).to_contain_text("memory user")  # the user's message, stored
    page.get_by_role("button", name="model scripted chat.reply", exact=False).click()
    details = page.get_by_role("complementary", name="Details")
    expect(details.get_by_role("heading", level=2)).to_have_text("model scripted chat.reply")
    expect(details).to_contain_text("Tokens")
    expect(details.get_by_role("table", name="Prompt parts")).to_be_visible()
    expect(details).to_contain_text(REPLY)
    expect(page.get_by_label("Totals")).to_contain_text("1 model calls")
    studio.shot("pulse-timeline")
    with page.expect_download() as waiting:
        page.get_by_role("button", name="Download trace").click()
    saved = tmp_path / "pulse.trace.json"
    waiting.value.save_as(saved)
    trace = json.loads(saved.read_text())
    assert trace["pulse_id"] == pulse_id and trace["input"] == "こんにちは"
    page.set_viewport_size({"width": 390, "height": 800})
    studio.shot("pulse-timeline-390")
    page.get_by_role("link", name="All pulses").click()
    page.get_by_label("Open a trace file").set_input_files(str(saved))
    opened = page.get_by_role("list", name="Timeline of the trace file")
    expect(opened.locator("li")).to_have_count(4)  # a trace keeps no spoken event
    for index, kind in enumerate(["memory_write", "node", "llm", "memory_write"]):
        expect(opened.locator("li").nth(index)).to_have_attribute("data-kind", kind)
    expect(page.get_by_role("heading", level=1)).to_have_text("Trace file pulse.trace.json")


def test_memory_search_finds_a_message_and_pins_come_and_go(
        studio: Studio, http: httpx.Client) -> None:
    from playwright.sync_api import expect

    who = persona(http, "memo-b")
    ran(http, who, "富士山に登りたい")
    ran(http, who, "the weather is nice")
    page = studio.open(f"#/memory/{who}")
    recent = page.get_by_role("list", name="Recent messages")
    expect(recent.get_by_role("listitem")).to_have_count(4)
    search = page.get_by_role("search", name="Search memory")
    search.get_by_label("Words", exact=True).fill("富士山")
    search.get_by_role("button", name="Search").click()
    hits = page.get_by_role("list", name="Search results").get_by_role("listitem")
    expect(hits).to_have_count(1)
    expect(hits).to_contain_text("富士山に登りたい")
    expect(hits).to_contain_text("user")
    studio.shot("memory-search")
    page.get_by_label("New pin").fill("山が好き")
    page.get_by_role("button", name="Pin", exact=True).click()
    pins = page.get_by_role("list", name="Pinned items")
    expect(pins.get_by_role("listitem")).to_have_text(["山が好きUnpin"])
    assert [p["text"] for p in http.get(f"/v1/personas/{who}/pins").json()["items"]] == ["山が好き"]
    page.get_by_role("button", name="Unpin “山が好き”").click()
    expect(page.get_by_text("Nothing pinned.")).to_be_visible()


def test_stats_are_charts_with_their_figures(studio: Studio, http: httpx.Client) -> None:
    from playwright.sync_api import expect

    ran(http, persona(http, "stats-b"), "count me")
    page = studio.open("#/stats")
    node = page.get_by_role("figure", name="By node: calls")
    expect(node.locator('g[data-key="chat.reply"] rect.bar')).to_have_count(1)
    expect(node.get_by_role("img")).to_have_attribute(
        "aria-label", "By node, Calls: bar chart; the figures are in the table below")
    node.get_by_text("Figures of by node").click()
    expect(node.get_by_role("table", name="By node").get_by_role("rowheader")).to_contain_text(
        ["chat.reply"])
    page.get_by_label("Chart", exact=True).select_option("tokens")
    expect(page.get_by_role("figure", name="By model: tokens (in + out)")).to_be_visible()
    studio.shot("stats")


def test_regression_replays_a_recorded_trace_and_shows_where_it_diverges(
        studio: Studio, http: httpx.Client) -> None:
    from playwright.sync_api import expect

    pulse_id = ran(http, persona(http, "regress-b"), "replay me")
    trace = http.get(f"/v1/pulses/{pulse_id}/trace").json()
    traces = studio.server.root / "traces"
    (traces / "good.json").write_text(json.dumps(trace))
    changed = {**trace, "spoken": ["something else"]}
    (traces / "edited.json").write_text(json.dumps(changed))
    page = studio.open("#/regression")
    page.get_by_role("button", name="Replay all (2)").click()
    rows = page.get_by_role("table", name="Traces")
    expect(rows.locator('[data-trace="good.json"]')).to_contain_text("matched")
    edited = rows.locator('[data-trace="edited.json"]')
    expect(edited).to_contain_text("diverged at step")
    expect(edited).to_contain_text("spoken")
    expect(page.get_by_role("status").filter(has_text="replayed")).to_have_text(
        "1 matched, 1 diverged or failed of 2 replayed")
    studio.shot("regression")


def test_a_large_trace_file_is_drawn_in_chunks(studio: Studio, tmp_path: Any) -> None:
    from playwright.sync_api import expect

    nodes = [{"seq": i + 1, "playbook": "big", "node": f"n{i}", "type": "pass", "depth": 0}
             for i in range(1000)]
    trace = {"version": 1, "pulse_id": "p-big", "playbook": "big", "status": "ok",
             "duration_s": 3.0, "error": None, "nodes": nodes, "llm_calls": [],
             "tool_calls": [], "memory_writes": []}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(trace))
    page = studio.open("#/pulses")
    page.get_by_label("Open a trace file").set_input_files(str(path))
    expect(page.get_by_role("status").filter(has_text="Drawing")).to_contain_text(
        "of 1000 rows")  # drawn a frame at a time, the page answering in between
    rows = page.get_by_role("list", name="Timeline of the trace file").locator("li")
    expect(rows).to_have_count(1000, timeout=15_000)  # a loaded machine is slow
    expect(page.get_by_role("status").filter(has_text="Drawing")).to_have_count(0)
    page.get_by_role("button", name="big.n999", exact=False).click()
    expect(page.get_by_role("complementary", name="Details").get_by_role(
        "heading", level=2)).to_have_text("big.n999")
