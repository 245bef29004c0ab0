"""``kafkapy leader-election``: Kafka's ``kafka-leader-election.sh``
(``org.apache.kafka.tools.LeaderElectionCommand`` of Kafka 3.x), a client of a running cluster.

What it owns: choosing the partitions (exactly one of ``--topic t --partition p``,
``--all-topic-partitions``, ``--path-to-json-file f`` of ``{"partitions": [{"topic": "foo",
"partition": 1}]}``), asking the controller for a PREFERRED or UNCLEAN election (ElectLeaders,
over confluent-kafka's AdminClient) and printing Kafka's lines::

    Successfully completed leader election (PREFERRED) for partitions t-0, t-2
    Valid replica already elected for partitions t-1
    Error completing leader election (PREFERRED) for partition: u-0: <exception>

(partitions sorted; Kafka's come in hash order). A partition that could not be elected makes
the exit code 1, with ``<n> replica(s) could not be elected`` on stderr; an invalid command
line is Kafka's message on stderr and exit code 1. ``--output json`` prints one
``{"topic", "partition", "result"}`` object per partition (``result``: ``elected``,
``not_needed`` or the error).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kafkapy.tools.consumer_groups import (
    CommandError,
    ToolError,
    admin_client,
    client_config,
    describe_error,
    import_client,
)

__all__ = ["add_parser", "parse_election_data", "run"]

TOOL = "leader-election"
TIMEOUT_S = 30.0
ELECTION_NOT_NEEDED = 84
# Kafka's exception (class, message) for the per-partition errors of ElectLeaders.
PARTITION_ERRORS = {
    3: ("UnknownTopicOrPartitionException", "This server does not host this topic-partition."),
    80: ("PreferredLeaderNotAvailableException",
         "The preferred leader was not available."),
    83: ("EligibleLeadersNotAvailableException", "Eligible topic partition leaders are not "
                                                 "available."),
    41: ("NotControllerException", "This is not the correct controller for this cluster."),
    31: ("ClusterAuthorizationException", "Cluster authorization failed."),
}


class CommandFailed(Exception):
    """Kafka's tool prints the message on stderr and exits 1."""


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        TOOL, help="Kafka's kafka-leader-election.sh: elect preferred or unclean leaders",
        description="This tool attempts to elect a new leader for a set of topic partitions. "
                    "The type of elections supported are preferred replicas and unclean "
                    "replicas.")
    p.add_argument("--bootstrap-server", metavar="host:port",
                   help="A hostname and port for the broker to connect to, in the form "
                        "host:port. Multiple comma separated URLs can be given. REQUIRED.")
    p.add_argument("--command-config", "--admin.config", dest="command_config",
                   metavar="Config file",
                   help="Config properties file to pass to the admin client.")
    p.add_argument("--path-to-json-file", metavar="Path to JSON file",
                   help='The JSON file with the list of partition for which leader elections '
                        'should be performed: {"partitions": [{"topic": "foo", "partition": '
                        '1}]}. Not allowed if --all-topic-partitions or --topic flags are '
                        'specified.')
    p.add_argument("--topic", metavar="topic name",
                   help="Name of topic for which to perform an election. Not allowed if "
                        "--path-to-json-file or --all-topic-partitions is specified.")
    p.add_argument("--partition", type=int, metavar="partition id",
                   help="Partition id for which to perform an election. REQUIRED if --topic "
                        "is specified.")
    p.add_argument("--all-topic-partitions", action="store_true",
                   help="Perform election on all of the eligible topic partitions based on "
                        "the type of election (see the --election-type flag). Not allowed if "
                        "--topic or --path-to-json-file is specified.")
    p.add_argument("--election-type", type=str.upper, choices=("PREFERRED", "UNCLEAN"),
                   metavar="election type",
                   help='Type of election to attempt. Possible values are "preferred" for '
                        'preferred leader election or "unclean" for unclean leader '
                        'election. REQUIRED.')
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="text: Kafka's lines (the default); json: one JSON object per "
                        "partition (kafkapy's addition).")
    p.set_defaults(run=run, parser=p)


def validate(opts: argparse.Namespace) -> None:
    """Kafka's LeaderElectionCommandOptions.validate."""
    missing = [name for value, name in ((opts.bootstrap_server, "bootstrap-server"),
                                        (opts.election_type, "election-type")) if not value]
    if missing:
        raise CommandFailed("Missing required option(s): " + ", ".join(missing))
    chosen = [opts.topic is not None, opts.all_topic_partitions,
              opts.path_to_json_file is not None]
    if sum(chosen) != 1:
        raise CommandFailed("One and only one of the following options is required: topic, "
                            "all-topic-partitions, path-to-json-file")
    if opts.topic is not None and opts.partition is None:
        raise CommandFailed("Missing required option(s): partition")
    if opts.topic is None and opts.partition is not None:
        raise CommandFailed("Option partition is only allowed if topic is used")


