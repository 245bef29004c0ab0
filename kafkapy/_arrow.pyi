"""Type stub for the compiled Arrow-buffer decoder of record batches (kafkapy/_arrow.pyx)."""

from collections.abc import Iterable

from typing_extensions import Buffer

COL_KEY: int
COL_VALUE: int
COL_OFFSET: int
COL_TIMESTAMP: int
COL_TIMESTAMP_TYPE: int
COL_HEADERS: int

STATUS_END_OF_BUFFER: int
STATUS_FULL: int
STATUS_DONE: int
STATUS_CORRUPT: int
STATUS_UNSUPPORTED: int

class _OwnedBuffer(Buffer):
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __len__(self) -> int: ...

_Binary = tuple[_OwnedBuffer | None, _OwnedBuffer, _OwnedBuffer, int]
_Headers = tuple[
    _OwnedBuffer | None,    # list validity (None: no null)
    _OwnedBuffer,           # list offsets
    int,                    # list null count
    int,                    # number of headers
    _OwnedBuffer,           # header key offsets
    _OwnedBuffer,           # header key data (UTF-8)
    _OwnedBuffer | None,    # header value validity
    _OwnedBuffer,           # header value offsets
    _OwnedBuffer,           # header value data
    int,                    # header value null count
]

class DecodedColumns:
    @property
    def rows(self) -> int: ...
    @property
    def key(self) -> _Binary | None: ...
    @property
    def value(self) -> _Binary | None: ...
    @property
    def offset(self) -> _OwnedBuffer | None: ...
    @property
    def timestamp(self) -> _OwnedBuffer | None: ...
    @property
    def timestamp_type(self) -> _OwnedBuffer | None: ...
    @property
    def headers(self) -> _Headers | None: ...

class RecordBatchDecoder:
    def __init__(
        self,
        columns: int,
        start_offset: int,
        end_offset: int,
        *,
        verify_crc: bool = True,
        aborted: Iterable[tuple[int, int, int]] = (),
    ) -> None: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def end_offset(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def rows(self) -> int: ...
    def decode(
        self,
        buf: Buffer,
        position: int = 0,
        max_rows: int = 65536,
        max_bytes: int = ...,
    ) -> tuple[int, int, int, str | None]: ...
    def take(self) -> DecodedColumns: ...

def utf8_repair(data: Buffer) -> bytes: ...

def _pool_state() -> tuple[int, int]: ...
