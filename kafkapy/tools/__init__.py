"""kafkapy's operations tools, one module per Kafka ``bin/`` script, behind one entry point.

``kafkapy <tool> ...`` (the console script, or ``python -m kafkapy.tools``) dispatches to
``kafkapy.tools.main``, which gives every tool an argparse subcommand named after Kafka's
script without ``kafka-`` and ``.sh`` (``kafka-dump-log.sh`` -> ``dump-log``). A tool module
offers ``add_parser(subparsers)`` and ``run(args) -> exit code``; it prints what Kafka's tool
prints and, with ``--output json``, one JSON object per line instead.

Layer: above ``log``, ``protocol``, ``common``, ``coordinator`` (record formats only) and
``errors``; never ``server`` or the network (tests/test_layering.py). Offline tools read files
with the log's readers and change nothing.
"""
