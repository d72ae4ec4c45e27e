"""The web UI of `graphmem serve` in a real browser: the system's Chromium through Playwright,
on one server for the module, whose LLM is a stub (see :mod:`tests.integration.ui_seed`).

Fixtures: ``served`` (the server, module), ``demo`` (the seeded namespace, module),
``browser`` (module), ``page_guard`` (a guarded page of its own per test, checked at
teardown), ``page`` (its page) and ``shoot`` (screenshots). See
:mod:`tests.integration.ui_browser` for the guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

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
