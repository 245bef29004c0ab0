"""``kafkapy acls``: Kafka's ``kafka-acls.sh`` (``kafka.admin.AclCommand`` of Kafka 3.x, its
``--bootstrap-server`` mode) as a client of a running cluster.

What it owns: the three actions of Kafka's tool over confluent-kafka's AdminClient, with
Kafka's flags, checks, messages and output:

- ``--add``: for every resource (``--topic``, ``--group``, ``--cluster``,
  ``--transactional-id``, ``--resource-pattern-type literal|prefixed``), the ACLs of every
  ``--allow-principal`` x ``--operation`` x ``--allow-host`` (``*`` by default) and likewise
  for ``--deny-principal`` / ``--deny-host``; ``--operation`` defaults to All; ``--producer``
  (Write, Describe, Create on topics; Write, Describe on transactional ids; IdempotentWrite on
  the cluster with ``--idempotent``) and ``--consumer`` (Read, Describe on topics; Read on
  groups). Prints ``Adding ACLs for resource `ResourcePattern(...)`:`` and the entries, then
  lists the resources' ACLs as ``--list`` does.
- ``--remove``: the given ACLs, or every ACL of the resource filter when no principal is
  given (``--resource-pattern-type`` may also be any or match), after Kafka's ``(y/n)``
  question unless ``--force``; then lists.
- ``--list``: ``Current ACLs for resource `ResourcePattern(...)`:`` and its entries, for the
  given resource filters or for every ACL; ``--principal`` keeps one principal's ACLs
  (``ACLs for principal `User:x``` before them).

Output as Kafka's (``Newline`` joins and the blanks around them included); resources and
entries are printed sorted (Kafka prints Scala set order, which is unspecified).
``--output json`` (kafkapy's addition) prints one JSON object per resource instead.

Errors as Kafka's tool reports them: a bad command line is a message on stderr and exit code 1;
a failure while running is ``Error while executing ACL command: <exception>: <message>`` on
stdout and exit code 1.

Not served: ``--authorizer`` / ``--authorizer-properties`` (Kafka's deprecated direct
ZooKeeper mode) and ``--delegation-token`` (confluent-kafka's AdminClient has no
DELEGATION_TOKEN resource type); both are refused with a message. librdkafka reports
DescribeAcls' top-level errors (SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED) as an empty
list, so ``--list`` against a broker without an authorizer prints nothing where Kafka's tool
fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

import attrs

from kafkapy.tools.topics import (
    ToolError,
    UsageError,
    admin_client,
    confluent,
    error_code,
    missing_extra,
    result,
)

__all__ = ["Entry", "Pattern", "add_parser", "run"]

CLUSTER_NAME = "kafka-cluster"
NEWLINE = "\n"
# Kafka's AclEntry.supportedOperations per resource type (ALL besides), in Kafka's names.
SUPPORTED_OPERATIONS: Mapping[str, tuple[str, ...]] = {
    "TOPIC": ("READ", "WRITE", "CREATE", "DESCRIBE", "DELETE", "ALTER", "DESCRIBE_CONFIGS",
              "ALTER_CONFIGS"),
    "GROUP": ("READ", "DESCRIBE", "DELETE"),
    "CLUSTER": ("CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE"),
    "TRANSACTIONAL_ID": ("DESCRIBE", "WRITE"),
}
OPERATIONS = ("ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
              "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE")
PATTERN_TYPES = ("LITERAL", "PREFIXED", "ANY", "MATCH")
EXCEPTIONS = {"SECURITY_DISABLED": "SecurityDisabledException",
              "INVALID_REQUEST": "InvalidRequestException",
              "CLUSTER_AUTHORIZATION_FAILED": "ClusterAuthorizationException",
              "UNSUPPORTED_VERSION": "UnsupportedVersionException"}
# confluent-kafka names the CLUSTER resource type BROKER (its code, 4, is Kafka's CLUSTER).
_CONFLUENT_TYPES = {"CLUSTER": "BROKER"}


def _pascal(name: str) -> str:
    """Kafka's ``SecurityUtils`` name: ``IDEMPOTENT_WRITE`` -> ``IdempotentWrite``."""
    return "".join(part.capitalize() for part in name.split("_"))


def operation_of(text: str) -> str:
    """``--operation`` as Kafka's ``SecurityUtils.operation`` reads it (``Read``, ``READ``,
    ``IdempotentWrite``, ``idempotent_write``); ``UNKNOWN`` for anything else."""
    key = text.strip().replace("_", "").replace("-", "").upper()
    return next((op for op in OPERATIONS if op.replace("_", "") == key), "UNKNOWN")


