"""Type stubs for the compiled record-batch module (see kafkapy.protocol.records)."""

from collections.abc import Sequence
from typing import Any

from typing_extensions import Buffer

from kafkapy.errors import KafkaError

BATCH_HEADER_SIZE: int
BATCH_HEADER_LAYOUT: tuple[tuple[str, int, int], ...]
BATCH_ATTRIBUTE_MASKS: dict[str, int]

def crc32c(data: Buffer, crc: int = 0) -> int: ...
def decompress(codec: int, data: Buffer, legacy_magic0: bool = False) -> Buffer: ...
def compress(codec: int, data: Buffer, legacy_magic0: bool = False) -> bytes: ...
def _crc32c_implementation() -> str: ...
def _crc32c_paths() -> tuple[str, ...]: ...
def _crc32c_with(name: str, data: Buffer, crc: int = 0) -> int: ...

class BatchHeader:
    def __init__(self, buf: Buffer, offset: int = 0) -> None: ...
    @staticmethod
    def header_only(buf: Buffer, offset: int = 0) -> BatchHeader: ...
    @property
    def base_offset(self) -> int: ...
    @property
    def batch_length(self) -> int: ...
    @property
    def partition_leader_epoch(self) -> int: ...
    @property
    def magic(self) -> int: ...
    @property
    def crc(self) -> int: ...
    @property
    def attributes(self) -> int: ...
    @property
    def compression(self) -> int: ...
    @property
    def timestamp_type(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...
    @property
    def has_delete_horizon(self) -> bool: ...
    @property
    def last_offset_delta(self) -> int: ...
    @property
    def base_timestamp(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def record_count(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def raw(self) -> memoryview: ...
    @property
    def crc_valid(self) -> bool: ...
    def compute_crc(self) -> int: ...
    def records(self) -> list[Record]: ...

class BatchScan:
    @property
    def batches(self) -> list[BatchHeader]: ...
    @property
    def valid_bytes(self) -> int: ...
    @property
    def error(self) -> KafkaError | None: ...
    @property
    def truncated(self) -> bool: ...

def check_produce_batch(buf: Buffer, version: int) -> BatchHeader: ...
def scan_batches(buf: Buffer, *, verify_crc: bool = True) -> BatchScan: ...

class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    sequence: int
    attributes: int
    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        sequence: int = -1,
        attributes: int = 0,
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...

class ControlRecord:
    version: int
    type: int
    coordinator_epoch: int
    def __init__(self, version: int, type: int, coordinator_epoch: int) -> None: ...
    def __eq__(self, other: object) -> bool: ...

def decode_control_record(record: Record) -> ControlRecord: ...

_RecordTuple = (
    tuple[Buffer | None, Buffer | None, Sequence[tuple[str, Buffer | None]] | None, int]
    | tuple[Buffer | None, Buffer | None, Sequence[tuple[str, Buffer | None]] | None, int, int]
)

def build_batch(
    records: Sequence[_RecordTuple] | Sequence[Any],
    *,
    base_offset: int = 0,
    compression: int = 0,
    timestamp_type: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    last_offset_delta: int | None = None,
    delete_horizon: int | None = None,
    max_timestamp: int | None = None,
) -> bytes: ...
def build_control_batch(
    type: int,
    coordinator_epoch: int,
    *,
    producer_id: int,
    producer_epoch: int,
    base_offset: int = 0,
    timestamp_ms: int,
    partition_leader_epoch: int = -1,
) -> bytes: ...
class AssignResult:
    @property
    def next_offset(self) -> int: ...
    @property
    def batches(self) -> int: ...
    @property
    def records(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def first_max_timestamp(self) -> int: ...
    @property
    def largest_batch(self) -> int: ...
    @property
    def stateful_batches(self) -> int: ...

def assign_offsets(
    buf: Buffer,
    base_offset: int,
    *,
    log_append_time: int | None = None,
    partition_leader_epoch: int | None = None,
    verify: bool = False,
    max_batch_size: int = -1,
) -> AssignResult: ...

def record_errors(
    buf: Buffer,
    *,
    compacted: bool,
    create_time: bool,
    now: int,
    before_max_ms: int,
    after_max_ms: int,
) -> tuple[bool, list[tuple[int, int, int, int, int, int]]] | None: ...

class LegacyMessage:
    offset: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    def __init__(
        self,
        offset: int,
        magic: int,
        attributes: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...

def decode_legacy(buf: Buffer) -> list[LegacyMessage]: ...
