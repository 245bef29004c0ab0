"""Kafka's znodes: their paths and the JSON kept in them, exactly as Kafka 2.8-3.x writes them
in ZooKeeper mode (Kafka's ``kafka.zk.ZkData``).

Pure: bytes in, values out; nothing here talks to ZooKeeper. A Kafka 3.x tool pointed at a
ZooKeeper that kafkapy brokers use must see a valid cluster, so every ``encode`` writes the
fields Kafka writes (names, types: some integers are JSON strings in Kafka's formats, e.g. a
timestamp) and every ``decode`` accepts what Kafka writes, older versions included where
Kafka still reads them.

The znodes (under the chroot of ``zookeeper.connect``, if any)::

    /cluster/id                                   {"version":"1","id":"<cluster id>"}
    /controller                  (ephemeral)      {"version":2,"brokerid":1,"timestamp":"<ms>",
                                                   "kraftControllerEpoch":-1}
    /controller_epoch                             "<epoch>" (plain text); its znode version
                                                  fences every controller write
    /brokers/ids/<id>            (ephemeral)      v5: host, port, endpoints, jmx_port, timestamp,
                                                  rack, listener_security_protocol_map, features;
                                                  czxid = the broker epoch (KIP-380)
    /brokers/topics/<t>                           {"version":3,"partitions":{"0":[1,2,3]},
                                                   "adding_replicas":{},"removing_replicas":{},
                                                   "topic_id":"<base64 uuid>"}
    /brokers/topics/<t>/partitions/<p>/state      {"version":1,"leader":1,"leader_epoch":0,
                                                   "controller_epoch":1,"isr":[1,2,3]};
                                                  the znode version is the partition epoch
    /config/topics/<t>, /config/brokers/<id|<default>>
                                                  {"version":1,"config":{"k":"v"}}
    /config/changes/config_change_<seq>           {"version":2,"entity_path":"topics/<t>"}
    /admin/delete_topics/<t>                      (empty)
    /admin/reassign_partitions                    {"version":1,"partitions":[{"topic":..,
                                                   "partition":..,"replicas":[..]}]}
    /isr_change_notification/isr_change_<seq>     {"version":1,"partitions":[{"topic":..,
                                                   "partition":..}]}
    /latest_producer_id_block                     {"version":1,"broker":1,"block_start":"0",
                                                   "block_end":"999"}
    /feature                                      {"version":2,"status":1,"features":
                                                   {"group.version":{"max_version_level":1}}};
                                                  the znode version is the finalized
                                                  features' epoch (KIP-584)

Errors: a decode of bytes that are not the znode's format raises ``ZkDataError`` (a
KafkaError, UNKNOWN_SERVER_ERROR) naming the znode and the bytes.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.errors import UnknownServerError

__all__ = [
    "ADMIN_PATH",
    "BROKERS_PATH",
    "BROKER_IDS_PATH",
    "CLUSTER_ID_PATH",
    "CONFIG_CHANGES_PATH",
    "CONTROLLER_EPOCH_PATH",
    "CONTROLLER_PATH",
    "DELETE_TOPICS_PATH",
    "FEATURE_PATH",
    "ISR_CHANGE_PATH",
    "PERSISTENT_PATHS",
    "PRODUCER_ID_BLOCK_PATH",
    "REASSIGN_PARTITIONS_PATH",
    "TOPICS_PATH",
    "USERS_CONFIG_PATH",
    "BrokerRegistration",
    "ControllerRegistration",
    "FeatureZNode",
    "LeaderAndIsr",
    "ProducerIdBlock",
    "ReplicaAssignment",
    "TopicAssignment",
    "ZkDataError",
    "broker_path",
    "cluster_id_decode",
    "cluster_id_encode",
    "config_change_encode",
    "config_decode",
    "config_encode",
    "config_path",
    "controller_epoch_decode",
    "controller_epoch_encode",
    "delete_topic_path",
    "desanitize",
    "isr_change_decode",
    "isr_change_encode",
    "partition_state_path",
    "reassignment_decode",
    "reassignment_encode",
    "sanitize",
    "topic_id_decode",
    "topic_id_encode",
    "topic_path",
]

CLUSTER_ID_PATH = "/cluster/id"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
BROKERS_PATH = "/brokers"
BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
CONFIG_PATH = "/config"
CONFIG_CHANGES_PATH = "/config/changes"
USERS_CONFIG_PATH = "/config/users"
CONFIG_CHANGE_PREFIX = "config_change_"
ADMIN_PATH = "/admin"
DELETE_TOPICS_PATH = "/admin/delete_topics"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
ISR_CHANGE_PATH = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
FEATURE_PATH = "/feature"

# What a broker creates at start if missing (Kafka's ZkData.PersistentZkPaths).
PERSISTENT_PATHS = (
    "/consumers", BROKER_IDS_PATH, TOPICS_PATH, CONFIG_CHANGES_PATH, "/config/topics",
    "/config/clients", "/config/users", "/config/brokers", "/config/ips", DELETE_TOPICS_PATH,
    "/brokers/seqid", ISR_CHANGE_PATH, "/latest_producer_id_block",
    "/log_dir_event_notification",
)


class ZkDataError(UnknownServerError):
    """A znode's bytes are not in the format Kafka writes there."""


