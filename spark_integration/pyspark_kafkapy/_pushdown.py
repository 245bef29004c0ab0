"""Filter pushdown: which of Spark's pushed filters the plan can answer, and how exactly.

Spark (4.1+, with ``spark.sql.python.filterPushdown.enabled=true``) hands
``DataSourceReader.pushFilters`` the AND-ed conjuncts of a query's WHERE clause it could
translate; the filters returned are the ones Spark still evaluates on every row, the others it
drops from its plan, trusting the reader to enforce them exactly. So a filter is consumed
(not returned) only when the read enforces it row for row:

=============================  ===============================================  ==========
filter                         answered by                                      returned?
=============================  ===============================================  ==========
``topic``, ``partition``:      dropping whole topic-partitions before planning  no
=, <=>, IN, NOT =, NOT IN,     (the columns are constant within a partition,
<, <=, >, >=; and STARTS       so the test is exact; Python compares strings
WITH, ENDS WITH, CONTAINS      by code point, as Spark by UTF-8 bytes)
(topic)
``offset``: =, <=>, <, <=,     narrowing each offset range ``[start, end)``:    no
>, >=                          the decoder keeps exactly those offsets; the
                               ``.index`` gives the byte position to start at
``offset IN (...)``            narrowed to ``[min, max + 1)``                   yes
``timestamp``: >=, >, =, <=>,  the start moves to the first offset whose        yes
IN                             record timestamp can match, found with the
                               ``.timeindex`` (segments whose largest
                               timestamp is below the bound are skipped
                               whole) and the ``.index``; records in the range
                               may still be older (CreateTime is not ordered)
``timestamp`` <, <=            nothing: a later record may still be older       yes
IS NOT NULL on topic,          always true (never null)                         no
partition, offset,
timestamp, timestampType
IS NULL (or <=> NULL) on       always false: nothing is read                    no
those columns
anything else (key, value,     nothing                                          yes
headers, timestampType)
=============================  ===============================================  ==========

IN and NOT IN lists holding NULL, values of an unexpected type (a float compared with
``partition``, a naive datetime) and NOT of anything but = and IN are returned untouched.
(An OR across columns is not handed over at all: Spark keeps it.) The result (``Pushed``)
holds plain values: it travels with the pickled reader from the planner worker that ran
``pushFilters`` to ``partitions()`` (same process) and the executors.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkapy.common.topic_partition import TopicPartition

__all__ = ["Pushed", "describe", "push_filters"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NOT_NULL = ("topic", "partition", "offset", "timestamp", "timestampType")

# A condition on a partition-constant column: (column, op, operand).
Condition = tuple[str, str, Any]


@dataclass(frozen=True)
class Pushed:
    """What the consumed filters (and the partial ones) allow.

    ``conditions`` must all hold for a topic-partition to be read; offsets are cut to
    ``[offset_from, offset_to)``; ``timestamp_from`` (milliseconds) moves each start to the
    first record whose timestamp may be >= it; ``nothing``: a filter no row can pass.
    """

    conditions: tuple[Condition, ...] = ()
    offset_from: int | None = None
    offset_to: int | None = None
    timestamp_from: int | None = None
    nothing: bool = False
    # For explain-like reporting and tests: the filters consumed and those only used.
    consumed: tuple[str, ...] = field(default=(), compare=False)
    used: tuple[str, ...] = field(default=(), compare=False)

    def admits(self, tp: TopicPartition) -> bool:
        """Whether rows of ``tp`` may pass every partition-level condition."""
        return not self.nothing and all(
            _holds(op, tp.topic if column == "topic" else tp.partition, operand)
            for column, op, operand in self.conditions)

    def offsets(self, start: int, end: int) -> tuple[int, int]:
        """``[start, end)`` cut by the offset bounds."""
        if self.offset_from is not None:
            start = max(start, self.offset_from)
        if self.offset_to is not None:
            end = min(end, self.offset_to)
        return start, end


def _holds(op: str, x: Any, operand: Any) -> bool:
    if op == "eq":
        return bool(x == operand)
    if op == "ne":
        return bool(x != operand)
    if op == "in":
        return x in operand
    if op == "not_in":
        return x not in operand
    if op == "lt":
        return bool(x < operand)
    if op == "le":
        return bool(x <= operand)
    if op == "gt":
        return bool(x > operand)
    if op == "ge":
        return bool(x >= operand)
    if op == "startswith":
        return bool(x.startswith(operand))
    if op == "endswith":
        return bool(x.endswith(operand))
    assert op == "contains", op
    return operand in x


def _micros(value: Any) -> int | None:
    """A tz-aware datetime as microseconds since the epoch (Spark hands them in UTC)."""
    if not isinstance(value, datetime.datetime) or value.tzinfo is None:
        return None
    return (value - _EPOCH) // datetime.timedelta(microseconds=1)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_COMPARISONS = {"EqualTo": "eq", "EqualNullSafe": "eq", "GreaterThan": "gt",
                "GreaterThanOrEqual": "ge", "LessThan": "lt", "LessThanOrEqual": "le",
                "StringStartsWith": "startswith", "StringEndsWith": "endswith",
                "StringContains": "contains"}
_NEGATED = {"eq": "ne", "in": "not_in"}
_STRING_OPS = ("startswith", "endswith", "contains")


def _condition(f: Any, column: str) -> tuple[str, str, Any] | None:
    """``f`` as an exact condition on the partition-constant ``column``, or None."""
    kind = type(f).__name__
    typed = (lambda v: isinstance(v, str)) if column == "topic" else _is_int
    if kind == "In":
        values = list(f.value)
        if not values or not all(typed(v) for v in values):
            return None
        return column, "in", frozenset(values)
    op = _COMPARISONS.get(kind)
    if op is None or not typed(f.value):
        return None
    if op in _STRING_OPS and column != "topic":
        return None
    return column, op, f.value


def push_filters(filters: Sequence[Any], names: dict[str, str]
                 ) -> tuple[Pushed, list[Any]]:
    """Split Spark's pushed ``filters`` (pyspark.sql.datasource filter objects) into what the
    plan answers (``Pushed``) and what Spark must still evaluate (returned, the same objects).

    ``names`` maps each column name of the read schema, lower-cased, to its Kafka column.
    """
    conditions: list[Condition] = []
    offset_from: int | None = None
    offset_to: int | None = None
    ts_from: int | None = None
    nothing = False
    consumed: list[str] = []
    used: list[str] = []
    remaining: list[Any] = []

    def column_of(f: Any) -> str | None:
        attribute = getattr(f, "attribute", None)
        if not isinstance(attribute, tuple) or len(attribute) != 1:
            return None
        return names.get(str(attribute[0]).lower())

    for f in filters:
        kind = type(f).__name__
        handled = False        # consumed: Spark need not evaluate it
        useful = False         # used to narrow the read, but returned
        if kind == "Not":
            inner = f.child
            column = column_of(inner)
            if column in ("topic", "partition"):
                cond = _condition(inner, column)
                if cond is not None:
                    c, op, operand = cond
                    if op in _NEGATED:
                        conditions.append((c, _NEGATED[op], operand))
                        handled = True
        else:
            column = column_of(f)
            if column in _NOT_NULL and kind == "IsNotNull":
                handled = True
            elif column in _NOT_NULL and (kind == "IsNull" or (
                    kind == "EqualNullSafe" and f.value is None)):
                nothing = handled = True
            elif column in ("topic", "partition"):
                cond = _condition(f, column)
                if cond is not None:
                    conditions.append(cond)
                    handled = True
            elif column == "offset":
                lo, hi, exact = _offset_bounds(f)
                if lo is not None:
                    offset_from = lo if offset_from is None else max(offset_from, lo)
                if hi is not None:
                    offset_to = hi if offset_to is None else min(offset_to, hi)
                handled = exact
                useful = lo is not None or hi is not None
            elif column == "timestamp":
                ms = _timestamp_from(f)
                if ms is not None:
                    ts_from = ms if ts_from is None else max(ts_from, ms)
                    useful = True
        if handled:
            consumed.append(str(f))
        else:
            if useful:
                used.append(str(f))
            remaining.append(f)
    pushed = Pushed(tuple(conditions), offset_from, offset_to, ts_from, nothing,
                    tuple(consumed), tuple(used))
    return pushed, remaining


def _offset_bounds(f: Any) -> tuple[int | None, int | None, bool]:
    """(lowest offset, offset past the highest, exact) that ``f`` on ``offset`` allows."""
    kind = type(f).__name__
    if kind == "In":
        values = list(f.value)
        if values and all(_is_int(v) for v in values):
            return min(values), max(values) + 1, False
        return None, None, False
    value: Any = getattr(f, "value", None)
    if not _is_int(value):
        return None, None, False
    if kind in ("EqualTo", "EqualNullSafe"):
        return value, value + 1, True
    if kind == "GreaterThan":
        return value + 1, None, True
    if kind == "GreaterThanOrEqual":
        return value, None, True
    if kind == "LessThan":
        return None, value, True
    if kind == "LessThanOrEqual":
        return None, value + 1, True
    return None, None, False


def _timestamp_from(f: Any) -> int | None:
    """The smallest record timestamp (Kafka milliseconds) ``f`` on ``timestamp`` allows, or
    None. Spark's timestamps are microseconds: a record of ``ms`` passes ``>= us`` when
    ``ms * 1000 >= us``, i.e. ``ms >= ceil(us / 1000)``, and ``> us`` when ``ms >= us // 1000
    + 1``."""
    kind = type(f).__name__
    if kind == "In":
        micros = [_micros(v) for v in f.value]
        if not micros or any(m is None for m in micros):
            return None
        return -(-min(m for m in micros if m is not None) // 1000)
    if kind not in ("EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual"):
        return None
    us = _micros(f.value)
    if us is None:
        return None
    return us // 1000 + 1 if kind == "GreaterThan" else -(-us // 1000)


def describe(pushed: Pushed) -> str:
    """One line for logs and errors: the filters consumed and those only used to seek."""
    return (f"consumed: {', '.join(pushed.consumed) or '-'}; used to seek, still evaluated by "
            f"Spark: {', '.join(pushed.used) or '-'}")
