"""A recording peer for controller tests: a tiny broker that only answers the controller's
requests (LeaderAndIsr, UpdateMetadata, StopReplica) with success, records every request it
decoded, and registers in ZooKeeper like a broker (its own kazoo session), so the controller
connects to it as to any live broker.

It runs its own Trio loop in a thread: tests drive a ``kafkapy.Cluster`` synchronously.
"""

from __future__ import annotations

from typing import Any

from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    LeaderAndIsrPartitionError,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    StopReplicaPartitionError,
    StopReplicaResponse,
    UpdateMetadataResponse,
)
from kafkapy.zk.kafka_zk_client import KafkaZkClient
from kafkapy.zk.zk_data import BrokerRegistration
from tests.fake_peer import FakePeer


def _answer(api_key: int, version: int, body: Any) -> Any:
    """Success for the controller's requests. Anything else (real brokers follow the
    partitions this peer "leads": their fetchers' requests) closes the connection and is not
    recorded; they back off, as from a broker that is away."""
    if api_key == ApiKey.LEADER_AND_ISR:
        return LeaderAndIsrResponse(topics=[
            LeaderAndIsrTopicError(topic_id=t.topic_id, partition_errors=[
                LeaderAndIsrPartitionError(partition_index=p.partition_index)
                for p in t.partition_states]) for t in body.topic_states])
    if api_key == ApiKey.UPDATE_METADATA:
        return UpdateMetadataResponse()
    if api_key == ApiKey.STOP_REPLICA:
        return StopReplicaResponse(partition_errors=[
            StopReplicaPartitionError(topic_name=t.topic_name, partition_index=p.partition_index)
            for t in body.topic_states for p in t.partition_states])
    return None


class RecordingBroker(FakePeer):
    """``RecordingBroker(broker_id, zookeeper_connect).start()``; ``requests`` is the list of
    ``(api_key, api_version, body)`` received, in order."""

    def __init__(self, broker_id: int, zookeeper_connect: str, *,
                 rack: str | None = None) -> None:
        super().__init__(_answer)
        self.broker_id = broker_id
        self.connect = zookeeper_connect
        self.rack = rack
        self.epoch = -1
        self.zk: KafkaZkClient | None = None

    def start(self) -> RecordingBroker:
        super().start()
        self.register()
        return self

    def register(self) -> int:
        self.zk = KafkaZkClient(self.connect, session_timeout_ms=6000)
        self.zk.start()
        self.epoch = self.zk.register_broker(BrokerRegistration(
            self.broker_id, (("PLAINTEXT", "PLAINTEXT", "127.0.0.1", self.port),),
            rack=self.rack))
        return self.epoch

    def unregister(self) -> None:
        if self.zk is not None:
            self.zk.close()
            self.zk = None

    def close(self) -> None:
        self.unregister()
        super().close()
