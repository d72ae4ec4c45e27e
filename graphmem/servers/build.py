"""The local Neo4j server's build: the Maven project in ``docker/local-neo4j``, built once per
Neo4j version and Java (Maven downloads the Neo4j jars into ``~/.m2``; the built classpath and
a class-data archive are kept under graphmem's cache directory), and the command line and
``neo4j.conf`` that run it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from graphmem._files import bundled_resource, ensure_secret_file, tail
from graphmem.errors import ConfigurationError, Neo4jServerError
from graphmem.servers.java import JavaRuntime, runtime_options
from graphmem.servers.processes import free_port
from graphmem.settings import GraphmemSettings, memory_bytes

#: The default version of the local server; the pom's own default, kept in step with it.
NEO4J_VERSION = "2026.09.0"
#: The oldest Java each version runs on (and the release its launcher class is compiled for).
MIN_JAVA: dict[str, int] = {"5.26.30": 17, "2026.09.0": 21}
MAIN_CLASS = "io.graphmem.localneo4j.LocalNeo4j"
_JAR = "graphmem-local-neo4j.jar"
#: What the launcher logs once the DBMS is up.
READY_LINE = "graphmem-local-neo4j: ready"
#: What the launcher logs before it exits on a start it refuses (and the reason after it).
REFUSED_LINE = "graphmem-local-neo4j: refused: "
_MAVEN_TIMEOUT = 1800.0

# The JVM options Neo4j's own launcher uses that matter for an embedded DBMS.
#: Neo4j's own JVM options, but for -XX:+ExitOnOutOfMemoryError: a query that fills the heap
#: (string or list values built by an expression, which the per-transaction memory limit does
#: not count) fails with Neo.TransientError.General.OutOfMemoryError and the server goes on,
#: instead of the whole server exiting.
_JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
)


@dataclass(frozen=True)
class MavenBuild:
    """A built server: the launcher jar, its runtime jars and a class-data archive."""

    directory: Path

    @property
    def classpath(self) -> str:
        target = self.directory / "target"
        return os.pathsep.join([str(target / _JAR), str(target / "lib" / "*")])

    @property
    def class_archive(self) -> Path:
        """AppCDS archive of the server's classes: starts take about a third less time."""
        return self.directory / "classes.jsa"


def maven_project(settings: GraphmemSettings) -> Path:
    if settings.local_neo4j_project is not None:
        project = settings.local_neo4j_project.expanduser().resolve()
    else:
        project = bundled_resource("docker/local-neo4j", "_local_neo4j")
    if not (project / "pom.xml").is_file():
        raise ConfigurationError(f"{project} holds no pom.xml")
    return project


def build_fingerprint(project: Path) -> str:
    digest = hashlib.sha256()
    files = [project / "pom.xml", *sorted((project / "src").rglob("*"))]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(project).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def run_maven(
    maven_setting: str, project: Path, build_dir: Path, *, version: str, java: JavaRuntime
) -> None:
    maven = shutil.which(maven_setting)
    if maven is None:
        raise Neo4jServerError(
            f"Maven ({maven_setting!r}) is not on PATH; it is needed once to fetch "
            "the Neo4j jars. Install it (e.g. `apt-get install maven`) or point "
            "GRAPHMEM_NEO4J_URI at a running Neo4j."
        )
    if build_dir.exists():
        shutil.rmtree(build_dir)  # an earlier build that did not finish
    shutil.copytree(project, build_dir, ignore=shutil.ignore_patterns("target"))
    log = build_dir / "maven.log"
    command = [
        maven, "-B", "-q", "-f", str(build_dir / "pom.xml"),
        f"-Dneo4j.version={version}",
        f"-Dmaven.compiler.release={MIN_JAVA[version]}",
        "package",
    ]  # fmt: skip
    print(
        f"graphmem: building the local Neo4j {version} server with Maven "
        f"(first start on Java {java.feature} only; downloads the Neo4j jars)...",
        file=sys.stderr,
    )
    # Maven compiles the launcher with the JDK the server will run on.
    environment = {**os.environ, "JAVA_HOME": str(java.home)}
    try:
        with log.open("wb") as out:
            result = subprocess.run(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=_MAVEN_TIMEOUT,
                check=False,
                env=environment,
            )
    except subprocess.TimeoutExpired as exc:
        raise Neo4jServerError(
            f"the Maven build timed out after {_MAVEN_TIMEOUT:.0f} s", log_tail=tail(log)
        ) from exc
    if result.returncode != 0 or not (build_dir / "target" / _JAR).exists():
        raise Neo4jServerError(
            f"the Maven build of the local Neo4j failed (exit {result.returncode}; "
            f"full log: {log})",
            log_tail=tail(log),
        )


