"""The producing and consuming tools' client settings (``kafkapy/tools/client_settings.py``):
pure logic, no broker."""

from __future__ import annotations

import pytest

from kafkapy.tools.client_settings import librdkafka_config, parse_key_value


def test_parse_key_value_splits_at_the_first_equals() -> None:
    assert parse_key_value(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    assert parse_key_value(None) == {}
    with pytest.raises(ValueError, match="Invalid command line properties: novalue"):
        parse_key_value(["novalue"])


def test_java_names_become_librdkafkas() -> None:
    config = librdkafka_config({
        "acks": "all", "key.serializer": "org.apache.kafka...ByteArraySerializer",
        "max.block.ms": "1000", "send.buffer.bytes": "102400", "buffer.memory": "33554432",
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                            'required username="alice" password="s3cret";'})
    assert config == {"acks": "all", "socket.send.buffer.bytes": "102400",
                      "queue.buffering.max.kbytes": "32768", "sasl.username": "alice",
                      "sasl.password": "s3cret", "log_level": "4"}
    assert librdkafka_config({"log_level": "7"})["log_level"] == "7"
