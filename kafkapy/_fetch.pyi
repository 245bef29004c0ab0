"""Type stubs for the compiled Fetch request decode and response encode."""

import uuid
from typing import Any

from typing_extensions import Buffer

MIN_VERSION: int
MAX_VERSION: int

# (partition, current_leader_epoch, fetch_offset, last_fetched_epoch, log_start_offset,
#  partition_max_bytes)
FetchPartitionTuple = tuple[int, int, int, int, int, int]

def decode_fetch_request(
    buf: Buffer, offset: int, version: int,
) -> tuple[int, int, int, int, int, int, int, int,
           list[tuple[str | None, uuid.UUID | None, list[FetchPartitionTuple]]],
           list[tuple[str | None, uuid.UUID | None, list[int]]],
           str, str | None, int]: ...

def encode_fetch_response(
    version: int, correlation_id: int, throttle_time_ms: int, error_code: int,
    session_id: int,
    topics: list[tuple[Any, Any, list[tuple[Any, ...]]]],
) -> list[Any]: ...
