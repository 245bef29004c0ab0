"""DeleteTopics (API key 20): delete topics by name or (v6+) by topic id.

v0 was removed in Kafka 4.0 (v1 is the new baseline); requests v0-3 are identical. v1 adds
the throttle time to the response; from v2 brokers answer before throttling; v3 may return
TOPIC_DELETION_DISABLED; v4 is the first flexible version; v5 adds a per-topic ErrorMessage and
may return THROTTLING_QUOTA_EXCEEDED (KIP-599); v6 replaces TopicNames by Topics, each with a
nullable name and a topic id (KIP-516), and returns topic ids.
"""

from kafkapy.protocol.schema import (
    INT16,
    INT32,
    STRING,
    UUID,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "DeleteTopicsRequest",
    [
        field("Topics", ("DeleteTopicState", [
            field("Name", STRING, "6+", nullable="6+", default=None),
            field("TopicId", UUID, "6+"),
        ]), "6+"),
        field("TopicNames", Array(STRING), "0-5", ignorable=True),
        field("TimeoutMs", INT32),
    ],
    api_key=20, kind="request", valid="0-6", flexible="4+",
)

RESPONSE = Message.declare(
    "DeleteTopicsResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("Responses", ("DeletableTopicResult", [
            field("Name", STRING, nullable="6+"),
            field("TopicId", UUID, "6+", ignorable=True),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, "5+", nullable="5+", default=None, ignorable=True),
        ])),
    ],
    api_key=20, kind="response", valid="0-6", flexible="4+",
)
