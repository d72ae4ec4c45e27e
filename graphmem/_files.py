"""Small file helpers shared by the server managers: secrets, log tails, bundled resources."""

from __future__ import annotations

import fcntl
import os
import secrets
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graphmem.errors import ConfigurationError

_PACKAGE_DIR = Path(__file__).resolve().parent


def ensure_secret_file(path: Path, *, nbytes: int = 24) -> str:
    """Return the secret stored in ``path``, creating it (mode 0600) with a random value.

    The file is created atomically with ``O_EXCL`` so two processes never write different
    secrets; an existing file with looser permissions is tightened to 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
    else:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_urlsafe(nbytes) + "\n")
    secret = path.read_text(encoding="utf-8").strip()
    if len(secret) < 8:
        raise ConfigurationError(f"{path} must hold a secret of at least 8 characters")
    return secret


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file, or an empty string if it does not exist."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return "".join(deque(handle, maxlen=lines))
    except FileNotFoundError:
        return ""


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock held for the ``with`` block (POSIX ``flock``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def bundled_resource(repo_relative: str, packaged: str) -> Path:
    """Locate a file shipped with graphmem.

    Wheels carry repository files such as ``docker/compose.yaml`` inside the package (as
    ``packaged``, relative to ``graphmem/``); a source checkout has them at ``repo_relative``.
    """
    for candidate in (_PACKAGE_DIR / packaged, _PACKAGE_DIR.parent / repo_relative):
        if candidate.exists():
            return candidate
    raise ConfigurationError(
        f"cannot find {repo_relative} (looked in {_PACKAGE_DIR / packaged} and "
        f"{_PACKAGE_DIR.parent / repo_relative}); reinstall graphmem"
    )
