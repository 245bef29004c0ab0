"""ReplicaAlterLogDirsManager: moves replicas between this broker's log dirs (KIP-113).

Kafka's ReplicaAlterLogDirsManager + ReplicaAlterLogDirsThread + the future-replica half of
Partition, for AlterReplicaLogDirs (34). One Trio task per partition being moved, in the
ReplicaManager's nursery:

1. ``LogManager.create_future_log`` opened an empty *future* log in the destination dir
   (``<topic>-<partition>.<id>-future``) starting at the current log's start offset.
2. The task copies the current log's batches into it, oldest first, while the partition keeps
   serving produce and fetch: each chunk
   (``replica.fetch.max.bytes``, at most ``segment.bytes``, at least one batch)
   is located on the event loop (``Log.read``: file slices), its bytes are read in a worker
   thread, and appended on the event loop with ``Log.append_as_follower`` (compiled framing
   and CRC checks, per batch; no per-record Python). Before each append the copy follows what
   happened to the current log meanwhile: a truncation (a follower's divergence) is repeated
   on the future log, a raised log start offset (retention, DeleteRecords) too; data read
   before a truncation is dropped. ``replica.alter.log.dirs.io.max.bytes.per.second``
   (Kafka's quota; unlimited by default) throttles the copy. The future log is flushed every
   ``_FLUSH_EVERY`` bytes in a worker thread, so its recovery point follows (and by the log
   manager's flusher, as a current log is: the policy, its partition.metadata).
3. Once what is left fits one chunk, the rest is read and appended and the future log swapped
   in, in one synchronous step on the event loop: no append or truncation can come between
   (the "short pause" of appends is that step). ``LogManager.replace_current_with_future``
   renames the dirs (crash-safe, see kafkapy.log.log_manager); the Partition now holds the
   new log; then every checkpoint file of both dirs is written.

A request naming another destination for a partition in flight cancels its move (the future
log is discarded) and starts a new one (``ReplicaManager.alter_replica_log_dirs``); deletion
and StopReplica stop it (the log manager discards the future log, the task sees it gone). The
partition is not compacted while it moves. A move is not resumed after a
restart: the future dir is removed on load (the current log is complete).

Everything here runs on the broker's event loop; the worker thread only reads bytes from the
current log's open segment descriptors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import KafkaError
from kafkapy.log.log import Log
from kafkapy.log.segment import FileSlice

if TYPE_CHECKING:
    from kafkapy.server.replica_manager import ReplicaManager

__all__ = ["IO_MAX_BYTES_PER_SECOND", "ReplicaAlterLogDirsManager", "follow_current"]

log = logging.getLogger(__name__)

# Kafka's dynamic broker quota for the copy (DynamicConfig.Broker); read on every chunk, so
# a dynamic broker config change applies to moves in flight.
IO_MAX_BYTES_PER_SECOND = "replica.alter.log.dirs.io.max.bytes.per.second"
_FLUSH_EVERY = 64 * 1024 * 1024


def _read_slices(slices: Sequence[FileSlice]) -> bytes:
    return b"".join(s.read() for s in slices)


def follow_current(current: Log, future: Log) -> None:
    """Repeat on the future log what the current one did since the last look: a truncation
    (a follower's divergence from its leader, an unclean election), a raised log start offset
    (retention, DeleteRecords); the high watermark follows too. Event loop only."""
    cut = current.truncated_below
    if cut is not None:
        current.truncated_below = None
        if future.log_end_offset > cut:
            future.truncate_to(cut)
    if future.log_end_offset > current.log_end_offset:
        future.truncate_to(current.log_end_offset)
    if current.log_start_offset > future.log_end_offset:
        future.truncate_fully_and_start_at(current.log_start_offset)
    future.update_high_watermark(current.high_watermark)
    if current.log_start_offset > future.log_start_offset:
        future.delete_records(min(current.log_start_offset, future.high_watermark))


@attrs.define(eq=False)
class _Move:
    tp: TopicPartition
    destination: Path
    future: Log
    scope: trio.CancelScope = attrs.Factory(trio.CancelScope)
    done: trio.Event = attrs.Factory(trio.Event)
    copied_bytes: int = 0


class ReplicaAlterLogDirsManager:
    """The replica moves in flight, by partition."""

    def __init__(self, manager: ReplicaManager) -> None:
        self._rm = manager
        self.moves: dict[TopicPartition, _Move] = {}
        self._nursery: trio.Nursery | None = None

    def start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery

    def add(self, tp: TopicPartition, destination: Path, future: Log) -> None:
        """Start copying ``tp``'s current log into ``future`` (just created in
        ``destination``)."""
        if self._nursery is None:
            raise RuntimeError("the ReplicaManager is not running")
        previous = self.moves.pop(tp, None)
        if previous is not None:       # its future log is already discarded (``abort``)
            previous.scope.cancel()
        move = _Move(tp, destination, future)
        self.moves[tp] = move
        self._nursery.start_soon(self._run, move, name=f"alter-log-dirs {tp}")

    def abort(self, tp: TopicPartition) -> None:
        """Stop ``tp``'s move, if any, and discard its future log (synchronous: the copy
        task touches the future log only on the event loop)."""
        move = self.moves.pop(tp, None)
        if move is not None:
            move.scope.cancel()
        self._rm.log_manager.discard_future_log(tp)

    def shutdown(self) -> None:
        for move in list(self.moves.values()):
            move.scope.cancel()
        self.moves.clear()

    # ------------------------------------------------------------------------ the copy

    def _io_limit(self) -> float:
        server = self._rm.server
        if server is None:
            return 0.0
        value = server.config.props.get(IO_MAX_BYTES_PER_SECOND)
        try:
            return float(value) if value is not None else 0.0
        except ValueError:
            return 0.0

    async def _run(self, move: _Move) -> None:
        tp = move.tp
        started = time.monotonic()
        try:
            with move.scope:
                swapped = await self._copy(move)
                if swapped:
                    log.info("%s: moved to %s (%d bytes copied in %.1f s)", tp,
                             move.destination, move.copied_bytes, time.monotonic() - started)
                    # Both dirs' recovery points, log start offsets and high watermarks.
                    await self._rm.log_manager.checkpoint_now()
        except Exception as e:     # a failed move must not stop the broker
            log.warning("%s: the move to %s failed: %s", tp, move.destination, e,
                        exc_info=not isinstance(e, KafkaError))
        finally:
            if self.moves.get(tp) is move:
                del self.moves[tp]
            lm = self._rm.log_manager
            if lm.future_logs.get(tp) is move.future:
                lm.discard_future_log(tp)     # no longer wanted (StopReplica), or failed
            move.done.set()

    def _still_wanted(self, move: _Move) -> tuple[Log, Log] | None:
        lm = self._rm.log_manager
        current = lm.logs.get(move.tp)
        if self.moves.get(move.tp) is not move or lm.future_logs.get(move.tp) is not \
                move.future or current is None or move.tp not in self._rm.partitions:
            return None
        return current, move.future

    async def _copy(self, move: _Move) -> bool:
        """Copy until swapped in (True) or no longer wanted (False)."""
        lm = self._rm.log_manager
        # An append may not exceed segment.bytes: the chunk never does.
        chunk = max(1, min(self._rm.replica_config("replica_fetch_max_bytes", 1048576),
                           move.future.config.segment_bytes))
        unflushed = 0
        window_start, window_bytes = time.monotonic(), 0
        while True:
            logs = self._still_wanted(move)
            if logs is None:
                return False
            current, future = logs
            follow_current(current, future)
            fetch = current.read(future.log_end_offset, chunk)
            if fetch.size < chunk:
                # The tail, then the swap, without yielding: appends wait for this step.
                if fetch.size:
                    move.copied_bytes += future.append_as_follower(fetch.read()).valid_bytes
                if future.log_end_offset == current.log_end_offset:
                    self._swap(move, current, future)
                    return True
                await trio.sleep(0)
                continue
            data = await trio.to_thread.run_sync(_read_slices, fetch.slices,
                                                 abandon_on_cancel=True)
            logs = self._still_wanted(move)
            if logs is None:
                return False
            current, future = logs
            if current.truncated_below is not None or \
                    current.log_start_offset > future.log_end_offset:
                continue        # what was read may be gone: follow the current log first
            appended = future.append_as_follower(data).valid_bytes
            move.copied_bytes += appended
            unflushed += appended
            if unflushed >= _FLUSH_EVERY:
                unflushed = 0
                await lm.flush_log(future)
            limit = self._io_limit()
            if limit > 0:
                window_bytes += len(data)
                ahead = window_bytes / limit - (time.monotonic() - window_start)
                if ahead > 0:
                    await trio.sleep(ahead)
                if time.monotonic() - window_start > 10:
                    window_start, window_bytes = time.monotonic(), 0
            else:
                await trio.sleep(0)

    def _swap(self, move: _Move, current: Log, future: Log) -> None:
        """Kafka's Partition.maybeReplaceCurrentWithFutureReplica (synchronous)."""
        new = self._rm.log_manager.replace_current_with_future(move.tp)
        assert new is future
        partition = self._rm.partitions[move.tp]
        partition.log = new
        del self.moves[move.tp]
