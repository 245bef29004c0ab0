"""LogManager: every partition log of the broker's ``log.dirs``, loaded, checkpointed, flushed,
retained and compacted.

Kafka's LogManager. Layout of each log dir (see kafkapy.log.checkpoints for the file formats)::

    meta.properties                       version=1, node.id, cluster.id, directory.id
    .kafka_cleanshutdown                  present only between a clean shutdown and the next load
    recovery-point-offset-checkpoint      per partition: offsets below are fsynced
    log-start-offset-checkpoint           per partition, where above the first segment
    replication-offset-checkpoint         per partition: the high watermark
    cleaner-offset-checkpoint             per compacted partition: where the dirty part starts
    <topic>-<partition>/                  one Log (kafkapy.log.log)
    <topic>-<partition>.<id>-future/      a future log: the copy of a replica being moved
                                          here from another log dir (AlterReplicaLogDirs),
                                          or a new log being created (``create_logs``)
    <topic>-<partition>.<id>-delete/      a log awaiting removal (deleted, or moved away)

Theory of operation:

- ``load`` (blocking; the broker runs it in a worker thread) checks ``meta.properties``, reads
  the checkpoints and the clean-shutdown marker, then opens every log. A dir that was shut
  down cleanly is opened one log after another in that thread; the logs of a dir that was
  not are recovered ``num.recovery.threads.per.data.dir`` at a time (the compiled recovery
  scan releases the GIL, so those threads do run in parallel). The marker is removed once
  loaded, so a later crash is seen as one.
- ``run`` is the background: a Trio task tree with the flusher (``flush.ms`` /
  ``flush.messages`` policies, and the flush of the rolled segments that follows a roll, up
  to the new active segment as Kafka's; over current and future logs), the retention pass
  every ``log.retention.check.interval.ms``, the removal of ``.deleted`` files after
  ``file.delete.delay.ms``, the checkpoint writers and the log cleaner. Every fsync, unlink
  and compaction pass runs in a worker thread (``trio.to_thread``); the event loop only does
  bookkeeping. This module is the one place in ``kafkapy.log`` that imports trio.
- ``flush_log`` is also what the produce path awaits when ``flush.messages`` says an append
  must be on disk before it is acknowledged.
- ``create_logs`` creates new partitions' logs off the event loop: ``mkdir`` and file creation
  take milliseconds a log on some file systems, and a request creating thousands of
  partitions would hold every other client that long (Kafka creates them on one request
  handler thread while the others serve). Each new log is opened in a worker thread in a
  ``-future`` directory of the dir it will live in (as a moved replica is copied), then
  renamed ``<topic>-<partition>`` and installed on the event loop: one rename there, no other
  system call. A log created meanwhile by ``get_or_create_log`` wins and the staged one is
  dropped; a crash before the rename leaves a future directory, which ``load`` removes.
- ``shutdown`` flushes every log (``flush_logs``: the fsyncs in a thread pool, logs with
  nothing unflushed skipped), closes them (trimming indexes), writes every checkpoint and
  finally the clean-shutdown marker.
- Replica moves between log dirs (Kafka's KIP-113; the copying is
  kafkapy.server.replica_alter_log_dirs_manager's): ``create_future_log`` opens an empty
  *future* log for a partition in another dir, ``replace_current_with_future`` swaps it in
  once it holds everything the current log holds. The swap is one synchronous step on the
  event loop (no append can come between): a ``replaced-by-future`` marker file is written
  into the current log's directory, the future directory is renamed ``<topic>-<partition>``
  in its dir, then the current one ``<topic>-<partition>.<id>-delete`` (removed after
  ``log.segment.delete.delay.ms``; its descriptors stay open meanwhile for reads in flight).
  ``load`` finishes or undoes an interrupted swap: two ``<topic>-<partition>`` directories
  of one partition mean a crash between the renames, and the marked one is the old copy;
  a marked one alone means a crash before them (the marker goes). Future logs are not
  resumed after a restart: their directories are removed on load (the current log is
  complete), and the move must be asked for again.

Only the event-loop thread calls methods here, except ``load`` (before the loop uses the
manager) and the worker-thread bodies this module itself hands to ``trio.to_thread``.
"""

from __future__ import annotations

import base64
import concurrent.futures
import fcntl
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import InvalidTopicError, KafkaStorageError, LogDirNotFoundError
from kafkapy.log.checkpoints import (
    CLEAN_SHUTDOWN_FILE,
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    read_clean_shutdown,
    read_offsets,
    read_partition_metadata,
    write_atomically,
    write_clean_shutdown,
    write_offsets,
)
from kafkapy.log.cleaner import LogCleaner
from kafkapy.log.config import LogConfig
from kafkapy.log.log import (
    DELETE_DIR_SUFFIX,
    FUTURE_DIR_SUFFIX,
    MAX_DIR_NAME_LENGTH,
    FlushJob,
    Log,
    delete_dir_name,
    future_dir_name,
    parse_log_dir_name,
)

__all__ = ["LogManager", "MetaPropertiesError", "read_meta_properties", "validate_topic_name"]

