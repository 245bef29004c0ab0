"""UpdateFeatures (API key 57): change the cluster's finalized feature levels (KIP-584).

Flexible in every version. v1 replaces AllowDowngrade with UpgradeType (1 upgrade, 2 safe
downgrade, 3 unsafe downgrade) and adds ValidateOnly; v2 drops the per-feature Results from
the response (the top-level error says it all).
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
    "UpdateFeaturesRequest",
    [
        field("timeoutMs", INT32, default=60000),
        field("FeatureUpdates", ("FeatureUpdateKey", [
            field("Feature", STRING),
            field("MaxVersionLevel", INT16),
            field("AllowDowngrade", BOOL, "0"),
            field("UpgradeType", INT8, "1+", default=1),
        ])),
        field("ValidateOnly", BOOL, "1+", default=False),
    ],
    api_key=57, kind="request", valid="0-2", flexible="0+",
)

RESPONSE = Message.declare(
    "UpdateFeaturesResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("ErrorCode", INT16),
        field("ErrorMessage", STRING, nullable="0+", default=None),
        field("Results", ("UpdatableFeatureResult", [
            field("Feature", STRING),
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+", default=None),
        ]), "0-1", ignorable=True),
    ],
    api_key=57, kind="response", valid="0-2", flexible="0+",
)
