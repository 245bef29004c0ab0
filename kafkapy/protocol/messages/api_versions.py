"""ApiVersions (API key 18): the API keys and version ranges the broker supports, and (v3+)
its supported and finalized features.

v0-2 requests have an empty body; v1 adds the throttle time to the response; from v2 brokers
answer before throttling; v3 is the first flexible version (the response header stays v0, see
the protocol reference), adds ClientSoftwareName/Version to the request and the tagged
feature fields to the response (KIP-511, KIP-584); v4 allows SupportedFeatures MinVersion 0
(KAFKA-17011). A request newer than the broker supports is answered with a v0 body.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Message,
    field,
)

REQUEST = Message.declare(
    "ApiVersionsRequest",
    [
        field("ClientSoftwareName", STRING, "3+", ignorable=True),
        field("ClientSoftwareVersion", STRING, "3+", ignorable=True),
    ],
    api_key=18, kind="request", valid="0-4", flexible="3+",
)

RESPONSE = Message.declare(
    "ApiVersionsResponse",
    [
        field("ErrorCode", INT16),
        field("ApiKeys", ("ApiVersion", [
            field("ApiKey", INT16),
            field("MinVersion", INT16),
            field("MaxVersion", INT16),
        ])),
        field("ThrottleTimeMs", INT32, "1+", ignorable=True),
        field("SupportedFeatures", ("SupportedFeatureKey", [
            field("Name", STRING, "3+"),
            field("MinVersion", INT16, "3+"),
            field("MaxVersion", INT16, "3+"),
        ]), "3+", tag=0, ignorable=True),
        # -1 if the finalized features are not known.
        field("FinalizedFeaturesEpoch", INT64, "3+", default=-1, tag=1, ignorable=True),
        field("FinalizedFeatures", ("FinalizedFeatureKey", [
            field("Name", STRING, "3+"),
            field("MaxVersionLevel", INT16, "3+"),
            field("MinVersionLevel", INT16, "3+"),
        ]), "3+", tag=2, ignorable=True),
        # Whether the controller is ready for a ZooKeeper to KRaft migration.
        field("ZkMigrationReady", BOOL, "3+", default=False, tag=3, ignorable=True),
    ],
    api_key=18, kind="response", valid="0-4", flexible="3+",
)
