"""The command line: ``kafkapy-server`` (also ``python -m kafkapy``), the standalone broker.

``kafkapy-server [server.properties] [--override key=value ...] [--log-level LEVEL]``, like
Kafka's ``kafka-server-start.sh``. This module owns the process around a ``KafkaServer``: the
arguments, logging, the exit code and the signals; the broker itself is ``KafkaServer``'s.

Theory of operation
-------------------

- *Configuration.* ``BrokerConfig.load(file, overrides)``: the file's settings with every
  ``--override`` over them, last one winning. With no file the embedded default applies (node 1
  on ``PLAINTEXT://localhost:9092``, data in ``./kafkapy-data``), and the first log lines say so,
  with the listeners and the absolute data directory, so nobody wonders where the data went.
- *Logging* goes to stderr, one timestamped line per event in Kafka's layout
  (``[time] LEVEL message (logger)``), at ``--log-level`` (default INFO).
- *Start.* The "started" line (with the bootstrap servers, the bound port when 0 was asked) is
  logged only once ``nursery.start(server.run)`` has returned, i.e. once clients can connect.
- *Stop.* SIGTERM or SIGINT (Ctrl-C) asks for a controlled shutdown, ``KafkaServer.shutdown``:
  stop accepting, let in-flight requests finish, flush, write the checkpoints and the
  clean-shutdown marker; then the process exits 0. A signal that arrives while the broker is
  still starting (log recovery can take a while) stops it as soon as it has started. A second
  SIGINT during the shutdown exits at once with 130, without finishing it: nothing acknowledged
  is lost (the page cache holds it), the next start recovers the logs.
- *Errors.* What an operator can fix, a bad setting (``InvalidConfigError``) or an OS error (an
  unreadable file, a port in use, a log dir that cannot be created), ends the process with code
  1 and one error line, no traceback, when it stops the broker from starting. Anything else,
  and anything that ends a broker once started (a log dir that fails under it, a bug), is logged
  as a crash with its traceback, code 1.

The Trio signal receiver is opened first thing inside ``trio.run``, before the server starts.
From the moment ``main`` has parsed its arguments until then, a handler only notes a stop
signal, and the process then exits 0 without starting the broker (nothing was opened yet).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import platform
import signal
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import trio

from kafkapy import __version__
from kafkapy.common.gc_policy import GcPolicy
from kafkapy.config import BrokerConfig
from kafkapy.errors import InvalidConfigError

if sys.version_info < (3, 11):  # pragma: no cover - trio depends on the backport there
    from exceptiongroup import BaseExceptionGroup

__all__ = ["main"]

log = logging.getLogger("kafkapy.cli")

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _StartupError(Exception):
    """An error the operator can fix, with the one line that says so."""


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a kafkapy broker: Apache Kafka's wire protocol and log format. "
                    "Settings use Kafka's broker names (server.properties). SIGTERM or Ctrl-C "
                    "is a controlled shutdown.")
    parser.add_argument(
        "config", nargs="?", metavar="server.properties",
        help="the broker's settings as a Java .properties file; without it the embedded "
             "default applies: node 1 on PLAINTEXT://localhost:9092, data in ./kafkapy-data")
    parser.add_argument(
        "--override", action="append", default=[], metavar="KEY=VALUE",
        help="set a broker setting over the file's (repeatable; the last one wins)")
    parser.add_argument(
        "--log-level", type=str.upper, choices=LOG_LEVELS, default="INFO",
        help="the lowest level logged to stderr (default: INFO)")
    parser.add_argument("--version", action="version",
                        version=f"kafkapy-server {__version__} "
                                f"(Python {platform.python_version()})")
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Run ``kafkapy-server`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code:
    0 after a controlled shutdown, 1 when the broker cannot start or fails, 130 after a forced
    stop (a second Ctrl-C). Argument errors exit 2 through argparse (``SystemExit``)."""
    if prog is None:
        prog = "python -m kafkapy" if Path(sys.argv[0]).name == "__main__.py" \
            else "kafkapy-server"
    args = _parser(prog).parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format=LOG_FORMAT)
    # Until the Trio signal receiver takes over, a stop signal is only noted: nothing has
    # been opened yet, so the broker is simply not started.
    early: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, _frame: early.append(signum))
                for signum in STOP_SIGNALS}
    try:
        config = _load_config(args.config, args.override)
        trio.run(_serve, config, early)
    except _StartupError as e:
        log.error("%s", e)
        return EXIT_ERROR
    except KeyboardInterrupt:       # a safety net: SIGINT is handled above and in _serve
        log.warning("Interrupted")
        return EXIT_INTERRUPTED
    except Exception:
        log.critical("kafkapy-server stopped on an unexpected error", exc_info=True)
        return EXIT_ERROR
    finally:
        for signum, handler in previous.items():
            if handler is not None:       # None: installed from C, cannot be put back
                signal.signal(signum, handler)
    return EXIT_OK


