"""The ``kafkapy`` entry point: one argparse subcommand per tool module.

Adding a tool: a module in this package with ``add_parser(subparsers)`` (which registers the
subcommand and sets ``run``, a function of the parsed arguments returning the exit code) and
one line in ``TOOLS``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kafkapy.tools import dump_log

TOOLS = (dump_log,)


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
    code: int = args.run(args)
    sys.stdout.flush()
    return code
