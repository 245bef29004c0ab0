"""Type stub for the compiled message format conversion (kafkapy/_legacy.pyx)."""

from typing_extensions import Buffer

def up_convert(buf: Buffer, target_codec: int = -1, log_append_time: bool = False,
               require_key: bool = False) -> bytearray | None: ...
def down_convert(buf: Buffer, magic: int, fetch_offset: int) -> bytes: ...
