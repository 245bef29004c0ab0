"""``kafkapy configs`` for ``users``, ``clients`` and ``ips``: client quotas and SCRAM
credentials, as Kafka 3.x's ``ConfigCommand`` handles these entity types with
``--bootstrap-server``.

What it owns:

- ``--describe``: one DescribeClientQuotas (filter: each ``--entity-type`` with its name,
  ``--entity-default`` a default match, no name "any"; strict), one line per entity,
  ``Quota configs for user-principal 'alice', client-id 'c1' are producer_byte_rate=1024.0,
  ...`` (``the default user-principal`` for a default), values as Java prints a double;
  entities and values in the order Kafka's tool prints them, which is Java ``HashMap``
  iteration order (``java_hash_map_order``). Then, for users only and without a default,
  the SCRAM credentials (DescribeUserScramCredentials):
  ``SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192``.
- ``--alter``: Kafka's checks of the keys (quota keys for clients, quota or SCRAM keys for
  users, not both at once, ``connection_creation_rate`` for ips), deleting a key that is
  not set refused (``Invalid config(s): k``), then one AlterClientQuotas (or one
  AlterUserScramCredentials for ``SCRAM-SHA-256=[iterations=8192,password=...]``);
  ``Completed updating config for user alice.`` / ``Completed updating default config for
  users in the cluster.``

Client quotas go over kafka-python (``client_quotas_admin``: confluent-kafka has no
client-quota API); SCRAM credentials over confluent-kafka's AdminClient. A broker without
DescribeUserScramCredentials leaves the SCRAM part of ``--describe`` out (Kafka's tool would
fail after printing the quotas).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO, TypeVar

from kafkapy.common.java_double import java_double
from kafkapy.tools.client_quotas_admin import (
    QuotaEntry,
    alter_client_quotas,
    describe_client_quotas,
)
from kafkapy.tools.topics import REQUEST_TIMEOUT_S, ToolError, UsageError, confluent

__all__ = ["QUOTA_KEYS", "QuotaService", "java_hash_map_order", "java_string_hash"]

T = TypeVar("T")

USERS, CLIENTS, IPS = "users", "clients", "ips"
# Kafka's QuotaConfigs.isClientOrUserQuotaConfig and DynamicConfig.Ip.
QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
              "controller_mutation_rate")
IP_KEYS = ("connection_creation_rate",)
SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, 4096), "SCRAM-SHA-512": (2, 4096)}  # type, min iter
DEFAULT_SCRAM_ITERATIONS = 4096
_ENTITY_TYPE = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}
_TYPE_TEXT = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
_INT = 0xFFFFFFFF


class QuotaFailure(Exception):
    """A broker's error for a quota or SCRAM change: Kafka's tool prints ``Error while
    executing config command with args ...`` and the exception (``exception`` names its
    Java class)."""

    def __init__(self, exception: str, message: str | None) -> None:
        super().__init__(f"java.util.concurrent.ExecutionException: "
                         f"org.apache.kafka.common.errors.{exception}: {message}")


def _int32(value: int) -> int:
    value &= _INT
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str | None) -> int:
    """Java's ``Objects.hashCode(String)`` (UTF-16 code units; 0 for null)."""
    if text is None:
        return 0
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) & _INT
    return _int32(h)


def java_hash_map_order(items: Sequence[T], hash_of: Callable[[T], int],
                        initial_capacity: int) -> list[T]:
    """The iteration order of a ``new HashMap<>(initial_capacity)`` into which ``items``
    were put in order (distinct keys, fewer than 8 per bucket): by bucket of
    ``h ^ (h >>> 16)`` in the final table, insertion order within a bucket."""
    capacity = 1                         # tableSizeFor(initial_capacity)
    while capacity < initial_capacity:
        capacity *= 2
    threshold = 0
    for size in range(1, len(items) + 1):
        if size == 1:                    # the table is made at the first put
            threshold = int(capacity * 0.75)
        if size > threshold:             # ++size > threshold: resize (small tables)
            capacity *= 2
            threshold = int(capacity * 0.75)

    def bucket(item: T) -> int:
        h = hash_of(item) & _INT
        return (h ^ (h >> 16)) & (capacity - 1)
    return [item for _, _, item in sorted((bucket(x), i, x) for i, x in enumerate(items))]