@attrs.frozen(order=True)
class Pattern:
    """A ResourcePattern (pattern type LITERAL / PREFIXED) or a ResourcePatternFilter (also
    ANY / MATCH), printed as Kafka prints both."""

    resource_type: str          # Kafka's name: TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
    name: str
    pattern_type: str

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type}, name={self.name}, "
                f"patternType={self.pattern_type})")

    def json(self) -> dict[str, str]:
        return {"resourceType": self.resource_type, "name": self.name,
                "patternType": self.pattern_type}


@attrs.frozen(order=True)
class Entry:
    """An AccessControlEntry, printed as Kafka's ``toString``."""

    principal: str
    host: str
    operation: str
    permission_type: str

    def __str__(self) -> str:
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation}, "
                f"permissionType={self.permission_type})")

    def json(self) -> dict[str, str]:
        return {"principal": self.principal, "host": self.host, "operation": self.operation,
                "permissionType": self.permission_type}


# ====================================================================== command line

def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "acls", help="Kafka's kafka-acls.sh: add, remove or list ACLs",
        description="This tool helps to manage acls on kafka.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="REQUIRED: A list of host/port pairs to use for establishing the "
                        "connection to the Kafka cluster.")
    p.add_argument("--command-config", metavar="command-config",
                   help="A property file containing configs to be passed to Admin Client.")
    p.add_argument("--authorizer", help=argparse.SUPPRESS)
    p.add_argument("--authorizer-properties", action="append", help=argparse.SUPPRESS)
    p.add_argument("--add", action="store_true", help="Indicates you are trying to add ACLs.")
    p.add_argument("--remove", action="store_true",
                   help="Indicates you are trying to remove ACLs.")
    p.add_argument("--list", action="store_true",
                   help="List ACLs for the specified resource, use --topic <topic> or --group "
                        "<group> or --cluster to specify a resource.")
    p.add_argument("--topic", action="append", metavar="topic",
                   help="topic to which ACLs should be added or removed. A value of '*' "
                        "indicates ACL should apply to all topics.")
    p.add_argument("--cluster", action="store_true", help="Add/Remove cluster ACLs.")
    p.add_argument("--group", action="append", metavar="group",
                   help="Consumer Group to which the ACLs should be added or removed. A value "
                        "of '*' indicates the ACLs should apply to all groups.")
    p.add_argument("--transactional-id", action="append", metavar="transactional-id",
                   help="The transactionalId to which ACLs should be added or removed. A "
                        "value of '*' indicates the ACLs should apply to all transactionalIds.")
    p.add_argument("--delegation-token", action="append", metavar="delegation-token",
                   help="Delegation token to which ACLs should be added or removed (not "
                        "supported by kafkapy acls: confluent-kafka has no such resource "
                        "type).")
    p.add_argument("--resource-pattern-type", default="LITERAL", metavar="ANY|MATCH|LITERAL|"
                   "PREFIXED", help="The type of the resource pattern or pattern filter. When "
                   "adding acls, this should be a specific pattern type, e.g. 'literal' or "
                   "'prefixed'. When listing or removing acls, a specific pattern type can be "
                   "used to list or remove acls from specific resource patterns, or use the "
                   "filter values of 'any' or 'match'. (default: LITERAL)")
    p.add_argument("--operation", action="append", metavar="operation",
                   help="Operation that is being allowed or denied. Valid operation names are: "
                        + ", ".join(_pascal(o) for o in OPERATIONS) + " (default: All)")
    p.add_argument("--allow-principal", action="append", metavar="allow-principal",
                   help="principal is in principalType:name format. Note that principalType "
                        "must be supported by the Authorizer being used. For example, User:'*' "
                        "is the wild card indicating all users.")
    p.add_argument("--deny-principal", action="append", metavar="deny-principal",
                   help="principal is in principalType:name format. By default anyone not "
                        "added through --allow-principal is denied access. You only need to use "
                        "this option as negation to already allowed set.")
    p.add_argument("--principal", action="append", metavar="principal",
                   help="List ACLs for the specified principal. principal is in "
                        "principalType:name format. Note that principalType must be supported "
                        "by the Authorizer being used. Multiple --principal option can be "
                        "passed.")
    p.add_argument("--allow-host", action="append", metavar="allow-host",
                   help="Host from which principals listed in --allow-principal will have "
                        "access. If you have specified --allow-principal then the default for "
                        "this option will be set to '*' which allows access from all hosts.")
    p.add_argument("--deny-host", action="append", metavar="deny-host",
                   help="Host from which principals listed in --deny-principal will be denied "
                        "access. If you have specified --deny-principal then the default for "
                        "this option will be set to '*' which denies access from all hosts.")
    p.add_argument("--producer", action="store_true",
                   help="Convenience option to add/remove ACLs for producer role. This will "
                        "generate ACLs that allows WRITE,DESCRIBE and CREATE on topic.")
    p.add_argument("--idempotent", action="store_true",
                   help="Enable idempotence for the producer. This should be used in "
                        "combination with the --producer option.")
    p.add_argument("--consumer", action="store_true",
                   help="Convenience option to add/remove ACLs for consumer role. This will "
                        "generate ACLs that allows READ,DESCRIBE on topic and READ on group.")
    p.add_argument("--force", action="store_true",
                   help="Assume Yes to all queries and do not prompt.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="kafkapy's addition: 'json' prints one JSON object per resource.")
    p.set_defaults(run=run)


def _given(opts: argparse.Namespace, dest: str) -> bool:
    value = getattr(opts, dest)
    return value is not None and value is not False


def _invalid_with(opts: argparse.Namespace, used: str, others: Sequence[str]) -> None:
    """Kafka's ``CommandLineUtils.checkInvalidArgs``."""
    if not _given(opts, used):
        return
    for other in others:
        if _given(opts, other):
            raise UsageError(f'Option "[{used.replace("_", "-")}]" can\'t be used with option '
                             f'"[{other.replace("_", "-")}]"')


def check_args(opts: argparse.Namespace) -> None:
    """Kafka's AclCommandOptions.checkArgs (its --bootstrap-server mode), same order, same
    messages (raised as UsageError)."""
    if opts.authorizer is not None or opts.authorizer_properties is not None:
        raise UsageError("kafkapy acls talks to the brokers only (--bootstrap-server): "
                         "--authorizer and --authorizer-properties (Kafka's deprecated direct "
                         "ZooKeeper access) are not supported")
    if opts.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    if sum(1 for a in ("add", "remove", "list") if getattr(opts, a)) != 1:
        raise UsageError("Command must include exactly one action: --list, --add, --remove. ")
    _invalid_with(opts, "list", ("producer", "consumer", "allow_host", "allow_principal",
                                 "deny_host", "deny_principal"))
    _invalid_with(opts, "producer", ("operation", "deny_principal", "deny_host"))
    _invalid_with(opts, "consumer", ("operation", "deny_principal", "deny_host"))
    if opts.principal and not opts.list:
        raise UsageError("The --principal option is only available if --list is set")
    if opts.producer and not opts.topic:
        raise UsageError("With --producer you must specify a --topic")
    if opts.idempotent and not opts.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if opts.consumer and (not opts.topic or not opts.group or
                          (not opts.producer and (opts.cluster or opts.transactional_id))):
        raise UsageError("With --consumer you must specify a --topic and a --group and no "
                         "--cluster or --transactional-id option should be specified.")
    if opts.delegation_token:
        raise UsageError("kafkapy acls cannot manage --delegation-token ACLs: "
                         "confluent-kafka's AdminClient has no DELEGATION_TOKEN resource type")
    pattern_type = opts.resource_pattern_type.strip().upper()
    if pattern_type not in PATTERN_TYPES:
        raise UsageError(f"Unrecognized pattern type: {opts.resource_pattern_type}")
    opts.resource_pattern_type = pattern_type


# =================================================================== what to change

def resource_filters(opts: argparse.Namespace, *, required: bool = True) -> list[Pattern]:
    """Kafka's getResourceFilter: topics, the cluster (LITERAL only), groups, transactional
    ids, in that order."""
    ptype = opts.resource_pattern_type
    out = [Pattern("TOPIC", t.strip(), ptype) for t in opts.topic or ()]
    if ptype == "LITERAL" and (opts.cluster or opts.idempotent):
        out.append(Pattern("CLUSTER", CLUSTER_NAME, "LITERAL"))
    out += [Pattern("GROUP", g.strip(), ptype) for g in opts.group or ()]
    out += [Pattern("TRANSACTIONAL_ID", t.strip(), ptype) for t in opts.transactional_id or ()]
    if not out and required:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster "
                         "or --group <group> or --delegation-token <Delegation Token ID>")
    return list(dict.fromkeys(out))


