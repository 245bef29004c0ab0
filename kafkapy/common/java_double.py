"""Java's ``Double.toString``: how Kafka writes a double (a DOUBLE quota stored in
ZooKeeper, ``50.0``; a quota value printed by ``kafka-configs.sh``, ``1024.0``; ``1.0E7``
from ten million up and below 0.001)."""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["java_double"]


def java_double(x: float) -> str:
    if not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if x == 0.0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E" \
           f"{exponent + len(digits) - 1}"