def _dumps(value: Mapping[str, Any]) -> bytes:
    # Jackson writes compact JSON; readers do not care about key order.
    return json.dumps(value, separators=(",", ":")).encode()


def _loads(what: str, data: bytes | None) -> dict[str, Any]:
    try:
        value = json.loads(data or b"")
    except (ValueError, UnicodeDecodeError) as e:
        raise ZkDataError(f"{what}: not JSON: {data!r}") from e
    if not isinstance(value, dict):
        raise ZkDataError(f"{what}: not a JSON object: {data!r}")
    return value


def _field(what: str, obj: Mapping[str, Any], key: str, kind: type) -> Any:
    value = obj.get(key)
    if kind is int and isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ZkDataError(f"{what}: field {key!r} is {value!r}, not {kind.__name__}")
    return value


# ===================================================================== cluster id

def cluster_id_encode(cluster_id: str) -> bytes:
    return _dumps({"version": "1", "id": cluster_id})


def cluster_id_decode(data: bytes) -> str:
    return str(_field(CLUSTER_ID_PATH, _loads(CLUSTER_ID_PATH, data), "id", str))


# ===================================================================== controller

@attrs.frozen
class ControllerRegistration:
    broker_id: int
    timestamp_ms: int

    def encode(self) -> bytes:
        return _dumps({"version": 2, "brokerid": self.broker_id,
                       "timestamp": str(self.timestamp_ms), "kraftControllerEpoch": -1})

    @classmethod
    def decode(cls, data: bytes) -> ControllerRegistration:
        obj = _loads(CONTROLLER_PATH, data)
        timestamp = obj.get("timestamp", "-1")
        return cls(_field(CONTROLLER_PATH, obj, "brokerid", int),
                   int(timestamp) if str(timestamp).lstrip("-").isdigit() else -1)


def controller_epoch_encode(epoch: int) -> bytes:
    return str(epoch).encode()


def controller_epoch_decode(data: bytes) -> int:
    try:
        return int(data.decode())
    except (ValueError, UnicodeDecodeError) as e:
        raise ZkDataError(f"{CONTROLLER_EPOCH_PATH}: not an integer: {data!r}") from e


# ======================================================================== brokers

def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


