from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import get_args

import pytest

from graphmem._files import ensure_secret_file, tail
from graphmem.errors import ConfigurationError, Neo4jServerError, Neo4jUnavailableError
from graphmem.servers.build import MAIN_CLASS, MIN_JAVA, NEO4J_VERSION, MavenBuild, write_conf
from graphmem.servers.java import JavaRuntime, find_java, java_feature_version, runtime_options
from graphmem.servers.local import LocalNeo4jServer
from graphmem.servers.processes import pid_alive
from graphmem.servers.state import ServerState
from graphmem.settings import GraphmemSettings, load_settings

REPO = Path(__file__).resolve().parents[2]


def _stand_in(*words: str) -> subprocess.Popen[bytes]:
    """A live process whose command line holds ``words``, returned once ``/proc`` shows them:
    Popen returns when the child's exec has begun, and for a moment after that its command
    line still reads empty."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *words])
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    deadline = time.monotonic() + 10
    while words[0].encode() not in cmdline.read_bytes():
        assert time.monotonic() < deadline, "the stand-in's command line never showed"
        time.sleep(0.01)
    return process


def _server(tmp_path: Path, **overrides: object) -> LocalNeo4jServer:
    return LocalNeo4jServer(load_settings(local_neo4j_home=tmp_path / "home", **overrides))


def test_version_matches_the_maven_project() -> None:
    pom = (REPO / "docker" / "local-neo4j" / "pom.xml").read_text()
    match = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", pom)
    assert match is not None and match.group(1) == NEO4J_VERSION
    release = re.search(r"<maven\.compiler\.release>(\d+)<", pom)
    assert release is not None and int(release.group(1)) == MIN_JAVA[NEO4J_VERSION]
    settable = GraphmemSettings.model_fields["local_neo4j_version"].annotation
    assert set(get_args(settable)) == set(MIN_JAVA)
    assert GraphmemSettings.model_fields["local_neo4j_version"].default == NEO4J_VERSION


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
    assert pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not pid_alive(child.pid)
    assert not pid_alive(-1)


def test_zombie_children_count_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    while True:  # let it exit without reaping it
        if Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
    assert not pid_alive(child.pid)


def test_status_of_a_never_started_server(tmp_path: Path) -> None:
    server = _server(tmp_path)
    status = server.status()
    assert not status.running and status.note == "not running"
    assert status.uri == "bolt://127.0.0.1:7687"
    with pytest.raises(Neo4jUnavailableError, match="never been started"):
        server.target()
    assert server.stop() is False
    assert not server.home.exists()  # stopping creates no home


def test_a_home_that_cannot_hold_the_server_is_named(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("")  # a file where the home should be
    server = _server(tmp_path)
    with pytest.raises(ConfigurationError, match=r"GRAPHMEM_LOCAL_NEO4J_HOME=.* cannot hold"):
        server.start()
    assert "is not a directory" in server.status().note
    assert server.stop() is False


def test_a_running_server_whose_password_file_is_gone_says_so(tmp_path: Path) -> None:
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    # A live process that looks like this home's server (its command line names both).
    stand_in = _stand_in(MAIN_CLASS, "--home", str(server.home), "--config", "neo4j.conf")
    try:
        ServerState(pid=stand_in.pid, port=7687).write(server.state_file)
        with pytest.raises(Neo4jUnavailableError, match=r"runs, but its password file .* is gone"):
            server.target()
    finally:
        stand_in.kill()
        stand_in.wait()


def test_stale_and_corrupt_state_files_are_not_running(tmp_path: Path) -> None:
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    ServerState(pid=child.pid, port=7687).write(server.state_file)
    assert "stale" in server.status().note
    server.state_file.write_text("{not json")
    assert not server.status().running and "unreadable" in server.status().note
    # our own pid is alive but is not a Neo4j of this home
    ServerState(pid=os.getpid(), port=7687).write(server.state_file)
    assert not server.status().running


def test_a_damaged_state_file_does_not_orphan_a_running_server(tmp_path: Path) -> None:
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    # A live process that looks like this home's server, and a state file cut short.
    looks_like = [MAIN_CLASS, "--home", str(server.home), "--port", "7799"]
    stand_in = _stand_in(*looks_like)
    try:
        server.state_file.write_text('{"pid": 12')
        status = server.status()
        assert status.running and status.pid == stand_in.pid and status.uri.endswith(":7799")
        assert server.stop() is True  # found by its command line, and stopped
        assert stand_in.wait(timeout=10) is not None and not server.state_file.exists()
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()


def test_a_deleted_state_file_does_not_orphan_a_running_server(tmp_path: Path) -> None:
    # Deleted by hand (or never written): status said "not running", start that the port was
    # "in use by another process", and stop did nothing, while the server ran on.
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    looks_like = [MAIN_CLASS, "--home", str(server.home), "--config", "c", "--port", "7799"]
    stand_in = _stand_in(*looks_like)
    try:
        assert not server.state_file.exists()
        status = server.status()
        assert status.running and status.pid == stand_in.pid and status.uri.endswith(":7799")
        assert server.stop() is True
        assert stand_in.wait(timeout=10) is not None and not server.state_file.exists()
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()


def test_the_server_of_a_home_whose_path_extends_this_one_is_not_taken_for_it(
    tmp_path: Path,
) -> None:
    # A stale state whose pid now belongs to the server of /x/home2: /x/home is a prefix of
    # its command line, but it is not this home's server, and stop must not end it.
    server = _server(tmp_path)
    server.home.mkdir(parents=True)
    other = [MAIN_CLASS, "--home", f"{server.home}2", "--config", f"{server.home}2/c"]
    stand_in = _stand_in(*other)
    try:
        ServerState(pid=stand_in.pid, port=7687).write(server.state_file)
        assert not server.status().running
        assert server.stop() is False
        assert stand_in.poll() is None
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_home_whose_server_is_not_running_is_not_looked_for_on_its_port(
    tmp_path: Path,
) -> None:
    # Started once (it has a password), stopped now: whatever answers on its port (another
    # home's server) is not its server, and would only refuse its password.
    server = _server(tmp_path)
    ensure_secret_file(server.password_file)
    with pytest.raises(Neo4jUnavailableError, match=r"is not running: start it with"):
        server.target()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    ServerState(pid=child.pid, port=7687).write(server.state_file)  # stale
    with pytest.raises(Neo4jUnavailableError, match=r"is not running"):
        server.target()


def test_a_store_that_a_newer_neo4j_has_run_is_not_started_with_an_older_one(
    tmp_path: Path,
) -> None:
    # 5.26.30 on a store that 2026.09.0 had run failed in Java after ~40 s with a stack trace
    # about transaction log entries "from a newer version of neo4j".
    server = _server(
        tmp_path, local_neo4j_version="5.26.30", maven="mvn-not-installed", cache_dir=tmp_path
    )
    server.home.mkdir(parents=True)
    server.version_file.write_text("2026.09.0\n")
    with pytest.raises(ConfigurationError, match=r"Neo4j 2026\.09\.0 has run the store") as raised:
        server.start()
    assert "GRAPHMEM_LOCAL_NEO4J_VERSION=2026.09.0" in str(raised.value)
    assert not server.password_file.exists()  # refused before anything was set up
    # Forward is fine: a newer version upgrades the store of an older one.
    newer = _server(tmp_path, local_neo4j_version="2026.09.0")
    server.version_file.write_text("5.26.30\n")
    newer._check_store_version()
    server.version_file.write_text("2026.09.0\n")
    newer._check_store_version()


def test_missing_maven_is_explained(tmp_path: Path) -> None:
    server = _server(tmp_path, maven="mvn-not-installed", cache_dir=tmp_path / "cache")
    with pytest.raises(Neo4jServerError, match=r"Maven .* is not on PATH"):
        server.build()


def test_missing_java_is_explained(tmp_path: Path) -> None:
    server = _server(tmp_path, java="java-not-installed")
    with pytest.raises(Neo4jServerError, match=r"not found\) cannot run .* needs Java 21"):
        server._java_command(
            MavenBuild(tmp_path), home=tmp_path, port=1, password_file=tmp_path / "pw"
        )


@pytest.mark.parametrize(
    ("banner", "feature"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17),
        ('openjdk version "25.0.3" 2026-04-21 LTS', 25),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_381"', 8),
        ("Error: could not find libjava.so", None),
    ],
)
def test_java_feature_version(banner: str, feature: int | None) -> None:
    assert java_feature_version(banner) == feature


def test_runtime_options_turn_on_lucene_simd_where_the_jdk_has_the_vector_module() -> None:
    assert runtime_options(17) == []
    assert runtime_options(21) == ["--add-modules=jdk.incubator.vector"]
    assert "--add-modules=jdk.incubator.vector" in runtime_options(25)
    assert "--enable-native-access=ALL-UNNAMED" in runtime_options(25)


def _fake_jdk(root: Path, feature: int) -> Path:
    """A folder laid out like a JDK whose java prints the banner of ``feature``."""
    java = root / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{feature}.0.1\" 2026-01-01' >&2\n")
    java.chmod(0o755)
    return java


def test_find_java_prefers_path_and_looks_further_only_when_left_at_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _fake_jdk(tmp_path / "jdk17", 17)
    new = _fake_jdk(tmp_path / "jdk25", 25)
    monkeypatch.setenv("PATH", f"{old.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("JAVA_HOME", str(new.parent.parent))
    monkeypatch.setattr("graphmem.servers.java._JDK_DIRS", ())
    assert find_java("java", 17) == JavaRuntime(old, 17)
    assert find_java("java", 21) == JavaRuntime(new, 25)
    with pytest.raises(Neo4jServerError, match=r"Java 17\) cannot run .* needs Java 21"):
        find_java(str(old), 21)  # named explicitly: never swapped for another
    monkeypatch.delenv("JAVA_HOME")
    with pytest.raises(Neo4jServerError, match="needs Java 21"):
        find_java("java", 21)


def test_maven_builds_the_configured_version_with_its_jdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jdk = _fake_jdk(tmp_path / "jdk25", 25)
    maven = tmp_path / "fake-mvn"
    record = tmp_path / "maven-call"
    maven.write_text(f'#!/bin/sh\necho "$JAVA_HOME $*" > {record}\nexit 3\n')
    maven.chmod(0o755)
    server = _server(
        tmp_path,
        java=str(jdk),
        maven=str(maven),
        cache_dir=tmp_path / "cache",
        local_neo4j_version="2026.09.0",
    )
    with pytest.raises(Neo4jServerError, match="exit 3"):
        server.build()
    java_home, *arguments = record.read_text().split()
    assert java_home == str(jdk.parent.parent)
    assert "-Dneo4j.version=2026.09.0" in arguments
    assert "-Dmaven.compiler.release=21" in arguments
    assert list((tmp_path / "cache" / "local-neo4j").glob("2026.09.0-java25-*/pom.xml"))
    assert server.status().version == "2026.09.0"


def test_unknown_versions_and_bad_merge_factors_are_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="GRAPHMEM_LOCAL_NEO4J_VERSION"):
        load_settings(local_neo4j_version="4.4.0")
    with pytest.raises(ConfigurationError, match="GRAPHMEM_LOCAL_NEO4J_VECTOR_MERGE_FACTOR"):
        load_settings(local_neo4j_vector_merge_factor=1)


def test_conf_sets_the_vector_merge_factor(tmp_path: Path) -> None:
    conf = tmp_path / "neo4j.conf"
    default = GraphmemSettings.model_fields["local_neo4j_vector_merge_factor"].default
    write_conf(conf, "512m", default)
    lines = conf.read_text().splitlines()
    assert "internal.dbms.index.vector.standard_merge_factor=10" in lines  # not Neo4j's 50
    assert "dbms.usage_report.enabled=false" in lines
    write_conf(conf, "512m", 50)
    assert "internal.dbms.index.vector.standard_merge_factor=50" in conf.read_text().splitlines()


def test_java_command_binds_loopback_and_keeps_the_password_off_the_command_line(
    tmp_path: Path,
) -> None:
    server = _server(tmp_path, local_neo4j_port=7777, local_neo4j_heap="2g")
    ensure_secret_file(server.password_file)
    build = MavenBuild(tmp_path / "build")
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
    assert "-Xmx2g" in command and "-Xms256m" in command
    # A heap under the usual initial size starts at its maximum: Java refuses -Xms over -Xmx.
    small = _server(tmp_path, local_neo4j_heap="200m")
    command = small._java_command(
        build, home=small.home, port=7777, password_file=small.password_file
    )
    assert "-Xmx200m" in command and "-Xms200m" in command and "-Xms256m" not in command
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
