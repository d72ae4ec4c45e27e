"""The service's log: one line per record on stderr, as text or as JSON objects, each line of
a request carrying its request id.

The access log (``graphmem.access``, level info) has one record per request whose fields are
in :data:`ACCESS_FIELDS`; every other record of graphmem's loggers (errors, warnings) logged
while a request is served carries that request's id too."""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, Literal

LogFormat = Literal["text", "json"]
LogLevel = Literal["debug", "info", "warning", "error", "off"]

#: The id of the request being served, for every record logged while it is.
REQUEST_ID: ContextVar[str | None] = ContextVar("graphmem_request_id", default=None)
access_log = logging.getLogger("graphmem.access")

#: The fields of an access record, in the order a text line shows them.
ACCESS_FIELDS = (
    "request_id",
    "method",
    "route",
    "mcp",
    "ns",
    "key",
    "status",
    "ms",
    "db_ms",
    "embed_ms",
    "llm_ms",
)


def _time(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


def _fields(record: logging.LogRecord) -> dict[str, Any] | None:
    fields = getattr(record, "access", None)
    return fields if isinstance(fields, dict) else None


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time``, ``level``, ``logger``, then an access record's fields
    or a message (with ``request_id`` when logged during a request, ``exception`` with a
    traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _time(record),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = _fields(record)
        if fields is not None:
            line.update(fields)
        else:
            request_id = REQUEST_ID.get()
            if request_id is not None:
                line["request_id"] = request_id
            line["message"] = record.getMessage()
            if record.exc_info:
                line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger> key=value ...`` for an access record (the fields that have a
    value), ``<time> <LEVEL> <logger> [request id] message`` for the others."""

    def format(self, record: logging.LogRecord) -> str:
        head = f"{_time(record)} {record.levelname} {record.name}"
        fields = _fields(record)
        if fields is not None:
            pairs = (f"{k}={_text(fields[k])}" for k in ACCESS_FIELDS if fields.get(k) is not None)
            return f"{head} {' '.join(pairs)}"
        request_id = REQUEST_ID.get()
        where = f" [{request_id}]" if request_id is not None else ""
        text = f"{head}{where} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _text(value: Any) -> str:
    text = str(value)
    return json.dumps(text) if (" " in text or '"' in text or not text) else text


def configure_logging(log_format: LogFormat = "text", level: LogLevel = "info") -> None:
    """graphmem's loggers to stderr in this format from this level (``off``: none at all)."""
    root = logging.getLogger("graphmem")
    for handler in [h for h in root.handlers if getattr(h, "graphmem_serve", False)]:
        root.removeHandler(handler)
    if level == "off":
        root.setLevel(logging.CRITICAL + 1)
        root.propagate = False
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.graphmem_serve = True  # type: ignore[attr-defined]
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False  # the command line's own handler would write them twice


__all__ = [
    "ACCESS_FIELDS",
    "REQUEST_ID",
    "JsonFormatter",
    "LogFormat",
    "LogLevel",
    "TextFormatter",
    "access_log",
    "configure_logging",
]
