"""The service's own pages: the interactive API docs at ``/docs`` (Swagger UI) and ``/redoc``
(ReDoc), their scripts, styles and icon served by graphmem from the ``fastapi-offline`` package
so that both work with no network, and ``/``, which leads to the web UI (or to ``home``)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

#: Where the pages' files are served from.
ASSETS = "/docs/assets"
#: The files the pages load, all under :data:`ASSETS`.
FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
#: Swagger UI asks an outside validator about the schema unless told not to.
_SWAGGER = {"validatorUrl": None}


def asset_folder() -> Path:
    """The folder of the installed Swagger UI and ReDoc files."""
    return Path(str(files("fastapi_offline") / "static"))


def add_docs(api: FastAPI, home: str = "/docs") -> None:
    """``/docs`` and ``/redoc`` (their files under ``/docs/assets``), and ``/`` sent on to
    ``home``. Every URL the pages name is the service's own (behind a proxy that mounts it
    under a prefix, the request's ``root_path`` leads them)."""
    folder = asset_folder()
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"fastapi-offline lacks {', '.join(missing)} in {folder}")
    api.mount(ASSETS, StaticFiles(directory=folder), name="docs-assets")
    title = f"{api.title} {api.version}"
    schema = api.openapi_url or "/openapi.json"

    @api.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + schema,
            title=f"{title}: API docs",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            swagger_ui_parameters=_SWAGGER,
        )

    @api.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + schema,
            title=f"{title}: API reference",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )

    @api.get("/", include_in_schema=False)
    async def root(request: Request) -> RedirectResponse:
        return RedirectResponse(request.scope.get("root_path", "") + home, status_code=307)


__all__ = ["ASSETS", "FILES", "add_docs", "asset_folder"]
