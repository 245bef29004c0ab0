"""AlterConfigs (API key 33): replace the whole dynamic config of resources (configs left out
are reset to their defaults); IncrementalAlterConfigs is its per-key successor.

v1 is the same as v0 (brokers answer before throttling); v2 is the first flexible version.
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
    "AlterConfigsRequest",
    [
        field("Resources", ("AlterConfigsResource", [
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            field("Configs", ("AlterableConfig", [
                field("Name", STRING),
                field("Value", STRING, nullable="0+"),
            ])),
        ])),
        field("ValidateOnly", BOOL),
    ],
    api_key=33, kind="request", valid="0-2", flexible="2+",
)

RESPONSE = Message.declare(
    "AlterConfigsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Responses", ("AlterConfigsResourceResponse", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
            field("ResourceType", INT8),
            field("ResourceName", STRING),
        ])),
    ],
    api_key=33, kind="response", valid="0-2", flexible="2+",
)
