"""ListConfigResources (API key 74): the names of the config resources the cluster has
(KIP-1142), formerly ListClientMetricsResources (KIP-714).

Flexible in every version. v0 (ListClientMetricsResources) lists client metrics resources
only; v1 adds ResourceTypes to the request (empty: every type the broker lists: topics 2,
brokers 4, client metrics 16, groups 32) and ResourceType to each resource of the response.
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
    "ListConfigResourcesRequest",
    [
        field("ResourceTypes", Array(INT8), "1+"),
    ],
    api_key=74, kind="request", valid="0-1", flexible="0+",
)

RESPONSE = Message.declare(
    "ListConfigResourcesResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ConfigResources", ("ConfigResource", [
            field("ResourceName", STRING),
            field("ResourceType", INT8, "1+", default=16, ignorable=True),
        ])),
    ],
    api_key=74, kind="response", valid="0-1", flexible="0+",
)
