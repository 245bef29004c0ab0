"""DescribeAcls (API key 29): list the ACLs matching a filter.

v0 was removed in Kafka 4.0 (v1 is the new baseline) but older clients still send it. v1 adds
the resource pattern type (0 UNKNOWN, 1 ANY, 2 MATCH, 3 LITERAL, 4 PREFIXED; v0 means
LITERAL, hence the default 3) and brokers answer before throttling; v2 is the first flexible
version; v3 adds the USER resource type.
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
    "DescribeAclsRequest",
    [
        field("ResourceTypeFilter", INT8),
        # null matches any resource name.
        field("ResourceNameFilter", STRING, nullable="0+"),
        field("PatternTypeFilter", INT8, "1+", default=3),
        field("PrincipalFilter", STRING, nullable="0+"),
        field("HostFilter", STRING, nullable="0+"),
        field("Operation", INT8),
        field("PermissionType", INT8),
    ],
    api_key=29, kind="request", valid="0-3", flexible="2+",
)

RESPONSE = Message.declare(
    "DescribeAclsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("Resources", ("DescribeAclsResource", [
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            field("PatternType", INT8, "1+", default=3),
            field("Acls", ("AclDescription", [
                field("Principal", STRING),
                field("Host", STRING),
                field("Operation", INT8),
                field("PermissionType", INT8),
            ])),
        ])),
    ],
    api_key=29, kind="response", valid="0-3", flexible="2+",
)
