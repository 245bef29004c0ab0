"""Type stub for the compiled log hot paths (kafkapy/_log.pyx)."""

from typing_extensions import Buffer

def largest_lower_bound(buf: Buffer, entries: int, entry_size: int, target: int) -> int: ...
