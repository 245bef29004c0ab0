"""The ``kafkapy`` entry point: one argparse subcommand per tool module.

Adding a tool: a module in this package with ``add_parser(subparsers)`` (which registers the
subcommand and sets ``run``, a function of the parsed arguments returning the exit code) and
one line in ``TOOLS``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kafkapy.tools import acls, configs, consumer_groups, dump_log, get_offsets, topics

TOOLS = (dump_log, topics, configs, consumer_groups, get_offsets, acls)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kafkapy",
        description="Kafka's command-line tools for kafkapy (named and flagged like Kafka's "
                    "bin/ scripts).")
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
