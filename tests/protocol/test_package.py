"""kafkapy.protocol as a package: every public name resolves on first use, from the module
that defines it, and importing the records module alone builds no message class."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kafkapy.protocol as protocol
from kafkapy.protocol import api_keys, codec


@pytest.mark.parametrize("name", sorted(set(protocol.__all__) -
                                        {"request_class", "response_class"}))
def test_every_public_name_is_its_home_module_s(name: str) -> None:
    home = api_keys if hasattr(api_keys, name) else codec
    assert getattr(protocol, name) is getattr(home, name)


def test_body_classes_are_the_registry_s() -> None:
    produce = protocol.API_KEYS[protocol.ApiKey.PRODUCE]
    assert protocol.request_class(protocol.ApiKey.PRODUCE).__name__ == produce.request.body.name
    assert protocol.response_class(0).__name__ == produce.response.body.name


def test_unknown_attributes_raise() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        protocol.nope  # noqa: B018


def test_the_records_module_alone_loads_no_message_class() -> None:
    code = ("import sys, kafkapy.protocol.records\n"
            "print(sorted(m for m in sys.modules if m.startswith('kafkapy.protocol')))\n"
            "from kafkapy.protocol import ApiKey, decode_request\n"
            "print(ApiKey.PRODUCE.value, 'kafkapy.protocol.codec' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.split("\n")[:2] == ["['kafkapy.protocol', 'kafkapy.protocol.records']",
                                          "0 True"]
