"""DescribeClientQuotas (API key 48): the client quotas matching a filter (KIP-546).

Each filter component names an entity type (``user``, ``client-id``, ``ip``) and a MatchType:
0 EXACT (the entity named by Match), 1 DEFAULT (the type's default entity, Match null), 2 ANY
(any specified entity of the type, defaults included). ``Strict`` keeps only entities made
of exactly the filtered types. A default entity's EntityName is null in the answer.
v1 is the first flexible version.
"""

from kafkapy.protocol.schema import (
    BOOL,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeClientQuotasRequest",
    [
        field("Components", ("ComponentData", [
            field("EntityType", STRING),
            field("MatchType", INT8),
            field("Match", STRING, nullable="0+"),
        ])),
        field("Strict", BOOL),
    ],
    api_key=48, kind="request", valid="0-1", flexible="1+",
)

RESPONSE = Message.declare(
    "DescribeClientQuotasResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("Entries", ("DescribeClientQuotasEntryData", [
            field("Entity", ("DescribeClientQuotasEntityData", [
                field("EntityType", STRING),
                field("EntityName", STRING, nullable="0+"),
            ])),
            field("Values", ("ValueData", [
                field("Key", STRING),
                field("Value", FLOAT64),
            ])),
        ]), nullable="0+"),
    ],
    api_key=48, kind="response", valid="0-1", flexible="1+",
)
