"""Type stubs for the compiled Produce codec (see kafkapy/_produce.pyx)."""

from collections.abc import Callable
from typing import Any

from typing_extensions import Buffer

from kafkapy._records import BatchHeader
from kafkapy.errors import KafkaError

MIN_VERSION: int
MAX_VERSION: int

PartitionData = tuple[int, memoryview | None, BatchHeader | KafkaError | None]

def decode_produce(
    frame: Buffer, offset: int, version: int,
) -> tuple[str | None, int, int, list[tuple[str, list[PartitionData]]], int]: ...
def encode_produce_response(
    version: int, correlation_id: int, throttle_time_ms: int,
    topics: list[tuple[str, list[tuple[int, Any]]]],
) -> bytes: ...

NO_RESPONSE: int
CLOSE_CONNECTION: int

def produce_now(
    frame: Buffer, min_version: int, max_version: int, partitions: dict[Any, Any],
    make_tp: Callable[[str, int], Any],
    append: Callable[[int, Any], dict[Any, Any]],
) -> bytes | int | None: ...
