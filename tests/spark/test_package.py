"""pyspark_kafkapy as a package: cheap to import, discoverable by Spark, and layered.

Spark's lookup imports every top-level ``pyspark_*`` module in a worker and registers its
``DefaultSource`` if that subclasses pyspark's DataSource: the import itself must load
nothing (no pyspark, kafkapy, pyarrow, numpy), and ``DefaultSource`` only on access. Of
kafkapy, the data source may use the log layer, the protocol's record code, the errors and
the compiled log and Arrow modules; never the server, network or coordinators.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.conftest import ROOT, SPARK_INTEGRATION

PACKAGE = SPARK_INTEGRATION / "pyspark_kafkapy"
# TopicPartition lives below the log layer (kafkapy.common), as the log's own name of a log.
ALLOWED = ("kafkapy.log", "kafkapy.protocol", "kafkapy.common.topic_partition", "kafkapy.errors",
           "kafkapy._arrow", "kafkapy._log", "pyspark_kafkapy")


def test_import_loads_nothing_and_default_source_is_a_data_source() -> None:
    code = ("import sys, pyspark_kafkapy\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'pyspark', 'kafkapy', 'pyarrow', 'numpy', 'py4j'}))\n"
            "from pyspark.sql.datasource import DataSource\n"
            "assert issubclass(pyspark_kafkapy.DefaultSource, DataSource)\n"
            "assert pyspark_kafkapy.DefaultSource is pyspark_kafkapy.KafkaLogDataSource\n"
            "print(pyspark_kafkapy.DefaultSource.name())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": f"{ROOT}:{SPARK_INTEGRATION}"},
                         timeout=60)
    assert out.stdout.split("\n")[:2] == ["[]", "kafkapy-log"]


def test_sink_module_loads_nothing_and_registers_kafkapy() -> None:
    # Spark registers one DefaultSource per top-level pyspark_* module: the sink has its own.
    code = ("import sys, pyspark_kafkapy_sink\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'pyspark', 'kafkapy', 'pyarrow', 'numpy', 'py4j', 'confluent_kafka'}))\n"
            "from pyspark.sql.datasource import DataSource\n"
            "import pyspark_kafkapy.sink as sink\n"
            "assert pyspark_kafkapy_sink.DefaultSource is sink.KafkaSinkDataSource\n"
            "assert issubclass(pyspark_kafkapy_sink.DefaultSource, DataSource)\n"
            "print(pyspark_kafkapy_sink.DefaultSource.name())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": f"{ROOT}:{SPARK_INTEGRATION}"},
                         timeout=60)
    assert out.stdout.split("\n")[:2] == ["[]", "kafkapy"]


def test_a_read_task_loads_no_message_class() -> None:
    # Spark's Python worker runs a full garbage collection after every task, walking every
    # object the process holds: the reader's imports must not build the protocol's message
    # classes (about 20,000 objects, which doubled that collection).
    code = ("import sys\n"
            "from pyspark_kafkapy import datasource, _columns, _logdir, _reader\n"
            "print(sorted(m for m in sys.modules if m.startswith('kafkapy.protocol')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": f"{ROOT}:{SPARK_INTEGRATION}"},
                         timeout=60)
    assert out.stdout.split("\n")[0] == "['kafkapy.protocol', 'kafkapy.protocol.records']"


def test_unknown_attributes_raise() -> None:
    import pyspark_kafkapy

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pyspark_kafkapy.nope  # noqa: B018


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_depends_only_on_the_log_and_protocol_layers(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for name in names:
            if name.split(".")[0] in ("kafkapy", "pyspark_kafkapy"):
                assert name.startswith(ALLOWED), f"{path.name} imports {name}"
            assert name.split(".")[0] != "trio", f"{path.name} imports {name}"
