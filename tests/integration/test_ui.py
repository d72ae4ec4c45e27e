"""The web UI of `graphmem serve` in a real browser: the system's Chromium through Playwright,
on one server for the module, whose LLM is a stub (see :mod:`tests.integration.ui_seed`).

Fixtures: ``served`` (the server, module), ``demo`` (the seeded namespace, module),
``browser`` (module), ``page_guard`` (a guarded page of its own per test, checked at
teardown), ``page`` (its page) and ``shoot`` (screenshots). See
:mod:`tests.integration.ui_browser` for the guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer
from tests.integration.ui_browser import (
    PageGuard,
    Shoot,
    guarded_page,
    launch_browser,
    screenshot,
    screenshot_folder,
)
from tests.integration.ui_seed import Demo, llm_env, seed_demo, stub_answers
from tests.service import Served, serve_process

#: The demo namespace: the graph is wiped at the start of each session, so the name is free.
DEMO_NS = "ui-demo"


@pytest.fixture(scope="module")
def served(graph: Graph) -> Iterator[Served]:
    """One `graphmem serve` for the module, its LLM the demo's stub."""
    with StubLLMServer(stub_answers) as stub, serve_process(graph, env=llm_env(stub)) as running:
        yield running


@pytest.fixture(scope="module")
def demo(served: Served, test_settings: GraphmemSettings, graph: Graph, embedder: Embedder) -> Demo:
    """The demo namespace, written once for the module through the REST API."""
    with Memory(test_settings, target=graph.target, embedder=embedder) as admin:
        return seed_demo(served, admin, DEMO_NS)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium (the system's), for the module."""
    with launch_browser() as launched:
        yield launched


@pytest.fixture
def page_guard(browser: Browser, served: Served) -> Iterator[PageGuard]:
    """A page of its own, kept on the served origin; at teardown, a request elsewhere, a page
    error or a console error not allowed (``page_guard.allow_console``) fails the test."""
    with guarded_page(browser, served.url) as guard:
        yield guard
    guard.check()


@pytest.fixture
def page(page_guard: PageGuard) -> Page:
    """The guarded page."""
    return page_guard.page


@pytest.fixture
def shoot(tmp_path: Path) -> Shoot:
    """``shoot(page, name)``: the whole page as ``name.png``, in ``$GRAPHMEM_UI_SCREENSHOTS``
    (``make ui-screenshots``: docs/assets/ui) or the test's temporary folder."""
    return Shoot(screenshot_folder(tmp_path))


# --- the infrastructure --------------------------------------------------------------------------
def test_the_api_docs_render_from_the_server_alone(
    page: Page, page_guard: PageGuard, served: Served
) -> None:
    page.goto(f"{served.url}/docs")
    page.locator(".swagger-ui .opblock").first.wait_for(timeout=60_000)
    assert "API docs" in page.title()
    assert page_guard.outside == []
    assert any(url.endswith("/openapi.json") for url in page_guard.served), page_guard.served


def test_the_guard_records_what_leaves_the_origin_and_what_goes_wrong(
    browser: Browser, served: Served, tmp_path: Path
) -> None:
    with guarded_page(browser, served.url) as guard:
        guard.page.set_content(
            '<img src="https://example.com/x.png">'
            f'<img src="http://localhost:{served.port}/y.png">'
            '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
            "<script>console.error('said so'); throw new Error('boom')</script>"
        )
        guard.page.wait_for_load_state("load")
        shot = screenshot(guard.page, "guard", tmp_path)
    assert guard.outside == ["https://example.com/x.png", f"http://localhost:{served.port}/y.png"]
    assert any("boom" in error for error in guard.page_errors), guard.page_errors
    problems = guard.problems()
    assert "request outside " + served.url + ": https://example.com/x.png" in problems
    assert any(p.startswith("console error: said so") for p in problems), problems
    guard.allow_console("said so")
    guard.allow_console("ERR_BLOCKED_BY_CLIENT")
    assert not any(p.startswith("console error") for p in guard.problems()), guard.problems()
    assert shot.read_bytes().startswith(b"\x89PNG")


def test_the_demo_namespace_is_seeded(demo: Demo) -> None:
    assert demo.ns == DEMO_NS and demo.run_id
    assert {"acme", "globex", "call", "tea", "coffee"} <= set(demo.facts)
    assert set(demo.episodes) == {"m1", "m2"}


# --- the pages -----------------------------------------------------------------------------------
expect.set_options(timeout=60_000)  # the first recall of a fresh server warms its queries


def sign_in(page: Page, served: Served, key: str) -> None:
    """Open the UI, paste the key and send it with the keyboard, as a person would."""
    page.goto(f"{served.url}/")
    field = page.get_by_label("API key")
    field.fill(key)
    field.press("Enter")
    expect(page.locator("body.signed-in")).to_be_attached()


def show(page: Page, served: Served, route: str, ready: str) -> None:
    """Go to a page of the UI and wait until ``ready`` (a selector) is on it."""
    page.goto(f"{served.url}/ui/#/{route}")
    expect(page.locator(ready).first).to_be_visible()
    expect(page.locator("main")).to_have_attribute("aria-busy", "false")


def assert_accessible(page: Page) -> None:
    """One heading 1, every control labelled, every button named, no page wider than the
    window (it reads at this width without scrolling sideways; pictures scroll in their box)."""
    expect(page.locator("main h1")).to_have_count(1)
    for control in page.locator("main input, main select, main textarea").all():
        name = control.get_attribute("aria-label") or control.evaluate(
            "el => [...el.labels].map(l => l.textContent).join(' ')"
        )
        assert name and name.strip(), control.evaluate("el => el.outerHTML")
    for button in page.locator("button").all():
        assert button.inner_text().strip() or button.get_attribute("aria-label")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], width  # type: ignore[index]


