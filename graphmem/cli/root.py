"""The root ``graphmem`` group, its error handling, and what every command shares: the
settings, the embedder, the client and the ``--ns`` option."""

from __future__ import annotations

import json
import logging
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

from graphmem import __version__
from graphmem.cli.output import error_data, render_mapping
from graphmem.errors import GraphmemError
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:  # the embedder and the clients: imported only by commands that need them
    from graphmem.client import Memory
    from graphmem.embed.embedder import Embedder
    from graphmem.models import Fact
    from graphmem.remote import RemoteMemory

F = TypeVar("F", bound=Callable[..., Any])


# --- errors and settings -----------------------------------------------------------------------
class _Group(click.Group):
    #: The plugins that added commands, once they were looked up (None before).
    plugins: list[str] | None = None

    def load_plugins(self) -> list[str]:
        """Lets the installed plugins add their commands, once: when a command is not a
        built-in one, or when the commands are listed (``--help``). A built-in command never
        waits for the lookup (some 40 ms of reading the installed packages' metadata)."""
        if self.plugins is None:
            from graphmem.cli.plugins import register_plugins

            self.plugins = []  # set first: a plugin that looks up a command does not recurse
            self.plugins = register_plugins(self)
        return self.plugins

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and self.plugins is None:
            self.load_plugins()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_plugins()
        return super().list_commands(ctx)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else None
        if name is not None and self.get_command(ctx, name) is None:
            from graphmem.cli.plugins import missing_plugin

            missing = missing_plugin(name)
            if missing is not None:
                raise click.UsageError(missing, ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        logging.captureWarnings(True)  # a library's warning is a log line, kept under --json
        try:
            return super().invoke(ctx)
        except GraphmemError as exc:
            if _as_json(ctx):
                _json_error(ctx, error_data(exc))
            else:
                click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if not _as_json(ctx):
                raise
            # Under --json even a failure graphmem did not foresee is one JSON object.
            data = {"type": "InternalError", "message": f"{type(exc).__name__}: {exc}"}
            _json_error(ctx, {"error": {**data, "traceback": traceback.format_exc()}})
            ctx.exit(1)
        finally:
            logging.captureWarnings(False)


def _as_json(ctx: click.Context) -> bool:
    return isinstance(ctx.obj, dict) and bool(ctx.obj.get("as_json"))


def _json_error(ctx: click.Context, data: dict[str, Any]) -> None:
    """Write an error object to stderr, with the log lines the command emitted (kept back
    under ``--json`` by :class:`_CommandLog`), so that stderr carries one JSON object."""
    kept = ctx.obj.get("log") if isinstance(ctx.obj, dict) else None
    if kept:
        data["error"]["log"] = list(kept)
    click.echo(json.dumps(data, indent=2, ensure_ascii=False), err=True)


class _CommandLog(logging.Handler):
    """Where the command line's log records go (the driver's, a library's warnings): to stderr
    as lines, or, once ``--json`` is on, into the error object that stderr then carries alone.
    A record logged from another thread (an LLM client's worker, where click has no current
    context) goes where the command's own would: ``obj`` is the running command's state."""

    obj: dict[str, Any] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            ctx = click.get_current_context(silent=True)
            obj = ctx.find_root().obj if ctx is not None else self.obj
            if isinstance(obj, dict) and obj.get("as_json"):
                line = f"{record.name}: {record.levelname}: {record.getMessage()}"
                obj.setdefault("log", []).append(line)
            else:
                sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def _install_log(obj: dict[str, Any]) -> None:
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _CommandLog)), None)
    if handler is None:
        handler = _CommandLog(logging.WARNING)
        root.addHandler(handler)
    handler.obj = obj


def settings_of(ctx: click.Context) -> GraphmemSettings:
    settings: GraphmemSettings = ctx.ensure_object(dict).setdefault("settings", load_settings())
    return settings


def embedder_for(settings: GraphmemSettings) -> Embedder:
    """The settings' embedder, whose model loads on its first use."""
    from graphmem.embed.loading import embedder_from_settings

    return embedder_from_settings(settings, lazy=True)


