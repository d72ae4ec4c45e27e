"""Each operation of the table as the request the HTTP transport sends: its path from the
row's template (the namespace and ids checked and quoted as the library checks them), a POST's
arguments as its JSON body, a GET's as its query parameters, a negated flag turned
(``dry_run`` goes as ``confirm``), and the answer read into the row's result model. No I/O.
What an operation needs beyond that (a fact's fields as JSON, bounds checked before sending,
arguments that only the library takes) is in :data:`PREPARE`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphmem.core.checks import checked_integer, namespace
from graphmem.errors import ClientUsageError, ConfirmationRequiredError, InvalidInputError
from graphmem.models import FactInput, Message
from graphmem.models.bounds import check_items
from graphmem.models.namespaces import MAX_PAGE
from graphmem.ops.table import Operation
from graphmem.remote.call import (
    Call,
    checked_progress,
    either,
    export_record,
    given,
    id_list,
    jsonable,
    model,
    models,
    one_id,
    quoted,
    zone_name,
)

#: The options the library reads a lone string of as a one-item list; a request names the list.
_LISTS = frozenset({"tags", "supersedes", "references", "contradicts", "kinds"})


@dataclass
class Parts:
    """What an operation's arguments become, beyond its body or query parameters."""

    progress: Callable[..., object] | None = None
    report: Callable[[Any], tuple[int, ...] | None] | None = None
    content: bytes | None = None
    #: Arguments checked here and not sent (the server uses its own page and batch sizes).
    local: dict[str, Any] = field(default_factory=dict)


