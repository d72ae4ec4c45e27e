"""A browser for the web UI's tests: Playwright (sync API) driving the system's Chromium, never
a browser Playwright downloads, and a guard on each page that keeps it on the served host.

The guard routes every request of the page's context: a request to the served origin
(``http://127.0.0.1:PORT``) goes on; any other (another host, port or scheme) is aborted and
recorded. It also records the page's uncaught errors and the console's errors. A test's
:class:`PageGuard` lists them all in :meth:`PageGuard.problems`, which the ``page_guard``
fixture turns into a failure at teardown. Chromium itself logs a refused fetch (``Failed to load
resource: the server responded with a status of 403``) as a console error: a test that expects
one says so with ``page_guard.allow_console("403")``.

Screenshots (:func:`screenshot`) go to ``$GRAPHMEM_UI_SCREENSHOTS`` where it is set (``make
ui-screenshots`` sets it to ``docs/assets/ui``), else to the test's temporary folder."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Error,
    Page,
    Route,
    ViewportSize,
    WebSocketRoute,
    sync_playwright,
)

#: Chromium's switches: headless, no sandbox (containers), and none of its own traffic to
#: Google's hosts (updates, sync, safe browsing, QUIC probes). The resolver rule answers every
#: name but 127.0.0.1 with "not found", so nothing the guard misses can leave the machine.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)
#: The window the pages are drawn in, and so the width of every screenshot.
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
#: Where ``make ui-screenshots`` has the screenshots written.
SCREENSHOTS_ENV = "GRAPHMEM_UI_SCREENSHOTS"
#: URL schemes that load nothing from a network (the route never sees most of them).
_LOCAL_SCHEMES = ("data", "blob", "about")


def in_ci() -> bool:
    """Whether this is a CI run (``CI=true``, as ``.ci/run`` sets it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def chromium_path() -> str | None:
    """The system's Chromium (Debian's ``chromium`` package), or None where there is none."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def missing_browser(reason: str) -> None:
    """No browser can run: in CI the tests fail with ``reason``; elsewhere they are skipped."""
    if in_ci():
        pytest.fail(f"CI runs the web UI's browser tests, but {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def launch_browser() -> Iterator[Browser]:
    """Headless Chromium from the system, driven by Playwright, closed at the end."""
    executable = chromium_path()
    if executable is None:
        missing_browser("there is no chromium on PATH (Debian: apt-get install chromium)")
        raise AssertionError("unreachable")  # missing_browser fails or skips
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=executable, headless=True, args=list(CHROMIUM_ARGS)
            )
        except Error as exc:
            missing_browser(f"{executable} did not start under Playwright: {exc.message}")
            raise AssertionError("unreachable") from exc
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageGuard:
    """A page kept on one origin, and what it did that a test must hear of."""

    page: Page
    origin: str
    #: Every URL the page asked for outside :attr:`origin` (each was aborted).
    outside: list[str] = field(default_factory=list)
    #: Every URL on :attr:`origin` the page asked for (each went on).
    served: list[str] = field(default_factory=list)
    #: Uncaught errors of the page's scripts.
    page_errors: list[str] = field(default_factory=list)
    #: Console messages of type ``error``, with where they were logged.
    console_errors: list[str] = field(default_factory=list)
    #: Texts that make a console error expected (see :meth:`allow_console`).
    allowed_console: list[str] = field(default_factory=list)

    def allow_console(self, text: str) -> None:
        """Console errors containing ``text`` are expected: e.g. ``"403"`` for Chromium's
        ``Failed to load resource: the server responded with a status of 403`` on a fetch
        that the test expects the server to refuse."""
        self.allowed_console.append(text)

    def is_local(self, url: str) -> bool:
        """Whether ``url`` is on the served origin (or loads from no network at all)."""
        parts = urlsplit(url)
        if parts.scheme in _LOCAL_SCHEMES:
            return True
        return f"{parts.scheme}://{parts.netloc}" == self.origin

    def problems(self) -> list[str]:
        """Outside requests, page errors and unexpected console errors, one line each."""
        found = [f"request outside {self.origin}: {url}" for url in self.outside]
        found += [f"page error: {text}" for text in self.page_errors]
        found += [
            f"console error: {text}"
            for text in self.console_errors
            if not any(allowed in text for allowed in self.allowed_console)
        ]
        return found

    def check(self) -> None:
        """Fails the test with every problem, if there is any."""
        found = self.problems()
        if found:
            lines = "\n  ".join(found)
            pytest.fail(f"the page at {self.page.url} went wrong:\n  {lines}", pytrace=False)

    def _route(self, route: Route) -> None:
        url = route.request.url
        if self.is_local(url):
            self.served.append(url)
            route.continue_()
        else:
            self.outside.append(url)
            route.abort("blockedbyclient")

    def _route_socket(self, socket: WebSocketRoute) -> None:
        http = socket.url.replace("ws", "http", 1)  # ws: and wss: as http: and https:
        if self.is_local(http):
            socket.connect_to_server()
        else:
            self.outside.append(socket.url)
            socket.close(code=1008, reason="outside the served origin")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url") or "?"
            self.console_errors.append(f"{message.text} (at {where})")

    def _page_error(self, error: Error) -> None:
        self.page_errors.append(error.stack or f"{error.name}: {error.message}")


@contextmanager
def guarded_page(browser: Browser, origin: str) -> Iterator[PageGuard]:
    """A new page in a context of its own (English, UTC, light, no motion, no service worker,
    which would fetch past the routes), every request of it routed through a
    :class:`PageGuard` for ``origin`` (``http://127.0.0.1:PORT``). The context is closed at the
    end; the guard is not checked (the ``page_guard`` fixture checks it)."""
    context = browser.new_context(
        viewport=VIEWPORT,
        locale="en-US",
        timezone_id="UTC",
        color_scheme="light",
        reduced_motion="reduce",
        service_workers="block",
    )
    try:
        page = context.new_page()
        guard = PageGuard(page=page, origin=origin.rstrip("/"))
        context.route("**/*", guard._route)
        context.route_web_socket("**/*", guard._route_socket)
        page.on("console", guard._console)
        page.on("pageerror", guard._page_error)
        yield guard
    finally:
        context.close()


def screenshot_folder(fallback: Path) -> Path:
    """``$GRAPHMEM_UI_SCREENSHOTS`` where it is set (made if missing), else ``fallback``."""
    chosen = os.environ.get(SCREENSHOTS_ENV)
    folder = Path(chosen) if chosen else fallback
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def screenshot(page: Page, name: str, folder: Path) -> Path:
    """The whole page, at the viewport's width, as ``folder/name.png``."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    return path


@dataclass
class Shoot:
    """``shoot(page, name)``: a screenshot into the folder of :func:`screenshot_folder`."""

    folder: Path

    def __call__(self, page: Page, name: str) -> Path:
        return screenshot(page, name, self.folder)
