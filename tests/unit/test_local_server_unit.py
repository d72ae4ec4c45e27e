from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem._files import ensure_secret_file, tail
from graphmem.errors import Neo4jServerError, Neo4jUnavailableError
from graphmem.neo4j_local import NEO4J_VERSION, LocalNeo4jServer, _Build, _pid_alive, _State
from graphmem.settings import load_settings

REPO = Path(__file__).resolve().parents[2]


def _server(tmp_path: Path, **overrides: object) -> LocalNeo4jServer:
    return LocalNeo4jServer(load_settings(local_neo4j_home=tmp_path / "home", **overrides))


def test_version_matches_the_maven_project() -> None:
    pom = (REPO / "docker" / "local-neo4j" / "pom.xml").read_text()
    match = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", pom)
    assert match is not None and match.group(1) == NEO4J_VERSION


def test_secret_file_is_private_random_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "password"
    first = ensure_secret_file(path)
    assert len(first) >= 24
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_secret_file(path) == first
    path.chmod(0o644)
    assert ensure_secret_file(path) == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_secret_file(tmp_path / "other") != first


def test_pid_alive() -> None:
    assert _pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not _pid_alive(child.pid)
    assert not _pid_alive(-1)


def test_zombie_children_count_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while True:  # let it exit without reaping it
        if Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
    assert not _pid_alive(child.pid)


def test_status_of_a_never_started_server(tmp_path: Path) -> None:
    server = _server(tmp_path)
    status = server.status()
    assert not status.running and status.note == "not running"
    assert status.uri == "bolt://127.0.0.1:7687"
    with pytest.raises(Neo4jUnavailableError, match="never been started"):
        server.target()
    assert server.stop() is False


def test_stale_and_corrupt_state_files_are_not_running(tmp_path: Path) -> None:
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    _State(pid=child.pid, port=7687).write(server.state_file)
    assert "stale" in server.status().note
    server.state_file.write_text("{not json")
    assert not server.status().running
    # our own pid is alive but is not a Neo4j of this home
    _State(pid=os.getpid(), port=7687).write(server.state_file)
    assert not server.status().running


def test_missing_maven_is_explained(tmp_path: Path) -> None:
    server = _server(tmp_path, maven="mvn-not-installed", cache_dir=tmp_path / "cache")
    with pytest.raises(Neo4jServerError, match=r"Maven .* is not on PATH"):
        server.build()


def test_missing_java_is_explained(tmp_path: Path) -> None:
    server = _server(tmp_path, java="java-not-installed")
    with pytest.raises(Neo4jServerError, match=r"Java .* is not on PATH"):
        server._java_command(_Build(tmp_path), home=tmp_path, port=1, password_file=tmp_path / "pw")


def test_java_command_binds_loopback_and_keeps_the_password_off_the_command_line(
    tmp_path: Path,
) -> None:
    server = _server(tmp_path, local_neo4j_port=7777, local_neo4j_heap="2g")
    ensure_secret_file(server.password_file)
    build = _Build(tmp_path / "build")
    command = server._java_command(
        build, home=server.home, port=7777, password_file=server.password_file
    )
    assert not any("SharedArchiveFile" in part for part in command)
    build.directory.mkdir()
    build.class_archive.write_bytes(b"")
    command = server._java_command(
        build, home=server.home, port=7777, password_file=server.password_file
    )
    assert f"-XX:SharedArchiveFile={build.class_archive}" in command
    assert "-Xmx2g" in command
    assert command[command.index("--port") + 1] == "7777"
    assert server.password_file.read_text().strip() not in " ".join(command)


def test_build_failure_reports_the_maven_log(tmp_path: Path) -> None:
    project = tmp_path / "broken"
    project.mkdir()
    (project / "pom.xml").write_text("<project>this is not a pom</project>")
    server = _server(tmp_path, local_neo4j_project=project, cache_dir=tmp_path / "cache")
    with pytest.raises(Neo4jServerError, match="Maven build of the local Neo4j failed") as info:
        server.build()
    assert info.value.log_tail


def test_tail(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert tail(log, 2) == "line 98\nline 99\n"
    assert tail(tmp_path / "missing.log") == ""
