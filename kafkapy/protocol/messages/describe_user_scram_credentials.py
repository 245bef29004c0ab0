"""DescribeUserScramCredentials (API key 50, KIP-554): the SCRAM mechanisms and iteration
counts each user has (never the credentials). Users null means every user.

Mechanism: 0 UNKNOWN, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512. v0 is flexible.
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
    "DescribeUserScramCredentialsRequest",
    [
        field("Users", ("UserName", [
            field("Name", STRING),
        ]), nullable="0+"),
    ],
    api_key=50, kind="request", valid="0", flexible="0+",
)

RESPONSE = Message.declare(
    "DescribeUserScramCredentialsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+"),
        field("Results", ("DescribeUserScramCredentialsResult", [
            field("User", STRING),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
            field("CredentialInfos", ("CredentialInfo", [
                field("Mechanism", INT8),
                field("Iterations", INT32),
            ])),
        ])),
    ],
    api_key=50, kind="response", valid="0", flexible="0+",
)
