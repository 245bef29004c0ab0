"""AlterUserScramCredentials (API key 51, KIP-554): delete and upsert users' SCRAM
credentials. The client sends the salted password (never the password): the broker derives
the stored and server keys.

Mechanism: 0 UNKNOWN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512. v0 is flexible.
"""

from kafkapy.protocol.schema import (
    BYTES,
    INT8,
    INT16,
    INT32,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "AlterUserScramCredentialsRequest",
    [
        field("Deletions", ("ScramCredentialDeletion", [
            field("Name", STRING),
            field("Mechanism", INT8),
        ])),
        field("Upsertions", ("ScramCredentialUpsertion", [
            field("Name", STRING),
            field("Mechanism", INT8),
            field("Iterations", INT32),
            field("Salt", BYTES),
            field("SaltedPassword", BYTES),
        ])),
    ],
    api_key=51, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "AlterUserScramCredentialsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("AlterUserScramCredentialsResult", [
            field("UserName", STRING),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
        ])),
    ],
    api_key=51, kind="response", valid="0", flexible="0+",
)
