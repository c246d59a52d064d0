"""The studio's run console in a real browser: the bundled ``meta_user`` on the scripted model
(its router says ``basic_chat``, ``sub_speak`` streams a long reply): the reply streams, the
graph marks ``sub_speak.compose`` running then done, and a reload in the middle of the run
re-joins it."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.serve.server import SPOKEN
from tests.studio.conftest import Studio

pytestmark = pytest.mark.browser

LAST_WORD = SPOKEN.split()[-1]


def _persona(studio: Studio, persona: str) -> None:
    with httpx.Client(base_url=studio.server.url, headers=studio.server.headers,
                      timeout=30) as http:
        made = http.post("/v1/personas", json={"id": persona, "name": persona})
        assert made.status_code in (200, 201), made.text


def _send(studio: Studio, persona: str, text: str) -> object:
    page = studio.open(f"#/run/{persona}")
    form = page.get_by_role("form", name="Message")
    form.get_by_label("Playbook").select_option("meta_user")
    form.get_by_label("Message").fill(text)
    form.get_by_role("button", name="Send").click()
    return page


def test_a_run_streams_its_reply_and_marks_the_callee_running_then_done(studio: Studio) -> None:
    from playwright.sync_api import expect

    _persona(studio, "runa")
    page = _send(studio, "runa", "Do you remember my cat? こんにちは")  # the router asks its model
    compose = page.locator('[data-callee="sub_speak"] [data-node="sub_speak.compose"]')
    expect(compose).to_have_attribute("data-state", "running")
    streaming = page.locator('[data-reply="streaming"]')
    expect(streaming).to_contain_text("w1 w2")  # the reply streams in before it is spoken
    expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    route = page.get_by_role("group", name="Graph of meta_user").locator('[data-node="route"]')
    expect(route).to_have_attribute("data-state", "done")
    expect(compose).to_have_attribute("data-state", "done", timeout=20_000)
    expect(page.locator('[data-reply="spoken"]')).to_contain_text(LAST_WORD)
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    expect(page.get_by_role("list", name="Messages")).to_contain_text("こんにちは")
    usage = page.get_by_label("Usage")
    expect(usage).to_contain_text("Model calls 2 / 40")  # the server's budget beside it
    events = page.get_by_role("list", name="Events of the pulse")
    expect(events.locator('[data-kind="pulse_end"]')).to_contain_text("ok")
    page.get_by_label("Kind").select_option("llm_call")
    expect(events.get_by_role("listitem")).to_have_count(2)
    events.get_by_role("listitem").first.locator("summary").first.click()
    expect(events.get_by_role("table", name="Prompt parts").first).to_be_visible()
    assert re.search(r"pulse=[0-9a-f-]{36}", page.url)
    studio.shot("run-console")


def test_a_reload_in_the_middle_of_a_run_rejoins_it(studio: Studio) -> None:
    from playwright.sync_api import expect

    _persona(studio, "runb")
    page = _send(studio, "runb", "Hello")
    compose = page.locator('[data-node="sub_speak.compose"]')
    expect(compose).to_have_attribute("data-state", "running")
    expect(page.locator('[data-reply="streaming"]')).to_contain_text("w1 w2")
    assert "pulse=" in page.url
    page.reload()
    compose = page.locator('[data-node="sub_speak.compose"]')
    expect(page.get_by_role("list", name="Messages")).to_contain_text("Hello")
    expect(page.locator('[data-node="route"]')).to_have_attribute("data-state", "done")
    expect(compose).to_have_attribute("data-state", re.compile("running|done"))
    studio.shot("run-rejoined")
    expect(compose).to_have_attribute("data-state", "done", timeout=20_000)
    expect(page.locator('[data-reply="spoken"]')).to_contain_text(LAST_WORD)
    events = page.get_by_role("list", name="Events of the pulse")
    expect(events.locator('[data-kind="pulse_start"]')).to_have_count(1)  # from the start, once


def test_an_approval_request_is_answered_in_place_and_the_pulse_goes_on(studio: Studio) -> None:
    from playwright.sync_api import expect

    from tests.serve.server import REPLY

    _persona(studio, "runc")
    page = studio.open("#/run/runc")
    form = page.get_by_role("form", name="Message")
    form.get_by_label("Playbook").select_option("asking")
    form.get_by_label("Message").fill("What did I say?")
    form.get_by_role("button", name="Send").click()
    request = page.get_by_role("region", name="Approval request")
    expect(request).to_contain_text("memory_recent")
    expect(page.locator('[data-node="look"]')).to_have_attribute("data-state", "waiting")
    request.get_by_role("button", name="Approve").click()
    expect(request).to_have_count(0)
    expect(page.locator('[data-reply="spoken"]')).to_have_text(REPLY)
    expect(page.locator('[data-node="reply"]')).to_have_attribute("data-state", "done")


def test_stop_cancels_the_pulse(studio: Studio) -> None:
    from playwright.sync_api import expect

    _persona(studio, "rund")
    page = studio.open("#/run/rund")
    form = page.get_by_role("form", name="Message")
    form.get_by_label("Playbook").select_option("slow")
    form.get_by_label("Message").fill("Tell me a long story")
    form.get_by_role("button", name="Send").click()
    expect(page.locator('[data-reply="streaming"]')).to_contain_text("w1 w2")
    form.get_by_role("button", name="Stop").click()
    graph = page.get_by_role("region", name=re.compile("^slow"))
    expect(graph.locator(".badge")).to_have_text("cancelled")
    expect(page.locator('[data-node="reply"]')).to_have_attribute("data-state", "failed")
    expect(form.get_by_role("button", name="Send")).to_be_enabled()
