from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from graphmem.llm.graphiti import graphiti_telemetry_enabled, import_graphiti
from graphmem.servers.docker import DockerNeo4j, docker_engine_available
from graphmem.servers.targets import managed_server, resolve_target
from graphmem.settings import GraphmemSettings, load_settings


def test_compose_file_publishes_bolt_on_loopback_with_a_healthcheck(tmp_path: Path) -> None:
    server = DockerNeo4j(load_settings(neo4j_uri="docker", data_dir=tmp_path))
    compose = yaml.safe_load(server.compose_file.read_text())
    service = compose["services"]["neo4j"]
    assert service["image"] == "neo4j:2026.09.0-community"
    assert service["ports"] == ["127.0.0.1:${GRAPHMEM_DOCKER_BOLT_PORT:-7687}:7687"]
    assert service["environment"]["NEO4J_dbms_usage__report_enabled"] == "false"
    # the local server's default vector merge factor, as the image's entrypoint spells it
    default = GraphmemSettings.model_fields["local_neo4j_vector_merge_factor"].default
    merge = service["environment"]["NEO4J_internal_dbms_index_vector_standard__merge__factor"]
    assert merge == str(default)
    assert service["environment"]["NEO4J_AUTH"].startswith("neo4j/${GRAPHMEM_NEO4J_PASSWORD:?")
    assert "7474" in " ".join(service["healthcheck"]["test"])
    assert set(compose["volumes"]) == {"neo4j-data", "neo4j-logs"}
    target = server.target()
    assert target.uri == "bolt://127.0.0.1:7687"
    assert target.mode == "docker"
    assert (tmp_path / "docker-neo4j-password").stat().st_mode & 0o077 == 0


def test_docker_engine_check_needs_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert docker_engine_available() is False


def test_one_setting_selects_the_kind_of_neo4j(tmp_path: Path) -> None:
    assert managed_server(load_settings(neo4j_uri="local", data_dir=tmp_path)).mode == "local"
    assert managed_server(load_settings(neo4j_uri="docker", data_dir=tmp_path)).mode == "docker"
    external = load_settings(neo4j_uri="neo4j+s://x.databases.neo4j.io", neo4j_password="abcdefgh")
    target = resolve_target(external)
    assert target.mode == "external" and target.uri.startswith("neo4j+s://")
    assert "abcdefgh" not in repr(target)


def test_graphiti_telemetry_is_off_unless_opted_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHITI_TELEMETRY_ENABLED", raising=False)
    assert import_graphiti(load_settings()).__name__ == "graphiti_core"
    assert os.environ["GRAPHITI_TELEMETRY_ENABLED"] == "false"
    assert graphiti_telemetry_enabled(load_settings()) is False