def _principals(values: Sequence[str] | None) -> list[str]:
    out = []
    for value in values or ():
        principal_type, sep, name = value.strip().partition(":")
        if not sep:
            raise ToolError(f"expected a string in format principalType:principalName but got "
                            f"{value.strip()}")
        out.append(f"{principal_type}:{name}")
    return out


def entries(opts: argparse.Namespace, operations: Iterable[str]) -> set[Entry]:
    """Kafka's getAcl: principals x operations x hosts, ALLOW and DENY."""
    ops = list(operations)
    out: set[Entry] = set()
    for principals, hosts, permission in (
            (opts.allow_principal, opts.allow_host, "ALLOW"),
            (opts.deny_principal, opts.deny_host, "DENY")):
        names = _principals(principals)
        if not names:
            continue
        for host in [h.strip() for h in hosts] if hosts else ["*"]:
            out.update(Entry(p, host, op, permission) for p in names for op in ops)
    return out


def filter_to_acls(opts: argparse.Namespace) -> dict[Pattern, set[Entry]]:
    """Kafka's getResourceFilterToAcls (the --producer / --consumer conveniences included),
    then validateOperation."""
    result_: dict[Pattern, set[Entry]] = {}
    filters = resource_filters(opts)
    if not opts.producer and not opts.consumer:
        operations = {operation_of(o) for o in opts.operation or ["All"]}
        acls = entries(opts, operations)
        result_.update({f: set(acls) for f in filters})
    if opts.producer:
        for f in filters:
            if f.resource_type == "TOPIC":
                result_[f] = entries(opts, ("WRITE", "DESCRIBE", "CREATE"))
            elif f.resource_type == "TRANSACTIONAL_ID":
                result_[f] = entries(opts, ("WRITE", "DESCRIBE"))
        if opts.idempotent:
            result_[Pattern("CLUSTER", CLUSTER_NAME, "LITERAL")] = \
                entries(opts, ("IDEMPOTENT_WRITE",))
    if opts.consumer:
        for f in filters:
            if f.resource_type == "TOPIC":
                result_[f] = entries(opts, ("READ", "DESCRIBE")) | result_.get(f, set())
            elif f.resource_type == "GROUP":
                result_[f] = entries(opts, ("READ",)) | result_.get(f, set())
    for f, acls in result_.items():
        valid = ("ALL", *SUPPORTED_OPERATIONS[f.resource_type])
        if any(a.operation not in valid for a in acls):
            raise UsageError(f"ResourceType {f.resource_type} only supports operations "
                             + ", ".join(_pascal(o) for o in valid))
    return result_


