"""ZooKeeperServer: a real Apache ZooKeeper (standalone) in a child process, for tests, local
clusters and scripts.

kafkapy's cluster mode uses ZooKeeper exactly as Kafka 2.8-3.x does; this starts one so that a
test suite or a developer needs no Docker and no service manager. It runs ZooKeeper's own
``ZooKeeperServerMain`` with Java, from:

1. ``$ZOOKEEPER_HOME`` (an Apache ZooKeeper 3.8 binary release: ``lib/*.jar``), else
2. Debian's ``zookeeper`` package (``/usr/share/java/zookeeper.jar``, whose manifest names
   its dependencies).

Neither present: ``ZooKeeperNotFound`` says how to install it. The server gets its own data
directory and a ``zoo.cfg`` written here (loopback only, a free port, the admin HTTP server
off, the ``ruok`` / ``srvr`` four-letter words on); ``start()`` returns once it answers
``ruok`` with ``imok``, within ``timeout`` seconds, else raises with the end of its log.

Fault injection for resilience tests: ``stop()`` (SIGTERM, then SIGKILL after a grace
period), ``kill()`` (SIGKILL), ``pause()`` / ``resume()`` (SIGSTOP / SIGCONT). Not
thread-safe; one owner.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["ZooKeeperNotFound", "ZooKeeperServer", "four_letter_word", "free_port",
           "wait_stopped", "zookeeper_classpath"]

DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"


class ZooKeeperNotFound(RuntimeError):
    """No ZooKeeper installation (or no Java) to start."""


def zookeeper_classpath(home: str | None = None) -> str:
    """The class path of a ZooKeeper installation: ``home`` (default ``$ZOOKEEPER_HOME``),
    else Debian's package. Raises ZooKeeperNotFound."""
    home = home if home is not None else os.environ.get("ZOOKEEPER_HOME")
    if home:
        jars = sorted(Path(home).glob("lib/*.jar")) + sorted(Path(home).glob("*.jar"))
        if not jars:
            raise ZooKeeperNotFound(f"ZOOKEEPER_HOME={home} holds no ZooKeeper jars (lib/*.jar)")
        return os.pathsep.join(str(j) for j in jars)
    if DEBIAN_JAR.exists():
        return str(DEBIAN_JAR)
    raise ZooKeeperNotFound(
        "ZooKeeper is not installed: install Debian's package (apt-get install zookeeper) or "
        "set ZOOKEEPER_HOME to an Apache ZooKeeper 3.8 release")


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ZooKeeperNotFound("ZooKeeper needs Java: install a JRE (apt-get install "
                                "default-jre-headless) or set JAVA_HOME")
    return java


# Ports handed out by this process, so two servers started together never get the same one.
_handed: set[int] = set()
_random = random.SystemRandom()


def _ephemeral_low() -> int:
    """The lowest port the kernel picks for an outgoing connection's local address."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768                    # Linux's default; elsewhere only a guess


def free_port(host: str) -> int:
    """A port nothing listens on now, for a server started next.

    Chosen at random below the kernel's ephemeral range (from 20000 up), not by binding port
    0: a port from that range can be taken as the local address of any outgoing connection
    (a client, a ZooKeeper session, another test's) between this call and the server's bind,
    which then fails with "address already in use". Ports below the range are only ever taken
    by a bind. Falls back to the kernel's choice when the range leaves no room below it."""
    low, high = 20000, _ephemeral_low()
    for _ in range(100 if high - low >= 1000 else 0):
        port = _random.randrange(low, high)
        if port in _handed:
            continue
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _handed.add(port)
        return port
    with socket.socket() as s:
        s.bind((host, 0))
        chosen: int = s.getsockname()[1]
        return chosen


def four_letter_word(host: str, port: int, word: str, timeout: float = 2.0) -> str:
    """ZooKeeper's answer to a four-letter command (``ruok``, ``srvr``), "" if none."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def wait_stopped(pid: int, timeout: float = 5.0) -> None:
    """Until every thread of ``pid`` is stopped (state ``T`` in /proc), after a SIGSTOP."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
            states = {(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks}
        except OSError:
            return                          # gone, or no /proc here: nothing to wait for
        if states <= {"T", "t"}:
            return
        time.sleep(0.01)


class ZooKeeperServer:
    """A standalone ZooKeeper on ``host``; ``connect_string`` once started."""

    def __init__(self, data_dir: str | os.PathLike[str] | None = None, *, port: int = 0,
                 host: str = "127.0.0.1", tick_time_ms: int = 500,
                 max_session_timeout_ms: int = 60_000, timeout: float = 30.0) -> None:
        self.host = host
        self.port = port
        self.tick_time_ms = tick_time_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        self.timeout = timeout
        self._own_dir = data_dir is None
        self.dir = Path(data_dir) if data_dir is not None else \
            Path(tempfile.mkdtemp(prefix="kafkapy-zk-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "zookeeper.log"

    def start(self) -> ZooKeeperServer:
        """Start and wait until ZooKeeper answers. Raises ZooKeeperNotFound, or RuntimeError
        (with the end of its log) when it exits or does not answer in time."""
        classpath = zookeeper_classpath()
        java = _java()
        if not self.port:
            self.port = free_port(self.host)
        (self.dir / "data").mkdir(parents=True, exist_ok=True)
        config = self.dir / "zoo.cfg"
        config.write_text(
            f"dataDir={self.dir / 'data'}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.host}\n"
            f"tickTime={self.tick_time_ms}\n"
            f"maxSessionTimeout={self.max_session_timeout_ms}\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,stat\n"
            "maxClientCnxns=0\n")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [java, "-Xmx256m", "-cp", classpath, MAIN_CLASS, str(config)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}:\n"
                                   f"{self._log_tail()}")
            if four_letter_word(self.host, self.port, "ruok", 1.0) == "imok":
                return self
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"ZooKeeper did not answer on {self.connect_string} within "
                           f"{self.timeout:.0f} s:\n{self._log_tail()}")

    def _log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def pause(self) -> None:
        """SIGSTOP, and wait until the process is stopped (delivery is asynchronous)."""
        self._signal(signal.SIGSTOP)
        if self.proc is not None:
            wait_stopped(self.proc.pid)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def kill(self) -> None:
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL if it has not exited after ``grace`` seconds."""
        if self.proc is None:
            return
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()

    def close(self) -> None:
        """Stop, and remove the data directory if this object made it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ZooKeeperServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
