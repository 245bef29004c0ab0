"""Type stub for the compiled message format conversion (kafkapy/_legacy.pyx)."""

from typing_extensions import Buffer

def up_convert(buf: Buffer, target_codec: int = -1, log_append_time: bool = False,
               require_key: bool = False, now: int = 0,
               before_max_ms: int = 9223372036854775807,
               after_max_ms: int = 9223372036854775807) -> bytearray | None: ...
def down_convert(buf: Buffer, magic: int, fetch_offset: int) -> bytes: ...
