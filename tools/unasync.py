"""Writes the sync code that is generated from its async source, as httpx and httpcore do:
each source below is rewritten word by word (``async def`` to ``def``, ``await x`` to ``x``,
the async names to their sync twins), then formatted by ruff. ``--check`` writes nothing and
fails when a generated file is not what its source gives (``make lint`` runs it)::

    python tools/unasync.py          # write the generated files
    python tools/unasync.py --check  # are they current?
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each async source and the sync file generated from it.
FILES: dict[str, str] = {
    "graphmem/client/api_aio.py": "graphmem/client/api_sync.py",
    "graphmem/remote/http_aio.py": "graphmem/remote/http_sync.py",
}

#: Whole words of the async source and what they become (longest first where one contains
#: another).
WORDS: dict[str, str] = {
    "AsyncMemoryAPI": "MemoryAPI",
    "AsyncAuditAPI": "AuditAPI",
    "AsyncSends": "Sends",
    "AsyncHttpTransport": "HttpTransport",
    "AsyncRemoteMemory": "RemoteMemory",
    "AsyncMemory": "Memory",
    "AsyncIterator": "Iterator",
    "AsyncBaseTransport": "BaseTransport",
    "AsyncClient": "Client",
    "asynccontextmanager": "contextmanager",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "aclose": "close",
    "aiter_lines": "iter_lines",
    "aread": "read",
    "awaited": "refuse_awaitable",
    "api_aio": "api_sync",
    "http_aio": "http_sync",
    "asyncio": "time",
}
#: Keywords that go.
KEYWORDS = (
    (re.compile(r"\basync def\b"), "def"),
    (re.compile(r"\basync with\b"), "with"),
    (re.compile(r"\basync for\b"), "for"),
    (re.compile(r"\bawait "), ""),
)


def generated(source: str, path: str) -> str:
    """The sync text of ``source`` (the async file at ``path``), formatted."""
    text = source
    for pattern, sync in KEYWORDS:
        text = pattern.sub(sync, text)
    words = re.compile(r"\b(" + "|".join(map(re.escape, WORDS)) + r")\b")
    text = words.sub(lambda m: WORDS[m.group(1)], text)
    header = f"# Generated from {path} by tools/unasync.py: edit that file, then run it.\n"
    return _formatted(header + text, FILES[path])


def _formatted(text: str, path: str) -> str:
    """``text`` with its imports sorted and formatted by ruff, as ``make lint`` wants it."""
    for command in (["check", "--fix", "--select", "I", "--quiet"], ["format"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", path, "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if done.returncode != 0 or not done.stdout:
            raise SystemExit(f"ruff {command[0]} failed on {path}: {done.stderr}")
        text = done.stdout
    return text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for source, target in FILES.items():
        text = generated((ROOT / source).read_text(encoding="utf-8"), source)
        path = ROOT / target
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(target)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if stale:
        print(f"out of date (run python tools/unasync.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
