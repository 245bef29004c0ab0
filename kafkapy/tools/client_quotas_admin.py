"""DescribeClientQuotas / AlterClientQuotas from the tools, over kafka-python.

Neither confluent-kafka 2.x's AdminClient nor kafka-python 3.x's ``KafkaAdminClient`` has a
client-quota method, but kafka-python declares both APIs (``kafka.protocol.admin
.client_quotas``) and its admin client sends any request (``_manager.send``, version
negotiated with the broker): this module builds the two requests and turns the answers into
plain data. Used by ``kafkapy configs`` (users, clients, ips) and by tests.

An entity is a list of (entity type, name or None for the default) pairs; a filter
component (entity type, match type: 0 exact / 1 default / 2 any, match).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = ["AlterResult", "Entity", "QuotaEntry", "alter_client_quotas",
           "describe_client_quotas"]

Entity = list[tuple[str, "str | None"]]


@attrs.frozen
class QuotaEntry:
    """One described entity and its quota values."""

    entity: tuple[tuple[str, str | None], ...]
    values: dict[str, float]


@attrs.frozen
class AlterResult:
    """One altered entity's outcome: error code 0 or Kafka's error code and message."""

    entity: tuple[tuple[str, str | None], ...]
    error_code: int
    error_message: str | None


def _messages() -> Any:
    # kafka-python is an optional dependency without type information: imported by name.
    return importlib.import_module("kafka.protocol.admin.client_quotas")


def describe_client_quotas(admin: Any, components: Sequence[tuple[str, int, str | None]],
                           strict: bool = False) -> tuple[int, str | None, list[QuotaEntry]]:
    """(error code, error message, entries) of one DescribeClientQuotas request."""
    DescribeClientQuotasRequest = _messages().DescribeClientQuotasRequest
    component = DescribeClientQuotasRequest.ComponentData
    request = DescribeClientQuotasRequest(
        components=[component(entity_type=t, match_type=m, match=name)
                    for t, m, name in components],
        strict=strict)

    async def send() -> Any:
        return await admin._manager.send(request)
    response = admin._manager.run(send)
    entries = [QuotaEntry(tuple((e.entity_type, e.entity_name) for e in entry.entity),
                          {v.key: float(v.value) for v in entry.values})
               for entry in response.entries or ()]
    return response.error_code, response.error_message or None, entries


def alter_client_quotas(admin: Any,
                        entries: Sequence[tuple[Entity, Sequence[tuple[str, float | None]]]],
                        validate_only: bool = False) -> list[AlterResult]:
    """One AlterClientQuotas request: per entity, ``(key, value)`` ops, a value of None
    removing the key. The per-entity outcomes, in request order."""
    AlterClientQuotasRequest = _messages().AlterClientQuotasRequest
    entry_data = AlterClientQuotasRequest.EntryData
    entity_data, op_data = entry_data.EntityData, entry_data.OpData
    request = AlterClientQuotasRequest(
        entries=[entry_data(
            entity=[entity_data(entity_type=t, entity_name=n) for t, n in entity],
            ops=[op_data(key=k, value=0.0 if v is None else float(v), remove=v is None)
                 for k, v in ops])
            for entity, ops in entries],
        validate_only=validate_only)

    async def send() -> Any:
        return await admin._manager.send(request)
    response = admin._manager.run(send)
    return [AlterResult(tuple((e.entity_type, e.entity_name) for e in entry.entity),
                        entry.error_code, entry.error_message)
            for entry in response.entries]
