"""What the client's and the local server's settings share: the ``GRAPHMEM_`` prefix, the
settings file that ``GRAPHMEM_ENV_FILE`` names (no ``.env`` is read unless named), where
graphmem keeps its files, and the value checks both use."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

NEO4J_URI_SCHEMES = frozenset({"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"})
_MEMORY_SIZE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")

#: The longest wait a timeout setting may name: a year (the driver counts in 64-bit ms).
MAX_WAIT_SECONDS = 365 * 86_400
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def seconds(default: float | None, description: str, *, zero: bool = False) -> Any:
    """A setting in seconds: above 0 (or 0 too, with ``zero``) and at most
    :data:`MAX_WAIT_SECONDS`."""
    if zero:
        return Field(default, ge=0, le=MAX_WAIT_SECONDS, description=description)
    return Field(default, gt=0, le=MAX_WAIT_SECONDS, description=description)


def weight(default: float, description: str) -> Any:
    """A setting that weighs a term of a score: a finite number from 0 (off) to 10."""
    return Field(default, ge=0.0, le=10.0, allow_inf_nan=False, description=description)


def memory_size(value: str) -> str:
    """``value`` as a Java memory size such as ``512m`` or ``2g`` (lower case), else a
    ``ValueError`` that says what is expected."""
    if not isinstance(value, str) or not _MEMORY_SIZE.fullmatch(value):
        raise ValueError(f"must be a size such as 512m or 2g; got {value!r}")
    return value.lower()


def memory_bytes(size: str) -> int:
    """The bytes of a Java memory size checked by :func:`memory_size`."""
    size = memory_size(size)
    unit = size[-1] if size[-1] in "kmg" else ""
    return int(size[: len(size) - len(unit)]) * _SIZE_UNITS[unit]


Neo4jMode = Literal["local", "docker", "external"]
#: Neo4j versions the local server can run: 2026.09 (Java 21+, the default) and the 5.26 LTS
#: (Java 17+).
LocalNeo4jVersion = Literal["2026.09.0", "5.26.30"]


def server_url(value: str) -> str:
    """``value`` as the base URL of a ``graphmem serve`` (``http://`` or ``https://``, a host,
    perhaps a port and a path), without a trailing slash; else a ``ValueError`` that says why."""
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"must be an http:// or https:// URL; got {value!r}")
    if parts.username is not None or parts.password is not None:
        # Not echoed: the URL may hold a password.
        raise ValueError("the URL carries credentials; give the API key as GRAPHMEM_API_KEY")
    if not parts.hostname:
        raise ValueError(f"URL {value!r} names no host")
    if parts.query or parts.fragment:
        raise ValueError(f"URL {value!r}: a server URL takes no query string or fragment")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        raise ValueError(f"URL {value!r}: the port must be a number from 0 to 65535") from None
    return value.rstrip("/")


#: The environment variable that names a settings file (``KEY=value`` lines, as a ``.env``):
#: graphmem reads no such file unless the user names one, so a ``.env`` that happens to lie in
#: the working directory cannot point the server URL, the API key or the Neo4j URI and
#: password somewhere else.
ENV_FILE_VARIABLE = "GRAPHMEM_ENV_FILE"


def named_env_file() -> Path | None:
    """The settings file ``GRAPHMEM_ENV_FILE`` names, if it names one; FileNotFoundError
    when it names none that exists (a file the user named is never skipped in silence)."""
    named = os.environ.get(ENV_FILE_VARIABLE, "").strip()
    if not named:
        return None
    path = Path(named).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{ENV_FILE_VARIABLE} names {named!r}, which is not a file")
    return path


def default_cache_dir() -> Path:
    """graphmem's cache directory when ``GRAPHMEM_CACHE_DIR`` does not set one."""
    return Path(platformdirs.user_cache_dir("graphmem"))


class SettingsBase(BaseSettings):
    """``GRAPHMEM_`` variables, and the file ``GRAPHMEM_ENV_FILE`` names (no ``.env`` is read
    unless named); an empty variable leaves its setting at the default."""

    model_config = SettingsConfigDict(
        env_prefix="GRAPHMEM_",
        env_file=None,  # only the file the user names: see settings_customise_sources
        env_file_encoding="utf-8",
        env_ignore_empty=True,  # GRAPHMEM_X= (empty) leaves X at its default, as unset would
        extra="ignore",
        validate_default=True,
    )

    # --- where graphmem keeps its files ---------------------------------------------------
    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("graphmem")),
        description="Where graphmem keeps its data (the local server's home by default); "
        "default: the platform's user data folder.",
    )
    cache_dir: Path = Field(
        default_factory=default_cache_dir,
        description="Builds of the local server and digests of embedding models; default: the "
        "platform's user cache folder.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then the environment, then the file ``GRAPHMEM_ENV_FILE`` names (a file
        given as ``_env_file=`` instead), then the defaults."""
        given = isinstance(dotenv_settings, DotEnvSettingsSource) and dotenv_settings.env_file
        named = None if given else named_env_file()
        if named is not None:
            dotenv_settings = DotEnvSettingsSource(
                settings_cls, env_file=named, env_file_encoding="utf-8"
            )
        return init_settings, env_settings, dotenv_settings, file_secret_settings
