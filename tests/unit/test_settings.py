from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.errors import ConfigurationError
from graphmem.settings import GraphmemSettings, load_settings, memory_bytes


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("GRAPHMEM_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults_use_the_local_server() -> None:
    settings = load_settings()
    assert settings.neo4j_uri == "local"
    assert settings.neo4j_mode == "local"
    assert settings.local_neo4j_port == 7687
    assert settings.local_home == (settings.data_dir / "neo4j").resolve()


def test_environment_prefix_and_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_NEO4J_URI", "neo4j+s://abc.databases.neo4j.io")
    monkeypatch.setenv("GRAPHMEM_NEO4J_PASSWORD", "s3cret-value")
    monkeypatch.setenv("GRAPHMEM_LOCAL_NEO4J_PORT", "7700")
    settings = load_settings()
    assert settings.neo4j_mode == "external"
    assert settings.local_neo4j_port == 7700
    assert load_settings(neo4j_uri="docker").neo4j_mode == "docker"


def test_transaction_time_limit_is_off_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().neo4j_transaction_timeout is None
    monkeypatch.setenv("GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT", "2.5")
    assert load_settings().neo4j_transaction_timeout == 2.5


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT", "")
    monkeypatch.setenv("GRAPHMEM_NEO4J_CONNECTION_TIMEOUT", "")
    settings = load_settings()
    assert settings.neo4j_transaction_timeout is None
    assert settings.neo4j_connection_timeout == 15.0


#: A .env an attacker could leave in a working directory: every value points elsewhere.
_HOSTILE_DOTENV = (
    "GRAPHMEM_SERVER_URL=http://evil.example:8080\n"
    "GRAPHMEM_API_KEY=gmk_planted_key\n"
    "GRAPHMEM_NEO4J_URI=bolt://evil.example:7687\n"
    "GRAPHMEM_NEO4J_PASSWORD=planted-password\n"
    "GRAPHMEM_NEO4J_DATABASE=memories\n"
)


def test_a_dotenv_file_in_the_working_directory_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(_HOSTILE_DOTENV)
    settings = load_settings()
    assert settings.server_url is None
    assert settings.api_key is None
    assert settings.neo4j_uri == "local"
    assert settings.neo4j_password is None
    assert settings.neo4j_database == "neo4j"
    assert GraphmemSettings(**{}).neo4j_database == "neo4j"


def test_the_file_graphmem_env_file_names_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    named = tmp_path / "graphmem.env"
    named.write_text(_HOSTILE_DOTENV)
    monkeypatch.setenv("GRAPHMEM_ENV_FILE", str(named))
    settings = load_settings()
    assert settings.server_url == "http://evil.example:8080"
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "gmk_planted_key"
    assert settings.neo4j_uri == "bolt://evil.example:7687"
    assert settings.neo4j_password is not None
    assert settings.neo4j_password.get_secret_value() == "planted-password"
    assert settings.neo4j_database == "memories"
    # The environment still wins over the file, and arguments over both.
    monkeypatch.setenv("GRAPHMEM_NEO4J_DATABASE", "from-env")
    assert load_settings().neo4j_database == "from-env"
    assert load_settings(neo4j_database="given").neo4j_database == "given"


def test_a_file_given_to_the_settings_class_is_read(tmp_path: Path) -> None:
    named = tmp_path / "other.env"
    named.write_text("GRAPHMEM_NEO4J_DATABASE=memories\n")
    assert GraphmemSettings(_env_file=named).neo4j_database == "memories"  # type: ignore[call-arg]


def test_a_named_file_that_is_missing_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRAPHMEM_ENV_FILE", str(tmp_path / "missing.env"))
    with pytest.raises(ConfigurationError, match=r"GRAPHMEM_ENV_FILE.*not a file"):
        load_settings()


def test_a_named_file_that_is_not_utf8_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bad.env").write_bytes(b"GRAPHMEM_NAMESPACE=caf\xe9\n")
    monkeypatch.setenv("GRAPHMEM_ENV_FILE", str(tmp_path / "bad.env"))
    with pytest.raises(ConfigurationError, match=r"bad\.env.*utf-8"):
        load_settings()


def test_memory_sizes_in_bytes() -> None:
    assert memory_bytes("512m") == 512 * 1024**2 and memory_bytes("2G") == 2 * 1024**3
    assert memory_bytes("1024") == 1024 and memory_bytes("64k") == 64 * 1024
    with pytest.raises(ValueError, match="512m or 2g"):
        memory_bytes("2x")


def test_password_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_NEO4J_URI", "bolt://db.example:7687")
    monkeypatch.setenv("GRAPHMEM_NEO4J_PASSWORD", "hunter2-very-secret")
    settings = load_settings()
    assert settings.neo4j_password is not None
    assert settings.neo4j_password.get_secret_value() == "hunter2-very-secret"
    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert "hunter2" not in shown


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("GRAPHMEM_NEO4J_URI", "http://localhost:7474", "GRAPHMEM_NEO4J_URI"),
        ("GRAPHMEM_NEO4J_URI", "bolt://", "names no host"),
        ("GRAPHMEM_NEO4J_URI", "bolt://db.example:abc", "port must be a number"),
        ("GRAPHMEM_NEO4J_URI", "bolt://u:pw-secret@db.example:7687", "GRAPHMEM_NEO4J_PASSWORD"),
        # The driver takes a routing context only with neo4j://: refused here, not by a crash.
        ("GRAPHMEM_NEO4J_URI", "bolt://db.example:7687?region=eu", "needs a neo4j:// scheme"),
        ("GRAPHMEM_LOCAL_NEO4J_PORT", "70000", "GRAPHMEM_LOCAL_NEO4J_PORT"),
        ("GRAPHMEM_LOCAL_NEO4J_HEAP", "lots", "GRAPHMEM_LOCAL_NEO4J_HEAP"),
        ("GRAPHMEM_EMBEDDING_BATCH_SIZE", "0", "GRAPHMEM_EMBEDDING_BATCH_SIZE"),
        ("GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT", "0", "GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT"),
        # A wait the driver cannot count in milliseconds: refused here, not in every call.
        ("GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT", "inf", "GRAPHMEM_NEO4J_TRANSACTION_TIMEOUT"),
        ("GRAPHMEM_NEO4J_CONNECTION_TIMEOUT", "1e300", "GRAPHMEM_NEO4J_CONNECTION_TIMEOUT"),
        ("GRAPHMEM_SCHEMA_WAIT_TIMEOUT", "inf", "GRAPHMEM_SCHEMA_WAIT_TIMEOUT"),
        # Recall's numbers are finite, as RecallConfig takes them.
        ("GRAPHMEM_RECALL_RECENCY_HALF_LIFE_DAYS", "inf", "GRAPHMEM_RECALL_RECENCY_HALF_LIFE"),
    ],
)
def test_bad_settings_raise_a_typed_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, fragment: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=fragment) as raised:
        load_settings()
    assert "pw-secret" not in str(raised.value)  # a password in a URI is never echoed


def test_settings_class_is_the_pydantic_settings_model() -> None:
    assert GraphmemSettings.model_config["env_prefix"] == "GRAPHMEM_"


def test_a_routing_context_is_allowed_with_neo4j_uris() -> None:
    uri = "neo4j://db.example:7687?region=eu"
    assert load_settings(neo4j_uri=uri).neo4j_uri == uri
