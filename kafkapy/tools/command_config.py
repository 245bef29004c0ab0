"""The network tools' client configuration: ``--command-config`` (a Java properties file of
client settings, as Kafka's tools take it) and ``--bootstrap-server``, as confluent-kafka's
settings, and the one line a tool prints when confluent-kafka is missing.

librdkafka shares Kafka's names for what matters here (security.protocol, sasl.mechanism,
ssl.*); the Java client's ``sasl.jaas.config`` of a PLAIN or SCRAM login becomes
``sasl.username`` / ``sasl.password``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["client_config", "install_hint", "jaas_login", "load_properties"]


def install_hint(tool: str) -> str:
    """What a network tool prints (then exits 1) when confluent-kafka cannot be imported."""
    return f"kafkapy {tool} needs confluent-kafka: pip install 'kafkapy[tools]'"


def load_properties(path: str) -> dict[str, str]:
    """A Java properties file as Kafka's ``Utils.loadProps`` reads it: ``key=value``,
    ``key: value`` or ``key value`` lines, ``#``/``!`` comments, trailing-backslash
    continuations, backslash escapes in keys. Raises OSError when unreadable."""
    props: dict[str, str] = {}
    pending = ""
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = pending + (raw.strip() if pending else raw.lstrip())
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        match = re.match(r"((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$", line)
        if match is None:
            props[line.strip().replace("\\", "")] = ""
        else:
            props[match.group(1).replace("\\", "")] = match.group(2).strip()
    return props


def jaas_login(value: str) -> dict[str, str]:
    """librdkafka's ``sasl.username`` / ``sasl.password`` from a Java client's
    ``sasl.jaas.config`` of a PLAIN or SCRAM login (``username="..." password="..."``)."""
    login: dict[str, str] = {}
    for name, target in (("username", "sasl.username"), ("password", "sasl.password")):
        found = re.search(rf'{name}\s*=\s*"([^"]*)"', value)
        if found:
            login[target] = found.group(1)
    return login


def client_config(bootstrap: str, command_config: str | None,
                  extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """confluent-kafka settings: the ``--command-config`` file's, then ``extra``, then
    ``bootstrap.servers``. Raises OSError when the file cannot be read."""
    config: dict[str, str] = {}
    if command_config:
        for key, value in load_properties(command_config).items():
            if key == "sasl.jaas.config":
                config.update(jaas_login(value))
                continue
            config[key] = value
    config.update(extra or {})
    config["bootstrap.servers"] = bootstrap
    return config
