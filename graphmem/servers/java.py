"""The Java the local Neo4j server runs on: finding a JDK new enough, and the JVM options that
depend on its version."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import Neo4jServerError

_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')
_JDK_DIRS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))


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
    is added (Lucene 9.11, in Neo4j 5.26, on Java 20-22; Lucene 10, in 2026.09, on 21-25);
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
