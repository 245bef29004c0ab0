"""Numbers as Kafka's Java tools print them with ``printf``: ``%.Nf`` rounds the shortest
decimal form of the double half-up (``0.125`` -> ``0.13``, where Python's ``%.2f`` gives
``0.12``), ``%f`` is ``%.6f``, and a division by zero is ``Infinity`` / ``NaN`` rather than an
exception. The perf tests' lines are compared by scripts, so these details matter.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["div", "fixed"]


def div(a: float, b: float) -> float:
    """``a / b`` as a Java double division: ``b == 0`` gives +-Infinity or NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * (math.copysign(1.0, b))
    return a / b


def fixed(value: float, digits: int = 6) -> str:
    """Java's ``String.format("%.<digits>f", value)`` (Locale.ROOT)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    quantum = Decimal(1).scaleb(-digits)
    return format(Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP), "f")
