"""``graphmem keys``: the API keys of ``graphmem serve`` (create, list, revoke, resign)."""

from __future__ import annotations

from typing import Any

import click

from graphmem.cli.output import emit, output_options, render_mapping, render_table
from graphmem.cli.root import main, memory_for, nothing

_SHOWN_ONCE = "The key is shown only now: keep it somewhere safe."
_COLUMNS = [
    "name",
    "id",
    "role",
    "namespaces",
    "prefix",
    "created_at",
    "expires_at",
    "revoked_at",
    "signature",
]


def _key_rows(rows: list[dict[str, Any]]) -> str:
    shown = [{**row, "namespaces": ", ".join(row["namespaces"]) or None} for row in rows]
    return render_table(shown, _COLUMNS)


@main.group()
def keys() -> None:
    """API keys for `graphmem serve`: who may call, on which namespaces, with which role.

    A key opens the namespaces given with --ns and every namespace whose name starts with
    --prefix (--prefix '' opens all). Roles: read (recall, context, get, history, audits,
    review, export), write (also remember, ingest, contradictions, retractions, forget,
    consolidation, undo), admin (also erase, import and drop whole namespaces). The key's
    name is the actor of every change it makes. The graph keeps only a hash of the secret: it
    is shown once. Each key node is signed with the service secret (GRAPHMEM_SERVICE_SECRET,
    or the file GRAPHMEM_SERVICE_SECRET_FILE, by default DATA_DIR/service-secret): a key node
    that keys create did not write is refused, so every server of one Neo4j needs the same
    secret.

    Example:

    \b
        graphmem keys create support-bot --ns user-42 --role write
    """


@keys.command("create")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(["read", "write", "admin"]),
    default="write",
    show_default=True,
    help="What the key may do.",
)
@click.option(
    "--ns",
    "namespaces",
    metavar="NAMESPACE",
    multiple=True,
    help="A namespace the key opens (repeatable).",
)
@click.option(
    "--prefix",
    metavar="PREFIX",
    help="Open every namespace starting with PREFIX, matched as text: end it with a separator "
    "(acme-, team:) so that user-4 does not also open user-42; '' opens all.",
)
@click.option(
    "--expires",
    metavar="TIME",
    help="When the key stops working: ISO 8601 with a zone (2027-01-01T00:00:00Z) or a date "
    "(midnight UTC). Default: never; revoke it instead.",
)
@output_options
@click.pass_context
def create(
    ctx: click.Context,
    name: str,
    role: str,
    namespaces: tuple[str, ...],
    prefix: str | None,
    expires: str | None,
    as_json: bool,
) -> None:
    """Create a key named NAME and print its secret (shown this once; --json gives it as
    "key").

    Example:

    \b
        graphmem keys create support-bot --ns user-42 --role write
        graphmem keys create tenants-reader --prefix acme- --role read --expires 2027-01-01
    """
    with memory_for(ctx, None) as memory:
        made = memory.keys.create(
            name,
            role=role,  # type: ignore[arg-type]  # click.Choice checked it
            namespaces=namespaces,
            prefix=prefix,
            expires_at=expires,
        )
    data = {"key": made.key, **made.api_key.model_dump(mode="json")}
    emit(data, as_json=as_json, table=lambda d: f"{render_mapping(d)}\n\n{_SHOWN_ONCE}")


@keys.command("list")
@click.option("--all", "include_revoked", is_flag=True, help="Revoked keys too.")
@output_options
@click.pass_context
def list_keys(ctx: click.Context, include_revoked: bool, as_json: bool) -> None:
    """List the keys (never their secrets), oldest first. SIGNATURE says where each key's
    MAC stands: valid, previous (signed with a previous secret: run keys resign), unsigned
    (made before MACs, or by hand) or invalid (forged, edited or from another deployment).
    Unsigned and invalid keys are refused.

    Example:

    \b
        graphmem keys list --all --json
    """
    with memory_for(ctx, None) as memory:
        found = memory.keys.list(include_revoked=include_revoked)
    data = [key.model_dump(mode="json") for key in found]
    emit(data, as_json=as_json, table=_key_rows)
    if not found:
        nothing(ctx, "no API key")


@keys.command("revoke")
@click.argument("name")
@output_options
@click.pass_context
def revoke(ctx: click.Context, name: str, as_json: bool) -> None:
    """Revoke the live key named NAME (or with that id). It stops working at once on every
    server (within the server's key cache time, --key-cache, 5 s by default) and stays listed
    with --all, for the audits that name it.

    Example:

    \b
        graphmem keys revoke support-bot
    """
    with memory_for(ctx, None) as memory:
        gone = memory.keys.revoke(name)
    emit([key.model_dump(mode="json") for key in gone], as_json=as_json, table=_key_rows)


@keys.command("resign")
@click.option(
    "--unsigned",
    "unsigned",
    metavar="NAME",
    multiple=True,
    help="Also sign the live key with this name (or id) that has no MAC, after reviewing it "
    "with keys list (repeatable).",
)
@output_options
@click.pass_context
def resign(ctx: click.Context, unsigned: tuple[str, ...], as_json: bool) -> None:
    """Sign with the current service secret every key signed with a previous one
    (GRAPHMEM_SERVICE_SECRET_PREVIOUS), so that a rotated secret needs no new keys; and, with
    --unsigned, the named keys that have no MAC (keys made before MACs, refused until signed).
    A key whose MAC is invalid is never signed: revoke it and create a new one. Prints the
    keys signed.

    Example:

    \b
        graphmem keys resign
        graphmem keys resign --unsigned support-bot --unsigned nightly-export
    """
    with memory_for(ctx, None) as memory:
        signed = memory.keys.resign(unsigned=unsigned)
    emit([key.model_dump(mode="json") for key in signed], as_json=as_json, table=_key_rows)
