"""DescribeCluster (API key 60): the cluster id, the controller, the brokers (or, for
EndpointType 2, the controllers) and the cluster's authorized operations (KIP-700).

Flexible in every version. v1 adds EndpointType (1 brokers, 2 controllers; KIP-919) and the
MISMATCHED_ENDPOINT_TYPE / UNSUPPORTED_ENDPOINT_TYPE errors; v2 adds IncludeFencedBrokers and
the brokers' IsFenced (KIP-1073).
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeClusterRequest",
    [
        field("IncludeClusterAuthorizedOperations", BOOL),
        field("EndpointType", INT8, "1+", default=1),
        field("IncludeFencedBrokers", BOOL, "2+"),
    ],
    api_key=60, kind="request", valid="0-2", flexible="0+",
)

RESPONSE = Message.declare(
    "DescribeClusterResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+", default=None),
        field("EndpointType", INT8, "1+", default=1),
        field("ClusterId", STRING),
        field("ControllerId", INT32, default=-1),
        field("Brokers", ("DescribeClusterBroker", [
            field("BrokerId", INT32),
            field("Host", STRING),
            field("Port", INT32),
            field("Rack", STRING, nullable="0+", default=None),
            field("IsFenced", BOOL, "2+"),
        ])),
        # A bit field of ACL operations; INT32_MIN when not requested.
        field("ClusterAuthorizedOperations", INT32, default=-2147483648),
    ],
    api_key=60, kind="response", valid="0-2", flexible="0+",
)