# --- commands ----------------------------------------------------------------------------------
@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="graphmem")
@click.pass_context
def main(ctx: click.Context) -> None:
    """graphmem: memory for AI agents on Neo4j.

    Which Neo4j is used is one setting, GRAPHMEM_NEO4J_URI: 'local' (default, a server
    graphmem builds and runs), 'docker', or the URI of an existing server. With
    GRAPHMEM_SERVER_URL (and GRAPHMEM_API_KEY) set, the memory commands call that graphmem
    serve instead; init, neo4j, cypher, keys, reembed, mcp and serve still work on the
    database itself.

    Exit status: 0 on success; 1 when graphmem reports an error (an 'Error:' line on stderr,
    or with --json a JSON object {"error": {"type", "message", ...}} there); 2 when the
    command line itself is malformed; 3 when the command ran but found nothing to act on (a
    forget whose selector matched nothing, a recall or stats of a namespace that holds
    nothing), with a 'Warning:' line on stderr (a JSON object under --json).

    Example:

    \b
        graphmem neo4j start && graphmem init && graphmem demo
    """
    obj = ctx.ensure_object(dict)  # shared with the subcommands: settings, whether --json is on
    # stderr carries graphmem's own error line (or JSON): the driver's warnings, such as a
    # transaction it retries after a deadlock and then commits, are not errors of the command.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
    # graphiti-core logs an LLM failure before graphmem raises it as its own, clearer error.
    logging.getLogger("graphiti_core").setLevel(logging.CRITICAL)
    _install_log(obj)


# --- memory commands ---------------------------------------------------------------------------
#: The exit status of a command that ran but found nothing to act on (see :func:`nothing`).
NOTHING_MATCHED = 3


def nothing(ctx: click.Context, message: str) -> None:
    """End a command that found nothing to act on: a warning on stderr (under ``--json`` a
    JSON object, ``{"warning": {"type": "NothingMatched", "message": ...}}``) and exit status
    :data:`NOTHING_MATCHED`, so that a script sees the difference between "done" and "there
    was nothing there" (a mistyped session or namespace)."""
    if _as_json(ctx):  # stderr carries one JSON object under --json, a warning too
        warning = {"warning": {"type": "NothingMatched", "message": message}}
        click.echo(json.dumps(warning, ensure_ascii=False), err=True)
    else:
        click.echo(f"Warning: {message}", err=True)
    ctx.exit(NOTHING_MATCHED)


def ns_option(func: F) -> F:
    """Add ``--ns`` to a command; the command receives it as ``ns``."""
    return click.option(
        "--ns",
        "--namespace",
        "ns",
        metavar="NAMESPACE",
        default=None,
        help="Namespace to use (default: the GRAPHMEM_NAMESPACE setting).",
    )(func)


def memory_for(ctx: click.Context, ns: str | None) -> Memory:
    """The sync client for the settings and ``--ns``; it connects when entered.

    The embedding model loads on first use, so that commands that embed nothing, and input
    refused before anything is embedded, do not wait for it (recall loads it after its checks
    and before it times the query's embedding).
    """
    from graphmem.client import Memory

    settings = settings_of(ctx)
    return Memory(settings, ns=ns, embedder=embedder_for(settings))


def client_for(ctx: click.Context, ns: str | None) -> Memory | RemoteMemory:
    """The client of a memory command: with GRAPHMEM_SERVER_URL set, a
    :class:`~graphmem.remote.RemoteMemory` calling that server with GRAPHMEM_API_KEY (no
    driver, no embedder: the command starts at once); else :func:`memory_for`'s."""
    settings = settings_of(ctx)
    if settings.server_url is None:
        return memory_for(ctx, ns)
    from graphmem.remote import RemoteMemory

    return RemoteMemory(settings=settings, ns=ns)


def is_remote(ctx: click.Context) -> bool:
    """Whether the memory commands call a graphmem serve (GRAPHMEM_SERVER_URL is set)."""
    return settings_of(ctx).server_url is not None


def json_object(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from graphmem._json import json_error, load_json

    try:
        data = load_json(value)
    except (ValueError, RecursionError) as exc:
        raise click.BadParameter(f"not valid JSON: {json_error(exc)}") from None
    if not isinstance(data, dict):
        raise click.BadParameter('must be a JSON object, e.g. \'{"key": "value"}\'')
    return data


def clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def number(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


#: Fields of a fact or episode that the key/value block leaves to --json: hashes for
#: machines, and the embedding.
_QUIET_FIELDS = frozenset({"text_hash", "content_hash", "embedding"})


def item_mapping(data: Mapping[str, Any]) -> str:
    """A dumped fact or episode as a key/value block for people: what it says and what is set
    about it (metadata as compact JSON); fields that are empty, false or for machines (hashes)
    are left to --json."""
    shown = {
        k: (json.dumps(v, sort_keys=True) if k == "metadata" else v)
        for k, v in data.items()
        if k not in _QUIET_FIELDS and v not in (None, [], {}, False, "")
    }
    return render_mapping(shown)


def fact_data(fact: Fact) -> dict[str, Any]:
    return fact.model_dump(mode="json")
