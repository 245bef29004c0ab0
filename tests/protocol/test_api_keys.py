"""The registry covers every API the broker needs, over the versions real clients send.

For each API: from the oldest version confluent-kafka 2.16, kafka-python 3.0 or aiokafka 0.14
can send (0 for all but WriteTxnMarkers, which only brokers send) up to the newest version
Apache Kafka 4.x defines (the inter-broker APIs LeaderAndIsr, StopReplica, UpdateMetadata and
ControlledShutdown were removed in 4.0: up to their last 3.x version).
"""

from __future__ import annotations

import pytest

from kafkapy.protocol import API_KEYS, ApiKey, api_key_by_name
from kafkapy.protocol.headers import request_header_version, response_header_version
from kafkapy.protocol.schema import snake_case

# name: (key, oldest needed, newest defined)
REQUIRED = {
    "Produce": (0, 0, 13), "Fetch": (1, 0, 18), "ListOffsets": (2, 0, 11),
    "Metadata": (3, 0, 13), "LeaderAndIsr": (4, 0, 7), "StopReplica": (5, 0, 4),
    "UpdateMetadata": (6, 0, 8), "ControlledShutdown": (7, 0, 3), "OffsetCommit": (8, 0, 10),
    "OffsetFetch": (9, 0, 10), "FindCoordinator": (10, 0, 6), "JoinGroup": (11, 0, 9),
    "Heartbeat": (12, 0, 4), "LeaveGroup": (13, 0, 5), "SyncGroup": (14, 0, 5),
    "DescribeGroups": (15, 0, 6), "ListGroups": (16, 0, 5), "SaslHandshake": (17, 0, 1),
    "ApiVersions": (18, 0, 4), "CreateTopics": (19, 0, 7), "DeleteTopics": (20, 0, 6),
    "DeleteRecords": (21, 0, 2), "InitProducerId": (22, 0, 6),
    "OffsetForLeaderEpoch": (23, 0, 4), "AddPartitionsToTxn": (24, 0, 5),
    "AddOffsetsToTxn": (25, 0, 4), "EndTxn": (26, 0, 5), "WriteTxnMarkers": (27, 1, 2),
    "TxnOffsetCommit": (28, 0, 5), "DescribeAcls": (29, 0, 3), "CreateAcls": (30, 0, 3),
    "DeleteAcls": (31, 0, 3), "DescribeConfigs": (32, 0, 4), "AlterConfigs": (33, 0, 2),
    "AlterReplicaLogDirs": (34, 0, 2),
    "DescribeLogDirs": (35, 0, 5), "SaslAuthenticate": (36, 0, 2),
    "CreatePartitions": (37, 0, 3), "DeleteGroups": (42, 0, 2), "ElectLeaders": (43, 0, 2),
    "IncrementalAlterConfigs": (44, 0, 1), "AlterPartitionReassignments": (45, 0, 0),
    "ListPartitionReassignments": (46, 0, 0), "OffsetDelete": (47, 0, 0),
    "DescribeCluster": (60, 0, 2), "DescribeProducers": (61, 0, 0),
    "DescribeTransactions": (65, 0, 0), "ListTransactions": (66, 0, 2),
    "ConsumerGroupHeartbeat": (68, 0, 1),
    "ConsumerGroupDescribe": (69, 0, 1), "AlterPartition": (56, 0, 3),
    "DescribeQuorum": (55, 0, 2), "UpdateFeatures": (57, 0, 2),
    "ListConfigResources": (74, 0, 1), "DescribeTopicPartitions": (75, 0, 0),
    "DescribeUserScramCredentials": (50, 0, 0), "AlterUserScramCredentials": (51, 0, 0),
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_api_is_declared_over_the_needed_versions(name: str) -> None:
    key, oldest, newest = REQUIRED[name]
    api = api_key_by_name(name)
    assert api.key == key
    assert api.versions.low <= oldest, f"{name} starts at v{api.versions.low}"
    assert api.versions.high >= newest, f"{name} ends at v{api.versions.high}"


def test_no_api_beyond_the_required_set_sneaks_in_untested() -> None:
    assert {api.name for api in API_KEYS.values()} == set(REQUIRED)


def test_header_versions() -> None:
    # Produce v9 is the first flexible Produce: request header v2, response header v1.
    assert request_header_version(0, 8, API_KEYS[0].is_flexible(8)) == 1
    assert request_header_version(0, 9, API_KEYS[0].is_flexible(9)) == 2
    assert response_header_version(0, API_KEYS[0].is_flexible(8)) == 0
    assert response_header_version(0, API_KEYS[0].is_flexible(9)) == 1
    # ApiVersions answers with header v0 even at flexible versions (KIP-511).
    assert response_header_version(18, API_KEYS[18].is_flexible(3)) == 0
    assert request_header_version(18, 3, API_KEYS[18].is_flexible(3)) == 2
    # ControlledShutdown v0 is the only request with header v0 (no client id).
    assert request_header_version(7, 0, False) == 0
    assert request_header_version(7, 1, False) == 1


def test_api_key_enum_is_the_registry() -> None:
    """``ApiKey`` has exactly one member per declared API, named as Kafka names it."""
    assert list(API_KEYS) == sorted(ApiKey)
    for key, api in API_KEYS.items():
        assert type(key) is ApiKey and api.key is key
        assert key.name == snake_case(api.name).upper()
    assert ApiKey.PRODUCE == 0 and ApiKey.API_VERSIONS == 18
    assert ApiKey.CONSUMER_GROUP_DESCRIBE == 69
