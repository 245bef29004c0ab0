"""The ``kafkapy`` entry point: one argparse subcommand per tool module.

Adding a tool: a module in this package with ``add_parser(subparsers)`` (which registers the
subcommand and sets ``run``, a function of the parsed arguments returning the exit code) and
one line in ``TOOLS``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Sequence

from kafkapy import __version__
from kafkapy.tools import (
    acls,
    configs,
    console_consumer,
    console_producer,
    consumer_groups,
    consumer_perf_test,
    delete_records,
    dump_log,
    get_offsets,
    leader_election,
    log_dirs,
    producer_perf_test,
    reassign_partitions,
    topics,
    transactions,
)

TOOLS = (dump_log, topics, configs, consumer_groups, get_offsets,
         delete_records, leader_election, log_dirs, reassign_partitions, transactions,
         console_producer, console_consumer, producer_perf_test, consumer_perf_test,
         acls)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kafkapy",
        description="Kafka's command-line tools for kafkapy (named and flagged like Kafka's "
                    "bin/ scripts).")
    top.add_argument("--version", action="version",
                     version=f"kafkapy {__version__} (Python {platform.python_version()})")
    subparsers = top.add_subparsers(dest="tool", metavar="<tool>")
    subparsers.required = True
    for tool in TOOLS:
        tool.add_parser(subparsers)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as a Unix filter does; point stdout
        # at /dev/null so that the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code
