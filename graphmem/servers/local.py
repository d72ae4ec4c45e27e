"""The local Neo4j server: Neo4j Community jars from Maven Central, run as an embedded DBMS.

For machines without a Docker engine. ``graphmem neo4j start`` builds the small Maven project
in ``docker/local-neo4j`` once (Maven downloads the jars into ``~/.m2``; the built classpath
is kept under graphmem's cache directory), then runs it in the background:

* Bolt listens on 127.0.0.1 only; authentication is on, with a generated password kept in a
  0600 file next to the data (user ``neo4j``);
* usage reporting is off;
* data, logs, the generated ``neo4j.conf``, the password and the process state live in one
  home directory (``GRAPHMEM_LOCAL_NEO4J_HOME``, default ``<user data dir>/graphmem/neo4j``).

``start`` is idempotent and waits until Bolt accepts an authenticated connection. A server
killed with SIGKILL leaves a stale state file, which the next ``start`` detects and replaces;
Neo4j itself recovers from its transaction logs.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from graphmem._files import bundled_resource, ensure_secret_file, file_lock, tail
from graphmem.errors import ConfigurationError, Neo4jServerError, Neo4jUnavailableError
from graphmem.servers.connection import Neo4jTarget, credentials_refused, open_driver, wait_for_bolt
from graphmem.settings import GraphmemSettings, memory_bytes

#: The default version of the local server; the pom's own default, kept in step with it.
NEO4J_VERSION = "5.26.30"
#: The oldest Java each version runs on (and the release its launcher class is compiled for).
MIN_JAVA: dict[str, int] = {"5.26.30": 17, "2025.12.1": 21}
MAIN_CLASS = "io.graphmem.localneo4j.LocalNeo4j"
_JAR = "graphmem-local-neo4j.jar"
_READY = "graphmem-local-neo4j: ready"
_MAVEN_TIMEOUT = 1800.0
#: Seconds a server found running may refuse its password file before that is its answer (a
#: server that another process is starting accepts Bolt a moment before it sets the password).
_PASSWORD_GRACE = 15.0

# The JVM options Neo4j's own launcher uses that matter for an embedded DBMS.
_JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
)
_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')
_JDK_DIRS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def java_feature_version(banner: str) -> int | None:
    """The feature version (17, 21, 25...) in the output of ``java -version``; 8 for 1.8."""
    match = _JAVA_VERSION.search(banner)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def runtime_options(feature: int) -> list[str]:
    """JVM options that depend on the Java version.

    Lucene computes vector distances with SIMD instructions only when the JDK's vector module
    is added (Lucene 9.11, in Neo4j 5.26, on Java 20-22; Lucene 10.3, in 2025.12, on 21-25);
    without it every HNSW insert and search uses scalar loops. Java 24+ also wants the native
    and Unsafe memory access that Neo4j uses allowed explicitly.
    """
    options = ["--add-modules=jdk.incubator.vector"] if feature >= 20 else []
    if feature >= 24:
        options += ["--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"]
    return options


@dataclass(frozen=True)
class JavaRuntime:
    """A Java the local server can run on."""

    executable: Path
    feature: int

    @property
    def home(self) -> Path:
        return self.executable.resolve().parent.parent


def _probe_java(executable: str) -> JavaRuntime | None:
    path = shutil.which(executable)
    if path is None:
        return None
    try:
        result = subprocess.run(
            [path, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    feature = java_feature_version(result.stderr + result.stdout)
    return None if feature is None else JavaRuntime(Path(path), feature)


def _installed_javas() -> list[str]:
    """Other Javas on this machine: JAVA_HOME's, then the JDK folders' (newest name first).

    Each JDK appears once, however many aliases (``java-17-…``, ``java-1.17.0-…``) point at it.
    """
    found = [Path(home) / "bin" / "java"] if (home := os.environ.get("JAVA_HOME")) else []
    for folder in _JDK_DIRS:
        if folder.is_dir():
            found += sorted(folder.glob("*/bin/java"), reverse=True)
    return [str(path) for path in dict.fromkeys(path.resolve() for path in found)]


def find_java(configured: str, minimum: int) -> JavaRuntime:
    """The Java to run a server that needs Java ``minimum``.

    ``configured`` (GRAPHMEM_JAVA) is used when it is new enough. Left at the default
    ``java``, an older one on PATH makes way for the newest suitable JDK in JAVA_HOME or the
    usual JDK folders; a Java named explicitly is never replaced.
    """
    first = _probe_java(configured)
    if first is not None and first.feature >= minimum:
        return first
    if configured == "java":
        candidates = [java for path in _installed_javas() if (java := _probe_java(path))]
        suitable = [java for java in candidates if java.feature >= minimum]
        if suitable:
            return max(suitable, key=lambda java: java.feature)
    seen = "not found" if first is None else f"Java {first.feature}"
    raise Neo4jServerError(
        f"Java ({configured!r}: {seen}) cannot run the local Neo4j: it needs Java {minimum} "
        f"or later. Install a JDK {minimum}+ (on Debian, for 17: `apt-get install "
        "openjdk-17-jdk-headless`), point GRAPHMEM_JAVA at it, or point GRAPHMEM_NEO4J_URI at "
        "a running Neo4j."
    )


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
class _State:
    """What ``server.json`` records of a started server."""

    pid: int
    port: int
    version: str = NEO4J_VERSION
    started_at: str = ""
    home: str = ""

    @classmethod
    def read(cls, path: Path) -> _State | None:
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
class _Build:
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


@dataclass(frozen=True)
class StartResult:
    status: ServerStatus
    already_running: bool
    seconds: float


class LocalNeo4jServer:
    """Builds, starts, stops and inspects the local Neo4j server of one home directory."""

    mode = "local"

    def __init__(self, settings: GraphmemSettings) -> None:
        self.settings = settings
        self.home = settings.local_home
        self.port = settings.local_neo4j_port
        self.version: str = settings.local_neo4j_version
        self._child: subprocess.Popen[bytes] | None = None
        self._java: JavaRuntime | None = None

    # --- paths ---------------------------------------------------------------------------
    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def conf_file(self) -> Path:
        return self.home / "conf" / "neo4j.conf"

    @property
    def state_file(self) -> Path:
        return self.home / "server.json"

    @property
    def version_file(self) -> Path:
        """The Neo4j version that last ran this home's store (kept after a stop)."""
        return self.home / "neo4j-version"

    @property
    def server_log(self) -> Path:
        return self.home / "logs" / "server.log"

    @property
    def debug_log(self) -> Path:
        return self.home / "logs" / "debug.log"

    @property
    def build_root(self) -> Path:
        return self.settings.cache_dir.expanduser().resolve() / "local-neo4j"

    @property
    def java(self) -> JavaRuntime:
        """The Java this server runs on (found once; see :func:`find_java`)."""
        if self._java is None:
            self._java = find_java(self.settings.java, MIN_JAVA[self.version])
        return self._java

    # --- public operations ---------------------------------------------------------------
    def target(self) -> Neo4jTarget:
        """How to connect to this server (the port it runs on, if it runs)."""
        state = self._read_state()
        running = state is not None and self._alive(state)
        if not self.password_file.exists():
            if running:
                raise Neo4jUnavailableError(
                    f"the local Neo4j in {self.home} runs, but its password file "
                    f"{self.password_file} is gone: restart it (`graphmem neo4j stop`, then "
                    "`graphmem neo4j start`) to set a new password"
                )
            raise Neo4jUnavailableError(
                f"the local Neo4j in {self.home} has never been started: run `graphmem neo4j start`"
            )
        if state is None or not running:
            # Not the port alone: whatever answers there (another home's server, which would
            # refuse this home's password) is not this home's server.
            raise Neo4jUnavailableError(
                f"the local Neo4j in {self.home} is not running: start it with "
                "`graphmem neo4j start`"
            )
        return Neo4jTarget(
            uri=_uri(state.port),
            user="neo4j",
            password=SecretStr(ensure_secret_file(self.password_file)),
            database=self.settings.neo4j_database,
            mode="local",
        )

    def status(self) -> ServerStatus:
        if self.home.exists() and not self.home.is_dir():
            return self._stopped(f"not running ({self.home} is not a directory)")
        state = self._read_state()
        if state is None:
            return self._stopped("not running")
        if state.pid == -1:
            return self._stopped(
                f"not running, or not known to be: {self.state_file} is unreadable (a server of "
                "this home that still runs must be stopped by hand)"
            )
        if not self._alive(state):
            return self._stopped(f"not running (stale state of pid {state.pid})")
        return ServerStatus(
            running=True,
            uri=_uri(state.port),
            home=self.home,
            version=state.version,
            pid=state.pid,
            started_at=datetime.fromisoformat(state.started_at),
        )

    def start(self) -> StartResult:
        """Start the server unless it already runs; return once Bolt accepts connections."""
        began = time.monotonic()
        self._check_home()
        with file_lock(self.home / ".lock"):
            state = self._read_state(repair=True)
            if state is not None and self._alive(state):
                self._wait_ready(state, began, spawned=False)
                return StartResult(self.status(), True, time.monotonic() - began)
            if state is not None:
                self.state_file.unlink(missing_ok=True)  # left behind by a killed server
            self._check_store_version()
            # A server killed a moment ago may still be releasing its socket.
            self._check_port_free(wait=10.0 if state is not None else 0.0)
            self.home.chmod(0o700)  # the store and the password are this user's alone
            build = self.build()
            ensure_secret_file(self.password_file)
            _write_conf(
                self.conf_file,
                self.settings.local_neo4j_pagecache,
                self.settings.local_neo4j_vector_merge_factor,
            )
            state = self._spawn(build)
            try:
                self._wait_ready(state, began)
            except Neo4jServerError:
                self._terminate(state.pid, timeout=30.0)
                self.state_file.unlink(missing_ok=True)
                raise
            self.version_file.write_text(self.version + "\n", encoding="utf-8")
        return StartResult(self.status(), False, time.monotonic() - began)

    def stop(self, *, timeout: float = 90.0) -> bool:
        """Stop the server cleanly (SIGTERM, then SIGKILL after ``timeout``).

        Returns whether a running server was stopped.
        """
        if not self.home.is_dir():
            return False  # never started here: nothing to stop, and no home to create
        with file_lock(self.home / ".lock"):
            state = self._read_state(repair=True)
            if state is None:
                return False
            running = self._alive(state)
            if running:
                clean = self._terminate(state.pid, timeout=timeout)
                if not clean:
                    print(
                        f"graphmem: the local Neo4j did not stop within {timeout:.0f} s and "
                        "was killed; it recovers on the next start",
                        file=sys.stderr,
                    )
            self.state_file.unlink(missing_ok=True)
            return running

    def build(self) -> _Build:
        """Build the Maven project once (and its class-data archive); later calls reuse it."""
        project = self._maven_project()
        fingerprint = _fingerprint(project)
        # One build per version and Java: the class-data archive only fits the JVM that made it.
        name = f"{self.version}-java{self.java.feature}-{fingerprint[:12]}"
        build = _Build(self.build_root / name)
        done = build.directory / ".built"
        with file_lock(self.build_root / ".lock"):
            if not done.exists():
                self._run_maven(project, build.directory)
                self._train_class_archive(build)
                done.write_text(datetime.now(UTC).isoformat() + "\n", encoding="utf-8")
        return build

    # --- internals -----------------------------------------------------------------------
    def _read_state(self, *, repair: bool = False) -> _State | None:
        """What ``server.json`` records; where it is unreadable or missing, the live server of
        this home that it should record, found by its command line (written back with
        ``repair``, under the home's lock), so that a damaged or deleted file does not orphan a
        running server."""
        state = _State.read(self.state_file)
        if state is not None and state.pid != -1:
            return state
        found = self._running_here()
        if found is None:
            return state
        if repair:
            found.write(self.state_file)
        return found

    def _running_here(self) -> _State | None:
        """A live local Neo4j of this home, from ``/proc`` (None where there is no ``/proc``)."""
        with contextlib.suppress(OSError):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                with contextlib.suppress(OSError, ValueError, IndexError):
                    words = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
                    if (
                        MAIN_CLASS in words
                        and words[words.index("--home") + 1] == str(self.home)
                        and _pid_alive(int(entry.name))
                    ):
                        version = re.search(r"/(\d+\.\d+\.\d+)-java\d+-", " ".join(words))
                        return _State(
                            pid=int(entry.name),
                            port=int(words[words.index("--port") + 1]),
                            version=version.group(1) if version else self.version,
                            started_at=_process_started(int(entry.name)),
                            home=str(self.home),
                        )
        return None

    def _check_store_version(self) -> None:
        """Refuse a version older than the one that last ran the store: a newer Neo4j upgrades
        the store as it runs (its transaction logs at least), and an older one cannot read it
        (it fails at start-up, in Java, after tens of seconds)."""
        try:
            ran = self.version_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return
        if _version_key(ran) > _version_key(self.version):
            raise ConfigurationError(
                f"GRAPHMEM_LOCAL_NEO4J_VERSION={self.version}, but Neo4j {ran} has run the store "
                f"in {self.home}, and an older Neo4j cannot read a store that a newer one has "
                f"upgraded: set GRAPHMEM_LOCAL_NEO4J_VERSION={ran}, or give this version a home "
                "of its own (GRAPHMEM_LOCAL_NEO4J_HOME)"
            )

    def _check_home(self) -> None:
        """Create the home if need be; one that cannot hold the server's files is a
        :class:`ConfigurationError` naming its setting."""
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.home):
                pass
        except OSError as exc:
            raise ConfigurationError(
                f"GRAPHMEM_LOCAL_NEO4J_HOME={self.home} cannot hold the local server's files: "
                f"{exc.strerror or exc}"
            ) from None

    def _maven_project(self) -> Path:
        if self.settings.local_neo4j_project is not None:
            project = self.settings.local_neo4j_project.expanduser().resolve()
        else:
            project = bundled_resource("docker/local-neo4j", "_local_neo4j")
        if not (project / "pom.xml").is_file():
            raise ConfigurationError(f"{project} holds no pom.xml")
        return project

    def _run_maven(self, project: Path, build_dir: Path) -> None:
        maven = shutil.which(self.settings.maven)
        if maven is None:
            raise Neo4jServerError(
                f"Maven ({self.settings.maven!r}) is not on PATH; it is needed once to fetch "
                "the Neo4j jars. Install it (e.g. `apt-get install maven`) or point "
                "GRAPHMEM_NEO4J_URI at a running Neo4j."
            )
        if build_dir.exists():
            shutil.rmtree(build_dir)  # an earlier build that did not finish
        shutil.copytree(project, build_dir, ignore=shutil.ignore_patterns("target"))
        log = build_dir / "maven.log"
        command = [
            maven, "-B", "-q", "-f", str(build_dir / "pom.xml"),
            f"-Dneo4j.version={self.version}",
            f"-Dmaven.compiler.release={MIN_JAVA[self.version]}",
            "package",
        ]  # fmt: skip
        print(
            f"graphmem: building the local Neo4j {self.version} server with Maven "
            f"(first start on Java {self.java.feature} only; downloads the Neo4j jars)...",
            file=sys.stderr,
        )
        # Maven compiles the launcher with the JDK the server will run on.
        environment = {**os.environ, "JAVA_HOME": str(self.java.home)}
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

    def _java_command(
        self,
        build: _Build,
        *,
        home: Path,
        port: int,
        password_file: Path,
        heap: str | None = None,
        create_archive: bool = False,
    ) -> list[str]:
        heap = heap or self.settings.local_neo4j_heap
        if create_archive:
            archive = [f"-XX:ArchiveClassesAtExit={build.class_archive}"]
        elif build.class_archive.exists():
            archive = [f"-XX:SharedArchiveFile={build.class_archive}"]  # ignored if stale
        else:
            archive = []
        return [
            str(self.java.executable),
            f"-Xms{heap if memory_bytes(heap) < 256 * 1024**2 else '256m'}",  # at most -Xmx
            f"-Xmx{heap}",
            *_JVM_OPTIONS,
            *runtime_options(self.java.feature),
            *archive,
            "-cp",
            build.classpath,
            MAIN_CLASS,
            "--home", str(home),
            "--config", str(home / "conf" / "neo4j.conf"),
            "--port", str(port),
            "--password-file", str(password_file),
        ]  # fmt: skip

    def _train_class_archive(self, build: _Build) -> None:
        """Start and stop the server once in a scratch home, dumping its loaded classes.

        The archive only speeds up later starts: a failure here is reported and ignored.
        """
        home = build.directory / "training"
        log = build.directory / "training.log"
        try:
            _write_conf(
                home / "conf" / "neo4j.conf", "64m", self.settings.local_neo4j_vector_merge_factor
            )
            ensure_secret_file(home / "password")
            command = self._java_command(
                build, home=home, port=_free_port(), password_file=home / "password",
                heap="1g", create_archive=True,
            )  # fmt: skip
            with log.open("wb") as out:
                child = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    cwd=home,
                )  # fmt: skip
            deadline = time.monotonic() + 300
            while child.poll() is None and time.monotonic() < deadline:
                if _READY in log.read_text(encoding="utf-8", errors="replace"):
                    break
                time.sleep(0.2)
            child.terminate()
            child.wait(timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"graphmem: no class-data archive ({exc}); starts will be slower",
                  file=sys.stderr)  # fmt: skip
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def _spawn(self, build: _Build) -> _State:
        command = self._java_command(
            build, home=self.home, port=self.port, password_file=self.password_file
        )
        self.server_log.parent.mkdir(parents=True, exist_ok=True)
        if self.server_log.exists():
            self.server_log.replace(self.server_log.with_suffix(".log.1"))
        with self.server_log.open("wb") as log:
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                start_new_session=True,  # outlives the CLI; not killed by its Ctrl-C
            )
        self._child = child
        state = _State(
            pid=child.pid,
            port=self.port,
            version=self.version,
            started_at=datetime.now(UTC).isoformat(),
            home=str(self.home),
        )
        state.write(self.state_file)
        return state

    def _wait_ready(self, state: _State, began: float, *, spawned: bool = True) -> None:
        """Wait until the server logs that it is ready, then until Bolt accepts its password.

        A server found running (not ``spawned`` by this call) may have been ready for long,
        with its log rotated, truncated or deleted since, so that no ready line will ever come:
        it is also ready once it accepts an authenticated Bolt connection (asked every few
        seconds). Refused credentials may be a start of another process that has not set the
        password yet, a moment's work: refused for longer, they end the wait."""
        pid = state.pid
        deadline = began + self.settings.local_neo4j_start_timeout
        asked_at = -math.inf
        refused_since: float | None = None
        while not self._logged_ready():
            if not _pid_alive(pid):
                raise Neo4jServerError(
                    f"the local Neo4j (pid {pid}) exited during start-up "
                    f"(server log: {self.server_log}, debug log: {self.debug_log})",
                    log_tail=self._log_tail(),
                )
            if not spawned and time.monotonic() - asked_at >= 2.0:
                asked_at = time.monotonic()
                target = self.target()
                try:
                    with open_driver(target, connection_timeout=2.0):
                        return
                except Neo4jUnavailableError as exc:
                    if not credentials_refused(exc):
                        refused_since = None
                    elif refused_since is None:
                        refused_since = asked_at
                    elif asked_at - refused_since >= _PASSWORD_GRACE:
                        raise
            if time.monotonic() >= deadline:
                raise Neo4jServerError(
                    "the local Neo4j did not become ready within "
                    f"{self.settings.local_neo4j_start_timeout:.0f} s "
                    "(GRAPHMEM_LOCAL_NEO4J_START_TIMEOUT)",
                    log_tail=self._log_tail(),
                )
            time.sleep(0.2)
        try:
            wait_for_bolt(
                self.target(),
                timeout=max(5.0, deadline - time.monotonic()),
                still_starting=lambda: _pid_alive(pid),
            )
        except Neo4jUnavailableError as exc:
            raise Neo4jServerError(str(exc), log_tail=self._log_tail()) from exc

    def _logged_ready(self) -> bool:
        try:
            return _READY in self.server_log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return False

    def _log_tail(self) -> str:
        server = tail(self.server_log, 30)
        debug = tail(self.debug_log, 15)
        return server + (f"--- {self.debug_log} ---\n{debug}" if debug else "")

    def _alive(self, state: _State) -> bool:
        """Whether the state's pid is a live local Neo4j of this home (not a reused pid)."""
        if not _pid_alive(state.pid):
            return False
        cmdline = _cmdline(state.pid)
        # The home as a whole argument: one that is a prefix of another's (/data/neo4j and
        # /data/neo4j2) is not taken for it.
        return cmdline is None or (
            MAIN_CLASS in cmdline and f" --home {self.home} " in f"{cmdline} "
        )

    def _check_port_free(self, *, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(("127.0.0.1", self.port))
                    return
                except OSError as exc:
                    if exc.errno != errno.EADDRINUSE:
                        raise
                    if time.monotonic() >= deadline:
                        raise Neo4jServerError(
                            f"port {self.port} on 127.0.0.1 is already in use by another "
                            "process; stop it or choose another port with "
                            "GRAPHMEM_LOCAL_NEO4J_PORT"
                        ) from exc
            time.sleep(0.2)

    def _terminate(self, pid: int, *, timeout: float) -> bool:
        """SIGTERM ``pid`` and wait; SIGKILL it after ``timeout``. True if it stopped cleanly."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _pid_alive(pid):
                return True
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while _pid_alive(pid):
            time.sleep(0.05)
        return False

    def _stopped(self, note: str) -> ServerStatus:
        return ServerStatus(
            running=False, uri=_uri(self.port), home=self.home, version=self.version, note=note
        )


def _version_key(version: str) -> tuple[int, ...]:
    """``5.26.30`` as ``(5, 26, 30)``, for ordering versions (an unreadable one sorts first)."""
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        return ()


def _write_conf(path: Path, pagecache: str, vector_merge_factor: int) -> None:
    # Each write transaction adds a Lucene segment to the vector indexes and every vector
    # search visits each segment; a lower merge factor keeps fewer segments, for more merging.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Written by graphmem at every start; change GRAPHMEM_LOCAL_NEO4J_* instead.\n"
        "# Bolt (127.0.0.1 only) and authentication are fixed by the launcher.\n"
        "dbms.usage_report.enabled=false\n"
        f"server.memory.pagecache.size={pagecache}\n"
        f"internal.dbms.index.vector.standard_merge_factor={vector_merge_factor}\n"
        "internal.server.bolt.thread_pool_shutdown_wait_time=1s\n"
        "internal.server.bolt.connection_shutdown_wait_time=1s\n",
        encoding="utf-8",
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _uri(port: int) -> str:
    return f"bolt://127.0.0.1:{port}"


def _fingerprint(project: Path) -> str:
    digest = hashlib.sha256()
    files = [project / "pom.xml", *sorted((project / "src").rglob("*"))]
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(project).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (zombies count as dead and are reaped)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _proc_stat(pid)  # None or empty: the platform does not tell, so alive
    return not fields or fields[0] not in ("Z", "X")


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or None where
    the platform or the process does not tell."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _process_started(pid: int) -> str:
    """When process ``pid`` started (ISO 8601, UTC), from ``/proc``; now where unknown."""
    with contextlib.suppress(OSError, ValueError, IndexError, StopIteration, TypeError):
        ticks = int((_proc_stat(pid) or [])[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), UTC).isoformat()
    return datetime.now(UTC).isoformat()


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of process ``pid`` so far (Linux ``/proc``); None if unknown."""
    fields = _proc_stat(pid)
    try:
        return None if fields is None else (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str | None:
    """The command line of ``pid``, or None where the platform does not tell."""
    proc = Path(f"/proc/{pid}/cmdline")
    if proc.exists():
        with contextlib.suppress(OSError):
            return proc.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        return None
    try:
        out = subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout or None
