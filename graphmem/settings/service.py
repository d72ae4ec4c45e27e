"""The service secret: what signs the API keys of ``graphmem serve`` (``GRAPHMEM_SERVICE_*``).

Each key node in the graph carries a MAC made with this secret; the graph never holds the
secret, so a key node that ``graphmem keys create`` did not write is refused. Every process
that creates or checks keys on one Neo4j (each ``graphmem serve``, ``graphmem mcp --transport
http``, ``graphmem keys``) needs the same secret."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from graphmem.models.keys import MIN_SECRET_CHARS
from graphmem.settings.common import SettingsBase


class ServiceSettings(SettingsBase):
    """Where the service secret comes from, and the previous ones during a rotation."""

    service_secret: SecretStr | None = Field(
        None,
        description="The secret that signs API keys (at least 32 characters); unset: read from "
        "GRAPHMEM_SERVICE_SECRET_FILE. Every process using one Neo4j's keys needs the same one.",
    )
    service_secret_file: Path | None = Field(
        None,
        description="The file holding the service secret when GRAPHMEM_SERVICE_SECRET is unset; "
        "default DATA_DIR/service-secret, created (mode 0600) on first use.",
    )
    service_secret_previous: SecretStr | None = Field(
        None,
        description="Earlier service secrets, comma-separated: keys signed with one still "
        "work until `graphmem keys resign` signs them with the current secret.",
    )

    @field_validator("service_secret")
    @classmethod
    def _check_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().strip()) < MIN_SECRET_CHARS:
            raise ValueError(f"must be at least {MIN_SECRET_CHARS} characters")
        return value

    @field_validator("service_secret_previous")
    @classmethod
    def _check_previous(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and any(
            len(part.strip()) < MIN_SECRET_CHARS for part in value.get_secret_value().split(",")
        ):
            raise ValueError(f"each secret must be at least {MIN_SECRET_CHARS} characters")
        return value

    @property
    def secret_file(self) -> Path:
        """The file the service secret is read from (and created in) when none is set."""
        return (self.service_secret_file or self.data_dir / "service-secret").expanduser()

    @property
    def previous_secrets(self) -> tuple[str, ...]:
        """The previous service secrets, in the order given."""
        if self.service_secret_previous is None:
            return ()
        raw = self.service_secret_previous.get_secret_value()
        return tuple(part.strip() for part in raw.split(",") if part.strip())
