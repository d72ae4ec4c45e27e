"""How the command line prints: tables and key/value blocks for people, ``--json`` for
machines, and errors as one line or, after ``--json``, as a JSON object on stderr."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from graphmem import settings
from graphmem._text import printable as _printable
from graphmem.errors import BadLinesError, ConfigurationError, GraphmemError

F = TypeVar("F", bound=Callable[..., Any])


def _noting(key: str) -> Callable[[click.Context, click.Parameter, bool], bool]:
    """The callback of an output format's flag: it notes the format in the command's state
    (where the ``graphmem`` group reads ``as_json`` to print errors as JSON too), and refuses a
    second format while the options are read, before the command runs."""

    def note(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        if value:
            noted = ctx.ensure_object(dict)
            noted[key] = True
            _one_format(noted)
        return value

    return note


#: The callback of ``--json``.
note_json = _noting("as_json")


def _one_format(noted: dict[str, Any]) -> None:
    """Refuses ``--json`` with ``--csv``."""
    if noted.get("as_json") and noted.get("as_csv"):
        raise click.UsageError("--json and --csv are two formats: give one")


def json_option(help_text: str) -> Callable[[F], F]:
    """``--json``, received as ``as_json``: the output as JSON, and errors as JSON on stderr."""
    return click.option("--json", "as_json", is_flag=True, callback=note_json, help=help_text)


def output_options(func: F) -> F:
    """Add ``--json`` and ``--csv`` to a command that prints a table; :func:`emit` prints
    what the command gives it in the format asked for."""
    with_json = json_option("Print JSON instead of a human-readable table (errors too, on stderr).")
    with_csv = click.option(
        "--csv",
        "as_csv",
        is_flag=True,
        expose_value=False,
        callback=_noting("as_csv"),
        help="Print CSV instead: one line per row (or one row of the fields), nested values as "
        "JSON, cells that start like a spreadsheet formula escaped with '.",
    )
    return with_csv(with_json(func))


def as_csv() -> bool:
    """Whether the running command was asked for ``--csv`` (and not also ``--json``)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    if not isinstance(obj, dict) or not obj.get("as_csv"):
        return False
    _one_format(obj)
    return True


def csv_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as CSV: the union of their fields (dotted for nested objects) as the header."""
    flat = [_flattened(row) for row in rows]
    header: list[str] = []
    for row in flat:
        header += [key for key in row if key not in header]
    return csv_text(header, ([row.get(key) for key in header] for row in flat))


def _flattened(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(_flattened(value, f"{name}."))
        elif isinstance(value, list | tuple | dict):
            out[name] = json.dumps(value, ensure_ascii=False, default=str) if value else None
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = value
    return out


def print_report(
    data: Mapping[str, Any],
    markdown: str,
    *,
    as_json: bool,
    out: Path | None,
    stem: str,
    say: Callable[[str], None],
    indent: int | None = 2,
) -> None:
    """Print a run's report (JSON or Markdown), then write ``<stem>.json`` and ``<stem>.md``
    into ``out``. Printed first, a finished run is not lost when ``out`` cannot take it. An
    earlier report of the same name is kept: the new one becomes ``<stem>-2``, ``-3`` and so
    on (two runs started in the same second would otherwise share a name). ``indent=None``
    writes the JSON on one line (a large report)."""
    if as_json:
        click.echo(json.dumps(data, indent=indent))
    else:
        click.echo(markdown, nl=False)
    if out is None:
        return
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = _write_new(out, stem, json.dumps(data, indent=indent) + "\n", markdown)
    except OSError as exc:
        raise ConfigurationError(
            f"the report was printed but could not be written to {out} "
            f"({exc.strerror or exc}): only the copy printed above remains"
        ) from exc
    say(f"wrote {paths[0]} and {paths[1]}")


def _write_new(out: Path, stem: str, json_text: str, markdown: str) -> tuple[Path, Path]:
    """Write the two files under the first free ``stem``, ``stem-2``, ...; each is created
    exclusively, so neither an earlier report nor a concurrent run's is overwritten."""
    number = 1
    while True:
        name = stem if number == 1 else f"{stem}-{number}"
        paths = out / f"{name}.json", out / f"{name}.md"
        written: list[Path] = []
        try:
            for path, text in zip(paths, (json_text, markdown), strict=True):
                with path.open("x", encoding="utf-8") as file:
                    written.append(path)
                    file.write(text)
            return paths
        except OSError as exc:
            for path in written:
                path.unlink(missing_ok=True)
            if not isinstance(exc, FileExistsError):
                raise
        number += 1


