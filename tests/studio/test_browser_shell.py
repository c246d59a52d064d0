"""The studio's shell in a real browser: the key gate, the navigation, the personas page."""

from __future__ import annotations

import pytest

from tests.studio.conftest import Studio

pytestmark = pytest.mark.browser


def test_a_key_is_asked_once_and_kept_for_the_tab(studio: Studio) -> None:
    from playwright.sync_api import expect

    page = studio.open("#/personas", key=False)
    expect(page.get_by_role("heading", name="SEA studio")).to_be_visible()
    page.get_by_label("API key").fill("not-a-key")
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_role("alert")).to_have_text("That key was not accepted.")
    studio.problems.clear()  # the refused key's 401 is the point of this step
    page.get_by_label("API key").fill(studio.server.token)
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_role("heading", name="Personas", exact=True)).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Personas", exact=True)).to_be_visible()
    expect(page.get_by_label("API key")).to_have_count(0)
    studio.shot("shell-personas")


def test_a_key_in_the_link_is_taken_out_of_the_address(studio: Studio) -> None:
    from playwright.sync_api import expect

    page = studio.open("#/personas")
    expect(page.get_by_role("navigation", name="Studio")).to_be_visible()
    assert "key=" not in page.url
    current = page.get_by_role("link", name="Personas", exact=True)
    expect(current).to_have_attribute("aria-current", "page")


def test_a_persona_is_created_and_listed(studio: Studio) -> None:
    from playwright.sync_api import expect

    page = studio.open("#/personas")
    form = page.get_by_role("form", name="New persona")
    form.get_by_label("Id").fill("mika")
    form.get_by_label("Name").fill("ミカ")
    form.get_by_role("button", name="Create").click()
    card = page.locator('[data-persona="mika"]')
    expect(card.get_by_role("heading")).to_have_text("ミカ (mika)")
    expect(card).to_contain_text("No pulse yet.")
    studio.shot("personas-created")