logger = logging.getLogger("kafkapy.log")

META_PROPERTIES = "meta.properties"
# Written into a log's directory just before a future log replaces it (see the module doc).
REPLACED_MARKER = "replaced-by-future"
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249


class MetaPropertiesError(KafkaStorageError):
    """A log dir's ``meta.properties`` belongs to another node or cluster, or is unreadable."""


LOCK_FILE = ".lock"
# Logs whose flush jobs are prepared and run together at shutdown (see flush_logs).
_FLUSH_CHUNK = 256


def validate_topic_name(topic: str) -> None:
    """Kafka's Topic.validate: raises InvalidTopicError (17) for an illegal name."""
    if not topic or topic in (".", ".."):
        raise InvalidTopicError(f"Topic name {topic!r} is illegal")
    if len(topic) > _MAX_TOPIC_LENGTH:
        raise InvalidTopicError(f"Topic name {topic!r} is longer than {_MAX_TOPIC_LENGTH} "
                                f"characters")
    if not _LEGAL_TOPIC.fullmatch(topic):
        raise InvalidTopicError(f"Topic name {topic!r} is illegal: only ASCII letters, "
                                f"digits, '.', '_' and '-' are allowed")


def _new_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def read_meta_properties(log_dir: Path) -> dict[str, str]:
    """The ``key=value`` lines of ``meta.properties`` ({} if the file does not exist)."""
    try:
        text = (log_dir / META_PROPERTIES).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise MetaPropertiesError(f"{log_dir / META_PROPERTIES}: unreadable line {line!r}")
        props[key.strip()] = value.strip()
    return props


def _ensure_meta_properties(log_dir: Path, node_id: int, cluster_id: str | None) -> str:
    """Check (or write, for a new dir) ``meta.properties``; returns the cluster id."""
    props = read_meta_properties(log_dir)
    if props:
        stored_node = props.get("node.id", props.get("broker.id"))
        if stored_node is not None and int(stored_node) != node_id:
            raise MetaPropertiesError(
                f"{log_dir}: meta.properties has node.id {stored_node}, this broker is "
                f"{node_id}")
        stored_cluster = props.get("cluster.id")
        if cluster_id is not None and stored_cluster not in (None, cluster_id):
            raise MetaPropertiesError(
                f"{log_dir}: meta.properties has cluster.id {stored_cluster}, this broker "
                f"expects {cluster_id}")
        return stored_cluster or cluster_id or _new_id()
    cluster = cluster_id or _new_id()
    write_atomically(log_dir / META_PROPERTIES,
                     "#\n#Written by kafkapy\n"
                     f"cluster.id={cluster}\ndirectory.id={_new_id()}\nnode.id={node_id}\n"
                     "version=1\n")
    return cluster


def _int_prop(props: Mapping[str, object], name: str, default: int) -> int:
    value = props.get(name)
    return default if value is None else int(str(value))


