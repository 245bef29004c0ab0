"""CreateAcls (API key 30): add ACLs.

v0 was removed in Kafka 4.0 (v1 is the new baseline) but older clients still send it. v1 adds
the resource pattern type (3 LITERAL or 4 PREFIXED; v0 means LITERAL, hence the default 3)
and brokers answer before throttling; v2 is the first flexible version; v3 adds the USER
resource type.
"""

from kafkapy.protocol.schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "CreateAclsRequest",
    [
        field("Creations", ("AclCreation", [
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            field("ResourcePatternType", INT8, "1+", default=3),
            field("Principal", STRING),
            field("Host", STRING),
            field("Operation", INT8),
            field("PermissionType", INT8),
        ])),
    ],
    api_key=30, kind="request", valid="0-3", flexible="2+",
)

RESPONSE = Message.declare(
    "CreateAclsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("AclCreationResult", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
        ])),
    ],
    api_key=30, kind="response", valid="0-3", flexible="2+",
)