def _entity_hash(entity: Iterable[tuple[str, str | None]]) -> int:
    # ClientQuotaEntity.hashCode: Objects.hash(entries) = 31 + Map.hashCode (the sum of
    # key.hashCode ^ value.hashCode).
    total = sum(java_string_hash(k) ^ java_string_hash(v) for k, v in entity)
    return _int32(31 + total)


def _ordered(entries: Sequence[QuotaEntry]) -> list[tuple[list[tuple[str, str | None]],
                                                           list[tuple[str, float]]]]:
    """Entities and their values in the order Kafka's tool prints them."""
    out = []
    for entry in java_hash_map_order(entries, lambda e: _entity_hash(e.entity), len(entries)):
        entity = java_hash_map_order(list(entry.entity), lambda kv: java_string_hash(kv[0]),
                                     len(entry.entity))
        values = java_hash_map_order(list(entry.values.items()),
                                     lambda kv: java_string_hash(kv[0]), len(entry.values))
        out.append((entity, values))
    return out


def _entity_text(entity: Mapping[str, str | None]) -> str:
    parts = []
    for entity_type in ("user", "client-id", "ip"):
        if entity_type in entity:
            name = entity[entity_type]
            text = _TYPE_TEXT[entity_type]
            parts.append(f"{text} '{name}'" if name is not None else f"the default {text}")
    return ", ".join(parts)