def test_sign_in_keeps_the_key_out_of_urls_and_logs_and_lists_the_namespaces(
    page: Page, served: Served, demo: Demo, shoot: Shoot
) -> None:
    sign_in(page, served, demo.write_key)
    table = page.locator("#namespaces")
    expect(table).to_contain_text(demo.ns)
    expect(table).to_contain_text("1 open")  # the contradiction, and the review flag
    expect(page.locator("#whoami")).to_have_text(f"{demo.actor} (write)")
    assert_accessible(page)
    shoot(page, "namespaces")
    assert page.evaluate("() => sessionStorage.getItem('graphmem.key')") == demo.write_key
    assert demo.write_key not in page.url
    # A reload keeps the session; signing out forgets the key.
    page.reload()
    expect(page.locator("#namespaces")).to_contain_text(demo.ns)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()
    assert page.evaluate("() => sessionStorage.getItem('graphmem.key')") is None
    assert demo.write_key not in served.log() and demo.read_key not in served.log()


def test_search_shows_scores_provenance_and_the_earlier_belief_as_of(
    page: Page, page_guard: PageGuard, served: Served, demo: Demo, shoot: Shoot
) -> None:
    page_guard.allow_console("422")  # the refused time below
    sign_in(page, served, demo.read_key)
    show(page, served, f"search?ns={demo.ns}", "#search-form")
    question = page.get_by_label("Question")
    question.fill("Where does Ada work?")
    question.press("Enter")
    first = page.locator("#hits .hit").first
    expect(first).to_contain_text("Ada works at Globex.")
    expect(first.locator(".badge.status-active")).to_be_visible()
    first.get_by_text("How it scored").click()
    expect(first.locator(".breakdown")).to_contain_text("Vector (cosine)")
    # A time that is not one is refused with its reason, and the form stays to correct it.
    page.get_by_label("Believed as of").fill("the day before")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("main .refused")).to_contain_text("as_of")
    expect(page.get_by_label("Believed as of")).to_have_value("the day before")
    # As of a time before the supersession, the earlier belief answers.
    page.get_by_label("Believed as of").fill(demo.t_between)
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#hits-summary")).to_contain_text("as believed at")
    expect(page.locator("#hits .hit").first).to_contain_text("Ada works at Acme.")
    expect(page.locator("#hits")).not_to_contain_text("Globex")
    # A fact extracted from messages names them.
    show(page, served, f"search?ns={demo.ns}&q=What+does+Ada+drink%3F", "#hits")
    tea = page.locator(f'#hits .hit[data-id="{demo.facts["tea"]}"]')
    expect(tea.locator(".provenance")).to_contain_text("From 1 message")
    expect(tea.locator(".provenance")).to_contain_text("s1")
    assert_accessible(page)
    shoot(page, "search")
    page.set_viewport_size({"width": 390, "height": 800})
    assert_accessible(page)
    shoot(page, "search-390")


