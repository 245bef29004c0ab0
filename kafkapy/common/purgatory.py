"""DelayedOperation and DelayedOperationPurgatory: requests that wait for a condition or a timeout.

Kafka's ``DelayedOperation`` and ``DelayedOperationPurgatory`` (server-common, below both
ReplicaManager and the coordinators) on one Trio event loop. A request that cannot be answered
yet (a produce with acks=all, a fetch below fetch.min.bytes, a JoinGroup waiting for the group
to form) becomes a ``DelayedOperation`` parked in a purgatory under one or more *watch keys*
(typically TopicPartitions). Whatever may satisfy it later calls ``check_and_complete(key)``;
whatever is still parked at its deadline expires.

Theory of operation: who calls what, from which task.

- A handler task builds the operation, calls ``try_complete_else_watch(op, keys)`` and then
  ``await op.wait()``. When that returns (at once if the operation completed on the spot),
  ``on_complete`` has run and built the response; the handler sends it.
- A task that changes what operations wait for (the produce path after an append, a partition
  whose high watermark moved, the group coordinator) calls ``check_and_complete(key)``.
  ``try_complete`` of every operation watched under the key runs in that caller's task, and so
  does ``on_complete`` of the ones that complete.
- The *expiration reaper* is the single task running ``run()`` (KafkaServer starts it in its
  nursery). Every armed operation is one entry of the *timer queue* of its delay (``delay_ms``):
  operations armed with the same delay expire in arming order, because
  ``trio.current_time()`` never goes back, so each queue is already in deadline order and a
  purgatory has a handful of them (a produce timeout, the fetch max waits in use). The reaper
  sleeps until the earliest deadline at the queues' heads (``trio.current_time()``, so
  ``trio.testing.MockClock`` drives it), or until an earlier deadline arrives (a wakeup Event),
  and expires what is due in deadline order (ties in arming order): ``on_expiration``, then
  ``on_complete``. It also purges completed operations from the watcher lists. One task serves
  every operation: tens of thousands of parked fetches cost a queue entry each, not a task
  each.
- ``shutdown()`` (KafkaServer, while stopping) completes every pending operation with
  ``force_complete``, so no waiter is left hanging, and makes ``run`` return.

No locks. Kafka locks each operation and the watcher lists because request-handler threads, the
reaper thread and replica fetchers race on them. Here everything runs on the broker's one event
loop, and every method of this module except ``run`` and ``DelayedOperation.wait`` is
synchronous: a call runs to its end without another task getting in between. Kafka's races
(completed between the check and the watch; completed by a check and by the timer at the same
instant) reduce to "who comes first", settled by the ``is_completed`` flag. Nothing here may be
called from a worker thread (use ``trio.from_thread.run_sync``). The callbacks (``try_complete``,
``on_expiration``, ``on_complete``) are synchronous as well; they must be quick and never block:
build the response and leave the sending to the waiting handler. A *done callback*
(``add_done_callback``) is how an answer waits without a task: it runs right after the
operation has finished, in the completing task, and hands the answer to its connection
(``KafkaRequestHandlerPool``): a parked fetch or produce is answered without a task spawned
for it, and without a pass through the scheduler between completion and answer.

Invariants:

- An operation completes once: the first of ``force_complete`` (directly or from
  ``try_complete``), its expiry, or ``shutdown`` claims it, and ``on_complete`` then runs exactly
  once. On expiry ``on_expiration`` runs first, then ``on_complete`` (Kafka runs them the other
  way round; here the operation knows it timed out before it builds its response).
- An operation is watched under all its keys or under none. ``check_and_complete`` unwatches,
  from every key, the operations it completes and the completed ones it comes across. Operations
  completed elsewhere (expired, forced by their owner, completed by the second try of
  ``try_complete_else_watch``) stay in the watcher lists, as in Kafka, until the reaper purges
  them once more than ``purge_interval_requests`` have piled up. Deferring the removal means a
  callback never changes a watcher list under an iteration. Kafka estimates the garbage and then
  sweeps every list; here it is known exactly, so a purge costs the garbage's keys only.
- A completed operation leaves its timer queue at once (an ``OrderedDict``: O(1) removal, as
  in Kafka's timing wheel): nothing stale piles up behind a long wait for the reaper to pop in
  one burst. (With a heap and lazy cancellation, a replication leader at 2,000 msg/s popped
  ~900 completed fetches every 500 ms: 3-5 ms in which it answered nothing.)
- ``delayed`` counts armed operations not yet completed (Kafka's NumDelayedOperations);
  ``watched`` counts (key, operation) entries in the watcher lists, garbage included (Kafka's
  PurgatorySize).

Errors: a callback that raises breaks neither the purgatory call that ran it, nor the reaper, nor
anyone else's operation. The exception is logged, the operation counts as completed, and
``wait()`` re-raises it in the operation's own handler task. (If ``try_complete`` raises,
``on_complete`` is skipped.)
"""