def parse_election_data(text: str) -> list[tuple[str, int]]:
    """The ``--path-to-json-file`` contents as Kafka reads them; duplicates refused."""
    try:
        js = json.loads(text)
    except ValueError:
        raise CommandFailed("Replica election data is empty") from None
    if not isinstance(js, dict) or "partitions" not in js:
        raise CommandFailed('Replica election data is missing "partitions" field')
    partitions = []
    for entry in js["partitions"]:
        try:
            partitions.append((str(entry["topic"]), int(entry["partition"])))
        except (KeyError, TypeError, ValueError) as e:
            raise CommandFailed(f"No such field exists: `{e.args[0] if e.args else e}`") \
                from None
    duplicates = sorted({f"{t}-{p}" for t, p in partitions if partitions.count((t, p)) > 1})
    if duplicates:
        raise CommandFailed("Replica election data contains duplicate partitions: ["
                            + ", ".join(duplicates) + "]")
    return sorted(set(partitions))


def partition_error(error: Any) -> str:
    """A partition's failure as Kafka prints the Throwable (``Class: message``)."""
    known = PARTITION_ERRORS.get(error.code())
    if known is not None:
        return f"org.apache.kafka.common.errors.{known[0]}: {known[1]}"
    return f"org.apache.kafka.common.errors.ApiException: {error.str()}"


def elect(opts: argparse.Namespace, out: TextIO) -> int:
    partitions: list[tuple[str, int]] | None = None
    if opts.path_to_json_file is not None:
        try:
            text = Path(opts.path_to_json_file).read_text(encoding="utf-8")
        except OSError as e:
            raise CommandFailed(f"{opts.path_to_json_file} ({e.strerror or e})") from None
        partitions = parse_election_data(text)
    elif opts.topic is not None:
        partitions = [(opts.topic, opts.partition)]
    ck = import_client(TOOL)
    admin = admin_client(ck, client_config(opts))
    election = getattr(ck.ElectionType, opts.election_type)
    asked = None if partitions is None else [ck.TopicPartition(t, p) for t, p in partitions]
    try:
        # no request_timeout/operation_timeout: confluent-kafka 2.16's binding refuses any
        # keyword argument to elect_leaders (SystemError); the wait is bounded here instead
        results = admin.elect_leaders(election, asked).result(TIMEOUT_S + 5)
    except ck.KafkaException as e:
        error: Any = e.args[0] if e.args else None
        code = error.code() if callable(getattr(error, "code", None)) else None
        if code == 7:
            out.write("Timeout waiting for election results\n")
            raise CommandFailed("Timeout waiting for election results") from None
        if code == 31:
            out.write("Not authorized to perform leader election\n")
            raise CommandFailed("Not authorized to perform leader election") from None
        raise CommandFailed(describe_error(e)) from None
    succeeded, noop, failed = [], [], []
    for tp, error in sorted(results.items(), key=lambda r: (r[0].topic, r[0].partition)):
        name = f"{tp.topic}-{tp.partition}"
        if error is None:
            succeeded.append((tp, name))
        elif error.code() == ELECTION_NOT_NEEDED:
            noop.append((tp, name))
        else:
            failed.append((tp, name, partition_error(error)))
    if opts.output == "json":
        for result, entries in (("elected", succeeded), ("not_needed", noop)):
            for tp, _ in entries:
                out.write(json.dumps({"topic": tp.topic, "partition": tp.partition,
                                      "result": result}) + "\n")
        for tp, _, message in failed:
            out.write(json.dumps({"topic": tp.topic, "partition": tp.partition,
                                  "result": "error", "error": message}) + "\n")
    else:
        if succeeded:
            out.write(f"Successfully completed leader election ({opts.election_type}) for "
                      f"partitions {', '.join(n for _, n in succeeded)}\n")
        if noop:
            out.write(f"Valid replica already elected for partitions "
                      f"{', '.join(n for _, n in noop)}\n")
        for _, name, message in failed:
            out.write(f"Error completing leader election ({opts.election_type}) for "
                      f"partition: {name}: {message}\n")
    if failed:
        raise CommandFailed(f"{len(failed)} replica(s) could not be elected")
    return 0


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        validate(opts)
        return elect(opts, out)
    except (ToolError, CommandError, CommandFailed) as e:
        out.flush()
        err.write(f"{e}\n")
        return 1
