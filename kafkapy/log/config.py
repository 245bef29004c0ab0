"""LogConfig: the per-topic settings of a log, with Kafka's names, defaults and broker fallbacks.

A topic's effective config is its own overrides (topic-level names such as ``segment.bytes``)
on top of the broker's ``log.*`` settings, on top of Kafka's defaults, exactly as Kafka's
LogConfig resolves them. ``LogConfig.resolve(topic_overrides, broker_props)`` does that; the
result is frozen, so a config change makes a new LogConfig that the Log swaps in whole.

Where the broker has several names for one setting, the most precise wins, as in Kafka:
``log.roll.ms`` over ``log.roll.hours``; ``log.retention.ms`` over ``log.retention.minutes``
over ``log.retention.hours``. Kafka's "no limit" for the flush settings is Long.MAX_VALUE.

Errors: ``InvalidConfigError`` (code 40) for an unknown value type, a value out of range or an
unknown topic-level name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from kafkapy.errors import InvalidConfigError

__all__ = ["LONG_MAX", "TOPIC_CONFIG_NAMES", "TOPIC_CONFIG_SPEC", "LogConfig", "parse_value"]

LONG_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1

# topic name -> (attribute, kind, default, broker names in order of precedence with a scale)
TOPIC_CONFIG_SPEC: dict[str, tuple[str, str, object, tuple[tuple[str, int], ...]]] = {
    "segment.bytes": ("segment_bytes", "int", 1073741824, (("log.segment.bytes", 1),)),
    "segment.ms": ("segment_ms", "long", 604800000,
                   (("log.roll.ms", 1), ("log.roll.hours", 3600000))),
    "segment.jitter.ms": ("segment_jitter_ms", "long", 0,
                          (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3600000))),
    "segment.index.bytes": ("segment_index_bytes", "int", 10485760,
                            (("log.index.size.max.bytes", 1),)),
    "index.interval.bytes": ("index_interval_bytes", "int", 4096,
                             (("log.index.interval.bytes", 1),)),
    "flush.messages": ("flush_messages", "long", LONG_MAX,
                       (("log.flush.interval.messages", 1),)),
    "flush.ms": ("flush_ms", "long", LONG_MAX,
                 (("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1))),
    "retention.ms": ("retention_ms", "long", 604800000,
                     (("log.retention.ms", 1), ("log.retention.minutes", 60000),
                      ("log.retention.hours", 3600000))),
    "retention.bytes": ("retention_bytes", "long", -1, (("log.retention.bytes", 1),)),
    "cleanup.policy": ("cleanup_policy", "policy", ("delete",), (("log.cleanup.policy", 1),)),
    "delete.retention.ms": ("delete_retention_ms", "long", 86400000,
                            (("log.cleaner.delete.retention.ms", 1),)),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", "ratio", 0.5,
                                  (("log.cleaner.min.cleanable.ratio", 1),)),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", "long", 0,
                              (("log.cleaner.min.compaction.lag.ms", 1),)),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", "long", LONG_MAX,
                              (("log.cleaner.max.compaction.lag.ms", 1),)),
    "file.delete.delay.ms": ("file_delete_delay_ms", "long", 60000,
                             (("log.segment.delete.delay.ms", 1),)),
    "message.timestamp.type": ("message_timestamp_type", "tstype", "CreateTime",
                               (("log.message.timestamp.type", 1),)),
    "max.message.bytes": ("max_message_bytes", "int", 1048588, (("message.max.bytes", 1),)),
    "message.timestamp.before.max.ms": ("message_timestamp_before_max_ms", "long", LONG_MAX,
                                        (("log.message.timestamp.before.max.ms", 1),)),
    "message.timestamp.after.max.ms": ("message_timestamp_after_max_ms", "long", 3600000,
                                       (("log.message.timestamp.after.max.ms", 1),)),
    "compression.type": ("compression_type", "compression", "producer",
                         (("compression.type", 1),)),
    "min.insync.replicas": ("min_insync_replicas", "int", 1, (("min.insync.replicas", 1),)),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", "bool", False,
                                       (("unclean.leader.election.enable", 1),)),
    "preallocate": ("preallocate", "bool", False, (("log.preallocate", 1),)),
    # Fetch v0-3 (message format 0/1) answered by converting batches down (Kafka 3.x).
    "message.downconversion.enable": ("message_downconversion_enable", "bool", True,
                                      (("log.message.downconversion.enable", 1),)),
    # Replication quotas (Kafka's QuotaConfigs): which replicas the leader's and the
    # follower's replication throttles apply to, "partition:broker" entries or "*".
    "leader.replication.throttled.replicas": ("leader_replication_throttled_replicas",
                                              "replicas", (), ()),
    "follower.replication.throttled.replicas": ("follower_replication_throttled_replicas",
                                                "replicas", (), ()),
    # Deprecated in Kafka 3.0 and ignored: the log always stores magic 2 (KIP-724).
    "message.format.version": ("message_format_version", "msgversion", "3.0-IV1",
                               (("log.message.format.version", 1),)),
}

TOPIC_CONFIG_NAMES = tuple(TOPIC_CONFIG_SPEC)

# Minimums Kafka's ConfigDef enforces (segment.bytes >= 14 on topics: one empty batch header
# fits; segment.index.bytes >= 4; index.interval.bytes >= 0; segment.ms >= 1).
_MIN = {"segment_bytes": 14, "segment_index_bytes": 4, "index_interval_bytes": 0,
        "segment_ms": 1, "segment_jitter_ms": 0, "flush_messages": 1, "flush_ms": 0,
        "retention_ms": -1, "retention_bytes": -1, "delete_retention_ms": 0,
        "min_compaction_lag_ms": 0, "max_compaction_lag_ms": 1, "file_delete_delay_ms": 0,
        "max_message_bytes": 0, "message_timestamp_before_max_ms": 0,
        "message_timestamp_after_max_ms": 0, "min_insync_replicas": 1}
# Kafka's MetadataVersion strings up to 3.x (0.8.0 ... 0.11.0-IV2, 1.0 ... 3.9-IV0).
_MESSAGE_FORMAT_VERSION = re.compile(r"(0\.(8|9|10|11)\.\d|[1-3]\.\d+)(-IV\d)?")
_THROTTLED_REPLICA = re.compile(r"\d+:\d+")
_COMPRESSION = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")


def parse_value(name: str, kind: str, raw: object, scale: int = 1) -> object:
    text = str(raw).strip()
    try:
        if kind in ("int", "long"):
            value = int(text) * scale
            if scale > 1 and value < 0:
                # Kafka: log.retention.hours=-1 (or minutes) means unlimited, i.e. -1 ms.
                value = -1
            limit = _INT_MAX if kind == "int" else LONG_MAX
            return min(value, LONG_MAX) if kind == "long" else _check_int(value, limit)
        if kind == "ratio":
            ratio = float(text)
            if not 0.0 <= ratio <= 1.0:
                raise ValueError("not within [0, 1]")
            return ratio
        if kind == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError("not true or false")
            return text.lower() == "true"
        if kind == "policy":
            parts = tuple(sorted({p.strip() for p in text.split(",") if p.strip()}))
            if not set(parts) <= {"delete", "compact"}:
                raise ValueError("each entry must be delete or compact")
            return parts
        if kind == "tstype":
            if text not in ("CreateTime", "LogAppendTime"):
                raise ValueError("must be CreateTime or LogAppendTime")
            return text
        if kind == "msgversion":
            if not _MESSAGE_FORMAT_VERSION.fullmatch(text):
                raise ValueError("not a Kafka version such as 0.10.0 or 2.8")
            return text
        if kind == "replicas":
            # Kafka's ThrottledReplicaListValidator: "*" first, or partition:broker entries
            entries = tuple(e.strip() for e in text.split(",") if e.strip())
            if entries[:1] == ("*",) or all(_THROTTLED_REPLICA.fullmatch(e) for e in entries):
                return entries
            raise ValueError(f"{name} must be the literal '*' or a list of replicas in the "
                             f"following format: [partitionId],[brokerId]:[partitionId],"
                             f"[brokerId]:...")
        if kind == "compression":
            if text not in _COMPRESSION:
                raise ValueError(f"must be one of {', '.join(_COMPRESSION)}")
            return text
    except ValueError as e:
        raise InvalidConfigError(f"Invalid value {text!r} for configuration {name}: {e}") from e
    raise AssertionError(kind)


def _check_int(value: int, limit: int) -> int:
    if value > limit:
        raise ValueError(f"larger than {limit}")
    return value


@attrs.frozen
class LogConfig:
    """The effective settings of one log. Attribute names are Kafka's topic-level names with
    dots as underscores; ``cleanup_policy`` is a sorted tuple (``("compact", "delete")``)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 604800000
    retention_bytes: int = -1
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 86400000
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    file_delete_delay_ms: int = 60000
    message_timestamp_type: str = "CreateTime"
    max_message_bytes: int = 1048588
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = 3600000     # Kafka 4.0 (KIP-1030)
    compression_type: str = "producer"
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    preallocate: bool = False
    message_downconversion_enable: bool = True
    message_format_version: str = "3.0-IV1"
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        for attr, low in _MIN.items():
            value = getattr(self, attr)
            if value < low:
                raise InvalidConfigError(f"Invalid value {value} for configuration "
                                         f"{attr.replace('_', '.')}: below {low}")

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    def throttles(self, leader: bool, partition: int, broker: int) -> bool:
        """Whether the leader's (``leader``) or the follower's replication quota applies to
        ``partition`` on ``broker`` (Kafka's ReplicationQuotaManager.isThrottled after
        TopicConfigHandler kept the entries of this broker)."""
        entries = self.leader_replication_throttled_replicas if leader else \
            self.follower_replication_throttled_replicas
        return bool(entries) and (entries[0] == "*" or f"{partition}:{broker}" in entries)

    @classmethod
    def resolve(cls, topic_overrides: Mapping[str, object] | None = None,
                broker_props: Mapping[str, object] | None = None) -> LogConfig:
        """Topic overrides (topic-level names) over broker ``log.*`` settings over defaults."""
        values: dict[str, object] = {}
        broker = broker_props or {}
        for attr, kind, _default, broker_names in TOPIC_CONFIG_SPEC.values():
            for broker_name, scale in broker_names:
                if broker.get(broker_name) is not None:
                    values[attr] = parse_value(broker_name, kind, broker[broker_name], scale)
                    break
        for name, raw in (topic_overrides or {}).items():
            if name not in TOPIC_CONFIG_SPEC:
                raise InvalidConfigError(f"Unknown topic config name: {name}")
            attr, kind, _default, _ = TOPIC_CONFIG_SPEC[name]
            values[attr] = parse_value(name, kind, raw)
        return cls(**values)  # type: ignore[arg-type]

    def to_topic_configs(self) -> dict[str, str]:
        """Every topic-level setting as Kafka's DescribeConfigs shows it."""
        out = {}
        for name, (attr, kind, _d, _b) in TOPIC_CONFIG_SPEC.items():
            value = getattr(self, attr)
            if kind in ("policy", "replicas"):
                out[name] = ",".join(value)
            elif kind == "bool":
                out[name] = "true" if value else "false"
            else:
                out[name] = str(value)
        return out