def _block(title: str, acls: Iterable[Entry]) -> str:
    """Kafka's ``s"$title: $Newline ${acls.map("\\t" + _).mkString(Newline)} $Newline"``."""
    return f"{title}: {NEWLINE} " + NEWLINE.join("\t" + str(a) for a in sorted(acls)) + \
        f" {NEWLINE}"


# ========================================================================== service

class AclService:
    """The actions over one AdminClient."""

    def __init__(self, admin: Any, as_json: bool, out: TextIO, stdin: TextIO) -> None:
        self.admin = admin
        self.as_json = as_json
        self.out = out
        self.stdin = stdin
        self.admin_module = confluent("confluent_kafka.admin")

    def _enum(self, kind: str, name: str) -> Any:
        return getattr(self.admin_module, kind)[name]

    def _binding(self, pattern: Pattern, entry: Entry) -> Any:
        m = self.admin_module
        return m.AclBinding(
            self._enum("ResourceType", _CONFLUENT_TYPES.get(pattern.resource_type,
                                                            pattern.resource_type)),
            pattern.name, self._enum("ResourcePatternType", pattern.pattern_type),
            entry.principal, entry.host, self._enum("AclOperation", entry.operation),
            self._enum("AclPermissionType", entry.permission_type))

    def _filter(self, pattern: Pattern | None, entry: Entry | None = None) -> Any:
        m = self.admin_module
        any_ = "ANY"
        return m.AclBindingFilter(
            self._enum("ResourceType", any_ if pattern is None else
                       _CONFLUENT_TYPES.get(pattern.resource_type, pattern.resource_type)),
            None if pattern is None else pattern.name,
            self._enum("ResourcePatternType", any_ if pattern is None else pattern.pattern_type),
            None if entry is None else entry.principal, None if entry is None else entry.host,
            self._enum("AclOperation", any_ if entry is None else entry.operation),
            self._enum("AclPermissionType", any_ if entry is None else entry.permission_type))

    @staticmethod
    def _from_binding(b: Any) -> tuple[Pattern, Entry]:
        rtype = "CLUSTER" if b.restype.name == "BROKER" else b.restype.name
        return (Pattern(rtype, b.name, b.resource_pattern_type.name),
                Entry(b.principal, b.host, b.operation.name, b.permission_type.name))

    def _print(self, line: str) -> None:
        print(line, file=self.out)

    def add(self, opts: argparse.Namespace) -> None:
        if opts.resource_pattern_type not in ("LITERAL", "PREFIXED"):
            raise UsageError(f"A '--resource-pattern-type' value of "
                             f"'{opts.resource_pattern_type}' is not valid when adding acls.")
        to_add = filter_to_acls(opts)
        if any(not acls for acls in to_add.values()):
            raise UsageError("You must specify one of: --allow-principal, --deny-principal "
                             "when trying to add ACLs.")
        for pattern, acls in to_add.items():
            if not self.as_json:
                self._print(_block(f"Adding ACLs for resource `{pattern}`", acls))
            futures = self.admin.create_acls([self._binding(pattern, a) for a in sorted(acls)])
            for future in futures.values():
                result(future)
        self.list(opts)

    def remove(self, opts: argparse.Namespace) -> None:
        for pattern, acls in filter_to_acls(opts).items():
            if not acls:
                question = (f"Are you sure you want to delete all ACLs for resource filter "
                            f"`{pattern}`? (y/n)")
            else:
                question = (f"Are you sure you want to remove ACLs: {NEWLINE} "
                            + NEWLINE.join("\t" + str(a) for a in sorted(acls))
                            + f" {NEWLINE} from resource filter `{pattern}`? (y/n)")
            if not opts.force:
                self._print(question)
                if self.stdin.readline().strip().lower() != "y":
                    continue
            filters = [self._filter(pattern, a) for a in sorted(acls)] or \
                [self._filter(pattern)]
            for future in self.admin.delete_acls(filters).values():
                result(future)
        self.list(opts)

    def _describe(self, filters: Sequence[Pattern]) -> dict[Pattern, set[Entry]]:
        found: dict[Pattern, set[Entry]] = {}
        wanted: Sequence[Pattern | None] = filters or [None]
        for flt in wanted:
            for b in result(self.admin.describe_acls(self._filter(flt))):
                pattern, entry = self._from_binding(b)
                found.setdefault(pattern, set()).add(entry)
        return found

    def list(self, opts: argparse.Namespace) -> None:
        found = self._describe(resource_filters(opts, required=False))
        principals = _principals(opts.principal)
        if not principals:
            self._print_resources(found)
            return
        for principal in principals:
            if not self.as_json:
                self._print(f"ACLs for principal `{principal}`")
            mine = {p: {e for e in acls if e.principal == principal}
                    for p, acls in found.items()}
            self._print_resources({p: acls for p, acls in mine.items() if acls})

    def _print_resources(self, resources: Mapping[Pattern, set[Entry]]) -> None:
        for pattern in sorted(resources):
            acls = resources[pattern]
            if self.as_json:
                self._print(json.dumps({**pattern.json(),
                                        "acls": [a.json() for a in sorted(acls)]}))
            else:
                self._print(_block(f"Current ACLs for resource `{pattern}`", acls))


def run(opts: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None,
        stdin: TextIO | None = None) -> int:
    """Run the tool; the exit code (0, or 1 after an error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        check_args(opts)
        try:
            import confluent_kafka  # noqa: F401  (the [tools] extra)
        except ImportError:
            return missing_extra("acls", err)
        service = AclService(admin_client(opts.bootstrap_server, opts.command_config),
                             opts.output == "json", out, stdin or sys.stdin)
        if opts.add:
            service.add(opts)
        elif opts.remove:
            service.remove(opts)
        else:
            service.list(opts)
    except UsageError as e:
        print(e, file=err)
        return 1
    except (ToolError, ValueError, TypeError) as e:
        exception = EXCEPTIONS.get(error_code(e) or "", "KafkaException")
        print(f"Error while executing ACL command: org.apache.kafka.common.errors."
              f"{exception}: {e}", file=out)
        return 1
    return 0
