"""kafkapy.errors: the error table against kafka-python 3.0.12 as an independent oracle, the
lookup helpers, the static stub, and pickling (errors cross process boundaries)."""

from __future__ import annotations

import ast
import copy
import pickle
import subprocess
import sys
from pathlib import Path

import kafka.errors as kp
import pytest

from kafkapy import errors
from kafkapy.errors import (
    ERRORS,
    CorruptMessageError,
    InvalidRequestError,
    InvalidTopicError,
    KafkaError,
    KafkaStorageError,
    UnknownServerError,
    UnsupportedForMessageFormatError,
    error_class,
    error_name,
    raise_for_code,
)

# Codes whose Kafka name differs in kafka-python, and why. Ours follow Errors.java (4.4).
NAME_DIFFERENCES = {
    -1: ("UNKNOWN", "UNKNOWN_SERVER_ERROR"),  # Kafka renamed the enum constant (KAFKA-9146)
    6: ("NOT_LEADER_FOR_PARTITION", "NOT_LEADER_OR_FOLLOWER"),  # renamed by KIP-392 (2.6)
    10: ("MESSAGE_SIZE_TOO_LARGE", "MESSAGE_TOO_LARGE"),  # kafka-python's own older name
    17: ("INVALID_TOPIC", "INVALID_TOPIC_EXCEPTION"),  # kafka-python drops the suffix
    39: ("INVALID_REPLICATION_ASSIGNMENT", "INVALID_REPLICA_ASSIGNMENT"),  # kafka-python's name
}

# Codes whose retriable flag differs from kafka-python's, and why.
RETRIABLE_DIFFERENCES = {
    # Java's CorruptRecordException extends RetriableException (the producer retries a batch
    # that was corrupted in transit); kafka-python marks CorruptRecordError non-retriable.
    2: (False, True),
}

# Codes newer than kafka-python 3.0.12 knows (Kafka 4.0 to 4.4).
NEWER_THAN_KAFKA_PYTHON = set(range(128, 137))


def _kp_errors() -> dict[int, type[kp.BrokerResponseError]]:
    return {code: cls for code, cls in kp.kafka_errors.items() if code not in (None, 0)}


def test_every_kafka_python_code_exists_with_the_same_name() -> None:
    differences = {}
    for code, kp_cls in _kp_errors().items():
        assert code in ERRORS, f"kafka-python knows code {code} ({kp_cls.message}); we do not"
        if ERRORS[code].name != kp_cls.message:
            differences[code] = (kp_cls.message, ERRORS[code].name)
    assert differences == NAME_DIFFERENCES


def test_retriable_flags_agree_with_kafka_python() -> None:
    differences = {
        code: (kp_cls.retriable, ERRORS[code].retriable)
        for code, kp_cls in _kp_errors().items()
        if kp_cls.retriable != ERRORS[code].retriable
    }
    assert differences == RETRIABLE_DIFFERENCES


def test_codes_beyond_kafka_python() -> None:
    assert set(ERRORS) - set(_kp_errors()) == NEWER_THAN_KAFKA_PYTHON


def test_table_shape() -> None:
    assert sorted(ERRORS) == [-1, *range(1, 137)]
    assert 0 not in ERRORS
    assert len({cls.name for cls in ERRORS.values()}) == len(ERRORS)
    assert len({cls.__name__ for cls in ERRORS.values()}) == len(ERRORS)
    for code, cls in ERRORS.items():
        assert issubclass(cls, KafkaError) and cls is not KafkaError
        assert cls.code == code
        assert cls.description and isinstance(cls.retriable, bool)
        assert getattr(errors, cls.__name__) is cls
        assert cls.__module__ == "kafkapy.errors" and cls.__qualname__ == cls.__name__
        assert cls.__name__ in errors.__all__


@pytest.mark.parametrize(("kafka_name", "class_name"), [
    ("CORRUPT_MESSAGE", "CorruptMessageError"),
    ("INVALID_TOPIC_EXCEPTION", "InvalidTopicError"),
    ("UNKNOWN_SERVER_ERROR", "UnknownServerError"),
    ("KAFKA_STORAGE_ERROR", "KafkaStorageError"),
    ("UNSUPPORTED_FOR_MESSAGE_FORMAT", "UnsupportedForMessageFormatError"),
    ("NETWORK_EXCEPTION", "NetworkError"),
    ("FETCH_SESSION_TOPIC_ID_ERROR", "FetchSessionTopicIdError"),
])
def test_class_names(kafka_name: str, class_name: str) -> None:
    by_name = {cls.name: cls for cls in ERRORS.values()}
    assert by_name[kafka_name].__name__ == class_name


