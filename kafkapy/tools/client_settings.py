"""What the producing and consuming tools (``console-producer``, ``console-consumer``,
``producer-perf-test``, ``consumer-perf-test``) share: Kafka's ``key=value`` command-line
properties, the Java client's setting names as librdkafka's, the Java exceptions a client
error is reported as, and Kafka's tools' log line.

Invariants: a setting librdkafka has under Kafka's name passes unchanged; a Java-only setting
with a librdkafka equivalent is renamed (``send.buffer.bytes`` -> ``socket.send.buffer.bytes``,
``buffer.memory`` bytes -> ``queue.buffering.max.kbytes``); a Java-only setting without one
(serializer classes, ``max.block.ms``) is dropped, since it names something librdkafka does
not have rather than a mistake of the user's. Anything else goes to librdkafka, which refuses
what it does not know.
"""

from __future__ import annotations

import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from kafkapy.tools.command_config import install_hint, jaas_login, load_properties

__all__ = [
    "CONSUMER_CONFIG",
    "JAVA_ERRORS",
    "JAVA_ONLY",
    "LOG_TOOLS",
    "PRODUCER_CONFIG",
    "create_client",
    "import_client",
    "java_error",
    "librdkafka_config",
    "load_properties",
    "log_line",
    "parse_key_value",
]

# Java client settings that librdkafka does not have and whose job the tools do themselves
# (serializers: the tools send and print bytes) or that have no equivalent (max.block.ms: the
# console producer bounds its own wait on a full queue).
JAVA_ONLY = frozenset({
    "key.serializer", "value.serializer", "key.deserializer", "value.deserializer",
    "max.block.ms", "interceptor.classes", "partitioner.class", "metric.reporters",
})
RENAMED = {"send.buffer.bytes": "socket.send.buffer.bytes",
           "receive.buffer.bytes": "socket.receive.buffer.bytes"}
PRODUCER_CONFIG = "org.apache.kafka.clients.producer.ProducerConfig"
CONSUMER_CONFIG = "org.apache.kafka.clients.consumer.ConsumerConfig"
# librdkafka logs from WARNING up, as Kafka's tools-log4j.properties logs WARN and above.
LOG_TOOLS = "4"

# librdkafka / Kafka error codes -> (Java exception class, its message) as Kafka's client
# reports a failed send or fetch.
JAVA_ERRORS: dict[int, tuple[str, str]] = {
    2: ("CorruptRecordException", "This message has failed its CRC checksum, exceeds the "
                                  "valid size, has a null key for a compacted topic, or is "
                                  "otherwise corrupt."),
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    10: ("RecordTooLargeException", "The request included a message larger than the max "
                                    "message size the server will accept."),
    19: ("NotEnoughReplicasException", "Messages are rejected since there are fewer in-sync "
                                       "replicas than required."),
    20: ("NotEnoughReplicasAfterAppendException", "Messages are written to the log, but to "
                                                  "fewer in-sync replicas than required."),
    29: ("TopicAuthorizationException", "Not authorized to access topics: [{topic}]"),
    87: ("InvalidRecordException", "This record has failed the validation on broker and "
                                   "hence will be rejected."),
    -192: ("TimeoutException", "Expiring record(s) for {topic}: the delivery timeout has "
                               "elapsed"),
    -188: ("TimeoutException", "Topic {topic} not present in metadata."),
    -190: ("UnknownTopicOrPartitionException", "This server does not host this "
                                               "topic-partition."),
}


def import_client(tool: str) -> Any:
    """confluent_kafka, or None after printing the install hint (the caller exits 1)."""
    try:
        import confluent_kafka
    except ImportError:
        sys.stderr.write(install_hint(tool) + "\n")
        return None
    return confluent_kafka


def parse_key_value(args: Iterable[str] | None) -> dict[str, str]:
    """Kafka's ``CommandLineUtils.parseKeyValueArgs``: ``key=value`` (split at the first
    ``=``; ``key=`` is an empty value). Raises ValueError for an argument without ``=``."""
    props: dict[str, str] = {}
    for arg in args or ():
        key, sep, value = arg.partition("=")
        if not sep:
            raise ValueError(f"Invalid command line properties: {arg}")
        props[key] = value
    return props


def librdkafka_config(props: Mapping[str, str]) -> dict[str, str]:
    """Kafka's client settings as confluent-kafka's (see the module docstring)."""
    config: dict[str, str] = {}
    for key, value in props.items():
        if key in JAVA_ONLY:
            continue
        if key == "buffer.memory":
            config["queue.buffering.max.kbytes"] = str(max(1, int(value) // 1024))
        elif key == "sasl.jaas.config":
            config.update(jaas_login(value))
        else:
            config[RENAMED.get(key, key)] = value
    config.setdefault("log_level", LOG_TOOLS)
    return config


def java_error(error: Any, topic: str = "") -> str:
    """A confluent-kafka KafkaError as Kafka's client names it:
    ``org.apache.kafka.common.errors.<Class>: <message>``, else librdkafka's words."""
    code = error.code() if callable(getattr(error, "code", None)) else None
    known = JAVA_ERRORS.get(code) if code is not None else None
    if known is not None:
        name, message = known
        return f"org.apache.kafka.common.errors.{name}: {message.format(topic=topic)}"
    text = getattr(error, "str", None)
    return f"org.apache.kafka.common.KafkaException: {text() if callable(text) else error}"


def log_line(level: str, message: str, logger: str, out: TextIO | None = None) -> None:
    """One line as Kafka's tools log it (``tools-log4j.properties``: ``[%d] %p %m (%c)%n``)."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    (out or sys.stderr).write(f"[{stamp},{int(now * 1000) % 1000:03d}] {level} {message} "
                              f"({logger})\n")


UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')


def create_client(factory: Callable[[dict[str, Any]], Any], config: dict[str, Any],
                  config_class: str) -> Any:
    """``factory(config)``; a property librdkafka does not know is dropped with Kafka's
    warning (``These configurations '[x]' were supplied but are not used yet.``), as the Java
    client ignores unknown properties. A bad value still raises (KafkaException)."""
    config = dict(config)
    unused: list[str] = []
    while True:
        try:
            client = factory(config)
            break
        except Exception as e:
            describe = getattr(e.args[0] if e.args else None, "str", None)
            text = describe() if callable(describe) else str(e)
            match = UNKNOWN_PROPERTY.search(text)
            if match is None or match.group(1) not in config:
                raise
            unused.append(match.group(1))
            del config[match.group(1)]
    if unused:
        log_line("WARN", f"These configurations '[{', '.join(unused)}]' were supplied but are "
                         f"not used yet.", config_class)
    return client


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that a tool ends as Kafka's shutdown hook ends
    it (the consumer closed and its total printed, the producer flushed); exit code 143 as
    the JVM's. A BaseException, as KeyboardInterrupt, so that no ``except Exception`` eats
    it."""

    code = 143


def catch_sigterm() -> None:
    def handler(signum: int, frame: object) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, handler)
