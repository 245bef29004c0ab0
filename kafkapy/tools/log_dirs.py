"""``kafkapy log-dirs``: Kafka's ``kafka-log-dirs.sh`` (``org.apache.kafka.tools.LogDirsCommand``
of Kafka 3.x), a client of a running cluster.

What it owns: ``--describe`` of the log directories of the brokers in ``--broker-list`` (all
brokers of the cluster without it), their replicas filtered by ``--topic-list``, printed as
Kafka prints them: ``Querying brokers for log directories information``, ``Received log
directory information from brokers 1,2,3`` and one line of JSON
(``{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"t-0","size":N,
"offsetLag":0,"isFuture":false}],"error":null,"logDir":"/..."}]}],"version":1}``, the keys in
the order Kafka's Jackson writes them). Brokers, log dirs and partitions are sorted (Kafka's
come in hash order). A broker id not in the cluster is Kafka's ``ERROR: The given brokers do
not exist from --broker-list: ...`` and exit code 1. ``--output json`` prints one object per
log directory instead (``broker``, ``logDir``, ``error``, ``partitions``).

DescribeLogDirs is not in confluent-kafka's AdminClient: kafka-python's
(``kafkapy.tools.kafka_python_admin``) sends it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from kafkapy.tools.kafka_python_admin import ClientMissing, error_message, kafka_python_admin

__all__ = ["add_parser", "run"]

TOOL = "log-dirs"
# Kafka's exception class names for the log-dir error codes a broker returns.
LOG_DIR_ERRORS = {56: "org.apache.kafka.common.errors.KafkaStorageException",
                  57: "org.apache.kafka.common.errors.LogDirNotFoundException"}


class CommandFailed(Exception):
    """Kafka's tool prints the message on stderr and exits 1."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-log-dirs.sh: log directory usage of brokers",
        description="This tool helps to query log directory usage on the specified brokers.")
    p.add_argument("--bootstrap-server", metavar="The server(s) to use for bootstrapping",
                   help="REQUIRED: the server(s) to use for bootstrapping")
    p.add_argument("--command-config", metavar="Admin client property file",
                   help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--describe", action="store_true",
                   help="Describe the specified log directories on the specified brokers.")
    p.add_argument("--topic-list", default="", metavar="Topic list",
                   help='The list of topics to be queried in the form "topic1,topic2,topic3". '
                        "All topics will be queried if no topic list is specified")
    p.add_argument("--broker-list", default="", metavar="Broker list",
                   help='The list of brokers to be queried in the form "0,1,2". All brokers '
                        "in the cluster will be queried if no broker list is specified")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per log "
                        "directory (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def _split(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def _brokers(text: str) -> set[int]:
    try:
        return {int(x) for x in _split(text)}
    except ValueError as e:
        bad = next(x for x in _split(text) if not x.lstrip("-").isdigit())
        raise CommandFailed(f'For input string: "{bad}"') from e


def _ids(ids: set[int]) -> str:
    return ",".join(str(i) for i in sorted(ids))


def log_dirs(response: list[dict[str, Any]], topics: set[str]) -> list[dict[str, Any]]:
    """kafka-python's describe_log_dirs result as Kafka's printable brokers list."""
    brokers = []
    for broker in sorted(response, key=lambda b: int(b["broker"])):
        dirs = []
        for log_dir in sorted(broker["log_dirs"], key=lambda d: str(d["log_dir"])):
            partitions = []
            for topic in sorted(log_dir["topics"], key=lambda t: str(t["name"])):
                if topics and topic["name"] not in topics:
                    continue
                for p in sorted(topic["partitions"], key=lambda p: int(p["partition_index"])):
                    partitions.append({"partition": f"{topic['name']}-{p['partition_index']}",
                                       "size": p["partition_size"],
                                       "offsetLag": p["offset_lag"],
                                       "isFuture": bool(p["is_future_key"])})
            code = int(log_dir["error_code"])
            error = None if code == 0 else LOG_DIR_ERRORS.get(
                code, "org.apache.kafka.common.errors.UnknownServerException")
            dirs.append({"partitions": partitions, "error": error,
                         "logDir": log_dir["log_dir"]})
        brokers.append({"broker": int(broker["broker"]), "logDirs": dirs})
    return brokers


def describe(opts: argparse.Namespace, out: TextIO) -> None:
    topics = set(_split(opts.topic_list))
    asked = _brokers(opts.broker_list)
    admin = kafka_python_admin(TOOL, opts.bootstrap_server, opts.command_config,
                               "log-dirs-tool")
    try:
        cluster = {int(b["broker_id"]) for b in admin.describe_cluster()["brokers"]}
        missing = asked - cluster
        if missing:
            raise CommandFailed(f"ERROR: The given brokers do not exist from --broker-list: "
                                f"{_ids(missing)}. Current existent brokers: {_ids(cluster)}")
        brokers = asked or cluster
        if opts.output == "text":
            out.write("Querying brokers for log directories information\n")
            out.flush()
        response = admin.describe_log_dirs(brokers=sorted(brokers))
    finally:
        admin.close()
    printable = log_dirs(response, topics)
    if opts.output == "json":
        for broker in printable:
            for log_dir in broker["logDirs"]:
                out.write(json.dumps({"broker": broker["broker"], "logDir": log_dir["logDir"],
                                      "error": log_dir["error"],
                                      "partitions": log_dir["partitions"]}) + "\n")
        return
    out.write(f"Received log directory information from brokers {_ids(brokers)}\n")
    out.write(json.dumps({"brokers": printable, "version": 1}, separators=(",", ":")) + "\n")


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    for flag, name in ((opts.bootstrap_server, "bootstrap-server"), (opts.describe, "describe")):
        if not flag:
            err.write(f'Missing required argument "[{name}]"\n')
            return 1
    try:
        describe(opts, out)
    except (ClientMissing, CommandFailed) as e:
        err.write(f"{e}\n")
        return 1
    except OSError as e:
        err.write(f"{opts.command_config} ({e.strerror or e})\n")
        return 1
    except Exception as e:   # kafka-python's errors (KafkaError and its subclasses)
        if type(e).__module__.startswith("kafka."):
            err.write(f"{error_message(e)}\n")
            return 1
        raise
    return 0