def _load_config(path: str | None, overrides: Sequence[str]) -> BrokerConfig:
    try:
        config = BrokerConfig.load(path, overrides)
    except InvalidConfigError as e:
        where = f" ({path})" if path is not None else ""
        raise _StartupError(f"Invalid configuration{where}: {e.message}") from e
    except OSError as e:
        raise _StartupError(f"Cannot read the config file {path}: "
                            f"{e.strerror or e}") from e
    listeners = ", ".join(str(e) for e in config.listeners)
    data = ", ".join(str(d.absolute()) for d in config.log_dirs)
    where = (f"listener{'s' if len(config.listeners) > 1 else ''} {listeners}, "
             f"data in {data}")
    log.info("kafkapy-server %s (pid %d, Python %s, trio %s)", __version__, os.getpid(),
             platform.python_version(), trio.__version__)
    keys = list(dict.fromkeys(o.partition("=")[0].strip() for o in overrides))
    with_overrides = f" with --override of {', '.join(keys)}" if keys else ""
    if path is None:
        log.info("No config file given: using the embedded default%s (%s)", with_overrides,
                 where)
    else:
        log.info("Using the config file %s%s (%s)", Path(path).absolute(), with_overrides,
                 where)
    return config


async def _serve(config: BrokerConfig, early: Sequence[int]) -> None:
    """Run the broker until a signal asks for the controlled shutdown; ``early`` holds the
    stop signals received before the receiver opened (then the broker does not start)."""
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        if early:
            log.info("%s received before the broker started: not starting",
                     signal.Signals(early[0]).name)
            return
        from kafkapy.server.kafka_server import KafkaServer  # not loaded for --help

        server = KafkaServer(config)
        stop = trio.Event()
        started = False
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch_signals, signals, stop)
                await nursery.start(server.run)
                started = True
                # Everything loaded so far (modules, protocol classes, the logs' state) lives as
                # long as the broker: out of the collector's sight, and so is what later full
                # collections find alive, so that a full collection does not walk it again and
                # again (pauses of several ms under load); see gc_policy.
                GcPolicy().install()
                bootstrap = ",".join(f"{e.host}:{e.port}"
                                     for e in server.advertised_endpoints.values())
                log.info("kafkapy-server started: clients connect to bootstrap servers %s; "
                         "SIGTERM or Ctrl-C for a controlled shutdown", bootstrap)
                await stop.wait()
                await server.shutdown()
                nursery.cancel_scope.cancel()      # the signal watcher
        except BaseExceptionGroup as group:
            if started:
                raise       # a running broker failed: a crash, with its traceback
            raise _single(group, config) from None
        except OSError as e:
            if started:
                raise
            raise _os_error(e, config) from e
    log.info("kafkapy-server stopped cleanly")


async def _watch_signals(signals: AsyncIterator[int], stop: trio.Event) -> None:
    async for signum in signals:
        name = signal.Signals(signum).name
        if not stop.is_set():
            log.info("%s received: controlled shutdown%s", name,
                     "" if signum == signal.SIGTERM else " (Ctrl-C again to exit at once)")
            stop.set()
        elif signum == signal.SIGINT:
            log.warning("%s received again: exiting now, without finishing the shutdown; "
                        "the next start recovers the logs", name)
            logging.shutdown()
            os._exit(EXIT_INTERRUPTED)
        else:
            log.info("%s received: already shutting down", name)


def _single(group: BaseExceptionGroup[BaseException], config: BrokerConfig) -> BaseException:
    """The exception to report for a nursery's group: an operator's error when it is the only
    one, else the group itself (a bug: its traceback is logged)."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    if len(leaves) == 1:
        (leaf,) = leaves
        if isinstance(leaf, OSError):
            return _os_error(leaf, config)
        if isinstance(leaf, InvalidConfigError):
            return _StartupError(f"Invalid configuration: {leaf.message}")
        if isinstance(leaf, KeyboardInterrupt):
            return leaf
    return group


def _os_error(exc: OSError, config: BrokerConfig) -> _StartupError:
    listeners = ", ".join(str(e) for e in config.listeners)
    if exc.errno == errno.EADDRINUSE:
        return _StartupError(f"Cannot start the broker: the address of a listener is already "
                             f"in use ({listeners}); is another broker running? Choose another "
                             f"port with --override listeners=PLAINTEXT://localhost:PORT")
    if exc.errno == errno.EADDRNOTAVAIL:
        return _StartupError(f"Cannot start the broker: a listener's address is not one of "
                             f"this machine's ({listeners})")
    if isinstance(exc, socket.gaierror):
        return _StartupError(f"Cannot start the broker: the host of a listener does not "
                             f"resolve ({listeners}): {exc.strerror or exc}")
    detail = exc.strerror or str(exc)
    if exc.filename is not None:
        detail = f"{detail}: {exc.filename}"
    return _StartupError(f"Cannot start the broker: {detail}")
