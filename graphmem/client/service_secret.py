"""The service secret that signs API keys, where the settings say it lives: the value of
``GRAPHMEM_SERVICE_SECRET``, else the file ``GRAPHMEM_SERVICE_SECRET_FILE`` (default
``DATA_DIR/service-secret``), created with a random secret, mode 0600, the first time a key is
made or checked on this machine. ``GRAPHMEM_SERVICE_SECRET_PREVIOUS`` adds the secrets keys
signed before a rotation are still checked with."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from graphmem._files import ensure_secret_file
from graphmem.core.key_mac import KeySigner
from graphmem.errors import ConfigurationError
from graphmem.models.keys import MIN_SECRET_CHARS
from graphmem.settings import GraphmemSettings

_lock = threading.Lock()
#: The signer of each secret file as last read, by path: (modification time and size, signer).
_read: dict[tuple[Path, tuple[str, ...]], tuple[tuple[int, int], KeySigner]] = {}


def _file_secret(path: Path) -> str:
    try:
        try:
            secret = ensure_secret_file(path, nbytes=32)
        except ConfigurationError:
            # Too short to be one: perhaps another process has just created it and is
            # writing it; read it once more.
            time.sleep(0.2)
            secret = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read or create the service secret file {path}: {exc} "
            "(GRAPHMEM_SERVICE_SECRET_FILE, or set GRAPHMEM_SERVICE_SECRET)"
        ) from None
    if len(secret) < MIN_SECRET_CHARS:
        raise ConfigurationError(
            f"the service secret file {path} must hold a secret of at least {MIN_SECRET_CHARS} "
            "characters"
        )
    return secret


def service_signer(settings: GraphmemSettings) -> KeySigner:
    """The signer of these settings' service secret (and the previous ones); a
    ConfigurationError when the secret cannot be had."""
    previous = settings.previous_secrets
    if settings.service_secret is not None:
        return KeySigner(settings.service_secret.get_secret_value().strip(), previous)
    path = settings.secret_file.resolve()
    with _lock:
        try:
            stat = path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = None
        known = _read.get((path, previous))
        if known is not None and known[0] == stamp:
            return known[1]
        signer = KeySigner(_file_secret(path), previous)
        stat = path.stat()
        _read[(path, previous)] = ((stat.st_mtime_ns, stat.st_size), signer)
        return signer


__all__ = ["service_signer"]