@attrs.frozen
class BrokerRegistration:
    """``/brokers/ids/<id>``: where a broker listens, its rack and features (JSON v5).

    ``endpoints`` are ``(listener name, security protocol, host, port)``; the top-level
    host/port are the first PLAINTEXT endpoint's (for old clients), or null / -1.
    """

    broker_id: int
    endpoints: tuple[tuple[str, str, str, int], ...]
    rack: str | None = None
    timestamp_ms: int = -1
    features: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    jmx_port: int = -1

    def encode(self) -> bytes:
        plaintext = next((e for e in self.endpoints if e[1] == "PLAINTEXT"), None)
        obj: dict[str, Any] = {
            "version": 5,
            "host": plaintext[2] if plaintext else None,
            "port": plaintext[3] if plaintext else -1,
            "endpoints": [f"{name}://{host}:{port}" for name, _, host, port in self.endpoints],
            "jmx_port": self.jmx_port,
            "timestamp": str(self.timestamp_ms),
            "listener_security_protocol_map": {name: proto
                                               for name, proto, _, _ in self.endpoints},
            "features": {k: dict(v) for k, v in self.features.items()},
        }
        if self.rack is not None:
            obj["rack"] = self.rack
        return _dumps(obj)

    @classmethod
    def decode(cls, broker_id: int, data: bytes) -> BrokerRegistration:
        what = broker_path(broker_id)
        obj = _loads(what, data)
        version = _field(what, obj, "version", int)
        if version < 1:
            raise ZkDataError(f"{what}: unsupported registration version {version}")
        endpoints: tuple[tuple[str, str, str, int], ...]
        if version == 1:
            endpoints = (("PLAINTEXT", "PLAINTEXT", _field(what, obj, "host", str),
                          _field(what, obj, "port", int)),)
        else:
            protocols = obj.get("listener_security_protocol_map") or {}
            parsed: list[tuple[str, str, str, int]] = []
            for text in _field(what, obj, "endpoints", list):
                name, sep, rest = str(text).partition("://")
                host, colon, port = rest.rpartition(":")
                if not sep or not colon or not port.isdigit():
                    raise ZkDataError(f"{what}: endpoint {text!r} is not NAME://host:port")
                parsed.append((name, str(protocols.get(name, name)), host.strip("[]"),
                               int(port)))
            endpoints = tuple(parsed)
        rack = obj.get("rack")
        timestamp = obj.get("timestamp", "-1")
        return cls(broker_id, endpoints, rack if isinstance(rack, str) else None,
                   int(timestamp) if str(timestamp).lstrip("-").isdigit() else -1,
                   obj.get("features") or {}, int(obj.get("jmx_port", -1)))


# ========================================================================= topics

def topic_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}"


def partition_state_path(tp: TopicPartition) -> str:
    return f"{TOPICS_PATH}/{tp.topic}/partitions/{tp.partition}/state"


