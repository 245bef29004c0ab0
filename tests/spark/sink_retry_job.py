"""A Spark job for ``test_sink_retries``: batch writes whose first task attempt fails part way,
in its own JVM with master ``local[2,3]`` (two threads, a task tried up to three times: the
shared test session, ``local[2]``, never retries a task).

Usage: ``python sink_retry_job.py <bootstrap> <raise topic> <kill topic> <stats dir> <rows>``

- raise: attempt 0 of partition 0 gets a null topic at its row 1500, so the sink raises
  after producing the Arrow batches before it (200 rows each) inside its transaction.
- kill: attempt 0 of partition 1 kills its Python worker (``os._exit``) at row 1500, mid-
  transaction, as a killed executor would.

Both must end with every row in its topic once for a read_committed consumer; the test
checks that. Prints ``done`` when both writes succeeded.
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def topic_udf(topic: str, mode: str) -> object:
    seen: dict[tuple[int, int, int], int] = {}

    def fn(value: str) -> str | None:
        import os

        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber())
        seen[task] = seen.get(task, 0) + 1
        if ctx.attemptNumber() == 0 and seen[task] == 1500:
            if mode == "raise" and ctx.partitionId() == 0:
                return None
            if mode == "kill" and ctx.partitionId() == 1:
                os._exit(1)
        return topic

    return F.udf(fn, "string", useArrow=False)


def main(bootstrap: str, raise_topic: str, kill_topic: str, stats: str, rows: int) -> None:
    spark = (SparkSession.builder.master("local[2,3]").appName("kafkapy-sink-retries")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.memory", "512m")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", "200")
             .getOrCreate())
    # WARN: the failed attempts' errors ("Lost task ...") reach stderr, for the test to read.
    spark.sparkContext.setLogLevel("WARN")
    try:
        for topic, mode in ((raise_topic, "raise"), (kill_topic, "kill")):
            df = (spark.range(0, rows, numPartitions=2)
                  .select(F.col("id").cast("string").alias("value"))
                  .withColumn("topic", topic_udf(topic, mode)("value")))
            (df.write.format("kafkapy").option("kafka.bootstrap.servers", bootstrap)
             .option("writeId", mode).option("writeStatsDir", stats)
             .mode("append").save())
        print("done")
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
