"""Java's printf numbers (``kafkapy/tools/java_format.py``): pure logic, no broker."""

from __future__ import annotations

from kafkapy.tools.java_format import div, fixed


def test_half_up_on_the_shortest_decimal() -> None:
    assert fixed(0.125, 2) == "0.13"        # Python's "%.2f" gives 0.12
    assert fixed(1.005, 2) == "1.01"        # the double is 1.00499..., Java rounds "1.005"
    assert fixed(2.5, 0) == "3"
    assert fixed(-0.001, 2) == "-0.00"
    assert fixed(1234.5) == "1234.500000"   # %f is %.6f
    assert fixed(1e20, 1) == "100000000000000000000.0"


def test_division_by_zero_is_javas() -> None:
    assert fixed(div(1, 0)) == "Infinity"
    assert fixed(div(-1, 0)) == "-Infinity"
    assert fixed(div(0, 0), 4) == "NaN"
    assert div(3, 2) == 1.5