def emit(
    data: Any,
    *,
    as_json: bool,
    table: Callable[[Any], str] | None = None,
    rows: Callable[[Any], Sequence[Mapping[str, Any]]] | None = None,
) -> None:
    """Print a command's result: JSON with ``--json``, CSV with ``--csv`` (the rows that
    ``rows`` picks out of ``data``; by default ``data`` itself, a list of rows or one row),
    otherwise ``table(data)`` (a key/value block without one)."""
    if as_csv():
        picked: Any = rows(data) if rows is not None else data
        click.echo(csv_rows(list(picked) if isinstance(picked, list) else [picked]), nl=False)
    elif as_json:
        click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))
    else:
        click.echo(table(data) if table else render_mapping(data))


def render_mapping(data: Mapping[str, Any]) -> str:
    width = max((len(k) for k in data), default=0)
    return "\n".join(f"{k.ljust(width)}  {_cell(v)}" for k, v in data.items())


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    if not rows:
        return "(none)"
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(_printable(str(v)) for v in value)
    return _printable(str(value))


def error_data(exc: GraphmemError) -> dict[str, Any]:
    """An error as JSON: its type and message, the ids it names, what a guarded read refused,
    a JSONL input's bad lines."""
    data: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    ids = getattr(exc, "ids", None)
    if ids:
        data["ids"] = list(ids)
    refused = getattr(exc, "refused", None)
    if isinstance(refused, str):
        data["refused"] = refused
    if isinstance(exc, BadLinesError):
        data["bad_lines"] = [{"line": n, "reason": why} for n, why in exc.problems]
    return {"error": data}


def memory_size(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The callback of a Java memory size option (``--heap 2g``)."""
    try:
        return settings.memory_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def writable_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """The callback of an output directory option: created if need be and checked writable
    before the command runs, so that a long run cannot end with nowhere to put its results."""
    if value is None:
        return None
    try:
        value.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=value):
            pass
    except OSError as exc:
        raise click.BadParameter(f"cannot write into {value}: {exc.strerror or exc}") from None
    return value


#: What a spreadsheet takes for the start of a formula (OWASP's CSV injection rule): a cell of
#: text that starts with one of these is written with a ``'`` before it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: ``'`` before a text that starts
    like a formula (``=HYPERLINK(...)``, ``+cmd|...``, ``-2+3``, ``@SUM(...)``, or a tab or a
    carriage return before one)."""
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]], *, escape: bool = True) -> str:
    """CSV with a header line, lines ended by CRLF (RFC 4180, which also makes the writer
    quote a cell holding a carriage return). Text cells that start like a formula are escaped
    (:func:`csv_cell`) unless ``escape`` is off; numbers and the header are written as
    they are."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(
            [csv_cell(value) if escape and isinstance(value, str) else value for value in row]
        )
    return out.getvalue()


class FiniteFloat(click.FloatRange):
    """A number within a range that is also finite: ``nan``, ``inf`` and ``-inf``, which
    click's own float types accept (``nan`` passes every bound), are refused."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class Counter:
    """A running count on stderr (``Erasing: 1,500 items``), rewritten in place, for work
    whose total is not known in advance; silent when stderr is not a terminal. Call it with
    each step's count; :meth:`done` ends the line."""

    def __init__(self, label: str, unit: str, *, total: int | None = None) -> None:
        self.label, self.unit, self.total = label, unit, total
        self.count = 0
        self.shown = sys.stderr.isatty()

    def __call__(self, step: int) -> None:
        self.count += step
        if self.shown:
            of = f" of {self.total:,}" if self.total is not None else ""
            sys.stderr.write(f"\r{self.label}: {self.count:,}{of} {self.unit}")
            sys.stderr.flush()

    def of_total(self, done: int, total: int) -> None:
        """A progress callback given what is done and the total (as consolidate calls it)."""
        self.total = total
        self(done - self.count)

    def done(self) -> None:
        if self.shown and self.count:
            sys.stderr.write("\n")
            sys.stderr.flush()
