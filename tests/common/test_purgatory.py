"""DelayedOperationPurgatory: completion, watching, expiry, purge, waiters and shutdown.

Every test runs in ``trio.run`` under ``MockClock(autojump_threshold=0)``: when every task is
blocked the clock jumps to the next deadline, so timeouts of seconds take no real time.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from kafkapy.common.purgatory import DelayedOperation, DelayedOperationPurgatory


@attrs.define(eq=False)
class DelayedFunction(DelayedOperation):
    """Test double: completes when ``condition()`` (or else ``ready``) holds; logs callbacks.

    ``log`` holds (event, trio time) pairs; ``fail_in`` names a callback that raises.
    """

    ready: bool = False
    condition: Callable[[], bool] | None = None
    fail_in: str | None = None
    log: list[tuple[str, float]] = attrs.Factory(list)
    then: Callable[[], object] | None = None   # run at the end of on_expiration

    @property
    def events(self) -> list[str]:
        return [event for event, _ in self.log]

    def try_complete(self) -> bool:
        if self.fail_in == "try_complete":
            raise ValueError("try_complete failed")
        ok = self.condition() if self.condition is not None else self.ready
        return ok and self.force_complete()

    def on_expiration(self) -> None:
        self.log.append(("expired", trio.current_time()))
        if self.fail_in == "on_expiration":
            raise ValueError("on_expiration failed")
        if self.then is not None:
            self.then()

    def on_complete(self) -> None:
        self.log.append(("completed", trio.current_time()))
        if self.fail_in == "on_complete":
            raise ValueError("on_complete failed")


Purgatory = DelayedOperationPurgatory[DelayedFunction]


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        # Virtual time: a test that would hang fails as soon as every task is blocked.
        with trio.fail_after(24 * 3600):
            await test()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


@asynccontextmanager
async def reaping(purgatory: Purgatory) -> AsyncIterator[trio.Nursery]:
    """The purgatory with its reaper running; shut down on the way out."""
    async with trio.open_nursery() as nursery:
        await nursery.start(purgatory.run)
        try:
            yield nursery
        finally:
            purgatory.shutdown()


def count_tasks() -> int:
    def walk(task: trio.lowlevel.Task) -> int:
        return 1 + sum(walk(child) for nursery in task.child_nurseries
                       for child in nursery.child_tasks)
    root = trio.lowlevel.current_root_task()
    assert root is not None
    return walk(root)


def test_completes_before_watch() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        op = DelayedFunction(1000, ready=True)
        assert purgatory.try_complete_else_watch(op, ["a", "b"])
        assert op.is_completed and op.events == ["completed"]
        assert (purgatory.watched, purgatory.delayed) == (0, 0)
        assert op.deadline is None
        start = trio.current_time()
        await op.wait()
        assert trio.current_time() == start
        assert not op.force_complete()
        assert op.events == ["completed"]

    run(main)


def test_second_try_runs_after_the_watch() -> None:
    # Kafka's race: what the first try misses must be seen once the op is watched.
    async def main() -> None:
        purgatory = Purgatory("test")
        seen_watched: list[int] = []

        def condition() -> bool:
            seen_watched.append(purgatory.watched)
            return len(seen_watched) == 2

        op = DelayedFunction(1000, condition=condition)
        assert purgatory.try_complete_else_watch(op, ["a", "b", "a"])   # duplicates count once
        assert seen_watched == [0, 2]
        assert op.events == ["completed"]
        # Completed while watched: never armed, left in the watcher lists until a purge.
        assert (purgatory.delayed, purgatory.watched) == (0, 2)
        assert purgatory.purge() == 1
        assert purgatory.watched == 0

    run(main)


def test_watch_parks_without_trying_and_completes_on_a_key_or_expires() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        tries: list[int] = []

        def condition() -> bool:
            tries.append(1)
            return len(tries) >= 2

        op = DelayedFunction(1000, condition=condition)
        purgatory.watch(op, ["a", "b", "a"])
        assert tries == [] and not op.is_completed
        assert (purgatory.watched, purgatory.delayed) == (2, 1)
        assert purgatory.check_and_complete("b") == 0 and tries == [1]
        assert purgatory.check_and_complete("a") == 1 and op.events == ["completed"]
        assert (purgatory.watched, purgatory.delayed) == (0, 0)

        late = DelayedFunction(500)
        async with reaping(purgatory):
            start = trio.current_time()
            purgatory.watch(late, ["c"])
            await late.wait()
            assert late.events == ["expired", "completed"]
            assert trio.current_time() - start == pytest.approx(0.5)

    run(main)


def test_watch_refuses_what_try_complete_else_watch_refuses_and_a_completed_op() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        with pytest.raises(ValueError, match="at least one watch key"):
            purgatory.watch(DelayedFunction(1000), [])
        op = DelayedFunction(1000)
        purgatory.watch(op, ["a"])
        with pytest.raises(ValueError, match="already in a purgatory"):
            Purgatory("other").watch(op, ["a"])
        done = DelayedFunction(1000)
        done.force_complete()
        with pytest.raises(ValueError, match="already completed"):
            purgatory.watch(done, ["a"])
        purgatory.shutdown()
        with pytest.raises(trio.ClosedResourceError):
            purgatory.watch(DelayedFunction(1000), ["a"])

    run(main)


def test_check_and_complete_on_one_key_removes_it_from_every_key() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        op = DelayedFunction(1000)
        other = DelayedFunction(1000)
        assert not purgatory.try_complete_else_watch(op, ["a", "b", "c"])
        assert not purgatory.try_complete_else_watch(other, ["b"])
        assert (purgatory.watched, purgatory.delayed) == (4, 2)
        assert op.deadline == trio.current_time() + 1.0

        assert purgatory.check_and_complete("a") == 0      # not ready: stays
        assert purgatory.check_and_complete("missing") == 0
        op.ready = True
        assert purgatory.check_and_complete("c") == 1
        assert op.events == ["completed"]
        assert (purgatory.watched, purgatory.delayed) == (1, 1)
        assert purgatory.check_and_complete("a") == 0
        assert purgatory.check_and_complete("b") == 0      # only `other`, still not ready
        await op.wait()
        assert op.events == ["completed"]

    run(main)


def test_expiry_calls_on_expiration_then_on_complete_once() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            start = trio.current_time()
            op = DelayedFunction(500)
            assert not purgatory.try_complete_else_watch(op, ["a"])
            await op.wait()
            assert op.log == [("expired", start + 0.5), ("completed", start + 0.5)]
            assert not op.force_complete()
            op.ready = True
            assert not op.try_complete()
            assert op.events == ["expired", "completed"]
            # Expired but still watched until swept: by a check on its key, here.
            assert (purgatory.delayed, purgatory.watched) == (0, 1)
            assert purgatory.check_and_complete("a") == 0
            assert purgatory.watched == 0

    run(main)


def test_completion_at_the_instant_of_expiry_completes_once() -> None:
    # Deterministic: two ops due at the same instant; expiring the first completes the second,
    # whose timer entry is already due in the heap. The reaper must then skip it.
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            second = DelayedFunction(1000)
            results: list[bool] = []
            first = DelayedFunction(1000, then=lambda: results.append(second.force_complete()))
            assert not purgatory.try_complete_else_watch(first, ["a"])
            assert not purgatory.try_complete_else_watch(second, ["a"])
            await second.wait()
            await first.wait()
            assert results == [True]
            assert first.events == ["expired", "completed"]
            assert second.events == ["completed"]
            assert first.log[0][1] == second.log[0][1]
            assert purgatory.delayed == 0

    run(main)


def test_check_racing_the_reaper_at_the_same_instant_completes_once() -> None:
    # Trio runs tasks woken at the same instant in random order: whoever runs first wins and
    # the other must see a completed operation. Repeat to meet both orders.
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            for _ in range(50):
                op = DelayedFunction(100)
                assert not purgatory.try_complete_else_watch(op, ["a"])
                deadline = op.deadline
                assert deadline is not None
                completed_by_check: list[int] = []

                async def check(op: DelayedFunction = op, deadline: float = deadline,
                                out: list[int] = completed_by_check) -> None:
                    await trio.sleep_until(deadline)
                    op.ready = True
                    out.append(purgatory.check_and_complete("a"))

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(check)
                    await op.wait()
                assert op.events.count("completed") == 1
                if completed_by_check == [1]:
                    assert op.events == ["completed"]
                else:
                    assert completed_by_check == [0]
                    assert op.events == ["expired", "completed"]
                assert purgatory.delayed == 0

    run(main)


def test_many_operations_expire_in_deadline_order_with_one_reaper() -> None:
    async def main() -> None:
        rng = random.Random(20240901)
        purgatory = Purgatory("fetch")
        expired: list[DelayedFunction] = []
        task_counts: list[int] = []

        def record(op: DelayedFunction) -> Callable[[], None]:
            def then() -> None:
                expired.append(op)
                if len(expired) % 1000 == 0:
                    task_counts.append(count_tasks())
            return then

        async with reaping(purgatory):
            baseline = count_tasks()
            ops = []
            for i in range(10_000):
                # Whole milliseconds up to 5 s: plenty of equal deadlines, which go in arming
                # order.
                op = DelayedFunction(rng.randrange(5000))
                op.then = record(op)
                assert not purgatory.try_complete_else_watch(op, [f"topic-{i % 100}"])
                ops.append(op)
            assert count_tasks() == baseline
            assert purgatory.delayed == 10_000

            # Half complete early: their timers become stale heap entries that must not fire.
            for op in ops[::2]:
                op.ready = True
            assert sum(purgatory.check_and_complete(f"topic-{i}") for i in range(100)) == 5000
            assert purgatory.delayed == 5000

            last = max(ops, key=lambda op: op.delay_ms)
            await last.wait()
            assert purgatory.delayed == 0
            assert count_tasks() == baseline
            assert task_counts == [baseline] * 5

        waited = ops[1::2]
        assert expired == sorted(waited, key=lambda op: op.deadline or 0.0)  # stable: ties keep
        for op in waited:                                                   # arming order
            assert op.events == ["expired", "completed"]
            assert op.deadline is not None
            assert op.log[0][1] == pytest.approx(op.deadline, abs=1e-9)
        for op in ops[::2]:
            assert op.events == ["completed"]

    run(main)


def test_a_completed_operation_leaves_its_timer_queue_at_once() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        waiting = DelayedFunction(500)          # a long wait at the head of its queue
        purgatory.try_complete_else_watch(waiting, ["b"])
        for _ in range(5):
            ops = [DelayedFunction(500) for _ in range(2000)] + [DelayedFunction(30_000)]
            for op in ops:
                purgatory.try_complete_else_watch(op, ["a"])
                op.ready = True
            assert purgatory.check_and_complete("a") == 2001
        # 10,001 timers cancelled behind a live one, with no reaper running: none is kept (a
        # reaper would otherwise pop them all at once when the live one expires). White box.
        assert {delay: list(queue.values()) for delay, queue in purgatory._timers.items()} == \
            {500: [waiting]}
        assert (purgatory.delayed, purgatory.watched) == (1, 1)
        waiting.ready = True
        assert purgatory.check_and_complete("b") == 1
        assert purgatory._timers == {}

    run(main)


def test_purge_after_the_threshold_of_expired_operations() -> None:
    async def main() -> None:
        purgatory = Purgatory("test", purge_interval_requests=3)
        async with reaping(purgatory):
            start = trio.current_time()
            ops = [DelayedFunction(100 * (i + 1)) for i in range(5)]
            for i, op in enumerate(ops):
                assert not purgatory.try_complete_else_watch(op, ["all", i])
            assert purgatory.watched == 10
            await trio.sleep_until(start + 0.35)
            # 3 expired: not more than the threshold, so still watched
            assert (purgatory.delayed, purgatory.watched) == (2, 10)
            await trio.sleep_until(start + 0.45)
            # 4 > 3: the reaper purged them
            assert (purgatory.delayed, purgatory.watched) == (1, 2)
            await ops[4].wait()
            assert purgatory.watched == 2
            assert purgatory.purge() == 1
            assert purgatory.watched == 0

    run(main)


def test_purge_after_completions_outside_the_reaper_wakes_it() -> None:
    async def main() -> None:
        purgatory = Purgatory("test", purge_interval_requests=3)
        async with reaping(purgatory):
            start = trio.current_time()
            ops = [DelayedFunction(60_000) for _ in range(5)]
            for i, op in enumerate(ops):
                assert not purgatory.try_complete_else_watch(op, ["all", i])
            for op in ops[:3]:
                assert op.force_complete()
            await trio.testing.wait_all_tasks_blocked()
            assert (purgatory.delayed, purgatory.watched) == (2, 10)
            assert ops[3].force_complete()
            await trio.testing.wait_all_tasks_blocked()
            assert (purgatory.delayed, purgatory.watched) == (1, 2)
            assert trio.current_time() == start

    run(main)


def test_waiters_wake_on_completion_and_on_expiry() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        woke: dict[str, tuple[float, list[str]]] = {}

        async def handler(name: str, op: DelayedFunction) -> None:
            purgatory.try_complete_else_watch(op, [name])
            await op.wait()
            woke[name] = (trio.current_time(), list(op.events))

        async with reaping(purgatory) as nursery:
            start = trio.current_time()
            completed, expires = DelayedFunction(5000), DelayedFunction(2000)
            nursery.start_soon(handler, "completed", completed)
            nursery.start_soon(handler, "expires", expires)
            await trio.sleep(1)
            completed.ready = True
            assert purgatory.check_and_complete("completed") == 1
            await trio.sleep(5)

        assert woke == {"completed": (start + 1, ["completed"]),
                        "expires": (start + 2, ["expired", "completed"])}

    run(main)


def test_done_callbacks_run_in_the_completing_task_after_on_complete() -> None:
    """A done callback runs right after on_complete, in whichever task completed the
    operation (a check, the reaper on expiry, try_complete raising), or at once when added
    to a finished operation; one that raises is logged and the others still run."""
    async def main() -> None:
        purgatory = Purgatory("test")
        calls: list[tuple[str, list[str], str | None, bool]] = []

        def record(name: str, op: DelayedFunction) -> Callable[[], None]:
            def callback() -> None:
                try:
                    op.check()
                    error = None
                except ValueError as exc:
                    error = str(exc)
                calls.append((name, list(op.events), error,
                              trio.lowlevel.current_task() is me))
            return callback

        def broken() -> None:
            raise RuntimeError("a broken callback")

        me = trio.lowlevel.current_task()
        async with reaping(purgatory):
            checked = DelayedFunction(5000)
            purgatory.try_complete_else_watch(checked, ["a"])
            checked.add_done_callback(broken)
            checked.add_done_callback(record("checked", checked))
            assert calls == []
            checked.ready = True
            assert purgatory.check_and_complete("a") == 1
            # before check_and_complete returned, in this task
            assert calls == [("checked", ["completed"], None, True)]

            calls.clear()
            checked.add_done_callback(record("late", checked))     # already finished
            assert calls == [("late", ["completed"], None, True)]

            raising = DelayedFunction(1000, fail_in="try_complete")
            purgatory.watch(raising, ["b"])
            raising.add_done_callback(record("raising", raising))
            purgatory.check_and_complete("b")
            assert calls[-1] == ("raising", [], "try_complete failed", True)

            expiring = DelayedFunction(1000)
            purgatory.try_complete_else_watch(expiring, ["c"])
            expiring.add_done_callback(record("expiring", expiring))
            await trio.sleep(2)
            # the reaper's task, after on_expiration and on_complete
            assert calls[-1] == ("expiring", ["expired", "completed"], None, False)

    run(main)


def test_earlier_deadline_wakes_the_sleeping_reaper() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            start = trio.current_time()
            late = DelayedFunction(10_000)
            purgatory.try_complete_else_watch(late, ["a"])
            await trio.testing.wait_all_tasks_blocked()     # the reaper sleeps until +10 s
            early = DelayedFunction(1000)
            purgatory.try_complete_else_watch(early, ["a"])
            await early.wait()
            assert trio.current_time() == start + 1
            assert not late.is_completed

    run(main)


def test_shutdown_completes_pending_operations_and_stops_the_reaper() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        woke: list[DelayedFunction] = []

        async def handler(op: DelayedFunction) -> None:
            await op.wait()
            woke.append(op)

        start = trio.current_time()
        ops = [DelayedFunction(delay) for delay in (3000, 1000, 2000)]
        async with trio.open_nursery() as nursery:
            await nursery.start(purgatory.run)
            for op in ops:
                purgatory.try_complete_else_watch(op, ["a", "b"])
                nursery.start_soon(handler, op)
            await trio.testing.wait_all_tasks_blocked()
            purgatory.shutdown()
            # run() returns by itself and the handlers wake: the nursery closes.
        assert trio.current_time() == start
        assert sorted(woke, key=id) == sorted(ops, key=id)
        assert [op.log[0][0] for op in ops] == ["completed"] * 3
        assert (purgatory.delayed, purgatory.watched) == (0, 0)
        assert purgatory.check_and_complete("a") == 0
        with pytest.raises(trio.ClosedResourceError):
            purgatory.try_complete_else_watch(DelayedFunction(1000), ["a"])
        purgatory.shutdown()            # idempotent
        await purgatory.run()           # returns at once once shut down

    run(main)


def test_cancel_for_key_hands_pending_operations_back_uncompleted() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            start = trio.current_time()
            op, done = DelayedFunction(1000), DelayedFunction(1000)
            purgatory.try_complete_else_watch(op, ["a", "b"])
            purgatory.try_complete_else_watch(done, ["a"])
            assert done.force_complete()
            assert purgatory.cancel_for_key("a") == [op]
            assert (purgatory.delayed, purgatory.watched) == (0, 0)
            assert purgatory.cancel_for_key("a") == []
            assert not op.is_completed

            # Re-armed for longer: the cancelled timer entry must not expire it at +1 s.
            op.delay_ms = 3000
            assert not purgatory.try_complete_else_watch(op, ["c"])
            await op.wait()
            assert op.log == [("expired", start + 3), ("completed", start + 3)]

    run(main)


def test_callback_errors_stay_with_their_operation() -> None:
    async def main() -> None:
        purgatory = Purgatory("test")
        async with reaping(purgatory):
            broken = DelayedFunction(1000, ready=True, fail_in="on_complete")
            fine = DelayedFunction(1000, ready=True)
            raising = DelayedFunction(1000, fail_in="try_complete")
            for op in (broken, fine):
                op.ready = False
                purgatory.try_complete_else_watch(op, ["a"])
                op.ready = True
            assert purgatory.check_and_complete("a") == 2
            with pytest.raises(ValueError, match="on_complete failed"):
                await broken.wait()
            await fine.wait()

            # try_complete raising: completed with the error, on_complete skipped
            assert purgatory.try_complete_else_watch(raising, ["a"])
            with pytest.raises(ValueError, match="try_complete failed"):
                await raising.wait()
            assert raising.is_completed and raising.events == []

            # on_expiration raising: on_complete still runs and the reaper carries on
            expiring = DelayedFunction(1000, fail_in="on_expiration")
            after = DelayedFunction(2000)
            purgatory.try_complete_else_watch(expiring, ["b"])
            purgatory.try_complete_else_watch(after, ["b"])
            with pytest.raises(ValueError, match="on_expiration failed"):
                await expiring.wait()
            assert expiring.events == ["expired", "completed"]
            await after.wait()
            assert after.events == ["expired", "completed"]

    run(main)


@pytest.mark.parametrize("keys", [[], ()])
def test_an_operation_needs_a_key(keys: list[Hashable]) -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="at least one watch key"):
            Purgatory("test").try_complete_else_watch(DelayedFunction(1000), keys)

    run(main)


def test_misuse_is_refused() -> None:
    async def main() -> None:
        purgatory: DelayedOperationPurgatory[Any] = DelayedOperationPurgatory("test")
        op = DelayedFunction(1000)
        purgatory.try_complete_else_watch(op, ["a"])
        with pytest.raises(ValueError, match="already in a purgatory"):
            Purgatory("other").try_complete_else_watch(op, ["a"])
        async with reaping(purgatory):
            with pytest.raises(RuntimeError, match="already running"):
                await purgatory.run()
        with pytest.raises(TypeError):
            DelayedOperation(1000)  # type: ignore[abstract]

    run(main)