def listed(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with a lone string among :data:`_LISTS` as a one-item list."""
    return {k: [v] if k in _LISTS and isinstance(v, str) else v for k, v in fields.items()}


def fact_data(item: FactInput | Mapping[str, Any] | str, name: str) -> Any:
    """A fact of ``remember_many`` as the JSON the server reads (text alone as ``text``)."""
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, FactInput):
        return item.model_dump(mode="json", exclude_defaults=True)
    return jsonable(listed(item) if isinstance(item, Mapping) else item, name)


def message_data(item: Message | Mapping[str, Any] | str, name: str) -> Any:
    """A message of ``ingest`` as the JSON the server reads (text alone as ``content``)."""
    if isinstance(item, str):
        return {"content": item}
    if isinstance(item, Message):
        return item.model_dump(mode="json", exclude_defaults=True)
    return jsonable(item, name)


def jsonl(records: Iterable[Mapping[str, Any]]) -> tuple[bytes, int]:
    """Records as the JSON lines an import reads, and how many there are."""
    lines = []
    for number, record in enumerate(records, 1):
        try:
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"record {number} is not JSON data: {exc}") from None
    return "".join(lines).encode(), len(lines)


def export_records(body: bytes) -> list[dict[str, Any]]:
    """A whole export answer (JSON lines) as its records."""
    lines = body.decode("utf-8").splitlines()
    found = (export_record(line, n) for n, line in enumerate(lines, 1))
    return [record for record in found if record is not None]


# --- what some operations need before they are sent ----------------------------------------------
def _remember_many(args: dict[str, Any]) -> Parts:
    if args.pop("vectors", None) is not None:
        raise ClientUsageError(
            "vectors cannot be sent to graphmem serve: the server embeds with its own "
            "model (leave vectors out, or use Memory against the database)"
        )
    args["facts"] = [fact_data(item, f"facts[{i}]") for i, item in enumerate(args["facts"])]
    check_items(args["facts"], "text")  # refused here as the server would, before sending
    return Parts()


def _ingest(args: dict[str, Any]) -> Parts:
    items = [message_data(m, f"messages[{i}]") for i, m in enumerate(args["messages"])]
    check_items(items, "content")  # refused here as the server would, before sending
    args["messages"] = items
    # Called once, with every message, when the server has stored them.
    progress = checked_progress(args.pop("progress", None), "a number of messages")
    return Parts(progress, lambda _: (len(items),) if items else None)


def _forget(args: dict[str, Any]) -> Parts:
    progress = checked_progress(args.pop("progress", None), "a number of nodes")
    if args.pop("actor", None) is not None:
        raise ClientUsageError(
            "actor cannot be chosen through graphmem serve: the server records the name "
            "of the API key as the actor of every change"
        )
    args["ids"] = id_list("ids", args.get("ids"))
    return Parts(progress, lambda r: (r.erased,) if r.erased and not r.dry_run else None)


def _consolidate(args: dict[str, Any]) -> Parts:
    progress = checked_progress(
        args.pop("progress", None), "the clusters done and the clusters in all"
    )
    return Parts(progress, lambda r: (r.clusters, r.clusters) if r.clusters else None)


def _runs(args: dict[str, Any]) -> Parts:
    args["ids"] = id_list("run id", args.get("ids"))
    return Parts()


def _export(args: dict[str, Any]) -> Parts:
    page_size = checked_integer("page_size", args.pop("page_size"), 1, MAX_PAGE)
    return Parts(local={"page_size": page_size})


def _import(args: dict[str, Any]) -> Parts:
    checked_integer("batch_size", args.pop("batch_size"), 1, MAX_PAGE)
    progress = checked_progress(args.pop("progress", None), "a count")
    content, count = jsonl(args.pop("records"))
    return Parts(progress, lambda _: (count,) if count else None, content)


def _drop(args: dict[str, Any]) -> Parts:
    checked_integer("batch_size", args.pop("batch_size"), 1, MAX_PAGE)
    progress = checked_progress(args.pop("progress", None), "a count")
    if args["confirm"] is not True and args["dry_run"] is not True:
        raise ConfirmationRequiredError(
            f"dropping namespace {args['ns']!r} deletes every node of it for good, tombstones "
            "and consolidation records included: pass confirm=True (see what would go with "
            "dry_run=True)"
        )
    return Parts(progress, lambda r: (r.removed,) if r.removed and not r.dry_run else None)


#: What an operation's arguments need before the generic steps, by library method.
PREPARE: dict[str, Callable[[dict[str, Any]], Parts]] = {
    "remember_many": _remember_many,
    "ingest": _ingest,
    "forget": _forget,
    "consolidate": _consolidate,
    "consolidation_runs": _runs,
    "export": _export,
    "import_": _import,
    "drop_namespace": _drop,
}


# --- the generic steps ---------------------------------------------------------------------------
def call_of(op: Operation, args: Mapping[str, Any], default_ns: str) -> Call[Any]:
    """The request of ``op`` with the library's keyword arguments ``args``."""
    args = dict(args)
    parts = PREPARE[op.call](args) if op.call in PREPARE else Parts()
    path = _path(op, args, default_ns)
    if op.negated is not None:
        flag, wire = op.negated
        value = args.pop(flag, False)
        if not isinstance(value, bool):
            raise InvalidInputError(f"{flag} must be True or False, got {value!r}")
        args[wire] = not value
    data: dict[str, Any] = {}
    for name, value in listed(args).items():
        data |= given(name, zone_name(value) if name == "timezone" else value)
    body = data if op.http == "POST" and parts.content is None else None
    params = data if op.http == "GET" else None
    return Call(
        op.http,
        path,
        _reader(op),
        json=body,
        params=params,
        content=parts.content,
        progress=parts.progress,
        report=parts.report,
        writes=op.writes,
        recorded=op.recorded,
    )


def _path(op: Operation, args: dict[str, Any], default_ns: str) -> str:
    """The path of ``op``: its parameters taken out of ``args``, checked and quoted."""
    path = op.path
    for name in op.path_params:
        value = args.pop(name, None)
        if name == "ns":
            checked = namespace(value, default_ns)
        else:
            checked = one_id("run id" if name == "run_id" else name, value)
        path = path.replace("{" + name + "}", quoted(checked))
    return path


def _reader(op: Operation) -> Callable[[bytes], Any]:
    """How the answer of ``op`` becomes its result."""
    if op.streamed and op.http == "GET":
        return export_records
    result = op.result
    if getattr(result, "__origin__", None) is list:
        return models(result.__args__[0])
    if isinstance(result, type):
        return model(result)
    return either(*result.__args__)


__all__ = ["PREPARE", "Parts", "call_of", "export_records", "fact_data", "jsonl", "message_data"]
