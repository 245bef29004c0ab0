"""The group coordinator's unit tests' harness: a ``GroupCoordinator`` over an in-memory
``__consumer_offsets`` (:mod:`tests.coordinator.memory_partitions`), with ``MockTime`` under
Trio's ``MockClock`` (virtual time: nothing sleeps), and the requests as the handlers make
them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import trio
import trio.testing

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.config import BrokerConfig
from kafkapy.coordinator.group.classic_group import JoinResult, Reply, SyncResult
from kafkapy.coordinator.group.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group.group_metadata_manager import OFFSETS_TOPIC
from kafkapy.coordinator.group.records import OffsetAndMetadata
from kafkapy.coordinator.internal_topic import partition_for
from kafkapy.protocol import encode
from kafkapy.protocol.classes import class_for
from kafkapy.protocol.messages.consumer_protocol import SUBSCRIPTION
from tests.coordinator.memory_partitions import MemoryPartitions

PARTITIONS = 4
PROPS = {
    "offsets.topic.num.partitions": str(PARTITIONS),
    "group.initial.rebalance.delay.ms": "3000",
    "group.min.session.timeout.ms": "1000",
}
CONFIG = BrokerConfig.from_properties(PROPS)
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
WEEK_MS = 7 * 24 * 3600 * 1000


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with trio.fail_after(30 * 24 * 3600):    # virtual time: a hang fails, it does not wait
            await test()

    trio.run(bounded, clock=trio.testing.MockClock(autojump_threshold=0))


def group_in(partition: int, prefix: str = "g") -> str:
    """A group id of ``__consumer_offsets`` partition ``partition``."""
    return next(f"{prefix}{i}" for i in range(1000)
                if partition_for(f"{prefix}{i}", PARTITIONS) == partition)


def offsets_tp(group_id: str) -> TopicPartition:
    return TopicPartition(OFFSETS_TOPIC, partition_for(group_id, PARTITIONS))


def cluster() -> MemoryPartitions:
    partitions = MemoryPartitions()
    partitions.create_topic("t", 2)
    return partitions


@asynccontextmanager
async def coordinator(partitions: MemoryPartitions, config: BrokerConfig = CONFIG
                      ) -> AsyncIterator[GroupCoordinator]:
    """A coordinator running over ``partitions``, elected as a broker's startup does."""
    gc = GroupCoordinator(partitions, lambda: config, MockTime())
    partitions.register(OFFSETS_TOPIC, gc)
    partitions.register_txn_completion(gc)
    async with trio.open_nursery() as nursery:
        await nursery.start(gc.run)
        partitions.start()
        try:
            yield gc
        finally:
            gc.shutdown()
            nursery.cancel_scope.cancel()


def commit(gc: GroupCoordinator, group_id: str, offsets: dict[TopicPartition, int]
           ) -> dict[TopicPartition, int]:
    now = gc.time.milliseconds()
    return gc.commit_offsets(group_id=group_id, member_id="", group_instance_id=None,
                             generation_id=-1,
                             offsets={tp: OffsetAndMetadata(o, metadata="m",
                                                            commit_timestamp_ms=now)
                                      for tp, o in offsets.items()})


def committed(gc: GroupCoordinator, group_id: str) -> dict[TopicPartition, int]:
    return {tp: om.offset for tp, om in gc.fetch_offsets(group_id, None).items()
            if om is not None}


def join(gc: GroupCoordinator, group_id: str) -> Reply:
    return gc.join_group(group_id=group_id, member_id="", group_instance_id=None,
                         require_known_member_id=False, support_skip_assignment=True,
                         client_id="c", client_host="/127.0.0.1", rebalance_timeout_ms=10_000,
                         session_timeout_ms=10_000, protocol_type="consumer",
                         protocols=[("range", b"")])


def subscription(topic: str) -> bytes:
    """A consumer's JoinGroup metadata subscribing to ``topic``."""
    return b"\x00\x00" + encode(SUBSCRIPTION, 0, class_for(SUBSCRIPTION.body)(topics=[topic]))


def join_member(gc: GroupCoordinator, group_id: str, member_id: str = "",
                topic: str = "t") -> Reply:
    return gc.join_group(group_id=group_id, member_id=member_id, group_instance_id=None,
                         require_known_member_id=False, support_skip_assignment=True,
                         client_id="c", client_host="/127.0.0.1", rebalance_timeout_ms=10_000,
                         session_timeout_ms=10_000, protocol_type="consumer",
                         protocols=[("range", subscription(topic))])


async def joined(reply: Reply) -> JoinResult:
    result = await reply.wait()
    assert isinstance(result, JoinResult)
    return result


async def sync(gc: GroupCoordinator, group_id: str, result: JoinResult,
               assignments: dict[str, bytes] | None = None) -> SyncResult:
    answer = await gc.sync_group(group_id=group_id, generation_id=result.generation_id,
                                 member_id=result.member_id, group_instance_id=None,
                                 protocol_type="consumer", protocol_name="range",
                                 assignments=assignments or {}).wait()
    assert isinstance(answer, SyncResult)
    return answer
