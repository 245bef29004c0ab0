"""``kafkapy-server`` as an operator meets it: ``python -m kafkapy`` in a child process.

Each test runs ``sys.executable -m kafkapy`` with the repository root on ``PYTHONPATH`` and a
temporary working directory (where the embedded default keeps ``./kafkapy-data``), reads its
stderr line by line, and waits for log lines, never for time to pass:

- no file: the embedded default, said in the first log lines (listener and absolute data dir);
  run with ``--override listeners=PLAINTEXT://127.0.0.1:0``, the bound port is read from the
  "started" line and a real client (confluent-kafka) produces and consumes through it;
- SIGTERM and SIGINT: controlled shutdown, exit 0, the clean-shutdown marker in the data dir,
  and a restart that loads the data without recovery; a signal during the startup stops it
  cleanly too;
- a properties file with ``--override`` taking precedence over it;
- operator errors (bad setting, unreadable file, malformed override, port in use): exit 1, one
  ERROR line, no traceback; ``--version``;
- a failure once started (a partition's directory removed under it): a crash, exit 1, logged
  with its traceback, never as an error of the start.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkapy

ROOT = Path(__file__).resolve().parent.parent
STARTED = re.compile(r"kafkapy-server started: clients connect to bootstrap servers (\S+);")
MARKER = ".kafka_cleanshutdown"
TIMEOUT = 20.0        # generous bound for any single wait; the tests take well under it


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_cli(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m kafkapy`` to completion (for commands that exit by themselves)."""
    return subprocess.run([sys.executable, "-m", "kafkapy", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


class Server:
    """A ``python -m kafkapy`` child process whose stderr is collected line by line."""

    def __init__(self, args: Sequence[str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kafkapy", *args], cwd=cwd,
                                     env=_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    @property
    def log(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for(self, pattern: re.Pattern[str]) -> re.Match[str]:
        """The first log line matching ``pattern``; fails if the process ends without one."""
        deadline = time.monotonic() + TIMEOUT
        with self._changed:
            while True:
                for line in self.lines:
                    if match := pattern.search(line):
                        return match
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    pytest.fail(f"no log line matching {pattern.pattern!r}:\n" + self.log)
                self._changed.wait(remaining)

    def bootstrap(self) -> str:
        """The bootstrap servers from the "started" line (the bound port, when 0 was asked)."""
        return self.wait_for(STARTED).group(1)

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum``; returns the exit code, which must come within a few seconds."""
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=10)
        self._reader.join(timeout=TIMEOUT)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=TIMEOUT)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[[Sequence[str]], Server]]:
    """``start(args)``: a server in ``tmp_path``, killed at teardown if still running."""
    servers: list[Server] = []

    def factory(args: Sequence[str] = ()) -> Server:
        server = Server(args, tmp_path)
        servers.append(server)
        return server

    yield factory
    for server in servers:
        server.close()


def produce(bootstrap: str, topic: str, values: Sequence[bytes]) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    errors: list[object] = []
    for value in values:
        producer.produce(topic, value=value,
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(TIMEOUT) == 0
    assert errors == []


def consume(bootstrap: str, topic: str, count: int) -> list[bytes]:
    """``count`` values of partition 0 from offset 0 (assigned: no consumer group)."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "cli-test",
                                         "enable.auto.commit": False})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            value = message.value()
            assert value is not None
            values.append(value)
        return values
    finally:
        consumer.close()


LOCAL_PORT_0 = "listeners=PLAINTEXT://127.0.0.1:0"
VALUES = [b"value-%d" % i for i in range(20)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_embedded_default_serves_clients_and_shuts_down_cleanly(
        start: Callable[[Sequence[str]], Server], tmp_path: Path, signum: int) -> None:
    data = tmp_path / "kafkapy-data"
    server = start(["--override", LOCAL_PORT_0])
    said = server.wait_for(re.compile(r"No config file given: using the embedded default "
                                      r"with --override of listeners \(([^)]*)\)"))
    assert said.group(1) == f"listener PLAINTEXT://127.0.0.1:0, data in {data}"
    first = server.log.splitlines()[:2]                     # said among the very first lines
    assert any("No config file given" in line for line in first), first
    assert re.match(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO ", first[0])

    bootstrap = server.bootstrap()
    host, port = bootstrap.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    produce(bootstrap, "cli-demo", VALUES)
    assert consume(bootstrap, "cli-demo", len(VALUES)) == VALUES

    assert server.stop(signum) == 0, server.log
    name = signal.Signals(signum).name
    assert f"{name} received: controlled shutdown" in server.log
    assert "kafkapy-server stopped cleanly" in server.log
    assert "Traceback" not in server.log
    assert (data / MARKER).is_file()
    assert (data / "cli-demo-0" / f"{0:020d}.log").is_file()

    again = start(["--override", LOCAL_PORT_0])
    bootstrap = again.bootstrap()
    assert "recovering" not in again.log          # the marker spared the recovery
    assert not (data / MARKER).exists()           # consumed by the load
    assert consume(bootstrap, "cli-demo", len(VALUES)) == VALUES
    assert again.stop() == 0, again.log
    assert (data / MARKER).is_file()


def test_a_signal_while_starting_still_stops_cleanly(
        start: Callable[[Sequence[str]], Server], tmp_path: Path) -> None:
    server = start(["--override", LOCAL_PORT_0])
    server.wait_for(re.compile("No config file given"))   # the broker is not up yet
    assert server.stop(signal.SIGTERM) == 0, server.log
    assert "Traceback" not in server.log
    if STARTED.search(server.log):       # the signal came during the startup: a clean stop
        assert "kafkapy-server stopped cleanly" in server.log
        assert (tmp_path / "kafkapy-data" / MARKER).is_file()
    else:                                # before the receiver was open: nothing started
        assert "SIGTERM received before the broker started: not starting" in server.log


def test_properties_file_with_overrides_over_it(
        start: Callable[[Sequence[str]], Server], tmp_path: Path) -> None:
    (tmp_path / "server.properties").write_text(
        "# a broker of our own\n"
        "node.id=7\n"
        "listeners=PLAINTEXT://127.0.0.1:1\n"      # overridden: never bound
        "log.dirs=from-file\n"
        "num.partitions=3\n", encoding="utf-8")
    server = start(["server.properties", "--override", LOCAL_PORT_0,
                    "--override", "num.partitions=5", "--override", "num.partitions=2"])
    said = server.wait_for(re.compile(r"Using the config file (\S+) with --override of "
                                      r"listeners, num.partitions \(([^)]*)\)"))
    assert said.group(1) == str(tmp_path / "server.properties")
    assert said.group(2) == \
        f"listener PLAINTEXT://127.0.0.1:0, data in {tmp_path / 'from-file'}"
    bootstrap = server.bootstrap()
    produce(bootstrap, "from-file-topic", [b"x"])
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    metadata = producer.list_topics("from-file-topic", timeout=TIMEOUT)
    assert len(metadata.topics["from-file-topic"].partitions) == 2   # the last override won
    assert list(metadata.brokers) == [7]                             # the file's node.id
    del producer
    assert server.stop() == 0, server.log
    assert (tmp_path / "from-file" / MARKER).is_file()
    assert not (tmp_path / "kafkapy-data").exists()


@pytest.mark.parametrize(("args", "properties", "expected"), [
    (["--override", "num.partitions=abc"], None,
     "Invalid configuration: Invalid value 'abc' for configuration num.partitions"),
    (["--override", "num.partitions"], None,
     "Invalid configuration: Invalid override 'num.partitions': expected key=value"),
    (["missing.properties"], None,
     "Cannot read the config file missing.properties: No such file or directory"),
    (["server.properties"], "listeners=CLIENTS://localhost:9093\n",
     "Invalid configuration (server.properties): "),
], ids=["bad-value", "bad-override", "missing-file", "bad-file"])
def test_bad_config_exits_1_with_one_error_line(
        tmp_path: Path, args: list[str], properties: str | None, expected: str) -> None:
    if properties is not None:
        (tmp_path / "server.properties").write_text(properties, encoding="utf-8")
    result = run_cli(args, tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert " ERROR " in lines[0] and expected in lines[0], lines[0]
    assert not (tmp_path / "kafkapy-data").exists()


def _occupy_default_port() -> socket.socket | None:
    """Hold the address the default listener (localhost:9092) binds first; None when another
    process holds it already (the outcome is the same: the address is in use)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        "localhost", 9092, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.bind(address)
        sock.listen()
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            return None
        raise
    return sock


def test_no_arguments_is_the_embedded_default_and_a_port_in_use_is_one_error(
        tmp_path: Path) -> None:
    holder = _occupy_default_port()
    try:
        result = run_cli([], tmp_path)
    finally:
        if holder is not None:
            holder.close()
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert any(f"No config file given: using the embedded default (listener "
               f"PLAINTEXT://localhost:9092, data in {tmp_path / 'kafkapy-data'})" in line
               for line in lines[:2]), result.stderr
    errors = [line for line in lines if " ERROR " in line]
    assert len(errors) == 1, result.stderr
    assert "already in use (PLAINTEXT://localhost:9092)" in errors[0]
    assert "Traceback" not in result.stderr
    # The logs were opened before the bind failed: they are closed cleanly all the same.
    assert (tmp_path / "kafkapy-data" / MARKER).is_file()


def test_version(tmp_path: Path) -> None:
    result = run_cli(["--version"], tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith(f"kafkapy-server {kafkapy.__version__} (Python ")


def test_usage_error_exits_2(tmp_path: Path) -> None:
    result = run_cli(["--log-level", "chatty"], tmp_path)
    assert result.returncode == 2
    assert "invalid choice: 'CHATTY'" in result.stderr


def test_a_failure_after_the_start_is_a_crash_with_its_traceback_not_a_startup_error(
        start: Callable[[Sequence[str]], Server], tmp_path: Path) -> None:
    # A live partition's directory removed behind the broker's back (an operator's rm -r, a
    # failed disk): the next background flush of its files fails and, as in Kafka with its
    # only log dir failed, the broker stops. It must say it crashed, not that it could not start.
    server = start([f"--override={LOCAL_PORT_0}"])
    bootstrap = server.bootstrap()
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([confluent_kafka.admin.NewTopic("doomed", 1)]).values():
        future.result(TIMEOUT)
    partition_dir = tmp_path / "kafkapy-data" / "doomed-0"
    assert partition_dir.is_dir()
    shutil.rmtree(partition_dir)
    # The first batch of epoch 0 (the epoch cache changes): the next background flush opens
    # the partition's files. Whether the answer comes before the crash is not the point.
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0,
                                         "message.timeout.ms": 5000})
    producer.produce("doomed", value=b"first")
    producer.flush(TIMEOUT)
    code = server.proc.wait(timeout=TIMEOUT)
    server.close()
    assert code == 1, server.log
    assert "kafkapy-server stopped on an unexpected error" in server.log
    assert "Traceback" in server.log
    assert re.search(r"FileNotFoundError: .*doomed-0/", server.log), server.log
    assert "Cannot start the broker" not in server.log