class QuotaService:
    """The quota / SCRAM half of ``kafkapy configs`` (see the module doc). ``quota_admin``
    is a kafka-python admin client factory, ``admin`` a confluent-kafka AdminClient
    factory: each is created only when needed."""

    def __init__(self, quota_admin: Callable[[], Any], admin: Callable[[], Any],
                 json_output: bool, out: TextIO) -> None:
        self._quota_admin_factory = quota_admin
        self._admin_factory = admin
        self._quota_admin: Any = None
        self.json = json_output
        self.out = out

    def quota_admin(self) -> Any:
        if self._quota_admin is None:
            self._quota_admin = self._quota_admin_factory()
        return self._quota_admin

    def close(self) -> None:
        if self._quota_admin is not None:
            self._quota_admin.close()

    # ------------------------------------------------------------------ describe

    def _components(self, types: Sequence[str], names: Sequence[str]
                    ) -> list[tuple[str, int, str | None]]:
        if len(names) > len(types):
            raise UsageError("More entity names specified than entity types")
        components: list[tuple[str, int, str | None]] = []
        for i, entity_type in enumerate(types):
            quota_type = _ENTITY_TYPE[entity_type]
            if i >= len(names):
                components.append((quota_type, MATCH_ANY, None))
            elif names[i] == "":
                components.append((quota_type, MATCH_DEFAULT, None))
            else:
                components.append((quota_type, MATCH_EXACT, names[i]))
        return components

    def quotas(self, types: Sequence[str], names: Sequence[str]) -> list[QuotaEntry]:
        code, message, entries = describe_client_quotas(
            self.quota_admin(), self._components(types, names), strict=True)
        if code:
            raise QuotaFailure(_exception_name(code), message)
        return entries

    def describe(self, types: Sequence[str], names: Sequence[str]) -> None:
        for entity, values in _ordered(self.quotas(types, names)):
            if self.json:
                print(json.dumps({"type": "quotas", "entity": dict(entity),
                                  "configs": dict(values)}), file=self.out)
            else:
                text = ", ".join(f"{k}={java_double(v)}" for k, v in values)
                print(f"Quota configs for {_entity_text(dict(entity))} are {text}",
                      file=self.out)
        if types[0] == USERS and CLIENTS not in types and "" not in names:
            self._describe_scram(list(names))

    def _describe_scram(self, users: list[str]) -> None:
        kafka = confluent("confluent_kafka")
        admin = self._admin_factory()
        try:
            if users:
                futures = admin.describe_user_scram_credentials(
                    users, request_timeout=REQUEST_TIMEOUT_S)
                found = {}
                for user, future in futures.items():
                    try:
                        found[user] = future.result(REQUEST_TIMEOUT_S + 5)
                    except kafka.KafkaException as e:
                        if e.args[0].code() == kafka.KafkaError.RESOURCE_NOT_FOUND:
                            continue       # a user without credentials: nothing printed
                        raise
            else:
                found = admin.describe_user_scram_credentials(
                    request_timeout=REQUEST_TIMEOUT_S).result(REQUEST_TIMEOUT_S + 5)
        except kafka.KafkaException as e:
            if _unsupported(e):
                return                     # the broker has no SCRAM credentials API
            raise ToolError(str(e.args[0].str())) from e
        for user, description in found.items():
            infos = [(_mechanism_name(i.mechanism), i.iterations)
                     for i in description.scram_credential_infos]
            if self.json:
                print(json.dumps({"type": "scram", "user": user, "credentials": [
                    {"mechanism": m, "iterations": n} for m, n in infos]}), file=self.out)
                continue
            text = ", ".join(f"{m}=iterations={n}" for m, n in infos)
            print(f"SCRAM credential configs for user-principal '{user}' are {text}",
                  file=self.out)

    # --------------------------------------------------------------------- alter

    def alter(self, types: Sequence[str], names: Sequence[str], to_add: Mapping[str, str],
              to_delete: Sequence[str]) -> None:
        head = types[0]
        if head == IPS:
            unknown = [k for k in [*to_add, *to_delete] if k not in IP_KEYS]
            if unknown:
                raise UsageError(f"Only connection quota configs can be added for '{IPS}' "
                                 f"using --bootstrap-server. Unexpected config names: "
                                 f"{','.join(unknown)}")
            self._alter_quotas(types, names, to_add, to_delete)
        else:
            quota_add = any(k in QUOTA_KEYS for k in to_add)
            quota_delete = any(k in QUOTA_KEYS for k in to_delete)
            scram_add = [k for k in to_add if k in SCRAM_MECHANISMS]
            scram_delete = [k for k in to_delete if k in SCRAM_MECHANISMS]
            unknown_add = [k for k in to_add if k not in QUOTA_KEYS and k not in SCRAM_MECHANISMS]
            unknown_delete = [k for k in to_delete
                              if k not in QUOTA_KEYS and k not in SCRAM_MECHANISMS]
            if head == CLIENTS or len(types) == 2:
                if unknown_add or scram_add:
                    raise UsageError(f"Only quota configs can be added for '{CLIENTS}' using "
                                     f"--bootstrap-server. Unexpected config names: "
                                     f"{_scala_list(unknown_add + scram_add)}")
                if unknown_delete or scram_delete:
                    raise UsageError(f"Only quota configs can be deleted for '{CLIENTS}' using "
                                     f"--bootstrap-server. Unexpected config names: "
                                     f"{_scala_list(unknown_delete + scram_delete)}")
            else:
                if unknown_add:
                    raise UsageError(f"Only quota and SCRAM credential configs can be added "
                                     f"for '{USERS}' using --bootstrap-server. Unexpected "
                                     f"config names: {_scala_list(unknown_add)}")
                if unknown_delete:
                    raise UsageError(f"Only quota and SCRAM credential configs can be deleted "
                                     f"for '{USERS}' using --bootstrap-server. Unexpected "
                                     f"config names: {_scala_list(unknown_delete)}")
                if scram_add or scram_delete:
                    if "" in names:
                        raise UsageError("The use of --entity-default or --user-defaults is "
                                         "not allowed with User SCRAM Credentials using "
                                         "--bootstrap-server.")
                    if quota_add or quota_delete:
                        raise UsageError(f"Cannot alter both quota and SCRAM credential configs "
                                         f"simultaneously for '{USERS}' using "
                                         f"--bootstrap-server.")
            if quota_add or quota_delete:
                self._alter_quotas(types, names, to_add, to_delete)
            else:
                self._alter_scram(names[0], {k: to_add[k] for k in scram_add}, scram_delete)
        name = names[0]
        if self.json:
            print(json.dumps({"type": "altered", "entityTypes": list(types),
                              "entityNames": list(names), "set": dict(to_add),
                              "deleted": list(to_delete)}), file=self.out)
        elif name:
            print(f"Completed updating config for {head[:-1]} {name}.", file=self.out)
        else:
            print(f"Completed updating default config for {head} in the cluster.",
                  file=self.out)

    def _alter_quotas(self, types: Sequence[str], names: Sequence[str],
                      to_add: Mapping[str, str], to_delete: Sequence[str]) -> None:
        if len(types) != len(names):
            raise UsageError("Exactly one entity name must be specified for every entity type")
        entries = self.quotas(types, names)
        old = entries[0].values if entries else {}
        invalid = [k for k in to_delete if k not in old]
        if invalid:
            raise UsageError(f"Invalid config(s): {','.join(invalid)}")
        ops: list[tuple[str, float | None]] = []
        for key, value in to_add.items():
            try:
                ops.append((key, float(value)))
            except ValueError:
                raise UsageError(f"Cannot parse quota configuration value for {key}: "
                                 f"{value}") from None
        ops += [(key, None) for key in to_delete]
        entity = [(_ENTITY_TYPE[t], n or None) for t, n in zip(types, names, strict=True)]
        [outcome] = alter_client_quotas(self.quota_admin(), [(entity, ops)])
        if outcome.error_code:
            raise QuotaFailure(_exception_name(outcome.error_code), outcome.error_message)

    def _alter_scram(self, user: str, to_add: Mapping[str, str],
                     to_delete: Sequence[str]) -> None:
        admin_module = confluent("confluent_kafka.admin")
        kafka = confluent("confluent_kafka")
        alterations = [admin_module.UserScramCredentialDeletion(
            user, getattr(admin_module.ScramMechanism, m.replace("-", "_"))) for m in to_delete]
        for mechanism, text in to_add.items():
            match = re.fullmatch(r"(?:iterations=(-?[0-9]*),)?password=(.*)", text, re.DOTALL)
            if match is None:
                raise UsageError(f"Invalid credential property {mechanism}={text}")
            iterations = DEFAULT_SCRAM_ITERATIONS
            if match.group(1) not in (None, "-1"):
                try:
                    iterations = int(match.group(1))
                except ValueError:
                    raise UsageError(f'For input string: "{match.group(1)}"') from None
            minimum = SCRAM_MECHANISMS[mechanism][1]
            if iterations < minimum:
                raise UsageError(f"Iterations {iterations} is less than the minimum {minimum} "
                                 f"required for {mechanism}")
            enum = getattr(admin_module.ScramMechanism, mechanism.replace("-", "_"))
            alterations.append(admin_module.UserScramCredentialUpsertion(
                user, admin_module.ScramCredentialInfo(enum, iterations),
                match.group(2).encode()))
        admin = self._admin_factory()
        futures = admin.alter_user_scram_credentials(alterations,
                                                     request_timeout=REQUEST_TIMEOUT_S)
        for future in futures.values():
            try:
                future.result(REQUEST_TIMEOUT_S + 5)
            except kafka.KafkaException as e:
                error = e.args[0]
                if _unsupported(e):
                    raise QuotaFailure("UnsupportedVersionException",
                                       "The broker does not support "
                                       "ALTER_USER_SCRAM_CREDENTIALS") from e
                raise QuotaFailure(_exception_name(error.code()), error.str()) from e


def _scala_list(items: Sequence[str]) -> str:
    return f"List({', '.join(items)})"


def _mechanism_name(mechanism: Any) -> str:
    return str(getattr(mechanism, "name", mechanism)).replace("_", "-")


def _unsupported(exc: Any) -> bool:
    """The broker lacks the API (librdkafka: _UNSUPPORTED_FEATURE, or UNSUPPORTED_VERSION)."""
    kafka = confluent("confluent_kafka")
    error: Any = exc.args[0] if exc.args else None
    code = error.code() if hasattr(error, "code") else None
    return code in (kafka.KafkaError._UNSUPPORTED_FEATURE, kafka.KafkaError.UNSUPPORTED_VERSION)


# Kafka's exception class names for the error codes these APIs answer.
_EXCEPTIONS = {42: "InvalidRequestException", 35: "UnsupportedVersionException",
               31: "ClusterAuthorizationException", 40: "InvalidConfigurationException",
               -1: "UnknownServerException", 58: "SaslAuthenticationException",
               69: "ResourceNotFoundException", 91: "ResourceNotFoundException",
               94: "UnacceptableCredentialException", 41: "NotControllerException"}


def _exception_name(code: int) -> str:
    return _EXCEPTIONS.get(code, "KafkaException")


