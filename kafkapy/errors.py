"""Kafka's error codes as exceptions (TEMPORARY minimal version: the full table is being
written; keep this API: KafkaError with ClassVars code/name/retriable/description)."""

from __future__ import annotations

from typing import ClassVar


class KafkaError(Exception):
    code: ClassVar[int] = -1
    name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    retriable: ClassVar[bool] = False
    description: ClassVar[str] = ""


class CorruptMessageError(KafkaError):
    code, name, retriable = 2, "CORRUPT_MESSAGE", True


class UnsupportedVersionError(KafkaError):
    code, name = 35, "UNSUPPORTED_VERSION"


class InvalidRequestError(KafkaError):
    code, name = 42, "INVALID_REQUEST"


class InvalidRecordError(KafkaError):
    code, name = 87, "INVALID_RECORD"


class UnsupportedForMessageFormatError(KafkaError):
    code, name = 43, "UNSUPPORTED_FOR_MESSAGE_FORMAT"


class UnsupportedCompressionTypeError(KafkaError):
    code, name = 76, "UNSUPPORTED_COMPRESSION_TYPE"
