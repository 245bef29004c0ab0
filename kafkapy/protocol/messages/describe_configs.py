"""DescribeConfigs (API key 32): read the configs of topics, brokers, broker loggers, client
metrics or groups (resource types as in the AdminClient's ConfigResource.Type).

v0 was removed in Kafka 4.0 (v1 is the new baseline) but librdkafka and kafka-python still
send it: v0 answers with IsDefault per config instead of ConfigSource and synonyms. v1 adds
IncludeSynonyms, ConfigSource and Synonyms; v2 is the same as v1 (brokers answer before
throttling); v3 adds IncludeDocumentation, ConfigType and Documentation; v4 is the first
flexible version.
"""

from kafkapy.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Message,
    field,
)

REQUEST = Message.declare(
    "DescribeConfigsRequest",
    [
        field("Resources", ("DescribeConfigsResource", [
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            # null lists all configuration keys.
            field("ConfigurationKeys", Array(STRING), nullable="0+"),
        ])),
        field("IncludeSynonyms", BOOL, "1+", default=False),
        field("IncludeDocumentation", BOOL, "3+", default=False),
    ],
    api_key=32, kind="request", valid="0-4", flexible="4+",
)

RESPONSE = Message.declare(
    "DescribeConfigsResponse",
    [
        field("ThrottleTimeMs", INT32),
        field("Results", ("DescribeConfigsResult", [
            field("ErrorCode", INT16),
            field("ErrorMessage", STRING, nullable="0+"),
            field("ResourceType", INT8),
            field("ResourceName", STRING),
            field("Configs", ("DescribeConfigsResourceResult", [
                field("Name", STRING),
                field("Value", STRING, nullable="0+"),
                field("ReadOnly", BOOL),
                field("ConfigSource", INT8, "1+", default=-1, ignorable=True),
                # v0 only: true if the configuration is not set.
                field("IsDefault", BOOL, "0"),
                field("IsSensitive", BOOL),
                field("Synonyms", ("DescribeConfigsSynonym", [
                    field("Name", STRING, "1+"),
                    field("Value", STRING, "1+", nullable="0+"),
                    field("Source", INT8, "1+"),
                ]), "1+", ignorable=True),
                # BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD (1-9).
                field("ConfigType", INT8, "3+", default=0, ignorable=True),
                field("Documentation", STRING, "3+", nullable="0+", ignorable=True),
            ])),
        ])),
    ],
    api_key=32, kind="response", valid="0-4", flexible="4+",
)