def java_command(
    java: JavaRuntime,
    build: MavenBuild,
    *,
    home: Path,
    port: int,
    password_file: Path,
    heap: str,
    create_archive: bool = False,
    remove_unknown_users: bool = False,
) -> list[str]:
    """The command line that runs the server of ``home`` on ``java``, with ``heap`` at most
    (and, with ``remove_unknown_users``, dropping users other than graphmem's own before Bolt
    opens, where it would otherwise refuse to start)."""
    if create_archive:
        archive = [f"-XX:ArchiveClassesAtExit={build.class_archive}"]
    elif build.class_archive.exists():
        archive = [f"-XX:SharedArchiveFile={build.class_archive}"]  # ignored if stale
    else:
        archive = []
    return [
        str(java.executable),
        f"-Xms{heap if memory_bytes(heap) < 256 * 1024**2 else '256m'}",  # at most -Xmx
        f"-Xmx{heap}",
        *_JVM_OPTIONS,
        *runtime_options(java.feature),
        *archive,
        "-cp",
        build.classpath,
        MAIN_CLASS,
        "--home", str(home),
        "--config", str(home / "conf" / "neo4j.conf"),
        "--port", str(port),
        "--password-file", str(password_file),
        *(["--remove-unknown-users", "true"] if remove_unknown_users else []),
    ]  # fmt: skip


def train_class_archive(build: MavenBuild, java: JavaRuntime, vector_merge_factor: int) -> None:
    """Start and stop the server once in a scratch home, dumping its loaded classes.

    The archive only speeds up later starts: a failure here is reported and ignored.
    """
    home = build.directory / "training"
    log = build.directory / "training.log"
    try:
        write_conf(home / "conf" / "neo4j.conf", "64m", vector_merge_factor)
        ensure_secret_file(home / "password")
        command = java_command(
            java, build, home=home, port=free_port(), password_file=home / "password",
            heap="1g", create_archive=True,
        )  # fmt: skip
        with log.open("wb") as out:
            child = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                cwd=home,
            )  # fmt: skip
        deadline = time.monotonic() + 300
        while child.poll() is None and time.monotonic() < deadline:
            if READY_LINE in log.read_text(encoding="utf-8", errors="replace"):
                break
            time.sleep(0.2)
        child.terminate()
        child.wait(timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"graphmem: no class-data archive ({exc}); starts will be slower",
              file=sys.stderr)  # fmt: skip
    finally:
        shutil.rmtree(home, ignore_errors=True)


def write_conf(
    path: Path,
    pagecache: str,
    vector_merge_factor: int,
    *,
    tx_log_size: str = "1m",
    checkpoint_seconds: int = 60,
    transaction_memory: str | None = None,
) -> None:
    # Each write transaction adds a Lucene segment to the vector indexes and every vector
    # search visits each segment; a lower merge factor keeps fewer segments, for more merging.
    # The transaction log keeps only what recovery needs (keep_none): a log file is pruned at
    # the first checkpoint after it rotates, so erased words leave the disk within a bound.
    # transaction_memory caps what one transaction may hold (a query of someone else's that
    # would fill the heap stops with an error instead of taking the server down).
    path.parent.mkdir(parents=True, exist_ok=True)
    limit = f"db.memory.transaction.max={transaction_memory}\n" if transaction_memory else ""
    path.write_text(
        "# Written by graphmem at every start; change GRAPHMEM_LOCAL_NEO4J_* instead.\n"
        "# Bolt (127.0.0.1 only) and authentication are fixed by the launcher.\n"
        "dbms.usage_report.enabled=false\n"
        f"server.memory.pagecache.size={pagecache}\n"
        f"internal.dbms.index.vector.standard_merge_factor={vector_merge_factor}\n"
        "internal.server.bolt.thread_pool_shutdown_wait_time=1s\n"
        "internal.server.bolt.connection_shutdown_wait_time=1s\n"
        "db.tx_log.rotation.retention_policy=keep_none\n"
        f"db.tx_log.rotation.size={tx_log_size}\n"
        f"db.checkpoint.interval.time={checkpoint_seconds}s\n"
        # Transactions past their time limit are found within 100 ms (Neo4j's default: 2 s).
        "db.transaction.monitor.check.interval=100ms\n"
        f"{limit}",
        encoding="utf-8",
    )
