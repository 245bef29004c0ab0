"""FindCoordinator (API key 10): the broker coordinating a consumer group, a transactional id
or (v6) a share group.

v1 adds KeyType (0 group, 1 transaction) and, in the response, the throttle time and an
ErrorMessage; from v2 brokers answer before throttling; v3 is the first flexible version;
v4 batches the keys: CoordinatorKeys in, Coordinators out, replacing the single Key and the
top-level result (KIP-699); v5 may return TRANSACTION_ABORTABLE (KIP-890); v6 adds share
groups (KeyType 2, key "groupId:topicId:partition", KIP-932).
"""

from kafkapy.protocol.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "FindCoordinatorRequest",
    [
        field("Key", STRING, "0-3"),
        field("KeyType", INT8, "1+", default=0, ignorable=False),
        field("CoordinatorKeys", Array(STRING), "4+"),
    ],
    api_key=10, kind="request", valid="0-6", flexible="3+",
)

RESPONSE = Message.declare(
    "FindCoordinatorResponse",
    [
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("ErrorCode", INT16, "0-3"),
        field("ErrorMessage", STRING, "1-3", nullable="1-3", ignorable=True),
        field("NodeId", INT32, "0-3"),
        field("Host", STRING, "0-3"),
        field("Port", INT32, "0-3"),
        field("Coordinators", ("Coordinator", [
            field("Key", STRING, "4+"),
            field("NodeId", INT32, "4+"),
            field("Host", STRING, "4+"),
            field("Port", INT32, "4+"),
            field("ErrorCode", INT16, "4+"),
            field("ErrorMessage", STRING, "4+", nullable="4+", ignorable=True),
        ]), "4+"),
    ],
    api_key=10, kind="response", valid="0-6", flexible="3+",
)
