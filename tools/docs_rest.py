"""The REST reference of ``graphmem serve``, for ``tools/docs.py``: the OpenAPI schema from the
service's FastAPI app (built without connecting), and from it the routes (with the role of the
API key each needs, read from the route's ``key`` parameter), the request bodies, the error
statuses and the roles' table of the serve guide; and the TypeScript example's types, generated
from the schema by openapi-typescript and stamped with the schema's SHA-256."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPENAPI = ROOT / "docs" / "reference" / "openapi.json"
TYPESCRIPT = ROOT / "docs" / "examples" / "typescript" / "openapi.d.ts"
#: How the TypeScript types are made (in their folder), openapi-typescript pinned.
TYPESCRIPT_COMMAND = (
    "npx --yes openapi-typescript@7.13.0 ../../reference/openapi.json --default-non-nullable false "
    "-o openapi.d.ts"
)


def _md(text: str) -> str:
    """reST roles and literals of a docstring as Markdown code."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")


@functools.cache
def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema of ``graphmem serve``, from its FastAPI app (built without connecting
    to anything)."""
    from graphmem.client.aio import AsyncMemory
    from graphmem.service.app import rest_api

    memory = AsyncMemory()
    return rest_api(memory).openapi()


def openapi_json() -> str:
    """The schema as the docs keep it: keys sorted, indented, one final newline."""
    return json.dumps(openapi_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class Route:
    """One REST route as the reference shows it."""

    method: str
    path: str
    #: The endpoint's name: the route's anchor in the reference.
    name: str
    tag: str
    #: The key it needs: read, write, admin, any (a key, whatever its role) or none.
    role: str
    operation: dict[str, Any]


def _route_roles() -> dict[tuple[str, str], str]:
    """The role each route's key needs, by method and path: the table of operations', and
    ``GET /v1/key`` (any key may ask what it is)."""
    from graphmem.ops.table import OPERATIONS
    from graphmem.service.keyinfo import KEY_PATH

    roles: dict[tuple[str, str], str] = {
        (op.http.lower(), op.path): op.role or "any" for op in OPERATIONS
    }
    return roles | {("get", KEY_PATH): "any"}


def rest_routes() -> list[Route]:
    """Every route of the schema, in its order, with the key it needs."""
    roles = _route_roles()
    routes = []
    for path, operations in openapi_schema()["paths"].items():
        for method, operation in operations.items():
            role = roles.get((method, path), "none")
            if path.startswith("/v1/") and role == "none":
                raise SystemExit(f"{method.upper()} {path}: no API key found on it")
            name = operation["operationId"].split(f"_{path.split('/')[1]}", 1)[0].rstrip("_")
            routes.append(Route(method, path, name, operation["tags"][0], role, operation))
    return routes


def _rest_type(schema: dict[str, Any], link: bool = False) -> str:
    """A schema's type in words; a model by name (linked to its section with ``link``)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})" if link else f"`{name}`"
    if "anyOf" in schema:
        kinds = [_rest_type(s, link) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds)
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " or ".join(f'"{v}"' for v in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {_rest_type(schema.get('items', {}), link)}"
    return str(schema.get("format", schema.get("type", "JSON")))


def _content(content: dict[str, Any], link: bool = False) -> str:
    if "application/json" in content:
        return _rest_type(content["application/json"].get("schema", {}), link)
    if "application/x-ndjson" in content:
        return "JSON lines (`application/x-ndjson`): an export's records"
    return "none"


def _parameter(parameter: dict[str, Any]) -> str:
    schema = parameter["schema"]
    words = [parameter["in"], _rest_type(schema)]
    if "minimum" in schema and "maximum" in schema:
        words.append(f"{schema['minimum']} to {schema['maximum']}")
    if parameter.get("required") and parameter["in"] == "query":
        words.append("required")
    elif "default" in schema:
        words.append(f"default {json.dumps(schema['default'])}")
    return f"`{parameter['name']}` ({', '.join(words)})"


def _route_section(route: Route) -> str:
    operation = route.operation
    codes = list(operation["responses"])
    success = [code for code in codes if code.startswith("2")]
    answer = _content(operation["responses"][success[0]].get("content", {}))
    errors = ["401"] if route.role != "none" else []
    errors += ["403"] if route.role in ("read", "write", "admin") else []
    errors += ["422"] if "422" in codes else []
    key = {"any": "any key, whatever its role", "none": "none"}.get(route.role, route.role)
    lines = [f"- **Key:** {key}"]
    if "requestBody" in operation:
        lines.append(f"- **Body:** {_content(operation['requestBody']['content'], link=True)}")
    parameters = [p for p in operation.get("parameters", []) if p["name"] != "ns"]
    if parameters:
        lines.append(f"- **Parameters:** {', '.join(_parameter(p) for p in parameters)}")
    lines.append(f"- **Answer:** {', '.join(success)}, {answer}")
    if errors:
        lines.append(f"- **Errors:** {', '.join(errors)} (and those of [any route](#errors))")
    summary = " ".join(operation.get("description", operation.get("summary", "")).split())
    heading = f"#### `{route.method.upper()} {route.path}` {{#{route.name}}}"
    return f"{heading}\n\n{_md(summary)}\n\n" + "\n".join(lines) + "\n"


def rest_reference() -> str:
    """Each route of the REST API by tag: path, key, body, parameters, answer and statuses."""
    parts, tag = [], None
    for route in rest_routes():
        if route.tag != tag:
            tag = route.tag
            parts.append(f"### {tag.capitalize()} {{#tag-{tag}}}\n")
        parts.append(_route_section(route))
    return "\n".join(parts)


def _body_models() -> list[str]:
    """The models of the request bodies, and those inside them, in the routes' order."""
    schemas = openapi_schema()["components"]["schemas"]
    found: list[str] = []

    def visit(schema: Any) -> None:
        if isinstance(schema, dict):
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in found:
                found.append(ref.rsplit("/", 1)[-1])
                visit(schemas[found[-1]])
            for value in schema.values():
                visit(value)
        elif isinstance(schema, list):
            for value in schema:
                visit(value)

    for route in rest_routes():
        visit(route.operation.get("requestBody", {}))
    return found


def rest_bodies() -> str:
    """Each request body's model: its fields, their types and defaults (and their meaning,
    where the model gives one)."""
    schemas = openapi_schema()["components"]["schemas"]
    parts = []
    for name in _body_models():
        model = schemas[name]
        required = set(model.get("required", []))
        rows = []
        for field, schema in model["properties"].items():
            default = "required" if field in required else "optional"
            if "default" in schema:
                default = f"`{json.dumps(schema['default'])}`"
            meaning = " ".join(str(schema.get("description", "")).split()).replace("|", "/")
            rows.append([f"`{field}`", _rest_type(schema, link=True), default, meaning])
        columns = ["field", "type", "default", "meaning"]
        if not any(row[3] for row in rows):
            columns, rows = columns[:3], [row[:3] for row in rows]
        table = [columns, ["---"] * len(columns), *rows]
        doc = _md(" ".join(model.get("description", "").split()))
        lines = "\n".join(f"| {' | '.join(row)} |" for row in table)
        parts.append(f"### `{name}` {{#{name.lower()}}}\n\n{doc}\n\n{lines}\n")
    return "\n".join(parts)


def rest_errors() -> str:
    """The HTTP status of each error class, as the service answers them."""
    from graphmem.models.wire import STATUS

    rows = []
    for cls, status in sorted(STATUS, key=lambda item: item[1]):
        doc = " ".join((cls.__doc__ or "").split("\n\n")[0].split())
        rows.append(f"| {status} | `{cls.__name__}` | {_md(doc).replace('|', '/')} |")
    return "| status | error type (and its subclasses) | what it means |\n|---|---|---|\n" + (
        "\n".join(rows) + "\n"
    )


def serve_roles() -> str:
    """Which REST routes and MCP tools each role opens."""
    from graphmem.mcp.options import ALL_TOOLS, READ_TOOLS

    routes = rest_routes()

    def links(role: str) -> str:
        return ", ".join(
            f"[`{r.name}`](../reference/rest.md#{r.name})" for r in routes if r.role == role
        )

    read_tools = ", ".join(f"`{t}`" for t in READ_TOOLS)
    write_tools = ", ".join(f"`{t}`" for t in ALL_TOOLS if t not in READ_TOOLS)
    rows = [
        ("`read`", links("read"), read_tools),
        ("`write`", f"those of `read`, and {links('write')}", f"those of `read`, {write_tools}"),
        ("`admin`", f"those of `write`, and {links('admin')}", "those of `write`: none needs more"),
    ]
    table = "\n".join(f"| {role} | {rest} | {mcp} |" for role, rest, mcp in rows)
    return (
        f"| role | REST routes | MCP tools |\n|---|---|---|\n{table}\n\n"
        f"Any key, whatever its role: {links('any')} (`namespaces` lists only the namespaces "
        f"the key opens, `key` shows the key itself). No key at all: {links('none')}, the "
        "schema (`/openapi.json`) and the interactive docs (`/docs`).\n"
    )


def typescript_stale() -> str | None:
    """Why the TypeScript example's types are not those of the current ``openapi.json``, or
    None when they are: their first line names the schema's SHA-256."""
    digest = hashlib.sha256(openapi_json().encode()).hexdigest()
    first = TYPESCRIPT.read_text(encoding="utf-8").split("\n", 1)[0] if TYPESCRIPT.exists() else ""
    if digest in first:
        return None
    return (
        f"{TYPESCRIPT.relative_to(ROOT)} was generated from another openapi.json "
        "(run python tools/docs.py --typescript, which needs npx)"
    )


def write_typescript() -> None:
    """The TypeScript types generated anew from ``openapi.json`` by openapi-typescript, the
    schema's SHA-256 on their first line."""
    if shutil.which("npx") is None:
        raise SystemExit("--typescript needs npx (Node.js)")
    subprocess.run(TYPESCRIPT_COMMAND.split(), cwd=TYPESCRIPT.parent, check=True)
    digest = hashlib.sha256(OPENAPI.read_bytes()).hexdigest()
    body = TYPESCRIPT.read_text(encoding="utf-8")
    header = f"// From docs/reference/openapi.json (sha256 {digest}): {TYPESCRIPT_COMMAND}\n"
    TYPESCRIPT.write_text(header + body, encoding="utf-8")
