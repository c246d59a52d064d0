"""The studio's Evals page in a real browser, on two runs a real ``sea eval`` stored in the
server's ``--evals`` directory (scripted models): the runs listed newest first, a run's
failed case with each expectation's expected and observed values, and the comparison with
the run before (regressed in red, improved in green)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import orjson
import pytest

from tests.eval.conftest import CHAT_SCRIPT, MEMORY_SCRIPT
from tests.serve.server import ROOT, Server
from tests.serve.test_v1_evals import CASES
from tests.studio.conftest import Studio

pytestmark = pytest.mark.browser


def sea_eval(server: Server, script: dict[str, Any], name: str, *argv: str) -> str:
    """Run ``sea eval`` of :data:`CASES` on a scripted model, its run stored where the
    server reads runs; the run's id."""
    work = server.root / "evalwork"
    work.mkdir(exist_ok=True)
    (work / "greet.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in CASES))
    (work / name).write_bytes(orjson.dumps(script))
    env = {key: value for key, value in os.environ.items() if not key.startswith("SEA_")}
    env.update({"SEA_HOME": str(work / "home"), "PYTHONPATH": str(ROOT)})
    done = subprocess.run(
        [sys.executable, "-m", "sea", "eval", "greet.jsonl", "--model", f"scripted:{name}",
         "--runs", str(server.root / "evals"), "--quiet", "--no-project", *argv],
        cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    stored = [line for line in done.stdout.splitlines() if line.startswith("run ")]
    return stored[-1].split()[1]


@pytest.fixture(scope="module")
def two_runs(studio_server: Server) -> tuple[str, str]:
    """The chat script's run (``greet/dog`` fails, 2 repeats), then the memory script's
    (``greet/hi`` fails)."""
    first = sea_eval(studio_server, CHAT_SCRIPT, "chat.json", "--repeat", "2")
    second = sea_eval(studio_server, MEMORY_SCRIPT, "memory.json")
    assert first < second
    return first, second


def test_the_runs_are_listed_newest_first_and_open_a_run(studio: Studio,
                                                         two_runs: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    first, second = two_runs
    page = studio.open("#/evals")
    expect(page.get_by_role("heading", name="Evals", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="Evals")).to_have_attribute("aria-current", "page")
    table = page.get_by_role("table", name="Runs")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-run", second)  # newest first
    expect(rows.nth(1)).to_have_attribute("data-run", first)
    expect(rows.nth(0)).to_contain_text("66.7% scripted:memory.json")
    expect(rows.nth(0)).to_contain_text("greet.jsonl")
    expect(rows.nth(0)).to_contain_text("2 passed, 1 failed")
    expect(rows.nth(1).locator("td").nth(3)).to_have_text("2")  # the repeat
    expect(rows.nth(0).locator("time")).to_have_count(1)
    studio.shot("evals-runs")

    rows.nth(0).get_by_role("link", name=second, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run {second}")
    rows = page.get_by_role("list", name="Cases").locator(":scope > li")
    expect(rows).to_have_count(3)


def test_a_run_shows_each_expectation_and_filters_the_failed_cases(
        studio: Studio, two_runs: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    first, second = two_runs
    page = studio.open(f"#/evals/{second}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run {second}")
    model = page.get_by_role("region", name="Model scripted:memory.json")
    expect(model).to_contain_text("pass rate 66.7%")
    cases = page.get_by_role("list", name="Cases").locator(":scope > li")
    expect(cases).to_have_count(3)
    hi = page.locator('li[data-case="greet/hi"]')
    expect(hi).to_have_class("card eval-case case-failed")
    expect(hi.locator("summary")).to_contain_text("0/1 passed")
    checks = hi.locator("tr.check")
    expect(checks).to_have_count(2)
    route, reply = checks.nth(0), checks.nth(1)  # a greeting is routed by no model call
    expect(route.locator("th")).to_have_text("route")
    expect(route.locator("td")).to_have_text(["pass", "basic_chat", "basic_chat", ""])
    expect(reply).to_have_class("check check-fail")
    expect(reply.locator("th")).to_have_text("reply.contains")
    expect(reply.locator("td").nth(0)).to_have_text("fail")
    expect(reply.locator("td").nth(1)).to_have_text("Aoi")  # expected
    expect(reply.locator("td").nth(2)).to_contain_text('"name": "Pochi"')  # got
    expect(reply.locator("td").nth(3)).to_contain_text("lacks 'Aoi'")
    expect(hi.locator("dl.facts")).to_contain_text("Hi!")
    expect(page.locator('li[data-case="greet/dog"] details')).not_to_have_attribute("open", "")
    studio.shot("evals-run")
    page.get_by_label("Failed only").check()
    expect(cases).to_have_count(1)
    expect(cases.nth(0)).to_have_attribute("data-case", "greet/hi")
    expect(page.get_by_role("status").filter(has_text="cases shown")).to_have_text(
        "1 of 3 cases shown · 1 failed")
    assert "failed=1" in page.url
    studio.shot("evals-run-failed")

    page.get_by_label("Compare with").select_option(first)
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run {second} against a baseline")


def test_a_comparison_shows_regressed_in_red_and_improved_in_green(
        studio: Studio, two_runs: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    first, second = two_runs
    page = studio.open("#/evals")
    page.get_by_role("link", name=f"Compare {second} with the run before it").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run {second} against a baseline")
    counts = page.get_by_label("Counts")
    expect(counts.locator("span")).to_have_text(["1 regressed", "1 improved", "1 unchanged"])
    expect(counts.locator(".eval-regressed")).to_have_text("1 regressed")
    compared = page.get_by_role("table", name=f"Cases, {first} → {second}")
    expect(compared.locator("tbody tr")).to_have_count(3)
    regressed = compared.locator("tr.change-regressed")
    expect(regressed).to_have_attribute("data-case", "greet/hi")
    expect(regressed.locator("td")).to_have_text(["scripted:memory.json", "100%", "0%",
                                                  "regressed"])
    expect(compared.locator("tr.change-improved")).to_have_attribute("data-case", "greet/dog")
    expect(compared.locator("tr.change-unchanged")).to_have_attribute("data-case", "greet/any")
    red = regressed.locator("th").evaluate("e => getComputedStyle(e).backgroundColor")
    green = compared.locator("tr.change-improved th").evaluate(
        "e => getComputedStyle(e).backgroundColor")
    assert red == "rgb(253, 236, 234)" and green == "rgb(230, 246, 234)"
    expect(page.get_by_role("listitem").filter(
        has_text="scripted:memory.json: pass rate 66.7% -> 66.7%")).to_have_count(1)
    studio.shot("evals-compare")

    page.get_by_role("link", name=f"Run {second}").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run {second}")


def test_a_run_of_two_repeats_shows_the_spread_and_each_repeat(
        studio: Studio, two_runs: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    first, _ = two_runs
    page = studio.open(f"#/evals/{first}")
    summary = page.get_by_role("region", name="Model scripted:chat.json")
    expect(summary).to_contain_text("repeats 66.7% · 66.7% (min 66.7%, max 66.7%, stdev 0%)")
    dog = page.locator('li[data-case="greet/dog"]')
    expect(dog.get_by_role("table")).to_have_count(2)  # each repeat's checks
    expect(dog.get_by_role("table").nth(1).locator("caption")).to_contain_text(
        "Repeat 2 of 2 failed")
    studio.shot("evals-run-repeats")
    page.set_viewport_size({"width": 390, "height": 800})  # a phone: nothing wider than it
    expect(dog.get_by_role("table").nth(0)).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    studio.shot("evals-run-narrow")
