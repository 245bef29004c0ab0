"""--command-config as Kafka's tools read it (Java properties) and as confluent-kafka takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkapy.tools.command_config import client_config, install_hint, load_properties


def test_java_properties(tmp_path: Path) -> None:
    f = tmp_path / "client.properties"
    f.write_text("# a comment\n! another\n\nsecurity.protocol=SASL_SSL\n"
                 "sasl.mechanism : PLAIN\nclient.id  tools\n"
                 "ssl.ca.location=/etc/a,\\\n    /etc/b\nescaped\\=key=v\nflag\n")
    assert load_properties(str(f)) == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "client.id": "tools",
        "ssl.ca.location": "/etc/a,/etc/b", "escaped=key": "v", "flag": ""}


def test_client_config_translates_the_jaas_login_and_puts_bootstrap_last(tmp_path: Path
                                                                        ) -> None:
    f = tmp_path / "c.properties"
    f.write_text('sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule '
                 'required username="alice" password="s3cret";\n'
                 "bootstrap.servers=ignored:1\n")
    assert client_config("broker:9092", str(f), {"client.id": "x"}) == {
        "sasl.username": "alice", "sasl.password": "s3cret", "client.id": "x",
        "bootstrap.servers": "broker:9092"}
    assert client_config("b:1", None) == {"bootstrap.servers": "b:1"}
    with pytest.raises(OSError):
        client_config("b:1", str(tmp_path / "missing.properties"))
    assert install_hint("topics") == \
        "kafkapy topics needs confluent-kafka: pip install 'kafkapy[tools]'"
