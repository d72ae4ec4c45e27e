"""The web UI at ``/ui``: static pages and scripts shipped inside the package (no build step,
no outside asset, no Node at run time) that call the REST API with the key a person pastes.

The pages learn the API from ``/ui/operations.json``, which is the operation table
(:mod:`graphmem.ops.table`) as the browser needs it: each operation's name, HTTP method, path
and role. So the UI is one more client of the table, like the remote clients: it has no path
to the database of its own, and the server checks its key on every request as on any other.

Every answer under ``/ui`` carries a Content-Security-Policy that lets the pages load and call
nothing but this server, and keeps them out of frames."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.ops.table import OPERATIONS

#: Where the UI is served.
UI = "/ui"

#: What the pages may load and call: this server alone; no inline script, no frame.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: The headers of every answer under /ui.
HEADERS = {
    "content-security-policy": POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-cache",
}
_RAW = tuple((name.encode(), value.encode()) for name, value in HEADERS.items())


def ui_folder() -> Path:
    """The folder of the UI's files, inside the installed package."""
    return Path(str(files("graphmem.service") / "ui"))


def operations() -> list[dict[str, Any]]:
    """The operation table as the pages use it (``/ui/operations.json``)."""
    return [
        {"name": op.name, "http": op.http, "path": op.path, "role": op.role} for op in OPERATIONS
    ]


class _Guarded:
    """ASGI: the UI's answers, with the security headers added."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_RAW]
            await send(message)

        await self.app(scope, receive, guarded)


def add_ui(api: FastAPI) -> None:
    """``/ui/`` (the pages), ``/ui/operations.json`` (the table) and ``/ui`` sent on to
    ``/ui/``. Nothing here reads the database or a key: the pages call ``/v1`` like any client."""
    folder = ui_folder()
    if not (folder / "index.html").is_file():
        raise FileNotFoundError(f"the web UI's files are missing from {folder}")
    table = operations()

    @api.get(UI + "/operations.json", include_in_schema=False)
    async def ui_operations() -> JSONResponse:
        return JSONResponse(table, headers=HEADERS)

    @api.get(UI, include_in_schema=False)
    async def ui_home(request: Request) -> RedirectResponse:
        return RedirectResponse(request.scope.get("root_path", "") + UI + "/", status_code=307)

    api.mount(UI, _Guarded(StaticFiles(directory=folder, html=True)), name="ui")


__all__ = ["HEADERS", "POLICY", "UI", "add_ui", "operations", "ui_folder"]
