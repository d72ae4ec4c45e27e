"""What a managed Neo4j reports (:class:`ServerStatus`, :class:`StartResult`) and what the local
server records of a started process (``server.json``, :class:`ServerState`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from graphmem.servers.build import NEO4J_VERSION


@dataclass(frozen=True)
class ServerStatus:
    """What ``graphmem neo4j status`` reports."""

    running: bool
    uri: str
    home: Path
    version: str
    pid: int | None = None
    started_at: datetime | None = None
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "running": self.running,
            "uri": self.uri,
            "home": str(self.home),
            "version": self.version,
            "pid": self.pid,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class ServerState:
    """What ``server.json`` records of a started server."""

    pid: int
    port: int
    version: str = NEO4J_VERSION
    started_at: str = ""
    home: str = ""

    @classmethod
    def read(cls, path: Path) -> ServerState | None:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                pid=int(raw["pid"]),
                port=int(raw["port"]),
                version=str(raw["version"]),
                started_at=str(raw["started_at"]),
                home=str(raw["home"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return cls(pid=-1, port=-1)  # unreadable: a stale leftover

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)


@dataclass(frozen=True)
class StartResult:
    status: ServerStatus
    already_running: bool
    seconds: float


def version_key(version: str) -> tuple[int, ...]:
    """``5.26.30`` as ``(5, 26, 30)``, for ordering versions (an unreadable one sorts first)."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def bolt_uri(port: int) -> str:
    return f"bolt://127.0.0.1:{port}"