def topic_id_encode(topic_id: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def topic_id_decode(text: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return uuid.UUID(bytes=raw)
    except ValueError as e:
        raise ZkDataError(f"{text!r} is not a Kafka topic id") from e


@attrs.frozen
class ReplicaAssignment:
    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


@attrs.frozen
class TopicAssignment:
    """``/brokers/topics/<t>``: the replicas of every partition, and the topic id."""

    topic: str
    topic_id: uuid.UUID | None
    partitions: Mapping[int, ReplicaAssignment]

    def encode(self) -> bytes:
        obj: dict[str, Any] = {
            "version": 3,
            "partitions": {str(p): list(a.replicas) for p, a in sorted(self.partitions.items())},
            "adding_replicas": {str(p): list(a.adding)
                                for p, a in sorted(self.partitions.items()) if a.adding},
            "removing_replicas": {str(p): list(a.removing)
                                  for p, a in sorted(self.partitions.items()) if a.removing},
        }
        if self.topic_id is not None:
            obj["topic_id"] = topic_id_encode(self.topic_id)
        return _dumps(obj)

    @classmethod
    def decode(cls, topic: str, data: bytes) -> TopicAssignment:
        what = topic_path(topic)
        obj = _loads(what, data)
        adding = obj.get("adding_replicas") or {}
        removing = obj.get("removing_replicas") or {}
        partitions: dict[int, ReplicaAssignment] = {}
        for p, replicas in (obj.get("partitions") or {}).items():
            try:
                partitions[int(p)] = ReplicaAssignment(
                    tuple(int(r) for r in replicas),
                    tuple(int(r) for r in adding.get(p, ())),
                    tuple(int(r) for r in removing.get(p, ())))
            except (TypeError, ValueError) as e:
                raise ZkDataError(f"{what}: partition {p!r} replicas {replicas!r}") from e
        topic_id = obj.get("topic_id")
        return cls(topic, topic_id_decode(topic_id) if isinstance(topic_id, str) else None,
                   partitions)


@attrs.frozen
class LeaderAndIsr:
    """``.../partitions/<p>/state``: the leader, its epoch, the ISR, the controller epoch
    that wrote it, and (from the znode's stat, not the JSON) the partition epoch."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    partition_epoch: int = 0
    leader_recovery_state: int = 0      # 0 RECOVERED, 1 RECOVERING (KIP-704)

    def encode(self) -> bytes:
        obj: dict[str, Any] = {"version": 1, "leader": self.leader,
                               "leader_epoch": self.leader_epoch,
                               "controller_epoch": self.controller_epoch,
                               "isr": list(self.isr)}
        if self.leader_recovery_state:
            obj["leader_recovery_state"] = self.leader_recovery_state
        return _dumps(obj)

    @classmethod
    def decode(cls, tp: TopicPartition, data: bytes, partition_epoch: int) -> LeaderAndIsr:
        what = partition_state_path(tp)
        obj = _loads(what, data)
        isr = _field(what, obj, "isr", list)
        return cls(_field(what, obj, "leader", int), _field(what, obj, "leader_epoch", int),
                   tuple(int(r) for r in isr), _field(what, obj, "controller_epoch", int),
                   partition_epoch, int(obj.get("leader_recovery_state", 0)))


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


# ======================================================================== configs

def config_path(entity_type: str, entity: str) -> str:
    """``entity_type`` is Kafka's ``topics``, ``brokers``, ``users``, ``clients`` or ``ips``;
    a broker's default entity is ``<default>``."""
    return f"{CONFIG_PATH}/{entity_type}/{entity}"


def sanitize(name: str) -> str:
    """Kafka's ``Sanitizer.sanitize``: a user or client id as a znode name (URL-encoded, UTF-8,
    with ``*`` as ``%2A`` and a space as ``%20``)."""
    return urllib.parse.quote(name, safe="").replace("~", "%7E")


def desanitize(name: str) -> str:
    """Kafka's ``Sanitizer.desanitize``: the inverse of ``sanitize``."""
    return urllib.parse.unquote(name)


def config_encode(config: Mapping[str, str]) -> bytes:
    return _dumps({"version": 1, "config": dict(config)})


def config_decode(data: bytes | None) -> dict[str, str]:
    if not data:
        return {}
    config = _loads("config", data).get("config") or {}
    return {str(k): str(v) for k, v in config.items()}


def config_change_encode(entity_type: str, entity: str) -> bytes:
    return _dumps({"version": 2, "entity_path": f"{entity_type}/{entity}"})


# ================================================================ admin requests

def reassignment_encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
    return _dumps({"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
        for tp, replicas in sorted(reassignment.items())]})


def reassignment_decode(data: bytes) -> dict[TopicPartition, tuple[int, ...]]:
    obj = _loads(REASSIGN_PARTITIONS_PATH, data)
    out: dict[TopicPartition, tuple[int, ...]] = {}
    for entry in _field(REASSIGN_PARTITIONS_PATH, obj, "partitions", list):
        if not isinstance(entry, dict):
            raise ZkDataError(f"{REASSIGN_PARTITIONS_PATH}: entry {entry!r}")
        tp = TopicPartition(_field(REASSIGN_PARTITIONS_PATH, entry, "topic", str),
                            _field(REASSIGN_PARTITIONS_PATH, entry, "partition", int))
        out[tp] = tuple(int(r) for r in _field(REASSIGN_PARTITIONS_PATH, entry, "replicas",
                                               list))
    return out


def isr_change_encode(partitions: Iterable[TopicPartition]) -> bytes:
    return _dumps({"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition} for tp in sorted(partitions)]})


def isr_change_decode(data: bytes) -> set[TopicPartition]:
    obj = _loads(ISR_CHANGE_PATH, data)
    return {TopicPartition(_field(ISR_CHANGE_PATH, e, "topic", str),
                           _field(ISR_CHANGE_PATH, e, "partition", int))
            for e in _field(ISR_CHANGE_PATH, obj, "partitions", list)}


# =================================================================== producer ids

@attrs.frozen
class ProducerIdBlock:
    """``/latest_producer_id_block``: the last block handed out, ``[start, end]``
    inclusive, and the broker it went to."""

    broker_id: int
    block_start: int
    block_end: int

    def encode(self) -> bytes:
        return _dumps({"version": 1, "broker": self.broker_id,
                       "block_start": str(self.block_start), "block_end": str(self.block_end)})

    @classmethod
    def decode(cls, data: bytes) -> ProducerIdBlock:
        obj = _loads(PRODUCER_ID_BLOCK_PATH, data)
        return cls(_field(PRODUCER_ID_BLOCK_PATH, obj, "broker", int),
                   _field(PRODUCER_ID_BLOCK_PATH, obj, "block_start", int),
                   _field(PRODUCER_ID_BLOCK_PATH, obj, "block_end", int))


# ======================================================================= features

@attrs.frozen
class FeatureZNode:
    """``/feature``: the cluster's finalized feature levels (Kafka's ``FeatureZNode``).

    ``status`` 1 (enabled) or 0 (disabled: versioning off, the features to be ignored).
    Version 2 (Kafka from 3.3) writes ``{"max_version_level": n}`` per feature; version 1
    also a ``min_version_level`` (read, and written equal to the max, as Kafka writes it).
    Every level is >= 1."""

    features: Mapping[str, int] = attrs.field(factory=dict)
    status: int = 1
    version: int = 2

    def encode(self) -> bytes:
        features: dict[str, dict[str, int]] = {}
        for name, level in sorted(self.features.items()):
            features[name] = {"max_version_level": level}
            if self.version == 1:
                features[name]["min_version_level"] = level
        return _dumps({"version": self.version, "status": self.status, "features": features})

    @classmethod
    def decode(cls, data: bytes) -> FeatureZNode:
        obj = _loads(FEATURE_PATH, data)
        version = _field(FEATURE_PATH, obj, "version", int)
        if version not in (1, 2):
            raise ZkDataError(f"{FEATURE_PATH}: unsupported version {version}: {data!r}")
        status = _field(FEATURE_PATH, obj, "status", int)
        if status not in (0, 1):
            raise ZkDataError(f"{FEATURE_PATH}: malformed status {status}: {data!r}")
        raw = _field(FEATURE_PATH, obj, "features", dict)
        features: dict[str, int] = {}
        for name, levels in raw.items():
            if not isinstance(levels, dict):
                raise ZkDataError(f"{FEATURE_PATH}: feature {name!r} is {levels!r}")
            high = _field(FEATURE_PATH, levels, "max_version_level", int)
            low = levels.get("min_version_level") if version == 1 else None
            if version == 1:
                low = _field(FEATURE_PATH, levels, "min_version_level", int)
            if high < 1 or (low is not None and not 1 <= low <= high):
                raise ZkDataError(f"{FEATURE_PATH}: feature {name!r} has levels {levels!r}")
            features[name] = high
        return cls(features, status, version)
