"""Type stub for the compiled wire codec (kafkapy/_codec.pyx)."""

from typing import Any

from typing_extensions import Buffer

OPCODES: dict[str, int]

class FieldPlan:
    attr: str
    op: int
    nullable: bool
    compact: bool
    elem_op: int
    sub: StructPlan | None
    tag: int
    default: Any
    def __init__(self, attr: str, op: int, nullable: bool, compact: bool, elem_op: int,
                 sub: StructPlan | None, tag: int, default: Any) -> None: ...

class StructPlan:
    cls: type
    name: str
    flexible: bool
    version: int
    def __init__(self, cls: type, name: str, version: int, flexible: bool) -> None: ...
    def complete(self, fields: tuple[FieldPlan, ...], tagged: tuple[FieldPlan, ...],
                 absent: tuple[tuple[str, Any, bool], ...],
                 must_default: tuple[tuple[str, Any], ...]) -> None: ...

class Encoder:
    def __init__(self, capacity: int = 256) -> None: ...
    def struct(self, plan: StructPlan, obj: Any) -> Encoder: ...
    def getvalue(self) -> bytes: ...
    def parts(self) -> list[Any]: ...

def decode_struct(plan: StructPlan, buf: Buffer, start: int = 0) -> tuple[Any, int]: ...
def read_int16_pair(buf: Buffer) -> tuple[int, int]: ...
def encode_struct(plan: StructPlan, obj: Any) -> bytes: ...
