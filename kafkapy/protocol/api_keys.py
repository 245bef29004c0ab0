"""ApiKey: every Kafka API kafkapy can encode and decode; API_KEYS: its schemas and versions.

``ApiKey`` (an IntEnum, Kafka's ``ApiKeys`` names in UPPER_SNAKE) is the one place an API's
number is written outside its declaration; the rest of kafkapy says ``ApiKey.PRODUCE``, never 0.
The registry ``API_KEYS: {ApiKey: ApiMessages}`` is built from the modules in
:mod:`kafkapy.protocol.messages`, each of which declares one API's REQUEST and RESPONSE (with
its number); loading checks that the enum and the declarations agree, member for member.

"Versions" here means what the codec understands (all that Kafka ever defined for the API);
which versions the broker *advertises* in ApiVersions is the server's decision, not the
codec's.
"""

from __future__ import annotations

import enum
import importlib

import attrs

from kafkapy.protocol.schema import Message, Versions, snake_case

__all__ = ["API_KEYS", "ApiKey", "ApiMessages", "api_key_by_name"]

# One module per API (kafkapy/protocol/messages/<name>.py).
_MODULES = (
    "produce", "fetch", "list_offsets", "metadata", "leader_and_isr", "stop_replica",
    "update_metadata", "controlled_shutdown", "offset_commit", "offset_fetch",
    "find_coordinator", "join_group", "heartbeat", "leave_group", "sync_group",
    "describe_groups", "list_groups", "sasl_handshake", "api_versions", "create_topics",
    "delete_topics", "delete_records", "init_producer_id", "offset_for_leader_epoch",
    "add_partitions_to_txn", "add_offsets_to_txn", "end_txn", "write_txn_markers",
    "txn_offset_commit", "describe_acls", "create_acls", "delete_acls", "describe_configs",
    "alter_configs", "describe_log_dirs", "sasl_authenticate", "create_partitions",
    "delete_groups", "incremental_alter_configs", "offset_delete", "describe_cluster",
    "describe_producers", "describe_transactions", "list_transactions",
    "consumer_group_heartbeat", "consumer_group_describe", "alter_partition",
    "elect_leaders", "alter_partition_reassignments", "list_partition_reassignments",
    "describe_quorum", "update_features", "list_config_resources", "describe_topic_partitions",
    "alter_replica_log_dirs", "describe_user_scram_credentials", "alter_user_scram_credentials",
)


class ApiKey(enum.IntEnum):
    """The number of every API kafkapy declares (the request header's ApiKey)."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_QUORUM = 55
    ALTER_PARTITION = 56
    UPDATE_FEATURES = 57
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    LIST_CONFIG_RESOURCES = 74
    DESCRIBE_TOPIC_PARTITIONS = 75
    ALTER_REPLICA_LOG_DIRS = 34


@attrs.frozen
class ApiMessages:
    """One API's request and response declarations."""

    key: ApiKey
    name: str
    request: Message
    response: Message

    @property
    def versions(self) -> Versions:
        return self.request.valid

    def is_flexible(self, version: int) -> bool:
        return self.request.is_flexible(version)


def _load() -> dict[int, ApiMessages]:
    apis: dict[int, ApiMessages] = {}
    for name in _MODULES:
        module = importlib.import_module(f"kafkapy.protocol.messages.{name}")
        request: Message = module.REQUEST
        response: Message = module.RESPONSE
        key = request.api_key
        if key is None or key != response.api_key or request.valid != response.valid \
                or request.flexible != response.flexible:
            raise TypeError(f"{name}: request and response declarations disagree")
        api_name = request.name.removesuffix("Request")
        enum_name = snake_case(api_name).upper()
        member = ApiKey.__members__.get(enum_name)
        if member is None or member != key:
            raise TypeError(f"{name}: {api_name} ({key}) is not ApiKey.{enum_name}")
        apis[member] = ApiMessages(member, api_name, request, response)
    if set(apis) != set(ApiKey):
        raise TypeError(f"ApiKey members without a declaration: {set(ApiKey) - set(apis)}")
    return dict(sorted(apis.items()))


# Keyed by ApiKey members; typed by int so that a wire number looks its API up directly.
API_KEYS: dict[int, ApiMessages] = _load()
_BY_NAME = {api.name: api for api in API_KEYS.values()}


def api_key_by_name(name: str) -> ApiMessages:
    """``api_key_by_name("Produce")``; raises KeyError for unknown names."""
    return _BY_NAME[name]