def test_spot_checks() -> None:
    assert (CorruptMessageError.code, CorruptMessageError.retriable) == (2, True)
    assert (InvalidTopicError.code, InvalidTopicError.retriable) == (17, False)
    assert (UnknownServerError.code, UnknownServerError.retriable) == (-1, False)
    assert (KafkaStorageError.code, KafkaStorageError.retriable) == (56, True)
    assert UnsupportedForMessageFormatError.code == 43
    assert InvalidRequestError.code == 42
    assert ERRORS[133].name == "SHARE_SESSION_LIMIT_REACHED" and ERRORS[133].retriable
    assert ERRORS[136].name == "CONTROLLER_ID_NOT_REGISTERED"


def test_stub_lists_every_class() -> None:
    stub = ast.parse(Path(errors.__file__).with_suffix(".pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, ast.ClassDef)}
    assert stubbed == {"KafkaError"} | {cls.__name__ for cls in ERRORS.values()}


def test_message_and_str() -> None:
    e = CorruptMessageError()
    assert e.message == CorruptMessageError.description
    assert e.args == (CorruptMessageError.description,)
    assert str(e) == f"CORRUPT_MESSAGE: {CorruptMessageError.description}"
    custom = InvalidRequestError("bad frame")
    assert custom.message == "bad frame"
    assert "INVALID_REQUEST" in str(custom) and "bad frame" in str(custom)
    assert repr(custom) == "InvalidRequestError('bad frame')"
    with pytest.raises(KafkaError):
        raise custom


def test_error_class() -> None:
    assert error_class(2) is CorruptMessageError
    assert error_class(-1) is UnknownServerError
    with pytest.raises(ValueError):
        error_class(0)


@pytest.mark.parametrize("code", [137, 999, -2, 32767, -32768])
def test_error_class_unknown_code(code: int) -> None:
    cls = error_class(code)
    assert error_class(code) is cls  # cached
    assert issubclass(cls, KafkaError) and cls not in ERRORS.values()
    assert cls.code == code and cls.name == f"UNKNOWN_ERROR_CODE_{code}"
    assert not cls.retriable
    assert code not in ERRORS  # the cache does not leak into the registry
    assert error_class(code + 1 if code < 32767 else code - 1) is not cls


def test_error_name() -> None:
    assert error_name(0) == "NONE"
    assert error_name(-1) == "UNKNOWN_SERVER_ERROR"
    assert error_name(43) == "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    assert error_name(4242) == "UNKNOWN_ERROR_CODE_4242"


def test_raise_for_code() -> None:
    raise_for_code(0)
    raise_for_code(0, "ignored")
    with pytest.raises(CorruptMessageError) as info:
        raise_for_code(2)
    assert info.value.message == CorruptMessageError.description
    with pytest.raises(InvalidRequestError, match="too short"):
        raise_for_code(42, "too short")
    with pytest.raises(KafkaError) as unknown:
        raise_for_code(555, "from the future")
    assert type(unknown.value) is error_class(555) and unknown.value.code == 555


def _all_instances() -> list[KafkaError]:
    out: list[KafkaError] = [KafkaError(), KafkaError("base")]
    for cls in ERRORS.values():
        out += [cls(), cls(f"custom {cls.code}")]
    out += [error_class(4000)(), error_class(-40)("x")]
    return out


def test_pickle_round_trip() -> None:
    for e in _all_instances():
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            back = pickle.loads(pickle.dumps(e, protocol))
            assert type(back) is type(e)
            assert (back.message, back.args, str(back)) == (e.message, e.args, str(e))
        assert type(copy.deepcopy(e)) is type(e)


def test_pickle_extra_attributes_survive() -> None:
    e = InvalidRequestError("x")
    e.api_key = 18  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(e)).api_key == 18


def test_unpickle_in_a_fresh_interpreter() -> None:
    # A fresh process has an empty unknown-code cache: the generated class must be rebuilt.
    payload = pickle.dumps([CorruptMessageError("crc"), error_class(7777)("new code")])
    script = ("import pickle, sys\n"
              "for e in pickle.loads(sys.stdin.buffer.read()):\n"
              "    print(type(e).__name__, e.code, e.name, e.message)\n")
    out = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True,
                         check=True).stdout.decode().splitlines()
    assert out == ["CorruptMessageError 2 CORRUPT_MESSAGE crc",
                   "UnknownErrorCode7777Error 7777 UNKNOWN_ERROR_CODE_7777 new code"]
