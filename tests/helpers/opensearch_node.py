"""A real OpenSearch 2.19 node, or a cluster of several, in one JVM, for the tests that need the real engine.

No tarball and no container can be had here, only Maven Central, so tests/opensearch_node is a small Maven
project whose one class starts the server jar with the modules a distribution loads (HTTP over Netty, the
common analyzers, mapper-extras, reindex, painless) as classpath plugins. This module builds it once (cached
on file times, serialised across pytest-xdist workers by a lock) and drives it over a line protocol on the
JVM's stdin/stdout: `NODE i URL`... `READY`, then `stop i` / `start i` / `quit`. The JVM quits on EOF of its
stdin, so it never outlives the test process, even one that is killed.

    with OpenSearchCluster.start(tmp_path / "os", nodes=2) as cluster:
        client = OpenSearch(cluster.url)
        cluster.stop_node(1)
        cluster.start_node(1)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO

PROJECT = Path(__file__).resolve().parent.parent / "opensearch_node"
TARGET = PROJECT / "target"
MAIN_CLASS = "org.researchrepository.testnode.TestCluster"
OPENSEARCH_VERSION = "2.19.6"

_BUILT_STAMP = TARGET / ".built"
_CLASSPATH_FILE = TARGET / "classpath.txt"
_MAVEN_LOG = TARGET / "maven-build.log"
_LOCK_FILE = TARGET / ".build.lock"


def java_available() -> bool:
    """Whether this machine can build and run the node (a JDK's java and Maven on PATH)."""
    return shutil.which("java") is not None and shutil.which("mvn") is not None


def _tail(path: Path, lines: int = 40) -> str:
    """The end of a log, for an error message that shows why the JVM or Maven failed."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"(no {path})"
    return "\n".join(text.splitlines()[-lines:])


def _newest_source_mtime() -> float:
    """The newest modification time among the inputs of the build: the POM and everything under src/."""
    newest = (PROJECT / "pom.xml").stat().st_mtime
    for path in (PROJECT / "src").rglob("*"):
        if path.is_file():
            newest = max(newest, path.stat().st_mtime)
    return newest


def _cached_classpath() -> list[str] | None:
    """The classpath of the last build, or None when the sources changed or a jar it names is gone."""
    if not _BUILT_STAMP.exists() or not _CLASSPATH_FILE.exists():
        return None
    if _BUILT_STAMP.stat().st_mtime < _newest_source_mtime():
        return None
    jars = [entry for entry in _CLASSPATH_FILE.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]
    entries = [str(TARGET / "classes"), *jars]
    if not all(Path(entry).exists() for entry in entries):
        return None
    return entries


def build() -> list[str]:
    """Compile the launcher and resolve its dependencies, unless the last build is still current.

    Returns the classpath entries for `java -cp`. Maven runs at most once per change of the sources (a
    resolution from a cold ~/.m2 takes a minute, a cached one ten seconds): later calls, and other pytest-xdist
    workers waiting on the lock meanwhile, get the cached classpath.
    """
    cached = _cached_classpath()
    if cached is not None:
        return cached
    TARGET.mkdir(exist_ok=True)
    with open(_LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = _cached_classpath()
        if cached is not None:
            return cached
        mvn = shutil.which("mvn")
        if mvn is None:
            raise RuntimeError("mvn is not on PATH")
        with open(_MAVEN_LOG, "w", encoding="utf-8") as log:
            result = subprocess.run(
                [mvn, "-B", "-q", "compile"],
                cwd=PROJECT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, check=False,
            )
        if result.returncode != 0:
            raise RuntimeError(f"Maven build of {PROJECT} failed ({result.returncode}):\n{_tail(_MAVEN_LOG)}")
        _BUILT_STAMP.touch()
        entries = _cached_classpath()
        if entries is None:
            raise RuntimeError(f"Maven build of {PROJECT} left no usable classpath:\n{_tail(_MAVEN_LOG)}")
        return entries


def jvm_options(heap: str, data_dir: Path) -> list[str]:
    """The JVM flags: a distribution's jvm.options, cut down to what a small test node on 2 cores needs.

    The serial collector has the smallest footprint and no concurrent GC threads to compete with the tests on
    2 cores; the node turns the real-memory circuit breaker off to match. The C1-only JIT starts faster and is
    enough for test workloads. `SPI,COMPAT` locale providers are what OpenSearch's date handling expects on Java
    17, and the Netty properties are the ones its distribution sets.
    """
    return [
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:-OmitStackTraceInFastThrow",
        "-Xss1m",
        "-Djava.awt.headless=true",
        "-Dfile.encoding=UTF-8",
        "-Djava.locale.providers=SPI,COMPAT",
        f"-Djava.io.tmpdir={data_dir / 'tmp'}",
        "-Djna.nosys=true",
        "-Dlog4j2.disable.jmx=true",
        "-Dlog4j.shutdownHookEnabled=false",
        "-Dio.netty.noUnsafe=true",
        "-Dio.netty.noKeySetOptimization=true",
        "-Dio.netty.recycler.maxCapacityPerThread=0",
        "-Dopensearch.set.netty.runtime.available.processors=false",
    ]


class OpenSearchError(RuntimeError):
    """The JVM died, answered ERROR, or did not answer in time; the message carries the logs' tails."""


class OpenSearchCluster:
    """A running JVM with `len(urls)` OpenSearch nodes; `urls[i]` is node i's HTTP address on 127.0.0.1."""

    def __init__(self, process: subprocess.Popen[str], data_dir: Path, stderr: IO[str], size: int) -> None:
        self.process = process
        self.data_dir = data_dir
        self.urls: list[str] = [""] * size
        self.log_path = data_dir / "logs" / "opensearch.log"
        self.stderr_path = data_dir / "jvm-stderr.log"
        self._stderr = stderr
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stray: list[str] = []  # stdout lines outside the protocol, e.g. the JVM's own start-up errors
        self._reader = threading.Thread(target=self._read, name="opensearch-node-stdout", daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, data_dir: Path, nodes: int = 1, heap: str = "768m", timeout: float = 180,
              cluster_name: str = "research-repository-test") -> OpenSearchCluster:
        """Build if needed, start `nodes` nodes with their data under `data_dir`, and wait until all answer.

        One node runs as `discovery.type=single-node`; more form a real cluster over loopback transport ports.
        `heap` bounds the whole JVM, all nodes together.
        """
        classpath = build()
        data_dir = Path(data_dir).resolve()
        (data_dir / "tmp").mkdir(parents=True, exist_ok=True)
        java = shutil.which("java")
        if java is None:
            raise RuntimeError("java is not on PATH")
        command = [
            java, *jvm_options(heap, data_dir), "-cp", os.pathsep.join(classpath), MAIN_CLASS,
            "--nodes", str(nodes), "--data", str(data_dir), "--cluster-name", cluster_name,
        ]
        stderr = open(data_dir / "jvm-stderr.log", "a", encoding="utf-8")
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                text=True, encoding="utf-8", bufsize=1, cwd=data_dir,
            )
        except BaseException:
            stderr.close()
            raise
        cluster = cls(process, data_dir, stderr, nodes)
        try:
            cluster._expect("READY", timeout)
        except BaseException:
            cluster._kill()
            raise
        return cluster

    @property
    def url(self) -> str:
        """The first node's HTTP address, the one a single-node test talks to."""
        return self.urls[0]

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_bytes(self) -> int | None:
        """The JVM's resident memory, from /proc (None where there is no /proc or the JVM is gone)."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return None

    def stop_node(self, index: int, timeout: float = 120) -> None:
        """Close node `index` gracefully (its data stays); with others running, it leaves the voting set first."""
        self._send(f"stop {index}")
        self._expect(f"STOPPED {index}", timeout)

    def start_node(self, index: int, timeout: float = 180) -> None:
        """Start node `index` again on its old data and ports; returns once it has joined and its HTTP answers."""
        self._send(f"start {index}")
        self._expect(f"STARTED {index}", timeout)

    def close(self, timeout: float = 60) -> None:
        """Close every node and end the JVM; kills it if it does not exit within `timeout` seconds."""
        if self.process.poll() is None:
            try:
                self._send("quit")
                self.process.stdin.close()  # type: ignore[union-attr]
            except (OSError, OpenSearchError):
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._kill()
        self._reader.join(5)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        self._stderr.close()

    def __enter__(self) -> OpenSearchCluster:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _read(self) -> None:
        """Hand the JVM's stdout to the waiting thread line by line; None marks its end."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _send(self, command: str) -> None:
        if self.process.poll() is not None:
            raise self._error(f"cannot send {command!r}: the JVM has exited ({self.process.returncode})")
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def _expect(self, wanted: str, timeout: float) -> None:
        """Read protocol lines until `wanted`, noting node addresses on the way; raise on ERROR, exit or time-out."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._error(f"no {wanted!r} from the JVM within {timeout:.0f} s")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                self.process.wait(10)
                raise self._error(f"the JVM exited ({self.process.returncode}) before {wanted!r}")
            if line == wanted:
                return
            words = line.split()
            if words[:1] == ["NODE"] and len(words) == 3:
                self.urls[int(words[1])] = words[2]
            elif words[:1] == ["ERROR"]:
                raise self._error(line)
            else:
                self._stray.append(line)

    def _error(self, message: str) -> OpenSearchError:
        stray = "\n".join(self._stray[-20:])
        return OpenSearchError(
            f"{message}\n--- stdout ---\n{stray}"
            f"\n--- {self.stderr_path} ---\n{_tail(self.stderr_path, 20)}"
            f"\n--- {self.log_path} ---\n{_tail(self.log_path)}"
        )

    def _kill(self) -> None:
        """End a JVM that failed to start or to quit: SIGTERM (its shutdown hook closes the nodes), then SIGKILL."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        self._close_pipes()


def drop_indices(url: str, prefix: str) -> None:
    """Remove the indices, aliases and index template named with `prefix` from the node at `url` (what a test or a
    benchmark run put into a node it shares with others)."""
    from opensearchpy import OpenSearch
    from opensearchpy.exceptions import NotFoundError

    client = OpenSearch(url)
    try:
        client.indices.delete(index=f"{prefix}*", params={"allow_no_indices": "true", "expand_wildcards": "all"})
        with contextlib.suppress(NotFoundError):
            client.indices.delete_index_template(name=prefix)
    finally:
        client.close()
