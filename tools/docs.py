"""Generated parts of the docs: the CLI reference from the commands' help, the MCP tool
reference from the server's own tool list, the settings table from the settings classes, the
package layout from the rooms' docstrings, and the REST reference (``openapi.json`` whole, the
routes, bodies, errors and roles in Markdown) from the service's FastAPI app.

``python tools/docs.py`` rewrites them in place between their markers
(``<!-- NAME:start -->`` and ``<!-- NAME:end -->``) and writes the generated files whole;
``python tools/docs.py --check`` exits 1 when a page or file differs from what the code gives,
or when the TypeScript example's types were generated from another ``openapi.json`` (the test
suite runs the same check). ``python tools/docs.py --typescript`` generates those types anew
(it needs ``npx``; nothing else here does).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from docs_rest import (
    OPENAPI,
    openapi_json,
    rest_bodies,
    rest_errors,
    rest_reference,
    serve_roles,
    typescript_stale,
    write_typescript,
)
from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The generated sections: the page each lives in, by marker name.
PAGES = {
    "cli-reference": DOCS / "reference" / "cli.md",
    "settings-table": DOCS / "operations" / "settings.md",
    "layout": DOCS / "contributing.md",
    "mcp-tools": DOCS / "reference" / "mcp-tools.md",
    "rest-routes": DOCS / "reference" / "rest.md",
    "rest-bodies": DOCS / "reference" / "rest.md",
    "rest-errors": DOCS / "reference" / "rest.md",
    "serve-roles": DOCS / "guides" / "serve.md",
}


def _md(text: str) -> str:
    """reST roles and literals of a docstring as Markdown code."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def command_paths() -> Iterator[tuple[list[str], click.Command]]:
    """Every command of ``graphmem``, groups first, in the order of ``--help``."""
    from graphmem.cli import main

    def walk(command: click.Command, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            ctx = click.Context(command, info_name=path[-1])
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield from walk(sub, [*path, name])

    yield from walk(main, ["graphmem"])


def cli_reference() -> str:
    """One section per command with its ``--help`` as the command prints it."""
    parts = []
    for path, command in command_paths():
        parent = None
        for name in path:  # a fixed width: the page must not depend on the terminal
            parent = click.Context(
                command, info_name=name, parent=parent, terminal_width=88, max_content_width=88
            )
        assert parent is not None
        help_text = command.get_help(parent).rstrip()
        level = "#" * min(len(path) + 1, 4)
        parts.append(f"{level} `{' '.join(path)}`\n\n```text\n{help_text}\n```\n")
    return "\n".join(parts)


def _type_name(field: FieldInfo) -> str:
    text = str(field.annotation).replace("typing.", "").replace("pathlib.", "")
    text = re.sub(r"<class '([\w.]+)'>", r"\1", text)
    return text.replace("pydantic.types.", "").replace("NoneType", "None")


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "(computed)"
    if field.default is None:
        return "unset"
    return f"`{field.default}`"


def settings_table() -> str:
    """One table per settings class: variable, type, default and meaning."""
    from graphmem.settings import ClientSettings, LocalServerSettings, ServiceSettings
    from graphmem.settings.common import SettingsBase

    parts = []
    shared = set(SettingsBase.model_fields)
    classes: tuple[tuple[str, type[SettingsBase]], ...] = (
        ("Files (both)", SettingsBase),
        ("Client", ClientSettings),
        ("Local server and Docker", LocalServerSettings),
        ("The service secret", ServiceSettings),
    )
    for title, cls in classes:
        rows = [
            f"| `GRAPHMEM_{name.upper()}` | `{_type_name(field).replace('|', 'or')}` | "
            f"{_default(field)} | {_md(field.description or '').replace('|', '/')} |"
            for name, field in cls.model_fields.items()
            if cls is SettingsBase or name not in shared
        ]
        doc = _md(" ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()))
        parts.append(
            f"### {title}\n\n{doc}\n\n| variable | type | default | meaning |\n"
            "|---|---|---|---|\n" + "\n".join(rows) + "\n"
        )
    return "\n".join(parts)


#: The rooms of the package, in the order a reader meets them.
ROOMS = (
    "ops",
    "client",
    "core",
    "core/recall",
    "core/context",
    "models",
    "store",
    "store/queries",
    "servers",
    "embed",
    "settings",
    "llm",
    "cli",
    "mcp",
    "edge",
    "service",
    "remote",
    "integrations",
    "testing",
)
#: The benchmark and evaluation part, a package of its own beside the service.
PLUGIN_ROOMS = ("graphmem_bench", "graphmem_bench/bench", "graphmem_bench/evaluation")


def _summary(path: Path) -> str:
    """The first sentence of a module's or package's docstring."""
    source = path / "__init__.py" if path.is_dir() else path
    if not source.exists():
        return ""
    doc = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
    return _md(" ".join(doc.split("\n\n")[0].split()))


def layout() -> str:
    """A table of the rooms, each with the first paragraph of its docstring."""
    package = ROOT / "graphmem"
    rows = []
    for room in ROOMS:
        path = package / room
        if room == "store/queries":
            flows = sorted(p.name for p in path.iterdir() if p.is_dir())
            summary = "One `.cypher` file per runtime query, a folder per flow: " + ", ".join(
                f"`{f}/`" for f in flows
            )
        else:
            summary = _summary(path)
        rows.append(f"| `graphmem/{room}/` | {summary} |")
    plugin = ROOT / "tools" / "graphmem-bench"
    for room in PLUGIN_ROOMS:
        rows.append(f"| `tools/graphmem-bench/{room}/` | {_summary(plugin / room)} |")
    return "| room | what it holds |\n|---|---|\n" + "\n".join(rows) + "\n"


def _schema_type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        kinds = [_schema_type(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds)
    if "enum" in schema:
        return " or ".join(f'"{v}"' for v in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    if "$ref" in schema:
        return "object"
    return str(schema.get("type", "any"))


def mcp_tools() -> str:
    """Every tool of ``graphmem mcp --tools all``: profile, whether it writes, its
    description and its arguments, as the server lists them to a host."""
    import asyncio

    from graphmem.client.aio import AsyncMemory
    from graphmem.mcp.options import ALL_TOOLS, CORE_TOOLS, READ_TOOLS, McpOptions
    from graphmem.mcp.server import build_server

    options = McpOptions(namespace="default", tools=ALL_TOOLS)
    server = build_server(AsyncMemory(), options)
    tools = asyncio.run(server.list_tools())
    parts = []
    for tool in tools:
        profile = "core" if tool.name in CORE_TOOLS else "all"
        access = "reads" if tool.name in READ_TOOLS else "writes (not in --read-only)"
        description = " ".join((tool.description or "").split())
        rows = []
        required = set(tool.input_schema.get("required", []))
        for name, schema in tool.input_schema["properties"].items():
            default = "required" if name in required else f"`{json.dumps(schema.get('default'))}`"
            meaning = " ".join(str(schema.get("description", "")).split()).replace("|", "/")
            rows.append(f"| `{name}` | {_schema_type(schema)} | {default} | {meaning} |")
        parts.append(
            f"### `{tool.name}`\n\nProfile: {profile}; {access}.\n\n{description}\n\n"
            "| argument | type | default | meaning |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
        )
    return "\n".join(parts)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli-reference": cli_reference,
    "settings-table": settings_table,
    "layout": layout,
    "mcp-tools": mcp_tools,
    "rest-routes": rest_reference,
    "rest-bodies": rest_bodies,
    "rest-errors": rest_errors,
    "serve-roles": serve_roles,
}
#: The files written whole.
FILES: dict[Path, Callable[[], str]] = {OPENAPI: openapi_json}


def rendered(name: str, page: str) -> str:
    """``page`` with the section ``name`` between its markers made anew (a lone
    ``<!-- name -->`` line becomes the pair of markers)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    page = page.replace(f"<!-- {name} -->", f"{start}\n{end}")
    if start not in page or end not in page:
        raise SystemExit(f"{PAGES[name]}: no {start} / {end} markers")
    before, rest = page.split(start, 1)
    _, after = rest.split(end, 1)
    return f"{before}{start}\n{GENERATORS[name]().rstrip()}\n{end}{after}"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, make in FILES.items():
        text = make()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(text, encoding="utf-8")
    for name, path in PAGES.items():
        page = path.read_text(encoding="utf-8")
        new = rendered(name, page)
        if new != page:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(new, encoding="utf-8")
    if "--typescript" in argv and not check:
        write_typescript()
    if check and stale:
        print("out of date (run python tools/docs.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    types = typescript_stale()
    if types is not None:
        print(types, file=sys.stderr)
        return 1 if check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
