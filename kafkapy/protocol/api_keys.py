"""ApiKey: every Kafka API kafkapy can encode and decode, with its schemas and versions.

The registry is built from the modules in :mod:`kafkapy.protocol.messages`, each of which
declares one API's REQUEST and RESPONSE. "Versions" here means what the codec understands (all
that Kafka ever defined for the API); which versions the broker *advertises* in ApiVersions is
the server's decision, not the codec's.
"""

from __future__ import annotations

import importlib

import attrs

from kafkapy.protocol.schema import Message, Versions

__all__ = ["API_KEYS", "ApiKey", "api_key_by_name"]

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
    "consumer_group_heartbeat", "consumer_group_describe",
)


@attrs.frozen
class ApiKey:
    key: int
    name: str
    request: Message
    response: Message

    @property
    def versions(self) -> Versions:
        return self.request.valid

    def is_flexible(self, version: int) -> bool:
        return self.request.is_flexible(version)


def _load() -> dict[int, ApiKey]:
    apis: dict[int, ApiKey] = {}
    for name in _MODULES:
        module = importlib.import_module(f"kafkapy.protocol.messages.{name}")
        request: Message = module.REQUEST
        response: Message = module.RESPONSE
        key = request.api_key
        if key is None or key != response.api_key or request.valid != response.valid \
                or request.flexible != response.flexible:
            raise TypeError(f"{name}: request and response declarations disagree")
        apis[key] = ApiKey(key, request.name.removesuffix("Request"), request, response)
    return dict(sorted(apis.items()))


API_KEYS: dict[int, ApiKey] = _load()
_BY_NAME = {api.name: api for api in API_KEYS.values()}


def api_key_by_name(name: str) -> ApiKey:
    """``api_key_by_name("Produce")``; raises KeyError for unknown names."""
    return _BY_NAME[name]
