"""The studio's playbooks library and editor in a real browser: a typo shows its diagnostic at
its line and on its node and the fix clears it; the variable overlay; save writes the file;
a change on disk reloads the text."""

from __future__ import annotations

import orjson
import pytest

from tests.studio.conftest import Studio

pytestmark = pytest.mark.browser

EDITED = {
    "name": "edited", "description": "Looks at memory, then answers.", "start_node": "look",
    "nodes": [
        {"id": "look", "type": "tool", "action": "memory_recent", "args": {"limit": 1},
         "output_key": "recent", "next": "reply"},
        {"id": "reply", "type": "llm", "action": "Say hello. {recent}", "speak": True},
    ],
}


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def test_the_library_draws_a_playbook_with_its_checks(studio: Studio) -> None:
    from playwright.sync_api import expect

    broken = {**EDITED, "name": "drawn_broken", "nodes": [{**EDITED["nodes"][0], "next": "nope"}]}
    (studio.server.root / "books" / "drawn_broken.json").write_bytes(orjson.dumps(broken))
    page = studio.open("#/playbooks")
    row = page.locator('tr[data-playbook="drawn_broken"]')
    expect(row).to_contain_text("1 error")
    row.get_by_role("button", name="drawn_broken").click()
    graph = page.get_by_role("group", name="Graph of drawn_broken")
    expect(graph.locator('[data-node="look"]')).to_have_class(has_class("error-diag"))
    expect(graph.locator('[data-badge="look"] text')).to_have_text("1")
    expect(graph.locator('[data-badge="look"] title')).to_contain_text("SEA022 error")
    expect(graph.locator('[data-node="nope"]')).to_have_count(1)
    expect(page.get_by_role("list", name="Diagnostics")).to_contain_text("SEA022")
    studio.shot("playbooks-library")

    page = studio.open("#/playbooks?show=meta_user")
    expect(page.get_by_role("heading", name="Playbooks", exact=True)).to_be_visible()
    row = page.locator('tr[data-playbook="basic_chat"]')
    expect(row).to_contain_text("router-callable")
    expect(row).to_contain_text("bundled")
    expect(page.locator('tr[data-playbook="chat"]')).to_contain_text("server")
    graph = page.get_by_role("group", name="Graph of meta_user")
    for node in ("route", "check", "run", "speak"):
        expect(graph.locator(f'[data-node="{node}"]')).to_be_visible()
    expect(graph.locator('[data-edge][data-source="check"][data-target="speak"]')).to_contain_text(
        "basic_chat")


def test_a_typo_shows_its_diagnostic_at_its_line_and_on_its_node(studio: Studio) -> None:
    from playwright.sync_api import expect

    file = studio.server.root / "books" / "edited.json"
    text = orjson.dumps(EDITED, option=orjson.OPT_INDENT_2).decode() + "\n"
    file.write_text(text)
    page = studio.open("#/playbooks/edited")
    editor = page.get_by_label("JSON of edited")
    expect(editor).to_have_value(text)
    expect(page.get_by_role("status").filter(has_text="Valid")).to_be_visible()
    look = page.locator('[data-node="look"]')
    expect(look).not_to_have_class(has_class("error-diag"))

    typo = text.replace('"next": "reply"', '"next": "replly"')
    editor.fill(typo)
    line = _line_of(typo, '"next": "replly"')
    expect(page.locator(f'.gutter [data-line="{line}"]')).to_have_class("ln diag-error")
    expect(look).to_have_class(has_class("error-diag"))
    diagnostic = page.get_by_role("list", name="Diagnostics").get_by_role("listitem")
    expect(diagnostic).to_have_count(1)
    expect(diagnostic).to_contain_text("replly")
    expect(diagnostic).to_contain_text("node look")
    expect(page.locator('[data-node="replly"]')).to_have_count(1)  # the missing target drawn
    studio.shot("editor-diagnostic")

    diagnostic.get_by_role("button", name=f"Go to line {line}:").click()
    expect(look).to_have_attribute("aria-pressed", "true")
    caret = editor.evaluate("element => element.value.slice(0, element.selectionStart)")
    assert caret.count("\n") + 1 == line

    editor.fill(typo[:-30])  # not JSON: the last graph stays
    expect(page.get_by_role("status").filter(has_text="error(s)")).to_contain_text("1 error")
    expect(look).to_be_visible()
    expect(page.locator(".gutter .diag-error")).to_have_count(1)

    editor.fill(text)  # the fix
    expect(page.get_by_role("status").filter(has_text="Valid")).to_be_visible()
    expect(look).not_to_have_class(has_class("error-diag"))
    expect(page.locator(".gutter .diag-error")).to_have_count(0)

    page.get_by_label("Variable").select_option("recent")
    expect(look).to_have_class(has_class("defines"))
    expect(page.locator('[data-node="reply"]')).to_have_class(has_class("reads"))


def test_save_writes_the_file_and_a_change_on_disk_reloads(studio: Studio) -> None:
    from playwright.sync_api import expect

    file = studio.server.root / "books" / "saved.json"
    text = orjson.dumps({**EDITED, "name": "saved"}, option=orjson.OPT_INDENT_2).decode()
    file.write_text(text)
    page = studio.open("#/edit/saved")
    editor = page.get_by_label("JSON of saved")
    expect(editor).to_have_value(text)
    saved = text.replace("Say hello.", "Say hello kindly.")
    editor.fill(saved)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    assert file.read_text() == saved

    on_disk = saved.replace("kindly", "warmly")
    file.write_text(on_disk)  # changed by someone else: no unsaved edits, so it reloads
    expect(editor).to_have_value(on_disk, timeout=10_000)
    expect(page.get_by_role("status").filter(has_text="changed on disk")).to_be_visible()

    editor.fill(on_disk + " ")  # unsaved edits: a change on disk is said, not loaded over them
    file.write_text(text)
    expect(page.get_by_role("alert")).to_contain_text("Your edits are not saved", timeout=10_000)
    expect(editor).to_have_value(on_disk + " ")
    page.get_by_role("button", name="Reload from disk (drop my edits)").click()
    expect(editor).to_have_value(text)

    page = studio.open("#/edit/meta_user")  # bundled: read only
    expect(page.get_by_text("bundled (read only)")).to_be_visible()
    page.get_by_label("JSON of meta_user").press("End")
    page.get_by_label("JSON of meta_user").type(" ")
    expect(page.get_by_role("button", name="Save")).to_be_disabled()


def has_class(name: str) -> object:
    """A class list that contains ``name`` (as a regular expression for ``to_have_class``)."""
    import re

    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")
