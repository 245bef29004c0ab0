"""Client quotas: DescribeClientQuotas (48) and AlterClientQuotas (49), v0-1 (KIP-546), as
Kafka 3.x's ZooKeeper-mode ``ZkAdminManager.describeClientQuotas`` / ``alterClientQuotas``
answer them, over the broker's ``ClientQuotaStore``.

DescribeClientQuotas: the filter's components, at most one per entity type (``Duplicate
user filter component entity type``...), an empty type INVALID_REQUEST, another type
UNSUPPORTED_VERSION (``Custom entity type 'x' not supported``), an IP component with a
user or client-id one INVALID_REQUEST; match types 0 EXACT, 1 DEFAULT, 2 ANY (any specified
entity, defaults included). Every stored entity whose types the components allow (with
``Strict``, exactly the components' types; without, any entity including them) and with
at least one quota key is answered, its values as doubles. A failure is the response's own
ErrorCode/ErrorMessage with Entries null.

AlterClientQuotas: per entry, independently (one entry's error does not stop the others):
the entity checked (``client_quota_store.path_of_entity``), each op applied to the
entity's stored config: Remove deletes the key (any key), a set needs a valid key (``Invalid
configuration key k``), LONG/INT keys an integral value (``Configuration k must be a LONG
value``, stored as an integer, e.g. ``1024``), DOUBLE keys are stored as Java prints the
double (``50.0``). ``ValidateOnly`` stops before the write.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import trio

from kafkapy.common.java_double import java_double
from kafkapy.errors import InvalidRequestError, KafkaError, UnsupportedVersionError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterClientQuotasRequest,
    AlterClientQuotasRequestEntryData,
    AlterClientQuotasResponse,
    AlterClientQuotasResponseEntityData,
    AlterClientQuotasResponseEntryData,
    ComponentData,
    DescribeClientQuotasEntityData,
    DescribeClientQuotasEntryData,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    ValueData,
)
from kafkapy.server.admin_manager import api_error
from kafkapy.server.client_quota_store import (
    CLIENT_ID,
    IP,
    USER,
    ClientQuotaStore,
    Entity,
    entity_of_path,
    path_of_entity,
    quota_keys_of,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "MATCH_ANY", "MATCH_DEFAULT", "MATCH_EXACT", "alter_entity",
           "describe", "handle_alter_client_quotas", "handle_describe_client_quotas"]

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
_ANY = object()
_EPSILON = 1e-6
_INT_MAX, _LONG_MAX = (1 << 31) - 1, (1 << 63) - 1


def _components(components: Iterable[ComponentData]) -> dict[str, object]:
    """Entity type -> wanted name (a name, None for the default, ``_ANY``); raises as Kafka."""
    out: dict[str, object] = {}
    for c in components:
        if c.entity_type in (USER, CLIENT_ID, IP):
            if c.entity_type in out:
                name = "client" if c.entity_type == CLIENT_ID else c.entity_type
                raise InvalidRequestError(f"Duplicate {name} filter component entity type")
        elif c.entity_type == "":
            raise InvalidRequestError("Unexpected empty filter component entity type")
        else:
            raise UnsupportedVersionError(f"Custom entity type '{c.entity_type}' not supported")
        if c.match_type == MATCH_EXACT:
            if c.match is None:
                raise InvalidRequestError("Unexpected null match string for exact match type")
            out[c.entity_type] = c.match
        elif c.match_type == MATCH_DEFAULT:
            out[c.entity_type] = None
        elif c.match_type == MATCH_ANY:
            out[c.entity_type] = _ANY
        else:
            raise InvalidRequestError(f"Unexpected match type: {c.match_type}")
    if IP in out and (USER in out or CLIENT_ID in out):
        raise InvalidRequestError(
            "Invalid entity filter component combination, IP filter component should not be "
            "used with user or clientId filter component.")
    return out


def describe(configs: Mapping[str, Mapping[str, str]], components: Iterable[ComponentData],
             strict: bool) -> list[tuple[Entity, dict[str, float]]]:
    """The entities (sorted by entity path) and their quota values matching the filter.
    Raises InvalidRequestError / UnsupportedVersionError for a filter Kafka refuses."""
    wanted = _components(components)
    out = []
    for entity_path in sorted(configs):
        keys = quota_keys_of(entity_path)
        quotas = {k: v for k, v in configs[entity_path].items() if k in keys}
        if not quotas:
            continue
        entity = entity_of_path(entity_path)
        names = dict(entity)
        if IP in names:
            if USER in wanted or CLIENT_ID in wanted or (not wanted and strict):
                continue
        elif IP in wanted:
            continue
        if all(_matches(wanted, entity_type, names, strict)
               for entity_type in (USER, CLIENT_ID, IP)):
            try:
                out.append((entity, {k: float(v) for k, v in quotas.items()}))
            except ValueError as e:
                raise ValueError(f"Unexpected client quota configuration value in "
                                 f"{entity_path}: {quotas}") from e
    return out


def _matches(wanted: Mapping[str, object], entity_type: str, names: Mapping[str, str | None],
             strict: bool) -> bool:
    """Kafka's ``matches``: a component wants the type present (with that name); without one
    the type must be absent when strict."""
    if entity_type not in wanted:
        return entity_type not in names or not strict
    if entity_type not in names:
        return False
    want = wanted[entity_type]
    return want is _ANY or names[entity_type] == want


def alter_entity(config: dict[str, str], entity_path: str,
                 ops: Iterable[tuple[str, float | None]]) -> None:
    """Apply ``(key, value or None to remove)`` ops to ``config`` in place, as Kafka's
    ``alterEntityQuotas``. Raises InvalidRequestError."""
    keys = quota_keys_of(entity_path)
    for key, value in ops:
        if value is None:
            config.pop(key, None)
            continue
        kind = keys.get(key)
        if kind is None:
            raise InvalidRequestError(f"Invalid configuration key {key}")
        if kind == "DOUBLE":
            config[key] = java_double(value)
            continue
        if not math.isfinite(value):
            raise InvalidRequestError(f"Configuration {key} must be a {kind} value")
        # Java's (value + epsilon).toLong / toInt: truncation, saturating at the type's range.
        limit = _LONG_MAX if kind == "LONG" else _INT_MAX
        integral = max(-limit - 1, min(limit, int(value + _EPSILON)))
        if abs(integral - value) > _EPSILON:
            raise InvalidRequestError(f"Configuration {key} must be a {kind} value")
        config[key] = str(integral)


async def handle_describe_client_quotas(
        context: RequestContext[DescribeClientQuotasRequest]) -> DescribeClientQuotasResponse:
    body = context.body
    store: ClientQuotaStore = context.server.client_quota_store
    try:
        _components(body.components)           # a bad filter fails before ZooKeeper is read
        snapshot = (await trio.to_thread.run_sync(store.snapshot) if store.blocking
                    else store.snapshot())
        found = describe(snapshot, body.components, body.strict)
    except KafkaError as e:
        code, message = api_error(e)
        return DescribeClientQuotasResponse(error_code=code, error_message=message,
                                            entries=None)
    return DescribeClientQuotasResponse(error_message=None, entries=[
        DescribeClientQuotasEntryData(
            entity=[DescribeClientQuotasEntityData(entity_type=t, entity_name=n)
                    for t, n in entity],
            values=[ValueData(key=k, value=v) for k, v in sorted(values.items())])
        for entity, values in found])


async def handle_alter_client_quotas(
        context: RequestContext[AlterClientQuotasRequest]) -> AlterClientQuotasResponse:
    body = context.body
    store: ClientQuotaStore = context.server.client_quota_store
    results = []
    for entry in body.entries:
        code, message = 0, None
        try:
            await _alter_one(store, entry, body.validate_only)
        except Exception as e:                 # per entry, as Kafka's ApiError.fromThrowable
            code, message = api_error(e)
        results.append(AlterClientQuotasResponseEntryData(
            error_code=code, error_message=message,
            entity=[AlterClientQuotasResponseEntityData(entity_type=e.entity_type,
                                                        entity_name=e.entity_name)
                    for e in entry.entity]))
    return AlterClientQuotasResponse(entries=results)


async def _alter_one(store: ClientQuotaStore, entry: AlterClientQuotasRequestEntryData,
                     validate_only: bool) -> None:
    entity_path = await trio.to_thread.run_sync(
        path_of_entity, [(e.entity_type, e.entity_name) for e in entry.entity])
    ops = [(op.key, None if op.remove else op.value) for op in entry.ops]
    # Validate against an empty config first: every error is raised before anything is
    # written (the write's read-modify-write applies the same ops to the stored map).
    alter_entity({}, entity_path, ops)
    if validate_only:
        return
    def update(config: dict[str, str]) -> None:
        alter_entity(config, entity_path, ops)
    if store.blocking:
        await trio.to_thread.run_sync(store.alter, entity_path, update)
    else:
        store.alter(entity_path, update)


HANDLERS: dict[int, Handler] = {
    ApiKey.DESCRIBE_CLIENT_QUOTAS: handle_describe_client_quotas,
    ApiKey.ALTER_CLIENT_QUOTAS: handle_alter_client_quotas,
}
