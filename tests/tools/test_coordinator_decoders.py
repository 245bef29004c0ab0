"""The offsets and transaction-log decoders of ``dump-log`` on hand-built records, against the
strings Kafka 3.9's DumpLogSegmentsTest expects (testOffsetsMessageParser) and Kafka 3.x's
TransactionLog.formatRecordKeyAndValue. Pure logic: no broker (the end-to-end runs on a
broker's files are in test_dump_log.py)."""

from __future__ import annotations

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group import records as group_records
from kafkapy.coordinator.record_format import versioned
from kafkapy.coordinator.transaction import records as txn_records
from kafkapy.protocol.classes import class_for, struct_classes
from kafkapy.protocol.messages.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kafkapy.tools.coordinator_decoders import (
    DecodeError,
    format_offsets_record,
    format_transaction_record,
)

_Value = class_for(group_records.GROUP_METADATA_VALUE.body)
_Member = struct_classes(group_records.GROUP_METADATA_VALUE.body)["MemberMetadata"]
_Subscription = class_for(SUBSCRIPTION.body)
_SubscriptionTP = struct_classes(SUBSCRIPTION.body)["TopicPartition"]
_Assignment = class_for(ASSIGNMENT.body)
_AssignmentTP = struct_classes(ASSIGNMENT.body)["TopicPartition"]


def _group_value(subscription: bytes, assignment: bytes) -> bytes:
    body = _Value(protocol_type="consumer", generation=10, protocol="range", leader="member",
                  current_state_timestamp=-1,
                  members=[_Member(member_id="member", group_instance_id="instance",
                                   client_id="client", client_host="host",
                                   rebalance_timeout=1000, session_timeout=100,
                                   subscription=subscription, assignment=assignment)])
    return versioned(4, group_records.GROUP_METADATA_VALUE, body)


def test_a_record_without_key_is_refused() -> None:
    with pytest.raises(DecodeError, match="Failed to decode message at offset 0 using offset "
                                          r"topic decoder \(message had a missing key\)"):
        format_offsets_record(0, None, None)


def test_consumer_group_metadata_record() -> None:
    key = group_records.consumer_group_key(group_records.CONSUMER_GROUP_METADATA, "group")
    value = group_records.consumer_group_metadata_value(10)
    assert format_offsets_record(0, key, value) == (
        '{"type":"3","data":{"groupId":"group"}}', '{"version":"0","data":{"epoch":10}}')
    assert format_offsets_record(0, key, None) == (
        '{"type":"3","data":{"groupId":"group"}}', "<DELETE>")


def test_group_metadata_with_the_consumer_protocol_decoded() -> None:
    subscription = versioned(3, SUBSCRIPTION, _Subscription(
        topics=["foo"], user_data=None,
        owned_partitions=[_SubscriptionTP(topic="foo", partitions=[0])],
        generation_id=0, rack_id="rack"))
    assignment = versioned(3, ASSIGNMENT, _Assignment(
        assigned_partitions=[_AssignmentTP(topic="foo", partitions=[0])], user_data=None))
    key = group_records.group_metadata_key("group")
    assert format_offsets_record(0, key, _group_value(subscription, assignment)) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')


def test_malformed_consumer_protocol_stays_base64() -> None:
    key = group_records.group_metadata_key("group")
    assert format_offsets_record(0, key, _group_value(b"Subscription", b"Assignment")) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",'
        '"assignment":"QXNzaWdubWVudA=="}]}}')


def test_offset_commit_values_by_version() -> None:
    key = group_records.offset_commit_key("g", "t", 3)
    v3 = group_records.offset_commit_value(group_records.OffsetAndMetadata(
        offset=42, leader_epoch=5, metadata="m", commit_timestamp_ms=1000))
    v1 = group_records.offset_commit_value(group_records.OffsetAndMetadata(
        offset=42, leader_epoch=5, metadata="", commit_timestamp_ms=1000,
        expire_timestamp_ms=2000))
    assert format_offsets_record(7, key, v3) == (
        '{"type":"1","data":{"group":"g","topic":"t","partition":3}}',
        '{"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"m",'
        '"commitTimestamp":1000}}')
    # v1 has an expire timestamp and no leader epoch.
    assert format_offsets_record(7, key, v1)[1] == (
        '{"version":"1","data":{"offset":42,"metadata":"","commitTimestamp":1000,'
        '"expireTimestamp":2000}}')


def test_unknown_and_malformed_records_are_skipped() -> None:
    unknown = (32767).to_bytes(2, "big") + b"\x00\x05group"
    assert format_offsets_record(0, unknown, b"\x00\x00") == (
        "Unknown record type 32767 at offset 0, skipping.", None)
    key = group_records.consumer_group_key(group_records.CONSUMER_GROUP_METADATA, "group")
    text, payload = format_offsets_record(3, key, b"\x00\x00\x01")
    assert text is not None and text.startswith("Error at offset 3, skipping. ")
    assert payload is None


def test_transaction_log_records() -> None:
    key = txn_records.transaction_log_key("txn-1")
    value = txn_records.transaction_log_value(txn_records.TransactionLogValue(
        producer_id=7, producer_epoch=2, txn_timeout_ms=60000, state=1,
        topic_partitions=frozenset({TopicPartition("b", 1), TopicPartition("a", 0)}),
        txn_last_update_timestamp=1234, txn_start_timestamp=1200))
    assert format_transaction_record(key, value) == (
        "transaction_metadata::transactionalId=txn-1",
        "producerId:7,producerEpoch:2,state=Ongoing,partitions=[a-0,b-1],"
        "txnLastUpdateTimestamp=1234,txnTimeoutMs=60000")
    assert format_transaction_record(key, None) == (
        "transaction_metadata::transactionalId=txn-1", "<DELETE>")
    assert format_transaction_record(b"\x00\x03", b"") == ("unknown::version=3", None)
    with pytest.raises(DecodeError):
        format_transaction_record(key, b"\x00\x00\x01")
