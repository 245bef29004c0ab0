"""IncrementalAlterConfigs (API key 44): change single config keys of resources (KIP-339).

ConfigOperation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (the last two for list configs).
v1 is the first flexible version.
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
    "IncrementalAlterConfigsRequest",
    [
        field("Resources", ("AlterConfigsResource", [
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            field("Configs", ("AlterableConfig", [
                field("Name", STRING),
                field("ConfigOperation", INT8),
                field("Value", STRING, nullable="0+"),
            ])),
        ])),
        field("ValidateOnly", BOOL),
    ],
    api_key=44, kind="request", valid="0-1", flexible="1+",
)

RESPONSE = Message.declare(
    "IncrementalAlterConfigsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Responses", ("AlterConfigsResourceResponse", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
            field("ResourceType", INT8),
            field("ResourceName", STRING),
        ])),
    ],
    api_key=44, kind="response", valid="0-1", flexible="1+",
)