from __future__ import annotations

import abc
import itertools
import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

import attrs
import trio

__all__ = ["DelayedOperation", "DelayedOperationPurgatory"]

logger = logging.getLogger(__name__)

# Timer entries carry a process-wide sequence number: their key in the timer queue, and the
# order of equal deadlines across queues (arming order).
_timer_seqs = itertools.count()
_NOT_ARMED = -1

# The reaper expires at most this many operations before letting other tasks run.
_EXPIRE_BATCH = 1024


@attrs.define(eq=False)
class DelayedOperation(abc.ABC):
    """An operation that completes when ``try_complete`` says it can, or after ``delay_ms``.

    Subclasses implement ``try_complete`` and ``on_complete`` and may override
    ``on_expiration``. Subclasses that are attrs classes should keep ``eq=False``: an operation
    is an identity, not a value.

    Attributes:
        delay_ms: the longest the operation waits once armed, in milliseconds (the request's
            timeout or max wait).
    """

    delay_ms: float
    _completed: bool = attrs.field(default=False, init=False, repr=False)
    _finished: bool = attrs.field(default=False, init=False, repr=False)
    _done: trio.Event | None = attrs.field(default=None, init=False, repr=False)
    _error: Exception | None = attrs.field(default=None, init=False, repr=False)
    _callbacks: list[Callable[[], None]] | None = attrs.field(default=None, init=False,
                                                              repr=False)
    # The purgatory to tell when the operation completes: set while it is watched or armed and
    # not yet completed.
    _purgatory: DelayedOperationPurgatory[Any] | None = attrs.field(
        default=None, init=False, repr=False)
    _keys: tuple[Hashable, ...] = attrs.field(default=(), init=False, repr=False)
    _timer_seq: int = attrs.field(default=_NOT_ARMED, init=False, repr=False)
    # the delay_ms it was armed with: the key of its timer queue
    _timer_delay: float = attrs.field(default=0.0, init=False, repr=False)
    _deadline: float | None = attrs.field(default=None, init=False, repr=False)

    @property
    def is_completed(self) -> bool:
        """True once the operation has been claimed by completion or expiry."""
        return self._completed

    @property
    def deadline(self) -> float | None:
        """When the operation expires, on the ``trio.current_time()`` clock; None until armed."""
        return self._deadline

    @abc.abstractmethod
    def try_complete(self) -> bool:
        """Complete the operation if it can complete now.

        Checks the condition the operation waits for and, if it holds, returns
        ``self.force_complete()``; otherwise returns False. Called by the purgatory, from the
        task of whoever calls ``try_complete_else_watch`` or ``check_and_complete``.
        """

    @abc.abstractmethod
    def on_complete(self) -> None:
        """The completion logic (typically: build the response). Runs exactly once."""

    def on_expiration(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Runs in the reaper task when the operation expires, just before ``on_complete``."""

    def force_complete(self) -> bool:
        """Complete the operation now unless it is already completed.

        Cancels its timer and runs ``on_complete``. Returns True if this call completed it,
        False if something completed it before (the first caller wins). Never raises because
        of ``on_complete``: its exception is logged and re-raised by ``wait()``.
        """
        if self._completed:
            return False
        self._claim()
        self._finish(expired=False)
        return True

    async def wait(self) -> None:
        """Wait until the operation has completed and ``on_complete`` has run.

        Returns after a checkpoint if it already has. Cancelling the waiting task neither
        completes nor cancels the operation; it still completes or expires in the purgatory.

        Raises:
            Exception: the one a callback of this operation raised, if one did.
        """
        if self._finished:
            await trio.lowlevel.checkpoint()
        else:
            if self._done is None:
                self._done = trio.Event()
            await self._done.wait()
        self.check()

    def check(self) -> None:
        """Raise the exception a callback of this (finished) operation raised, if one did:
        what ``wait()`` raises, for a done callback."""
        if self._error is not None:
            raise self._error

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the operation has finished (``on_complete`` has run, or
        ``try_complete`` raised), in the task that finished it; at once if it already has.
        A callback that raises is logged and breaks nothing else."""
        if self._finished:
            self._call(callback)
        elif self._callbacks is None:
            self._callbacks = [callback]
        else:
            self._callbacks.append(callback)

    def _call(self, callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception as exc:
            logger.error("%r: done callback %r raised", self, callback, exc_info=exc)

    # -- completion machinery, shared with the purgatory --------------------------------------

    def _claim(self) -> None:
        self._completed = True
        if self._purgatory is not None:
            self._purgatory._on_completed(self)

    def _finish(self, *, expired: bool) -> None:
        try:
            if expired:
                self._run_callback(self.on_expiration)
            self._run_callback(self.on_complete)
        finally:
            self._settle()

    def _run_callback(self, callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception as exc:
            logger.error("%r: %s raised", self, callback.__name__, exc_info=exc)
            if self._error is None:
                self._error = exc

    def _fail(self, exc: Exception) -> None:
        """try_complete raised: complete the operation with the error, skipping on_complete."""
        logger.error("%r: try_complete raised", self, exc_info=exc)
        if self._completed:
            return  # it completed itself before raising; that outcome stands
        self._error = exc
        self._claim()
        self._settle()

    def _settle(self) -> None:
        self._finished = True
        if self._done is not None:
            self._done.set()
        callbacks, self._callbacks = self._callbacks, None
        if callbacks is not None:
            for callback in callbacks:
                self._call(callback)


T = TypeVar("T", bound=DelayedOperation)


class DelayedOperationPurgatory(Generic[T]):
    """Delayed operations watched by key, and their expiry (see the module docstring).

    Args:
        name: for logs and diagnostics ("Produce", "Fetch", "Rebalance", ...).
        purge_interval_requests: the reaper purges completed operations from the watcher lists
            once more than this many have piled up (Kafka's
            ``*.purgatory.purge.interval.requests``).
    """

    def __init__(self, name: str, *, purge_interval_requests: int = 1000) -> None:
        self.name = name
        self.purge_interval_requests = purge_interval_requests
        # key -> the operations watched under it, by id(), in watching order
        self._watchers: dict[Hashable, dict[int, T]] = {}
        # completed operations still in the watcher lists, by id()
        self._garbage: dict[int, T] = {}
        # delay_ms -> the operations armed with that delay, seq -> op, in arming (= deadline)
        # order; an empty queue is removed
        self._timers: dict[float, OrderedDict[int, T]] = {}
        self._delayed = 0
        self._watched = 0
        self._running = False
        self._closed = False
        # Set while the reaper sleeps: the Event wakes it, the deadline is when it wakes anyway.
        self._wakeup: trio.Event | None = None
        self._reaper_deadline = math.inf

    def __repr__(self) -> str:
        return (f"<DelayedOperationPurgatory {self.name!r} delayed={self._delayed} "
                f"watched={self._watched}>")

    @property
    def delayed(self) -> int:
        """Operations waiting for completion or expiry."""
        return self._delayed

    @property
    def watched(self) -> int:
        """(key, operation) entries in the watcher lists, completed ones not yet purged included."""
        return self._watched

    def try_complete_else_watch(self, op: T, keys: Iterable[Hashable]) -> bool:
        """Complete ``op`` now if it can; otherwise watch it under every key and arm its timer.

        Tries once; if that fails, watches under every key and tries again, so an event that
        happened between the first try and the watch is not missed; if that fails too, arms
        the expiry timer, ``op.delay_ms`` from now. Returns True if ``op`` is completed when the
        call returns. Either way, the handler then awaits ``op.wait()``.

        Raises:
            ValueError: ``keys`` is empty, or ``op`` is already in a purgatory.
            trio.ClosedResourceError: the purgatory is shut down.
        """
        watch_keys = self._check_new(op, keys)
        if op._completed or self._try(op):
            return True
        op._purgatory = self
        self._watch(op, watch_keys)
        if self._try(op):
            return True
        self._arm(op)
        return False

    def watch(self, op: T, keys: Iterable[Hashable]) -> None:
        """Watch ``op`` under every key and arm its timer, without trying it: for a caller
        that has just found it not completable, in the same event-loop turn (nothing awaited
        in between, so nothing can have happened that would complete it). A follower's fetch
        parks this way on every round, over every partition of its session.

        Raises as ``try_complete_else_watch``, and ValueError if ``op`` is completed."""
        watch_keys = self._check_new(op, keys)
        if op._completed:
            raise ValueError(f"{op!r} is already completed")
        op._purgatory = self
        self._watch(op, watch_keys)
        self._arm(op)

    def _check_new(self, op: T, keys: Iterable[Hashable]) -> tuple[Hashable, ...]:
        if self._closed:
            raise trio.ClosedResourceError(f"purgatory {self.name!r} is shut down")
        watch_keys = tuple(dict.fromkeys(keys))
        if not watch_keys:
            raise ValueError("a delayed operation needs at least one watch key")
        if op._purgatory is not None or op._keys:
            raise ValueError(f"{op!r} is already in a purgatory")
        return watch_keys

    def check_and_complete(self, key: Hashable) -> int:
        """Try to complete every operation watched under ``key``; return how many completed.

        Those that complete, and completed ones found on the way, are unwatched from all their
        keys. Runs the operations' ``try_complete`` (and ``on_complete``) in the caller's task.
        """
        watchers = self._watchers.get(key)
        if watchers is None:
            return 0
        completed = 0
        for oid, op in list(watchers.items()):
            if watchers.get(oid) is not op:
                continue  # unwatched meanwhile by a callback of an earlier operation
            if not op._completed:
                if not self._try(op):
                    continue
                completed += 1
            if watchers.get(oid) is op:
                self._unwatch(op)
        return completed

    def cancel_for_key(self, key: Hashable) -> list[T]:
        """Stop tracking the operations watched under ``key``; return the pending ones.

        Each is unwatched from all its keys and its timer is cancelled, but it is *not*
        completed (as in Kafka): the caller now owns it and should complete it, or its waiter
        waits for ever. Completed operations found under ``key`` are just purged.
        """
        watchers = self._watchers.get(key)
        if watchers is None:
            return []
        cancelled: list[T] = []
        for op in list(watchers.values()):
            self._unwatch(op)
            if not op._completed:
                self._disarm(op)
                op._purgatory = None
                cancelled.append(op)
        return cancelled

    def purge(self) -> int:
        """Remove completed operations from the watcher lists; return how many operations.

        The reaper calls this when more than ``purge_interval_requests`` have piled up.
        """
        garbage = list(self._garbage.values())
        for op in garbage:
            self._unwatch(op)
        return len(garbage)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """The expiration reaper: expire operations at their deadlines and purge garbage.

        Runs until ``shutdown()`` (then returns) or until cancelled. Start it with
        ``nursery.start``.

        Raises:
            RuntimeError: the reaper is already running.
        """
        if self._running:
            raise RuntimeError(f"the reaper of purgatory {self.name!r} is already running")
        self._running = True
        task_status.started()
        try:
            while not self._closed:
                expired = self._expire_due(trio.current_time())
                if len(self._garbage) > self.purge_interval_requests:
                    self.purge()
                if expired == _EXPIRE_BATCH:
                    # more may be due: let other tasks in before the next batch
                    await trio.lowlevel.checkpoint()
                    continue
                head = self._head()
                self._reaper_deadline = math.inf if head is None else head[0]
                self._wakeup = trio.Event()
                try:
                    with trio.move_on_at(self._reaper_deadline):
                        await self._wakeup.wait()
                finally:
                    self._wakeup = None
                    self._reaper_deadline = math.inf
        finally:
            self._running = False

    def shutdown(self) -> None:
        """Complete every pending operation (``force_complete``, deadline order) and stop.

        The reaper's ``run`` returns; ``try_complete_else_watch`` raises from now on, and
        ``check_and_complete`` finds nothing. Calling it again does nothing.
        """
        if self._closed:
            return
        self._closed = True
        pending: dict[int, T] = {id(op): op for op in sorted(
            (op for queue in self._timers.values() for op in queue.values()),
            key=lambda op: (op._deadline, op._timer_seq))}
        for watchers in self._watchers.values():
            for oid, op in watchers.items():
                if not op._completed:
                    pending.setdefault(oid, op)
        for op in pending.values():
            op.force_complete()
        for watchers in list(self._watchers.values()):
            for op in list(watchers.values()):
                self._unwatch(op)
        self._timers.clear()
        self._wake()

    # -- internals ------------------------------------------------------------------------------

    def _try(self, op: T) -> bool:
        """``op.try_complete()``, contained; True if ``op`` is completed afterwards."""
        try:
            op.try_complete()
        except Exception as exc:
            op._fail(exc)
        return op._completed

    def _watch(self, op: T, keys: tuple[Hashable, ...]) -> None:
        oid = id(op)
        for key in keys:
            watchers = self._watchers.get(key)
            if watchers is None:
                watchers = self._watchers[key] = {}
            watchers[oid] = op
        op._keys = keys
        self._watched += len(keys)

    def _unwatch(self, op: T) -> None:
        oid = id(op)
        for key in op._keys:
            watchers = self._watchers.get(key)
            if watchers is not None and watchers.pop(oid, None) is not None and not watchers:
                del self._watchers[key]
        self._watched -= len(op._keys)
        op._keys = ()
        self._garbage.pop(oid, None)

    def _arm(self, op: T) -> None:
        deadline = trio.current_time() + op.delay_ms / 1000
        seq = next(_timer_seqs)
        op._timer_seq = seq
        op._timer_delay = op.delay_ms
        op._deadline = deadline
        self._delayed += 1
        queue = self._timers.get(op.delay_ms)
        if queue is None:
            queue = self._timers[op.delay_ms] = OrderedDict()
        queue[seq] = op
        if deadline < self._reaper_deadline:
            self._wake()

    def _disarm(self, op: DelayedOperation) -> None:
        if op._timer_seq != _NOT_ARMED:
            queue = self._timers[op._timer_delay]
            del queue[op._timer_seq]
            if not queue:
                del self._timers[op._timer_delay]
            op._timer_seq = _NOT_ARMED
            self._delayed -= 1

    def _on_completed(self, op: T) -> None:
        """``op`` was just claimed by completion or expiry (called by the operation)."""
        op._purgatory = None
        self._disarm(op)
        if op._keys:
            self._garbage[id(op)] = op
            if len(self._garbage) > self.purge_interval_requests:
                self._wake()

    def _head(self) -> tuple[float, int, OrderedDict[int, T]] | None:
        """The earliest timer: (deadline, seq, its queue), or None without any."""
        head = None
        for queue in self._timers.values():
            op = queue[next(iter(queue))]
            entry = (op._deadline or 0.0, op._timer_seq, queue)
            if head is None or entry[:2] < head[:2]:
                head = entry
        return head

    def _expire_due(self, now: float) -> int:
        """Expire up to _EXPIRE_BATCH operations due at ``now``; return how many expired."""
        expired = 0
        # The head is found afresh each round: a callback may arm or complete meanwhile.
        while expired < _EXPIRE_BATCH:
            head = self._head()
            if head is None or head[0] > now:
                break
            op = head[2][head[1]]
            self._disarm(op)
            op._claim()
            op._finish(expired=True)
            expired += 1
        return expired

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
