"""``kafkapy``: the PySpark sink that writes DataFrames into Kafka topics through the brokers.

This module only registers the sink: Spark's lookup of Python data sources imports every
top-level ``pyspark_*`` module and registers its ``DefaultSource``, one per module, and
``pyspark_kafkapy``'s is the ``kafkapy-log`` reader. The sink itself lives in
``pyspark_kafkapy.sink`` (see its docstring, and docs/spark.md). As for the reader, importing
this module loads nothing (no pyspark, confluent-kafka or pyarrow): ``DefaultSource`` is
resolved on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark_kafkapy.sink import KafkaSinkDataSource

    DefaultSource = KafkaSinkDataSource

__all__ = ["DefaultSource", "KafkaSinkDataSource"]


def __getattr__(name: str) -> Any:
    if name in ("DefaultSource", "KafkaSinkDataSource"):
        from pyspark_kafkapy.sink import KafkaSinkDataSource

        return KafkaSinkDataSource
    raise AttributeError(f"module 'pyspark_kafkapy_sink' has no attribute {name!r}")
