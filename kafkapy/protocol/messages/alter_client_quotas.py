"""AlterClientQuotas (API key 49): set or remove client quotas of entities (KIP-546).

An entity is a set of (EntityType, EntityName) pairs: ``user``, ``client-id`` (alone or
together) or ``ip``; a null EntityName is the type's default entity. Each op sets Key to
Value or, with Remove, deletes it. ``ValidateOnly`` checks without changing anything.
v1 is the first flexible version.
"""

from kafkapy.protocol.schema import (
    BOOL,
    FLOAT64,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "AlterClientQuotasRequest",
    [
        field("Entries", ("AlterClientQuotasRequestEntryData", [
            field("Entity", ("AlterClientQuotasRequestEntityData", [
                field("EntityType", STRING),
                field("EntityName", STRING, nullable="0+"),
            ])),
            field("Ops", ("OpData", [
                field("Key", STRING),
                field("Value", FLOAT64),
                field("Remove", BOOL),
            ])),
        ])),
        field("ValidateOnly", BOOL),
    ],
    api_key=49, kind="request", valid="0-1", flexible="1+",
)

RESPONSE = Message.declare(
    "AlterClientQuotasResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Entries", ("AlterClientQuotasResponseEntryData", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
            field("Entity", ("AlterClientQuotasResponseEntityData", [
                field("EntityType", STRING),
                field("EntityName", STRING, nullable="0+"),
            ])),
        ])),
    ],
    api_key=49, kind="response", valid="0-1", flexible="1+",
)