def test_a_fact_page_draws_its_supersession_on_both_clocks(
    page: Page, served: Served, demo: Demo, shoot: Shoot
) -> None:
    acme, globex = demo.facts["acme"], demo.facts["globex"]
    sign_in(page, served, demo.read_key)
    show(page, served, f"fact?ns={demo.ns}&id={globex}", "#history")
    expect(page.locator("#fact-text")).to_have_text("Ada works at Globex.")
    clocks = page.locator("#clocks")
    expect(clocks).to_contain_text("2023-05-01")  # true from
    expect(clocks).to_contain_text(demo.actor)  # recorded by
    history = page.locator("#history")
    expect(history.locator(f'g.node.status-superseded[data-id="{acme}"]')).to_be_attached()
    expect(history.locator(f'g.node.status-active.focus[data-id="{globex}"]')).to_be_attached()
    expect(history.locator("line.link-superseded")).to_have_count(1)
    replaced = page.locator('#events li[data-kind="superseded"]')
    expect(replaced).to_contain_text("changed jobs")
    expect(replaced).to_contain_text(demo.actor)
    assert_accessible(page)
    shoot(page, "fact")
    # The earlier fact's box opens its page, from the keyboard too.
    history.locator(f'g.node[data-id="{acme}"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator("#fact-text")).to_have_text("Ada works at Acme.")
    expect(page.locator("#clocks")).to_contain_text("superseded")


def test_the_audit_shows_beliefs_at_a_date_the_diff_and_confirms_review_flags(
    page: Page, served: Served, demo: Demo, shoot: Shoot
) -> None:
    sign_in(page, served, demo.write_key)
    show(page, served, f"audit?ns={demo.ns}", "#belief-chart")
    expect(page.locator("#belief-chart path.series")).to_be_attached()
    expect(page.locator("#contradictions")).to_contain_text("Ada eats fish every Friday.")
    flags = page.locator("#review-flags")
    expect(flags).to_contain_text("Call Ada on her mobile.")
    # What was believed between the two jobs, and what changed after.
    page.get_by_label("Believed as of").fill(demo.t_between)
    page.get_by_role("button", name="Show beliefs").click()
    expect(page.locator("#beliefs-summary")).to_contain_text("believed at")
    expect(page.locator("#beliefs")).to_contain_text("Ada works at Acme.")
    expect(page.locator("#beliefs")).not_to_contain_text("Globex")
    page.get_by_label("Changes after").fill(demo.t_between)
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#diff-believed")).to_contain_text("Ada works at Globex.")
    retired = page.locator('#diff-retired li[data-change="superseded"]').first
    expect(retired).to_contain_text("Ada works at Acme.")
    expect(retired).to_contain_text("changed jobs")
    assert_accessible(page)
    shoot(page, "audit")
    # A write key confirms the flagged fact still holds.
    row = page.locator(f'.confirm-form[data-id="{demo.facts["call"]}"]')
    row.get_by_role("textbox").fill("checked with Ada")
    row.get_by_role("button", name="Confirm").click()
    expect(page.locator("#status")).to_contain_text("Confirmed")
    expect(page.locator("#review")).to_contain_text("No open review flags.")


def test_a_read_key_sees_no_write_controls_and_its_writes_are_refused(
    page: Page, page_guard: PageGuard, served: Served, demo: Demo
) -> None:
    sign_in(page, served, demo.read_key)
    for route, ready in (
        ("audit", "#belief-chart"),
        ("consolidation", "#runs"),
        ("erasure", "#verify-form"),
        ("search", "#search-form"),
    ):
        show(page, served, f"{route}?ns={demo.ns}", ready)
        expect(page.locator("[data-write]")).to_have_count(0)
        for name in ("Undo", "Preview a run", "Run and apply", "Preview", "Confirm"):
            expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    # The server, not the page, is the boundary: a write sent by hand is refused.
    page_guard.allow_console("403")
    status = page.evaluate(
        """async ([key, ns]) => (await fetch(`/v1/namespaces/${ns}/facts`, {
            method: "POST",
            headers: {Authorization: `Bearer ${key}`, "Content-Type": "application/json"},
            body: JSON.stringify({text: "Written by a read key."}),
        })).status""",
        [demo.read_key, demo.ns],
    )
    assert status == 403
    beliefs = httpx.get(
        f"{served.url}/v1/namespaces/{demo.ns}/audit/beliefs",
        params={"query": "Written by a read key."},
        headers={"Authorization": f"Bearer {demo.read_key}"},
    ).json()
    assert "Written by a read key." not in [f["text"] for f in beliefs["facts"]]


def test_consolidation_previews_a_run_and_undoes_one(
    page: Page, served: Served, demo: Demo, shoot: Shoot
) -> None:
    api = f"{served.url}/v1/namespaces/{demo.ns}"
    keyed = {"Authorization": f"Bearer {demo.write_key}"}
    before = httpx.get(f"{api}/consolidation/runs", headers=keyed).json()
    sign_in(page, served, demo.write_key)
    show(page, served, f"consolidation?ns={demo.ns}&run={demo.run_id}", "#runs")
    run = page.locator(f'#runs .run[data-id="{demo.run_id}"]')
    expect(run).to_have_attribute("data-status", "finished")
    expect(run.locator(".operations")).to_contain_text("MERGE")
    page.get_by_label("Run even if").check()
    page.get_by_role("button", name="Preview a run").click()
    expect(page.locator("#preview-result")).to_contain_text("Preview: nothing was written")
    assert httpx.get(f"{api}/consolidation/runs", headers=keyed).json() == before
    assert_accessible(page)
    shoot(page, "consolidation")
    run.get_by_role("button", name="Undo").click()
    run.get_by_role("button", name="Yes, undo run").click()
    expect(page.locator(f'#runs .run[data-id="{demo.run_id}"]')).to_have_attribute(
        "data-status", "undone"
    )
    expect(page.locator("#status")).to_contain_text("undone")
    for name in ("hike1", "hike2"):
        fact = httpx.get(f"{api}/memories/{demo.facts[name]}", headers=keyed).json()
        assert fact["status"] == "active", fact


def test_forget_shows_a_preview_then_erases_and_verifies(
    page: Page, page_guard: PageGuard, served: Served, demo: Demo, shoot: Shoot
) -> None:
    target = demo.facts["fish"]
    url = f"{served.url}/v1/namespaces/{demo.ns}/memories/{target}"
    keyed = {"Authorization": f"Bearer {demo.write_key}"}
    sign_in(page, served, demo.write_key)
    show(page, served, f"erasure?ns={demo.ns}", "#forget-form")
    page.get_by_label("Ids (one a line)").fill(target)
    page.get_by_label("Reason", exact=True).fill("a privacy request")
    page.get_by_role("button", name="Preview", exact=True).click()
    result = page.locator("#forget-result")
    expect(result).to_contain_text("Would erase 1 fact and 0 messages")
    expect(result).to_contain_text("Flagged for review")  # the fact it contradicted
    assert httpx.get(url, headers=keyed).status_code == 200  # a preview erases nothing
    page.get_by_role("button", name="Erase for good").click()
    report = page.locator(f'.verify-report[data-target="{target}"]')
    expect(report).to_have_attribute("data-clean", "true")
    expect(report).to_contain_text("No trace left")
    gone = httpx.get(url, headers=keyed)
    assert gone.json()["error"]["type"] == "ForgottenError", gone.text
    assert_accessible(page)
    shoot(page, "erasure")
    # Any key verifies an erasure afterwards.
    page.get_by_label("Erased id, source, session or erasure id").fill(target)
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("#verify-result .verify-report")).to_have_attribute("data-clean", "true")


def test_every_page_reads_on_a_phone_and_names_its_controls(
    page: Page, served: Served, demo: Demo
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, served, demo.write_key)
    for route, ready in (
        ("namespaces", "#namespaces"),
        (f"search?ns={demo.ns}&q=Ada", "#hits"),
        (f"fact?ns={demo.ns}&id={demo.facts['phone2']}", "#history"),
        (f"audit?ns={demo.ns}&since=1+day+ago", "#diff-believed"),
        (f"consolidation?ns={demo.ns}", "#runs"),
        (f"erasure?ns={demo.ns}", "#forget-form"),
    ):
        show(page, served, route, ready)
        assert_accessible(page)
