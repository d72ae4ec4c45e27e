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
Neo4j itself recovers from its transaction logs. The build and the server's command line are
in :mod:`graphmem.servers.build`, the Java it runs on in :mod:`graphmem.servers.java`.
"""

from __future__ import annotations

import contextlib
import math
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr

from graphmem._files import ensure_secret_file, file_lock, tail
from graphmem.errors import ConfigurationError, Neo4jServerError, Neo4jUnavailableError
from graphmem.servers.build import (
    MAIN_CLASS,
    MIN_JAVA,
    READY_LINE,
    REFUSED_LINE,
    MavenBuild,
    build_fingerprint,
    java_command,
    maven_project,
    run_maven,
    train_class_archive,
    write_conf,
)
from graphmem.servers.connection import Neo4jTarget, credentials_refused, open_driver, wait_for_bolt
from graphmem.servers.java import JavaRuntime, find_java
from graphmem.servers.processes import (
    check_port_free,
    pid_alive,
    process_cmdline,
    process_started,
    terminate_process,
)
from graphmem.servers.state import ServerState, ServerStatus, StartResult, bolt_uri, version_key
from graphmem.settings import GraphmemSettings

#: Seconds a server found running may refuse its password file before that is its answer (the
#: user may be locked out for a moment by someone else's wrong passwords; and a server started
#: by an older graphmem opened Bolt a moment before it set the password).
_PASSWORD_GRACE = 15.0


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

        # --- the files of its home ----------------------------------------------------------
        self.password_file = self.home / "password"
        self.conf_file = self.home / "conf" / "neo4j.conf"
        self.state_file = self.home / "server.json"
        #: The Neo4j version that last ran this home's store (kept after a stop).
        self.version_file = self.home / "neo4j-version"
        self.server_log = self.home / "logs" / "server.log"
        self.debug_log = self.home / "logs" / "debug.log"

    # --- paths ---------------------------------------------------------------------------
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
            uri=bolt_uri(state.port),
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
            uri=bolt_uri(state.port),
            home=self.home,
            version=state.version,
            pid=state.pid,
            started_at=datetime.fromisoformat(state.started_at),
        )

    def start(self, *, remove_unknown_users: bool = False) -> StartResult:
        """Start the server unless it already runs; return once Bolt accepts connections.

        Before Bolt opens, the password is set from the password file and the store's users
        are checked: a user other than graphmem's own (``neo4j``) makes the start refuse with
        a :class:`~graphmem.errors.Neo4jServerError` naming them, unless
        ``remove_unknown_users`` drops them."""
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
            check_port_free(self.port, wait=10.0 if state is not None else 0.0)
            self.home.chmod(0o700)  # the store and the password are this user's alone
            build = self.build()
            ensure_secret_file(self.password_file)
            write_conf(
                self.conf_file,
                self.settings.local_neo4j_pagecache,
                self.settings.local_neo4j_vector_merge_factor,
                tx_log_size=self.settings.local_neo4j_tx_log_size,
                checkpoint_seconds=self.settings.local_neo4j_checkpoint_seconds,
                transaction_memory=self.settings.local_transaction_memory,
            )
            state = self._spawn(build, remove_unknown_users=remove_unknown_users)
            try:
                self._wait_ready(state, began)
            except Neo4jServerError:
                terminate_process(state.pid, timeout=30.0)
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
                clean = terminate_process(state.pid, timeout=timeout)
                if not clean:
                    print(
                        f"graphmem: the local Neo4j did not stop within {timeout:.0f} s and "
                        "was killed; it recovers on the next start",
                        file=sys.stderr,
                    )
            self.state_file.unlink(missing_ok=True)
            return running

    def build(self) -> MavenBuild:
        """Build the Maven project once (and its class-data archive); later calls reuse it."""
        project = maven_project(self.settings)
        fingerprint = build_fingerprint(project)
        # One build per version and Java: the class-data archive only fits the JVM that made it.
        name = f"{self.version}-java{self.java.feature}-{fingerprint[:12]}"
        build = MavenBuild(self.build_root / name)
        done = build.directory / ".built"
        with file_lock(self.build_root / ".lock"):
            if not done.exists():
                run_maven(
                    self.settings.maven,
                    project,
                    build.directory,
                    version=self.version,
                    java=self.java,
                )
                train_class_archive(build, self.java, self.settings.local_neo4j_vector_merge_factor)
                done.write_text(datetime.now(UTC).isoformat() + "\n", encoding="utf-8")
        return build

    # --- internals -----------------------------------------------------------------------
    def _read_state(self, *, repair: bool = False) -> ServerState | None:
        """What ``server.json`` records; where it is unreadable or missing, the live server of
        this home that it should record, found by its command line (written back with
        ``repair``, under the home's lock), so that a damaged or deleted file does not orphan a
        running server."""
        state = ServerState.read(self.state_file)
        if state is not None and state.pid != -1:
            return state
        found = self._running_here()
        if found is None:
            return state
        if repair:
            found.write(self.state_file)
        return found

    def _running_here(self) -> ServerState | None:
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
                        and pid_alive(int(entry.name))
                    ):
                        version = re.search(r"/(\d+\.\d+\.\d+)-java\d+-", " ".join(words))
                        return ServerState(
                            pid=int(entry.name),
                            port=int(words[words.index("--port") + 1]),
                            version=version.group(1) if version else self.version,
                            started_at=process_started(int(entry.name)),
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
        if version_key(ran) > version_key(self.version):
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

    def _java_command(
        self,
        build: MavenBuild,
        *,
        home: Path,
        port: int,
        password_file: Path,
        heap: str | None = None,
        remove_unknown_users: bool = False,
    ) -> list[str]:
        heap = heap or self.settings.local_neo4j_heap
        return java_command(
            self.java,
            build,
            home=home,
            port=port,
            password_file=password_file,
            heap=heap,
            remove_unknown_users=remove_unknown_users,
        )

    def _spawn(self, build: MavenBuild, *, remove_unknown_users: bool = False) -> ServerState:
        command = self._java_command(
            build,
            home=self.home,
            port=self.port,
            password_file=self.password_file,
            remove_unknown_users=remove_unknown_users,
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
        state = ServerState(
            pid=child.pid,
            port=self.port,
            version=self.version,
            started_at=datetime.now(UTC).isoformat(),
            home=str(self.home),
        )
        state.write(self.state_file)
        return state

    def _wait_ready(self, state: ServerState, began: float, *, spawned: bool = True) -> None:
        """Wait until the server logs that it is ready, then until Bolt accepts its password.

        A server found running (not ``spawned`` by this call) may have been ready for long,
        with its log rotated, truncated or deleted since, so that no ready line will ever come:
        it is also ready once it accepts an authenticated Bolt connection (asked every few
        seconds). Refused credentials may be a moment's lock-out after someone else's wrong
        passwords: refused for longer, they end the wait."""
        pid = state.pid
        deadline = began + self.settings.local_neo4j_start_timeout
        asked_at = -math.inf
        refused_since: float | None = None
        while not self._logged_ready():
            if not pid_alive(pid):
                refused = self._logged_refusal()
                if refused:
                    raise Neo4jServerError(
                        f"the local Neo4j in {self.home} refused to start: {refused}. Drop them "
                        "with `graphmem neo4j start --remove-unknown-users` once you know who "
                        "added them"
                    )
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
                still_starting=lambda: pid_alive(pid),
            )
        except Neo4jUnavailableError as exc:
            raise Neo4jServerError(str(exc), log_tail=self._log_tail()) from exc

    def _logged_ready(self) -> bool:
        try:
            return READY_LINE in self.server_log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return False

    def _logged_refusal(self) -> str | None:
        """The reason the launcher gave for a start it refused, if it refused one."""
        try:
            text = self.server_log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None
        for line in text.splitlines():
            if line.startswith(REFUSED_LINE):
                return line[len(REFUSED_LINE) :].strip()
        return None

    def _log_tail(self) -> str:
        server = tail(self.server_log, 30)
        debug = tail(self.debug_log, 15)
        return server + (f"--- {self.debug_log} ---\n{debug}" if debug else "")

    def _alive(self, state: ServerState) -> bool:
        """Whether the state's pid is a live local Neo4j of this home (not a reused pid)."""
        if not pid_alive(state.pid):
            return False
        cmdline = process_cmdline(state.pid)
        # The home as a whole argument: one that is a prefix of another's (/data/neo4j and
        # /data/neo4j2) is not taken for it.
        return cmdline is None or (
            MAIN_CLASS in cmdline and f" --home {self.home} " in f"{cmdline} "
        )

    def _stopped(self, note: str) -> ServerStatus:
        return ServerStatus(
            running=False, uri=bolt_uri(self.port), home=self.home, version=self.version, note=note
        )