class LogManager:
    """The broker's logs. ``broker_props`` are the broker's settings (Kafka names);
    ``topic_overrides(topic)`` gives a topic's own settings (topic-level names)."""

    def __init__(self, log_dirs: list[Path], *, node_id: int = 1,
                 cluster_id: str | None = None,
                 broker_props: Mapping[str, object] | None = None,
                 topic_overrides: Callable[[str], Mapping[str, object]] | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        if not log_dirs:
            raise ValueError("log.dirs is empty")
        self.log_dirs = [Path(d) for d in log_dirs]
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.broker_props: dict[str, object] = dict(broker_props or {})
        self._topic_overrides = topic_overrides or (lambda topic: {})
        self.clock = clock or (lambda: int(time.time() * 1000))
        # Told how long each fsync took, in seconds (the broker's LogFlushStats); None: untimed.
        self.flush_observer: Callable[[float], None] | None = None
        self.logs: dict[TopicPartition, Log] = {}
        self._dir_of: dict[TopicPartition, Path] = {}
        self._deleted_dirs: list[tuple[int, Path]] = []
        # Replica moves: the future logs and their dirs, the dir a partition not hosted yet
        # is to be created in (Kafka's preferredLogDirs), the logs a future log replaced
        # (closed and removed with their directory when due), and the dirs found offline.
        self.future_logs: dict[TopicPartition, Log] = {}
        self._future_dir_of: dict[TopicPartition, Path] = {}
        self.preferred_dirs: dict[TopicPartition, Path] = {}
        # The logs create_logs made that get_or_create_log has not handed out yet.
        self._unclaimed: dict[TopicPartition, Log] = {}
        self._retired: list[tuple[int, Log]] = []
        self.offline_dirs: set[Path] = set()
        # Checkpoint files are replaced through one temporary file each: one writer at a time.
        self._checkpoint_lock = trio.Lock()
        self.cleaner = LogCleaner(clock=self.clock)
        self.loaded = False
        self._closed = False
        # The running background tasks (``run``): their cancel scope, and set once they ended.
        self._background: tuple[trio.CancelScope, trio.Event] | None = None
        self._locks: list[int] = []
        p = self.broker_props
        self.retention_check_interval_ms = _int_prop(p, "log.retention.check.interval.ms",
                                                     300000)
        self.recovery_checkpoint_interval_ms = _int_prop(
            p, "log.flush.offset.checkpoint.interval.ms", 60000)
        self.start_offset_checkpoint_interval_ms = _int_prop(
            p, "log.flush.start.offset.checkpoint.interval.ms", 60000)
        self.hw_checkpoint_interval_ms = _int_prop(
            p, "replica.high.watermark.checkpoint.interval.ms", 5000)
        self.flush_check_interval_ms = _int_prop(p, "log.flush.scheduler.interval.ms",
                                                 2**63 - 1)
        self.cleaner_enabled = str(p.get("log.cleaner.enable", "true")).lower() == "true"
        self.cleaner_backoff_ms = _int_prop(p, "log.cleaner.backoff.ms", 15000)
        self.recovery_threads = max(1, _int_prop(p, "num.recovery.threads.per.data.dir", 2))
        self.segment_delete_delay_ms = _int_prop(p, "log.segment.delete.delay.ms", 60000)
        self.producer_id_expiration_ms = _int_prop(p, "producer.id.expiration.ms", 86400000)
        self.producer_id_expiration_check_interval_ms = _int_prop(
            p, "producer.id.expiration.check.interval.ms", 600000)

    # ====================================================================== configs

    def config_for(self, topic: str) -> LogConfig:
        return LogConfig.resolve(self._topic_overrides(topic), self.broker_props)

    def reconfigure_topic(self, topic: str) -> None:
        """Apply a changed topic config to its open logs (AlterConfigs)."""
        config = self.config_for(topic)
        for tp, log in self.logs.items():
            if tp.topic == topic:
                log.change_config(config)

    def reconfigure_broker(self, broker_props: Mapping[str, object]) -> None:
        self.broker_props = dict(broker_props)
        for tp, log in self.logs.items():
            log.change_config(self.config_for(tp.topic))

    # ====================================================================== loading

    def load(self) -> None:
        """Lock every log dir, then open every log (blocking: recovery can take long).

        Raises KafkaStorageError if another process (or another LogManager here) holds a
        dir's ``.lock``, as Kafka's LogManager.lockLogDirs: two brokers on one dir would
        recover and checkpoint each other's live logs."""
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
            self._lock_dir(d)
        try:
            for d in self.log_dirs:
                self.cluster_id = _ensure_meta_properties(d, self.node_id, self.cluster_id)
            self._resolve_interrupted_moves()
            for d in self.log_dirs:
                self._load_dir(d)
        except BaseException:
            self.close_unclean()
            raise
        self.loaded = True

    def _lock_dir(self, d: Path) -> None:
        fd = os.open(d / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            self._unlock_dirs()
            raise KafkaStorageError(
                f"Failed to acquire lock on file {LOCK_FILE} in {d}. A kafkapy (or Kafka) "
                f"broker in another process or thread is using this directory.") from e
        self._locks.append(fd)

    def _unlock_dirs(self) -> None:
        for fd in self._locks:
            os.close(fd)        # closing the descriptor releases its flock
        self._locks = []

    def _resolve_interrupted_moves(self) -> None:
        """Finish or undo a replica move a crash interrupted (see the module doc), and drop
        future logs: the current log is complete, the copy is not resumed."""
        current: dict[TopicPartition, list[Path]] = {}
        for d in self.log_dirs:
            for p in sorted(d.iterdir()):
                if not p.is_dir():
                    continue
                try:
                    tp, kind = parse_log_dir_name(p.name)
                except ValueError:
                    continue
                if kind == FUTURE_DIR_SUFFIX:
                    logger.info("removing %s: a replica move (or a log's creation) that did "
                                "not finish before the broker stopped (it is not resumed)", p)
                    shutil.rmtree(p, ignore_errors=True)
                elif kind == "":
                    current.setdefault(tp, []).append(p)
        for tp, paths in current.items():
            marked = [p for p in paths if (p / REPLACED_MARKER).exists()]
            if len(paths) > 1 and len(marked) == len(paths) - 1:
                for p in marked:
                    logger.info("%s: finishing a replica move interrupted by a crash: %s "
                                "was replaced by %s", tp, p,
                                next(q for q in paths if q not in marked))
                    gone = p.with_name(delete_dir_name(tp))
                    os.rename(p, gone)
                    shutil.rmtree(gone, ignore_errors=True)
            elif len(paths) > 1:
                raise KafkaStorageError(
                    f"Duplicate log directories for {tp} are found in "
                    f"{', '.join(map(str, paths))}; delete all but one of them")
            else:
                for p in marked:
                    (p / REPLACED_MARKER).unlink()

    def _load_dir(self, d: Path) -> None:
        clean = read_clean_shutdown(d)
        recovery = read_offsets(d / RECOVERY_POINT_CHECKPOINT)
        starts = read_offsets(d / LOG_START_OFFSET_CHECKPOINT)
        hws = read_offsets(d / REPLICATION_OFFSET_CHECKPOINT)
        self.cleaner.load_checkpoint(d, read_offsets(d / CLEANER_OFFSET_CHECKPOINT))
        jobs = []
        for p in sorted(d.iterdir()):
            if not p.is_dir():
                continue
            if p.name.endswith(DELETE_DIR_SUFFIX):
                shutil.rmtree(p, ignore_errors=True)
                continue
            try:
                tp, kind = parse_log_dir_name(p.name)
            except ValueError:
                continue    # -stray and foreign directories are not ours to load
            if kind:
                continue
            jobs.append((tp, p))
        if not clean and jobs:
            logger.info("%s was not shut down cleanly: recovering %d partition(s) with %d "
                        "thread(s)", d, len(jobs), self.recovery_threads)

        def open_one(tp: TopicPartition, p: Path) -> Log:
            return Log.open(p, self.config_for(tp.topic),
                            recovery_point=recovery.get(tp, 0),
                            log_start_offset=starts.get(tp, 0),
                            high_watermark=hws.get(tp, 0), had_clean_shutdown=clean,
                            clock=self.clock,
                            producer_id_expiration_ms=self.producer_id_expiration_ms)

        def opened_in_pool() -> Iterator[tuple[TopicPartition, Log]]:
            with concurrent.futures.ThreadPoolExecutor(self.recovery_threads) as pool:
                futures = {pool.submit(open_one, tp, p): tp for tp, p in jobs}
                for fut in concurrent.futures.as_completed(futures):
                    yield futures[fut], fut.result()

        # Only recovery gains from threads: its scan and CRC release the GIL. Opening a log
        # after a clean shutdown is Python and a few small reads, and threads doing it only
        # take the GIL from each other at every system call (10,000 partitions: 2.3 s in one
        # thread, 5.5 s in a pool of two).
        opened = (((tp, open_one(tp, p)) for tp, p in jobs) if clean
                  else opened_in_pool())
        started = time.monotonic()
        last_report = started
        for n, (tp, log) in enumerate(opened, 1):
            self.logs[tp] = log
            self._dir_of[tp] = d
            # Progress per directory as Kafka's LogManager logs it: every log after an
            # unclean shutdown (each may have recovered segments), else once a second.
            now = time.monotonic()
            if not clean or now - last_report >= 1.0:
                logger.info("Completed load of log %s with %d segments and log-end-offset "
                            "%d (%d/%d completed in %s)", tp, len(log.segments),
                            log.log_end_offset, n, len(jobs), d)
                last_report = now
        if jobs:
            logger.info("loaded %d log(s) from %s in %.0f ms", len(jobs), d,
                        (time.monotonic() - started) * 1000)
        # From now on a crash must be seen as one.
        (d / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)

    # ================================================================= logs by partition

    def get_log(self, tp: TopicPartition) -> Log | None:
        return self.logs.get(tp)

    def get_or_create_log(self, tp: TopicPartition, topic_id: uuid.UUID | None = None) -> Log:
        """The partition's log, created (in the dir holding the fewest logs) if missing. A
        request creating many partitions calls ``create_logs`` first, which does the file
        system's part of the creation off the event loop."""
        log = self.logs.get(tp)
        if log is not None and self._unclaimed.pop(tp, None) is log and \
                log.config != self.config_for(tp.topic):
            # Made by create_logs for a request whose topic configs lost to another's (a
            # racing creation): made again with the topic's, while it is still empty.
            self.delete_log(tp)
            log = None
        if log is not None:
            if topic_id is not None:
                log.assign_topic_id(topic_id)
            return log
        validate_topic_name(tp.topic)
        if tp.partition < 0:
            raise ValueError(f"negative partition {tp.partition}")
        d = self.preferred_dirs.pop(tp, None) or self._dir_for_new_logs([tp])[0]
        log = Log.open(d / str(tp), self.config_for(tp.topic), topic_id=topic_id,
                       clock=self.clock,
                       producer_id_expiration_ms=self.producer_id_expiration_ms)
        self.logs[tp] = log
        self._dir_of[tp] = d
        return log

    def _dir_for_new_logs(self, tps: list[TopicPartition]) -> list[Path]:
        """The dir of each of ``tps``' new logs: its preferred one (AlterReplicaLogDirs
        before the partition was hosted), else the dir holding the fewest logs (counting the
        earlier ones of ``tps``)."""
        counts = {d: 0 for d in self.log_dirs}
        for d in self._dir_of.values():
            counts[d] += 1
        out = []
        for tp in tps:
            d = self.preferred_dirs.get(tp) or min(self.log_dirs, key=lambda x: counts[x])
            counts[d] += 1
            out.append(d)
        return out

    async def create_logs(self, tps: Iterable[TopicPartition],
                          topic_overrides: Mapping[str, object] | None = None
                          ) -> dict[TopicPartition, Log]:
        """Create the logs of those of ``tps`` that have none, with the file system's work
        in a worker thread (see the module doc); ``get_or_create_log`` then finds them. A
        log that cannot be created here is left to ``get_or_create_log``, which raises as
        it always did. The topic id is not given here: ``get_or_create_log`` assigns it.
        ``topic_overrides``: the configs of a topic not created yet (default: the topic's
        as known now); ``get_or_create_log`` makes a log again if its topic's configs turn
        out to be others. Returns the logs created."""
        created: dict[TopicPartition, Log] = {}
        new: dict[TopicPartition, str] = {}
        for tp in tps:
            if tp in self.logs or tp in new or tp.partition < 0:
                continue
            try:
                validate_topic_name(tp.topic)
            except InvalidTopicError:
                continue        # get_or_create_log raises it
            staging = future_dir_name(tp)
            if len(staging) <= MAX_DIR_NAME_LENGTH:     # else left to get_or_create_log
                new[tp] = staging
        if not new:
            return created
        configs = {topic: self.config_for(topic) if topic_overrides is None
                   else LogConfig.resolve(topic_overrides, self.broker_props)
                   for topic in {tp.topic for tp in new}}
        plan = [(tp, d, d / new[tp], configs[tp.topic])
                for tp, d in zip(new, self._dir_for_new_logs(list(new)), strict=True)]

        def open_all() -> list[Log | None]:
            opened: list[Log | None] = []
            for tp, _d, staging, config in plan:
                try:
                    opened.append(Log.open(
                        staging, config, clock=self.clock,
                        producer_id_expiration_ms=self.producer_id_expiration_ms))
                except OSError as e:
                    logger.warning("%s: cannot create the log in %s: %s", tp, staging, e)
                    shutil.rmtree(staging, ignore_errors=True)
                    opened.append(None)
            return opened

        opened = await trio.to_thread.run_sync(open_all)
        for (tp, d, _staging, _config), log in zip(plan, opened, strict=True):
            if log is None:
                continue
            if self._closed or tp in self.logs:
                self._drop(log)     # shut down meanwhile, or created by someone else
                continue
            try:
                log.rename_dir(d / str(tp))
            except OSError as e:
                logger.warning("%s: cannot rename the new log %s: %s", tp, log.dir, e)
                self._drop(log)
                continue
            if self.preferred_dirs.get(tp) == d:
                del self.preferred_dirs[tp]
            self.logs[tp] = log
            self._dir_of[tp] = d
            self._unclaimed[tp] = log
            created[tp] = log
        return created

    def _drop(self, log: Log) -> None:
        """Close a log that is not (or no longer) any partition's and remove its directory:
        renamed ``-delete`` at once, removed by the next background pass."""
        log.close_unclean()
        if self._closed:
            return          # a future directory: the next load removes it
        tp = log.topic_partition
        target = log.dir.with_name(delete_dir_name(tp))
        try:
            os.rename(log.dir, target)
        except OSError as e:
            logger.warning("%s: cannot remove %s: %s", tp, log.dir, e)
            return
        self._deleted_dirs.append((self.clock(), target))

    def dir_of(self, tp: TopicPartition) -> Path | None:
        """The log dir holding ``tp``'s current log."""
        return self._dir_of.get(tp)

    def future_dir_of(self, tp: TopicPartition) -> Path | None:
        """The log dir ``tp``'s future log (a replica move in flight) is in."""
        return self._future_dir_of.get(tp)

    def topic_id_of(self, tp: TopicPartition) -> uuid.UUID | None:
        log = self.logs.get(tp)
        if log is None:
            return None
        # The id given when the log was opened (its partition.metadata may not be written
        # yet), else the file's.
        return log.topic_id if log.topic_id is not None else read_partition_metadata(log.dir)

    def delete_log(self, tp: TopicPartition) -> None:
        """Delete a partition's log: its dir is renamed ``<tp>.<id>-delete`` at once (so a
        re-created topic starts empty) and removed ``log.segment.delete.delay.ms`` later."""
        self.discard_future_log(tp)
        self.preferred_dirs.pop(tp, None)
        self._unclaimed.pop(tp, None)
        log = self.logs.pop(tp, None)
        d = self._dir_of.pop(tp, None)
        if log is None or d is None:
            return
        self.cleaner.forget(d, tp)
        log.close_unclean()
        target = log.dir.with_name(delete_dir_name(tp))
        os.rename(log.dir, target)
        self._deleted_dirs.append((self.clock() + self.segment_delete_delay_ms, target))

    # ================================================================== replica moves

    def log_dir_for_path(self, path: str) -> Path:
        """The configured log dir whose absolute path is ``path`` (Kafka compares
        ``File.getAbsolutePath``). Raises LogDirNotFoundError."""
        for d in self.log_dirs:
            if os.path.abspath(d) == path:
                return d
        raise LogDirNotFoundError(f"Log dir {path} is not found in the config.")

    def is_log_dir_online(self, d: Path) -> bool:
        """Whether ``d`` (a configured dir) can take logs: not marked offline, and still a
        writable directory (kafkapy has no log-dir failure handler; a dir that vanished or
        turned read-only is found here)."""
        if d in self.offline_dirs:
            return False
        return os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)

    def maybe_update_preferred_log_dir(self, tp: TopicPartition, d: Path) -> None:
        """Kafka's maybeUpdatePreferredLogDir: remember ``d`` for when ``tp``'s log is
        created here, unless its current or future log is already there."""
        if self._dir_of.get(tp) != d and self._future_dir_of.get(tp) != d:
            self.preferred_dirs[tp] = d

    def create_future_log(self, tp: TopicPartition, d: Path) -> Log:
        """An empty future log of ``tp`` in ``d`` (``<tp>.<id>-future``), starting at the
        current log's start offset, with its topic id. Raises KafkaStorageError (the dir is
        then marked offline)."""
        current = self.logs[tp]
        if tp in self.future_logs:
            raise ValueError(f"{tp} already has a future log in {self._future_dir_of[tp]}")
        if self._dir_of[tp] == d:
            raise ValueError(f"{tp}'s log is already in {d}")
        topic_id = self.topic_id_of(tp)
        name = future_dir_name(tp)
        if len(name) > MAX_DIR_NAME_LENGTH:
            # Refused before the file system refuses it, which would take the dir offline.
            raise KafkaStorageError(f"cannot move {tp}: its future log's directory name would "
                                    f"have {len(name)} characters, more than "
                                    f"{MAX_DIR_NAME_LENGTH}")
        try:
            future = Log.open(d / name, self.config_for(tp.topic),
                              topic_id=topic_id, clock=self.clock,
                              producer_id_expiration_ms=self.producer_id_expiration_ms)
        except OSError as e:
            self.offline_dirs.add(d)
            raise KafkaStorageError(f"cannot create the future log of {tp} in {d}: {e}") \
                from e
        if current.log_start_offset > 0:
            future.truncate_fully_and_start_at(current.log_start_offset)
        # From now on the copier must hear of the current log's truncations (none before
        # matter: the copy starts at the log start).
        current.truncated_below = None
        self.future_logs[tp] = future
        self._future_dir_of[tp] = d
        return future

    def discard_future_log(self, tp: TopicPartition) -> None:
        """Drop ``tp``'s future log, if any (a move cancelled): closed, its directory renamed
        ``-delete`` at once and removed soon."""
        future = self.future_logs.pop(tp, None)
        d = self._future_dir_of.pop(tp, None)
        if future is None or d is None:
            return
        self._drop(future)

    def replace_current_with_future(self, tp: TopicPartition) -> Log:
        """Kafka's replaceCurrentWithFutureLog: the future log, which must end where the
        current one does, becomes ``tp``'s log (see the module doc for the steps and what a
        crash between them leaves). Synchronous: the caller holds appends off by not
        yielding. Returns the new current log; the old one is closed and removed
        ``log.segment.delete.delay.ms`` later. The caller then writes the checkpoints
        (``checkpoint_now``)."""
        current = self.logs[tp]
        future = self.future_logs[tp]
        src, dst = self._dir_of[tp], self._future_dir_of[tp]
        future.take_over_from(current)
        (current.dir / REPLACED_MARKER).touch()
        future.rename_dir(dst / str(tp))
        del self.future_logs[tp], self._future_dir_of[tp]
        self.logs[tp] = future
        self._dir_of[tp] = dst
        cleaner_offset = self.cleaner.checkpoint_of(src).get(tp)
        self.cleaner.forget(src, tp)
        if cleaner_offset is not None:
            self.cleaner.load_checkpoint(dst, {**self.cleaner.checkpoint_of(dst),
                                               tp: cleaner_offset})
        current.rename_dir(src / delete_dir_name(tp))
        self._retired.append((self.clock() + self.segment_delete_delay_ms, current))
        logger.info("%s: the log in %s replaced the one in %s", tp, dst, src)
        return future

    async def checkpoint_now(self) -> None:
        """Write every checkpoint file of every dir now (in a worker thread)."""
        async with self._checkpoint_lock:
            checkpoints = self._checkpoints()
            await trio.to_thread.run_sync(
                lambda: [self._write(name, snapshot) for name, snapshot in checkpoints])

    # ======================================================================= flushing

    async def flush_log(self, log: Log, upto: int | None = None) -> None:
        """fsync ``log`` up to ``upto`` (default: its LEO) in a worker thread."""
        job = log.begin_flush(upto)
        if job.empty:
            job.run()           # no system call: done inline, not in a thread
            log.end_flush(job)
            return
        observer = self.flush_observer
        if observer is None:
            await trio.to_thread.run_sync(job.run)
        else:
            started = time.perf_counter()
            await trio.to_thread.run_sync(job.run)
            observer(time.perf_counter() - started)
        log.end_flush(job)

    async def flush_logs(self, logs: list[Log]) -> None:
        """fsync each of ``logs`` to its LEO, as Kafka's shutdown does: the jobs run in a
        worker thread's pool of ``num.recovery.threads.per.data.dir`` threads per log dir
        (fsync waits on the disk, so they overlap), ``_FLUSH_CHUNK`` logs per thread round
        trip rather than one; logs with nothing unflushed cost no thread at all. Chunks
        bound the descriptors held at once (each job holds three or more: 10,000 logs at
        once would exceed a 20,000 descriptor limit)."""
        threads = self.recovery_threads * len(self.log_dirs)
        for i in range(0, len(logs), _FLUSH_CHUNK):
            pending = []
            for log in logs[i:i + _FLUSH_CHUNK]:
                job = log.begin_flush()
                if job.empty:
                    job.run()       # no system call: done inline, not in a thread
                    log.end_flush(job)
                else:
                    pending.append((log, job))
            if pending:
                await self._run_flush_jobs(pending, threads)

    async def _run_flush_jobs(self, pending: list[tuple[Log, FlushJob]], threads: int
                              ) -> None:
        seconds: list[float] = []

        def timed(job: FlushJob) -> float:
            started = time.perf_counter()
            job.run()
            return time.perf_counter() - started

        def run_all() -> None:
            with concurrent.futures.ThreadPoolExecutor(min(len(pending), threads)) as pool:
                seconds.extend(pool.map(timed, [job for _log, job in pending]))

        try:
            await trio.to_thread.run_sync(run_all)
        finally:
            for log, job in pending:
                if job.ran:
                    log.end_flush(job)
        if self.flush_observer is not None:
            for s in seconds:
                self.flush_observer(s)

    async def maybe_flush(self, log: Log) -> None:
        """What the produce path awaits after an append: a flush if the policy says so."""
        if log.flush_due():
            await self.flush_log(log)

    # ===================================================================== checkpoints

    def _snapshot(self, value: Callable[[Log], int | None]
                  ) -> dict[Path, dict[TopicPartition, int]]:
        """Per dir, ``value(log)`` of each log (None: leave the log out). Taken on the event
        loop; the files are then written anywhere."""
        out: dict[Path, dict[TopicPartition, int]] = {d: {} for d in self.log_dirs}
        for tp, log in self.logs.items():
            v = value(log)
            if v is not None:
                out[self._dir_of[tp]][tp] = v
        return out

    @staticmethod
    def _write(name: str, snapshot: dict[Path, dict[TopicPartition, int]]) -> None:
        for d, offsets in snapshot.items():
            write_offsets(d / name, offsets)

    def _checkpoint(self, which: int) -> tuple[str, dict[Path, dict[TopicPartition, int]]]:
        """Checkpoint ``which`` (0-3: recovery points, log start offsets, high watermarks,
        cleaner offsets) as (file name, snapshot per dir); only that one is taken, since each
        has its own interval (a snapshot visits every log on the event loop)."""
        if which == 0:
            return RECOVERY_POINT_CHECKPOINT, self._snapshot(lambda log: log.recovery_point)
        if which == 1:
            return LOG_START_OFFSET_CHECKPOINT, self._snapshot(
                lambda log: log.log_start_offset
                if log.log_start_offset > log.segments[0].base_offset else None)
        if which == 2:
            return REPLICATION_OFFSET_CHECKPOINT, self._snapshot(lambda log: log.high_watermark)
        return CLEANER_OFFSET_CHECKPOINT, {d: self.cleaner.checkpoint_of(d)
                                           for d in self.log_dirs}

    def _checkpoints(self) -> list[tuple[str, dict[Path, dict[TopicPartition, int]]]]:
        return [self._checkpoint(which) for which in range(4)]

    def checkpoint_all(self) -> None:
        """Write every checkpoint file now (blocking)."""
        for name, snapshot in self._checkpoints():
            self._write(name, snapshot)

    # ====================================================================== background

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The background tasks; runs until cancelled, or until ``shutdown``."""
        ended = trio.Event()
        try:
            async with trio.open_nursery() as nursery:
                self._background = (nursery.cancel_scope, ended)
                nursery.start_soon(self._flusher)
                nursery.start_soon(self._every, self.retention_check_interval_ms,
                                   self.retention_pass)
                nursery.start_soon(self._every, 1000, self.remove_deleted_files)
                nursery.start_soon(self._every, self.producer_id_expiration_check_interval_ms,
                                   self.remove_expired_producers)
                for i, interval in enumerate((self.recovery_checkpoint_interval_ms,
                                              self.start_offset_checkpoint_interval_ms,
                                              self.hw_checkpoint_interval_ms,
                                              self.cleaner_backoff_ms)):
                    nursery.start_soon(self._checkpointer, i, interval)
                if self.cleaner_enabled:
                    nursery.start_soon(self._every, self.cleaner_backoff_ms, self.clean_pass)
                task_status.started()
        finally:
            ended.set()

    async def _every(self, interval_ms: int, fn: Callable[[], object]) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            result = fn()
            if hasattr(result, "__await__"):
                await result

    async def _checkpointer(self, which: int, interval_ms: int) -> None:
        while True:
            await trio.sleep(interval_ms / 1000)
            async with self._checkpoint_lock:
                name, snapshot = self._checkpoint(which)
                await trio.to_thread.run_sync(self._write, name, snapshot)

    async def _flusher(self) -> None:
        while True:
            tick = min(1000, self.flush_check_interval_ms,
                       *(log.config.flush_ms for log in self.logs.values()))
            await trio.sleep(max(tick, 10) / 1000)
            # Future logs too (Kafka's flushDirtyLogs walks current ++ future logs): a move's
            # copy is flushed by the policy, and its partition.metadata written, as it goes.
            for log in [*self.logs.values(), *self.future_logs.values()]:
                if log.closed:
                    continue
                if log.flush_due():
                    await self.flush_log(log)
                elif log.roll_flush_due:
                    # Kafka's roll schedules flushUptoOffsetExclusive(newSegment.baseOffset):
                    # the rolled segments, the directory and the epochs. The active
                    # segment's appends since are left to log.flush.interval.* (and the
                    # kernel), as there; fsyncing them too made the roll's writeback larger.
                    await self.flush_log(log, log.active_segment.base_offset)

    async def retention_pass(self) -> int:
        """One retention pass over every log (renames only; files go later)."""
        deleted = 0
        for log in list(self.logs.values()):
            if not log.closed:
                deleted += log.delete_old_segments()
        return deleted

    def remove_expired_producers(self) -> None:
        """Kafka's producer-expiration task: forget producers idle for
        ``producer.id.expiration.ms`` (never one with an open transaction)."""
        now = self.clock()
        for log in list(self.logs.values()):
            if not log.closed:
                log.producer_state.remove_expired_producers(now)

    async def remove_deleted_files(self) -> None:
        """Remove ``.deleted`` segment files and ``-delete`` dirs whose delay has passed."""
        due = []
        for log in list(self.logs.values()):
            due.extend(log.take_due_deletions())
        now = self.clock()
        dirs = [p for when, p in self._deleted_dirs if when <= now]
        self._deleted_dirs = [(w, p) for w, p in self._deleted_dirs if w > now]
        for when, retired in self._retired:
            if when <= now:
                retired.close_unclean()
                dirs.append(retired.dir)
        self._retired = [(w, r) for w, r in self._retired if w > now]
        if due or dirs:
            def remove() -> None:
                for seg in due:
                    seg.delete_files()
                for p in dirs:
                    shutil.rmtree(p, ignore_errors=True)
            await trio.to_thread.run_sync(remove)

    async def clean_pass(self) -> int:
        """One log-cleaner pass: the dirtiest compacted log is compacted in a worker thread,
        then its segments are swapped on the event loop (appends never wait). A partition
        being moved to another dir is not cleaned meanwhile (Kafka's abortAndPauseCleaning:
        the copy would carry the old segments' records anyway)."""
        logs = {tp: log for tp, log in self.logs.items() if tp not in self.future_logs}
        candidate = self.cleaner.pick(logs, self._dir_of)
        if candidate is None:
            return 0
        try:
            plan = await trio.to_thread.run_sync(self.cleaner.compact, candidate)
        except FileNotFoundError:
            if self.logs.get(candidate.tp) is candidate.log:
                raise           # the live log's directory is gone: a failed log dir
            return 0            # deleted or moved while cleaned (its directory renamed away)
        if plan is None or self.logs.get(candidate.tp) is not candidate.log:
            return 0        # nothing to do, or the log was replaced (moved, deleted) meanwhile
        return self.cleaner.swap(plan, self._dir_of.get(candidate.tp, self.log_dirs[0]))

    # ======================================================================== shutdown

    async def shutdown(self) -> None:
        """Stop the background tasks, then flush, close and checkpoint every log and mark
        the dirs cleanly shut down."""
        if self._background is not None:
            # A checkpoint job writing in a worker thread finishes first (to_thread is not
            # abandoned on cancel): it would race the final checkpoints for the same
            # temporary file, and could write an older snapshot over them.
            scope, ended = self._background
            scope.cancel()
            await ended.wait()
        await self.flush_logs(list(self.logs.values()))
        async with self._checkpoint_lock:
            await trio.to_thread.run_sync(self.close)

    def close_unclean(self) -> None:
        """Close every log and release the dirs without flushing, checkpoints or the
        clean-shutdown marker: what a crash leaves behind (a failed load; tests)."""
        for log in [*self.logs.values(), *self.future_logs.values(),
                    *(r for _w, r in self._retired)]:
            log.close_unclean()
        self._unlock_dirs()
        self._closed = True

    def close(self) -> None:
        """Blocking clean shutdown (the ``shutdown`` body; also for use without Trio)."""
        if self._closed:
            return
        if not self.loaded:
            # Never loaded (the dirs were locked by someone else, or loading failed): the
            # dirs are not ours to checkpoint or mark clean.
            self.close_unclean()
            return
        for log in self.logs.values():
            log.flush()
            log.close()
        for log in self.future_logs.values():
            log.close_unclean()     # removed on the next load: moves are not resumed
        self.checkpoint_all()
        for _when, retired in self._retired:
            retired.close_unclean()
            self._deleted_dirs.append((0, retired.dir))
        self._retired = []
        for _when, p in self._deleted_dirs:
            shutil.rmtree(p, ignore_errors=True)
        self._deleted_dirs = []
        for d in self.log_dirs:
            write_clean_shutdown(d)
        self._unlock_dirs()
        self._closed = True
