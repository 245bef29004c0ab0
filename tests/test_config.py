"""BrokerConfig and the .properties parser.

- ``parse_properties`` against the rules of ``java.util.Properties.load`` (its Javadoc: logical
  and natural lines, comments, separators, continuations, escapes); expected values are written
  from those rules, not from the implementation.
- Every default against Apache Kafka's, with the source that declares it; the few deliberate
  differences are listed and checked as such.
- Precedence (log.dirs over log.dir, overrides over the file, the broker.id alias, the retention
  and roll synonyms, dynamic over static), listeners, every validation error, unknown keys,
  DescribeConfigs (sources, synonyms, read-only) and ``with_updates``.
"""

from __future__ import annotations

import logging
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkapy.config import (
    SETTINGS,
    BrokerConfig,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    Endpoint,
    parse_properties,
)
from kafkapy.errors import InvalidConfigError
from kafkapy.log.config import LONG_MAX, LogConfig
from kafkapy.log.config import TOPIC_CONFIG_SPEC as TOPIC_SPEC
from kafkapy.log.log_manager import LogManager

LMAX = str(LONG_MAX)
IMAX = str(2**31 - 1)

# ============================================================================ parse_properties

PROPERTIES_CASES = [
    # Separators: the key ends at the first unescaped '=', ':' or whitespace (space, tab, FF).
    ("separators", "a=1\nb:2\nc 3\nd\t4\ne\f5",
     {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}),
    ("whitespace around the separator", "a = 1\nb : 2\nc   3\nd\t=\t4",
     {"a": "1", "b": "2", "c": "3", "d": "4"}),
    # After the key: whitespace, at most one '=' or ':', whitespace; the rest is the value.
    ("one separator only", "a==1\nb = = 2\nc:=3\nd =:4\ne 5=6\nf ::",
     {"a": "=1", "b": "= 2", "c": "=3", "d": ":4", "e": "5=6", "f": ":"}),
    ("no value", "a\nb=\nc:\nd   \ne =   ", {"a": "", "b": "", "c": "", "d": "", "e": ""}),
    ("empty key", "=v", {"": "v"}),
    ("leading whitespace skipped, trailing kept", "   a = b  \n\t\fc=d", {"a": "b  ", "c": "d"}),
    # Comments: '#' or '!' as the first non-whitespace character of a line, nowhere else.
    ("comments", "# a=1\n! b=2\n   # c=3\n\t! d=4\ne=5 # not a comment\nf=#g",
     {"e": "5 # not a comment", "f": "#g"}),
    ("a comment never continues", "# comment \\\na=1", {"a": "1"}),
    ("an escape in a comment is not read", "# \\uZZZZ\na=1", {"a": "1"}),
    ("blank lines", "\n\n   \n\t\f\na=1\n\n", {"a": "1"}),
    # Continuation: an odd number of trailing backslashes joins the next natural line, whose
    # leading whitespace is dropped.
    ("continuation", "a=one, \\\n    two, \\\n\t three", {"a": "one, two, three"}),
    ("continuation keeps the space before the backslash", "a=x \\\n  y", {"a": "x y"}),
    ("a continued line starting with # is not a comment", "a=1\\\n# 2", {"a": "1# 2"}),
    ("continuation inside the key", "ke\\\n  y=v", {"key": "v"}),
    ("continuation onto a blank line ends the line", "a=1\\\n\nb=2", {"a": "1", "b": "2"}),
    ("continuation onto a whitespace line ends the line", "a=1\\\n   \nb=2",
     {"a": "1", "b": "2"}),
    ("an even number of backslashes does not continue", "a=1\\\\\nb=2", {"a": "1\\", "b": "2"}),
    ("three backslashes continue", "a=1\\\\\\\n2", {"a": "1\\2"}),
    ("a backslash ending the input is dropped", "a=1\\", {"a": "1"}),
    ("a lone backslash line joins the next", "\\\na=b", {"a": "b"}),
    ("a continuation onto nothing is a blank line", "   \\\n   \nb=2", {"b": "2"}),
    # JDK 9+ corner cases (java.util.Properties$LineReader): a continuation from nothing
    # starts a fresh line, and a lone backslash ending the input is an empty key.
    ("a continuation from nothing may be a comment", "\\\n# x=1\n\\\n! y", {}),
    ("a lone backslash at the end is an empty key", "a=1\n\\", {"a": "1", "": ""}),
    ("so is one followed by a single newline", "\\\n\\\n", {"": ""}),
    ("but not one followed by CRLF", "\\\r\n", {}),
    ("line terminators", "a=1\r\nb=2\rc=3\nd=4", {"a": "1", "b": "2", "c": "3", "d": "4"}),
    ("continuation across CRLF", "a=1\\\r\n  2\r\nb=3", {"a": "12", "b": "3"}),
    # Escapes: \t \n \r \f, \uXXXX; a backslash before anything else is dropped.
    ("escapes", r"a=\t\n\r\f\\\=\:\#\!\ x", {"a": "\t\n\r\f\\=:#! x"}),
    ("unknown escapes drop the backslash", r"a=\z\b\q", {"a": "zbq"}),
    ("escaped '=' in the key", r"a\=b=c", {"a=b": "c"}),
    ("escaped ':' in the key", r"a\:b:c", {"a:b": "c"}),
    ("escaped space in the key", r"a\ b c", {"a b": "c"}),
    ("escaped # and ! start keys, not comments", "\\#k=v\n\\!k=w", {"#k": "v", "!k": "w"}),
    ("escaped spaces open the value", r"a=\ \ b", {"a": "  b"}),
    ("unicode escapes", r"a=\u0041\u00e9\u00E9", {"a": "A\u00e9\u00e9"}),
    ("a unicode '=' in the key does not separate", r"a\u003db=c", {"a=b": "c"}),
    ("a unicode space in the key does not separate", r"a\u0020b c", {"a b": "c"}),
    ("a surrogate pair is one character", r"e=\uD83D\uDE00", {"e": "\U0001F600"}),
    ("the last duplicate wins", "a=1\nb=2\na=3", {"a": "3", "b": "2"}),
    ("non-ASCII text passes through", "cl\u00e9=v\u00e4lue", {"cl\u00e9": "v\u00e4lue"}),
    ("empty input", "", {}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in PROPERTIES_CASES],
                         ids=[c[0] for c in PROPERTIES_CASES])
def test_parse_properties(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(("text", "line"), [
    (r"a=\u12G4", 1),
    ("ok=1\nb=2\nc=\\u12", 3),                  # too short at the end of the input
    ("a=1\\\n  \\u00zz", 2),                    # on the continued line
    ("# c\n\n\\uZZZZ=1", 3),                    # in a key
    ("a=\\u", 1),
])
def test_malformed_unicode_escape_names_the_line(text: str, line: int) -> None:
    with pytest.raises(ValueError, match=rf"^line {line}: malformed \\uxxxx encoding"):
        parse_properties(text)


# The real reader as the oracle: java.util.Properties.load in a JDK, when one is installed.
JAVA_LOADER = """
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
public class Load {
    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
        return b.toString();
    }
    public static void main(String[] files) throws Exception {
        for (String f : files) {
            Properties p = new Properties();
            try (Reader r = new InputStreamReader(new FileInputStream(f), StandardCharsets.UTF_8)) {
                p.load(r);
                StringBuilder out = new StringBuilder("OK");
                for (String k : new TreeSet<>(p.stringPropertyNames()))
                    out.append(" ").append(hex(k)).append("=").append(hex(p.getProperty(k)));
                System.out.println(out);
            } catch (IllegalArgumentException e) {
                System.out.println("ERR");
            }
        }
    }
}
"""


def java_load(tmp_path: Path, texts: list[str]) -> list[dict[str, str] | None]:
    """Each text as Java reads it (None: Java refuses it)."""
    (tmp_path / "Load.java").write_text(JAVA_LOADER)
    files = []
    for n, text in enumerate(texts):
        files.append(tmp_path / f"{n}.properties")
        files[-1].write_text(text, encoding="utf-8", newline="")
    java = shutil.which("java")
    assert java is not None
    out = subprocess.run([java, str(tmp_path / "Load.java"), *map(str, files)],
                         capture_output=True, text=True, check=True, timeout=120).stdout

    def text_of(hex_units: str) -> str:
        units = "".join(chr(int(hex_units[i:i + 4], 16)) for i in range(0, len(hex_units), 4))
        return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")

    results: list[dict[str, str] | None] = []
    for line in out.splitlines():
        status, *pairs = line.split(" ")
        results.append(None if status == "ERR" else
                       {text_of(k): text_of(v) for k, v in (p.split("=") for p in pairs)})
    assert len(results) == len(texts)
    return results


def ours(text: str) -> dict[str, str] | None:
    try:
        return parse_properties(text)
    except ValueError:
        return None


def test_parse_properties_agrees_with_java(tmp_path: Path) -> None:
    # Needs a JDK (java runs the single-file source Load.java); ./dev test installs one.
    rng = random.Random(20240611)
    alphabet = ["a", "b", "=", ":", " ", "\t", "\f", "\\", "\\", "\n", "\r", "\r\n", "#",
                "!", "\\u", "0", "4", "1", "e", "\u00e9"]
    fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(400)]
    texts = [text for _name, text, _expected in PROPERTIES_CASES] + fuzz
    for text, expected in zip(texts, java_load(tmp_path, texts), strict=True):
        assert ours(text) == expected, repr(text)


# ============================================================================ defaults

# Kafka's defaults as DescribeConfigs shows them (None: null), with the class that declares
# them in apache/kafka (4.x): SC ServerConfigs, SSC SocketServerConfigs, SLC ServerLogConfigs /
# LogConfig.SERVER_CONFIG_DEF, RC ReplicationConfigs, CC CleanerConfig, GCC GroupCoordinatorConfig,
# TLC TransactionLogConfig, TSMC TransactionStateManagerConfig, KRC KRaftConfigs. The same values
# are listed at https://kafka.apache.org/documentation/#brokerconfigs.
KAFKA_DEFAULTS: dict[str, tuple[str | None, str]] = {
    "node.id": ("-1", "KRC NODE_ID (required in KRaft)"),
    "broker.id": ("-1", "SC BROKER_ID_DEFAULT"),
    "broker.rack": (None, "SC BROKER_RACK_CONFIG"),
    "replica.selector.class": (None, "RC REPLICA_SELECTOR_CLASS_CONFIG"),
    "authorizer.class.name": ("", "SC AUTHORIZER_CLASS_NAME_DEFAULT"),
    "super.users": (None, "AclAuthorizer SuperUsersProp / StandardAuthorizer SUPER_USERS_CONFIG "
                    "(no default)"),
    "allow.everyone.if.no.acl.found": ("false", "AclAuthorizer "
                                       "AllowEveryoneIfNoAclIsFoundProp"),
    "zookeeper.connect": (None, "ZkConfigs ZK_CONNECT_CONFIG (3.x)"),
    "zookeeper.session.timeout.ms": ("18000", "ZkConfigs ZK_SESSION_TIMEOUT_MS (3.x)"),
    "zookeeper.connection.timeout.ms": (None, "ZkConfigs ZK_CONNECTION_TIMEOUT_MS (3.x: "
                                        "unset means the session timeout)"),
    "controlled.shutdown.enable": ("true", "SC CONTROLLED_SHUTDOWN_ENABLE_DEFAULT"),
    "controlled.shutdown.max.retries": ("3", "SC CONTROLLED_SHUTDOWN_MAX_RETRIES_DEFAULT (3.x)"),
    "controlled.shutdown.retry.backoff.ms": ("5000", "SC CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS "
                                             "(3.x)"),
    "auto.leader.rebalance.enable": ("true", "RC AUTO_LEADER_REBALANCE_ENABLE_DEFAULT"),
    "leader.imbalance.check.interval.seconds": ("300", "RC LEADER_IMBALANCE_CHECK_INTERVAL_"
                                                "SECONDS_DEFAULT"),
    "leader.imbalance.per.broker.percentage": ("10", "RC LEADER_IMBALANCE_PER_BROKER_"
                                               "PERCENTAGE_DEFAULT"),
    "controller.socket.timeout.ms": ("30000", "SC CONTROLLER_SOCKET_TIMEOUT_MS_DEFAULT"),
    "security.inter.broker.protocol": ("PLAINTEXT", "ReplicationConfigs INTER_BROKER_SECURITY_"
                                       "PROTOCOL_DEFAULT"),
    "ssl.keystore.type": ("JKS", "SslConfigs DEFAULT_SSL_KEYSTORE_TYPE"),
    "ssl.keystore.location": (None, "SslConfigs SSL_KEYSTORE_LOCATION_CONFIG"),
    "ssl.keystore.password": (None, "SslConfigs SSL_KEYSTORE_PASSWORD_CONFIG"),
    "ssl.key.password": (None, "SslConfigs SSL_KEY_PASSWORD_CONFIG"),
    "ssl.keystore.certificate.chain": (None, "SslConfigs SSL_KEYSTORE_CERTIFICATE_CHAIN_..."),
    "ssl.keystore.key": (None, "SslConfigs SSL_KEYSTORE_KEY_CONFIG"),
    "ssl.truststore.type": ("JKS", "SslConfigs DEFAULT_SSL_TRUSTSTORE_TYPE"),
    "ssl.truststore.location": (None, "SslConfigs SSL_TRUSTSTORE_LOCATION_CONFIG"),
    "ssl.truststore.password": (None, "SslConfigs SSL_TRUSTSTORE_PASSWORD_CONFIG"),
    "ssl.truststore.certificates": (None, "SslConfigs SSL_TRUSTSTORE_CERTIFICATES_CONFIG"),
    "ssl.client.auth": ("none", "BrokerSecurityConfigs SSL_CLIENT_AUTH_DEFAULT"),
    "ssl.enabled.protocols": ("TLSv1.2,TLSv1.3", "SslConfigs DEFAULT_SSL_ENABLED_PROTOCOLS "
                              "(Java 11+)"),
    "ssl.cipher.suites": (None, "SslConfigs SSL_CIPHER_SUITES_CONFIG"),
    "ssl.endpoint.identification.algorithm": ("https", "SslConfigs DEFAULT_SSL_ENDPOINT_"
                                              "IDENTIFICATION_ALGORITHM"),
    "ssl.principal.mapping.rules": ("DEFAULT", "BrokerSecurityConfigs DEFAULT_SSL_PRINCIPAL_"
                                    "MAPPING_RULES"),
    "ssl.protocol": ("TLSv1.3", "SslConfigs DEFAULT_SSL_PROTOCOL (Java 11+)"),
    "ssl.allow.dn.changes": ("false", "BrokerSecurityConfigs DEFAULT_SSL_ALLOW_DN_CHANGES_VALUE"),
    "ssl.allow.san.changes": ("false", "BrokerSecurityConfigs DEFAULT_SSL_ALLOW_SAN_CHANGES_"
                              "VALUE"),
    "inter.broker.listener.name": (None, "RC INTER_BROKER_LISTENER_NAME_CONFIG (unset: from "
                                   "security.inter.broker.protocol, PLAINTEXT)"),
    "num.replica.fetchers": ("1", "RC NUM_REPLICA_FETCHERS_DEFAULT"),
    "replica.lag.time.max.ms": ("30000", "RC REPLICA_LAG_TIME_MAX_MS_DEFAULT"),
    "replica.fetch.max.bytes": ("1048576", "RC REPLICA_FETCH_MAX_BYTES_DEFAULT"),
    "replica.fetch.min.bytes": ("1", "RC REPLICA_FETCH_MIN_BYTES_DEFAULT"),
    "replica.fetch.wait.max.ms": ("500", "RC REPLICA_FETCH_WAIT_MAX_MS_DEFAULT"),
    "replica.fetch.backoff.ms": ("1000", "RC REPLICA_FETCH_BACKOFF_MS_DEFAULT"),
    "replica.alter.log.dirs.io.max.bytes.per.second": (
        LMAX, "QuotaConfig QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MAX_VALUE)"),
    "replica.fetch.response.max.bytes": ("10485760", "RC REPLICA_FETCH_RESPONSE_MAX_BYTES_"
                                         "DEFAULT"),
    "replica.socket.timeout.ms": ("30000", "RC REPLICA_SOCKET_TIMEOUT_MS_DEFAULT"),
    "listeners": ("PLAINTEXT://:9092", "SSC LISTENERS_DEFAULT"),
    "advertised.listeners": (None, "SSC ADVERTISED_LISTENERS_CONFIG"),
    "listener.security.protocol.map": (
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "SSC LISTENER_SECURITY_PROTOCOL_MAP_DEFAULT (docs' rendering)"),
    "num.network.threads": ("3", "SSC NUM_NETWORK_THREADS_DEFAULT"),
    "num.io.threads": ("8", "SC NUM_IO_THREADS_DEFAULT"),
    "queued.max.requests": ("500", "SSC QUEUED_MAX_REQUESTS_DEFAULT"),
    "queued.max.request.bytes": ("-1", "SSC QUEUED_MAX_REQUEST_BYTES_DEFAULT"),
    "request.timeout.ms": ("30000", "SC REQUEST_TIMEOUT_MS_DEFAULT"),
    "socket.send.buffer.bytes": ("102400", "SSC SOCKET_SEND_BUFFER_BYTES_DEFAULT"),
    "socket.receive.buffer.bytes": ("102400", "SSC SOCKET_RECEIVE_BUFFER_BYTES_DEFAULT"),
    "socket.request.max.bytes": ("104857600", "SSC SOCKET_REQUEST_MAX_BYTES_DEFAULT"),
    "socket.listen.backlog.size": ("50", "SSC SOCKET_LISTEN_BACKLOG_SIZE_DEFAULT"),
    "connections.max.idle.ms": ("600000", "SSC CONNECTIONS_MAX_IDLE_MS_DEFAULT"),
    "max.connections": (IMAX, "SSC MAX_CONNECTIONS_DEFAULT"),
    "max.connections.per.ip": (IMAX, "SSC MAX_CONNECTIONS_PER_IP_DEFAULT"),
    "max.connections.per.ip.overrides": ("", "SSC MAX_CONNECTIONS_PER_IP_OVERRIDES_DEFAULT"),
    "max.connection.creation.rate": (IMAX, "SSC MAX_CONNECTION_CREATION_RATE_DEFAULT"),
    "sasl.enabled.mechanisms": ("GSSAPI", "BrokerSecurityConfigs "
                                "DEFAULT_SASL_ENABLED_MECHANISMS"),
    "sasl.jaas.config": (None, "SaslConfigs SASL_JAAS_CONFIG (no default)"),
    "sasl.mechanism.inter.broker.protocol": ("GSSAPI", "SaslConfigs DEFAULT_SASL_MECHANISM"),
    "sasl.server.max.receive.size": ("524288", "BrokerSecurityConfigs "
                                     "DEFAULT_SASL_SERVER_MAX_RECEIVE_SIZE"),
    "connections.max.reauth.ms": ("0", "BrokerSecurityConfigs "
                                  "DEFAULT_CONNECTIONS_MAX_REAUTH_MS"),
    "connection.failed.authentication.delay.ms": ("100", "SSC "
                                                  "FAILED_AUTHENTICATION_DELAY_MS_DEFAULT"),
    "message.max.bytes": ("1048588", "SLC MAX_MESSAGE_BYTES_DEFAULT (1 MiB + LOG_OVERHEAD)"),
    "fetch.max.bytes": ("57671680", "SC FETCH_MAX_BYTES_DEFAULT (55 MiB)"),
    "max.incremental.fetch.session.cache.slots": (
        "1000", "SC MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS_DEFAULT"),
    "auto.create.topics.enable": ("true", "SLC AUTO_CREATE_TOPICS_ENABLE_DEFAULT"),
    "delete.topic.enable": ("true", "SC DELETE_TOPIC_ENABLE_DEFAULT"),
    "max.request.partition.size.limit": ("2000", "SC MAX_REQUEST_PARTITION_SIZE_LIMIT_..."),
    "num.partitions": ("1", "SLC NUM_PARTITIONS_DEFAULT"),
    "default.replication.factor": ("1", "RC DEFAULT_REPLICATION_FACTOR"),
    "min.insync.replicas": ("1", "SLC MIN_IN_SYNC_REPLICAS_DEFAULT"),
    "unclean.leader.election.enable": ("false", "LogConfig DEFAULT_UNCLEAN_LEADER_ELECTION"),
    "compression.type": ("producer", "SLC COMPRESSION_TYPE_DEFAULT"),
    "replica.high.watermark.checkpoint.interval.ms": ("5000", "RC REPLICA_HIGH_WATERMARK_..."),
    "log.dirs": (None, "SLC LOG_DIRS_CONFIG"),
    "log.dir": ("/tmp/kafka-logs", "SLC LOG_DIR_DEFAULT"),
    "log.segment.bytes": ("1073741824", "LogConfig DEFAULT_SEGMENT_BYTES"),
    "log.roll.ms": (None, "SLC LOG_ROLL_TIME_MILLIS_CONFIG"),
    "log.roll.hours": ("168", "SERVER_CONFIG_DEF, DEFAULT_SEGMENT_MS in hours"),
    "log.roll.jitter.ms": (None, "SLC LOG_ROLL_TIME_JITTER_MILLIS_CONFIG"),
    "log.roll.jitter.hours": ("0", "SERVER_CONFIG_DEF"),
    "log.retention.ms": (None, "SLC LOG_RETENTION_TIME_MILLIS_CONFIG"),
    "log.retention.minutes": (None, "SLC LOG_RETENTION_TIME_MINUTES_CONFIG"),
    "log.retention.hours": ("168", "SERVER_CONFIG_DEF, DEFAULT_RETENTION_MS in hours"),
    "log.retention.bytes": ("-1", "SLC LOG_RETENTION_BYTES_DEFAULT"),
    "log.retention.check.interval.ms": ("300000", "SLC LOG_CLEANUP_INTERVAL_MS_DEFAULT"),
    "log.cleanup.policy": ("delete", "SLC LOG_CLEANUP_POLICY_DEFAULT"),
    "log.index.size.max.bytes": ("10485760", "SLC LOG_INDEX_SIZE_MAX_BYTES_DEFAULT"),
    "log.index.interval.bytes": ("4096", "SLC LOG_INDEX_INTERVAL_BYTES_DEFAULT"),
    "log.flush.interval.messages": (LMAX, "SLC LOG_FLUSH_INTERVAL_MESSAGES_DEFAULT"),
    "log.flush.interval.ms": (None, "SLC LOG_FLUSH_INTERVAL_MS_CONFIG"),
    "log.flush.scheduler.interval.ms": (LMAX, "SLC LOG_FLUSH_SCHEDULER_INTERVAL_MS_DEFAULT"),
    "log.flush.offset.checkpoint.interval.ms": ("60000", "SLC LOG_FLUSH_OFFSET_CHECKPOINT_..."),
    "log.flush.start.offset.checkpoint.interval.ms": ("60000", "SLC LOG_FLUSH_START_OFFSET_..."),
    "log.segment.delete.delay.ms": ("60000", "SLC LOG_DELETE_DELAY_MS_DEFAULT"),
    "log.preallocate": ("false", "LogConfig DEFAULT_PREALLOCATE"),
    "log.message.timestamp.type": ("CreateTime", "SLC LOG_MESSAGE_TIMESTAMP_TYPE_DEFAULT"),
    "log.message.downconversion.enable": ("true",
                                          "LogConfig DEFAULT_MESSAGE_DOWNCONVERSION_ENABLE"),
    "log.message.format.version": ("3.0-IV1", "LogConfig DEFAULT_MESSAGE_FORMAT_VERSION "
                                   "(3.x: IBP_3_0_IV1)"),
    "log.message.timestamp.before.max.ms": (LMAX, "SLC LOG_MESSAGE_TIMESTAMP_BEFORE_MAX_MS_..."),
    "log.message.timestamp.after.max.ms": ("3600000", "SLC, Kafka 4.0 (KIP-1030)"),
    "log.cleaner.enable": ("true", "CC LOG_CLEANER_ENABLE_DEFAULT"),
    "log.cleaner.backoff.ms": ("15000", "CC LOG_CLEANER_BACKOFF_MS_DEFAULT"),
    "log.cleaner.delete.retention.ms": ("86400000", "LogConfig DEFAULT_DELETE_RETENTION_MS"),
    "log.cleaner.min.compaction.lag.ms": ("0", "LogConfig DEFAULT_MIN_COMPACTION_LAG_MS"),
    "log.cleaner.max.compaction.lag.ms": (LMAX, "LogConfig DEFAULT_MAX_COMPACTION_LAG_MS"),
    "log.cleaner.min.cleanable.ratio": ("0.5", "LogConfig DEFAULT_MIN_CLEANABLE_DIRTY_RATIO"),
    "num.recovery.threads.per.data.dir": ("2", "SLC, Kafka 4.0 (KIP-1030)"),
    "group.initial.rebalance.delay.ms": ("3000", "GCC GROUP_INITIAL_REBALANCE_DELAY_MS_..."),
    "group.min.session.timeout.ms": ("6000", "GCC GROUP_MIN_SESSION_TIMEOUT_MS_DEFAULT"),
    "group.max.session.timeout.ms": ("1800000", "GCC GROUP_MAX_SESSION_TIMEOUT_MS_DEFAULT"),
    "group.max.size": (IMAX, "GCC GROUP_MAX_SIZE_DEFAULT"),
    "group.consumer.heartbeat.interval.ms": ("5000", "GCC CONSUMER_GROUP_HEARTBEAT_..."),
    "group.consumer.session.timeout.ms": ("45000", "GCC CONSUMER_GROUP_SESSION_TIMEOUT_..."),
    "group.consumer.min.session.timeout.ms": ("45000", "GCC CONSUMER_GROUP_MIN_SESSION_..."),
    "group.consumer.max.session.timeout.ms": ("60000", "GCC CONSUMER_GROUP_MAX_SESSION_..."),
    "group.consumer.max.size": (IMAX, "GCC CONSUMER_GROUP_MAX_SIZE_DEFAULT"),
    "group.consumer.assignors": ("uniform,range", "GCC CONSUMER_GROUP_ASSIGNORS_DEFAULT"),
    "offsets.topic.num.partitions": ("50", "GCC OFFSETS_TOPIC_PARTITIONS_DEFAULT"),
    "offsets.topic.replication.factor": ("3", "GCC OFFSETS_TOPIC_REPLICATION_FACTOR_DEFAULT"),
    "offsets.topic.segment.bytes": ("104857600", "GCC OFFSETS_TOPIC_SEGMENT_BYTES_DEFAULT"),
    "offsets.retention.minutes": ("10080", "GCC OFFSETS_RETENTION_MINUTES_DEFAULT (7 days)"),
    "offsets.retention.check.interval.ms": ("600000", "GCC OFFSETS_RETENTION_CHECK_..."),
    "offsets.commit.timeout.ms": ("5000", "GCC OFFSET_COMMIT_TIMEOUT_MS_DEFAULT"),
    "offset.metadata.max.bytes": ("4096", "GCC OFFSET_METADATA_MAX_SIZE_DEFAULT"),
    "transaction.state.log.num.partitions": ("50", "TLC TRANSACTIONS_TOPIC_PARTITIONS_..."),
    "transaction.state.log.replication.factor": ("3", "TLC TRANSACTIONS_TOPIC_REPLICATION_..."),
    "transaction.state.log.min.isr": ("2", "TLC TRANSACTIONS_TOPIC_MIN_ISR_DEFAULT"),
    "transaction.state.log.segment.bytes": ("104857600", "TLC TRANSACTIONS_TOPIC_SEGMENT_..."),
    "transactional.id.expiration.ms": ("604800000", "TSMC TRANSACTIONAL_ID_EXPIRATION_MS_..."),
    "transaction.max.timeout.ms": ("900000", "TSMC TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT"),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
        "10000", "TSMC TRANSACTIONS_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS_DEFAULT"),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "3600000", "TSMC TRANSACTIONS_REMOVE_EXPIRED_TRANSACTIONAL_ID_CLEANUP_..."),
    "producer.id.expiration.ms": ("86400000", "TLC PRODUCER_ID_EXPIRATION_MS_DEFAULT"),
    "producer.id.expiration.check.interval.ms": (
        "600000", "TLC PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS_DEFAULT"),
    "quota.window.num": ("11", "QuotaConfig QUOTA_WINDOW_NUM_DEFAULT"),
    "quota.window.size.seconds": ("1", "QuotaConfig QUOTA_WINDOW_SIZE_SECONDS_DEFAULT"),
    "controller.quota.window.num": (
        "11", "QuotaConfig CONTROLLER_QUOTA_WINDOW_NUM_DEFAULT"),
    "controller.quota.window.size.seconds": (
        "1", "QuotaConfig CONTROLLER_QUOTA_WINDOW_SIZE_SECONDS_DEFAULT"),
    "leader.replication.throttled.rate": (
        str(2**63 - 1), "QuotaConfig QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MAX_VALUE)"),
    "follower.replication.throttled.rate": (
        str(2**63 - 1), "QuotaConfig QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MAX_VALUE)"),
    "replication.quota.window.num": ("11", "QuotaConfig REPLICATION_QUOTA_WINDOW_NUM_DEFAULT"),
    "replication.quota.window.size.seconds": (
        "1", "QuotaConfig REPLICATION_QUOTA_WINDOW_SIZE_SECONDS_DEFAULT"),
}

# Deliberate differences: kafkapy's standalone defaults.
KAFKAPY_DEFAULTS = {
    "node.id": "1",
    "broker.id": "1",
    "listeners": "PLAINTEXT://localhost:9092",
    "log.dir": "./kafkapy-data",
}


def test_every_setting_has_a_cited_kafka_default() -> None:
    # cluster.id is kafkapy's own (Kafka keeps it in meta.properties only), and so are the
    # kafkapy.metrics.* settings (Kafka has JMX, not a Prometheus endpoint).
    own = {"cluster.id", "kafkapy.metrics.port", "kafkapy.metrics.host",
           "kafkapy.metrics.enabled"}
    assert set(SETTINGS) - own == set(KAFKA_DEFAULTS)


@pytest.mark.parametrize("name", sorted(KAFKA_DEFAULTS))
def test_default_is_kafkas(name: str) -> None:
    kafka_value, _source = KAFKA_DEFAULTS[name]
    (entry,) = BrokerConfig().describe([name])
    assert SETTINGS[name].kafka_default == kafka_value
    assert entry.value == KAFKAPY_DEFAULTS.get(name, kafka_value)
    assert entry.source is ConfigSource.DEFAULT_CONFIG and entry.is_default


def test_typed_defaults() -> None:
    c = BrokerConfig()
    assert (c.node_id, c.broker_id, c.cluster_id) == (1, 1, None)
    assert c.listeners == [Endpoint("PLAINTEXT", "localhost", 9092)]
    assert c.advertised_listeners == c.listeners
    assert c.listener_security_protocol_map == {
        "PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT",
        "SASL_SSL": "SASL_SSL"}
    assert c.log_dirs == [Path("kafkapy-data")]
    assert (c.num_partitions, c.default_replication_factor) == (1, 1)
    assert c.auto_create_topics_enable is True and c.delete_topic_enable is True
    assert c.message_max_bytes == 1048588
    assert c.socket_request_max_bytes == 104857600
    assert c.socket_send_buffer_bytes == c.socket_receive_buffer_bytes == 102400
    assert c.connections_max_idle_ms == 600000
    assert c.max_connections == c.max_connections_per_ip == 2**31 - 1
    assert c.max_connections_per_ip_overrides == {}
    assert (c.queued_max_requests, c.num_io_threads, c.num_network_threads) == (500, 8, 3)
    assert c.request_timeout_ms == 30000
    assert (c.group_initial_rebalance_delay_ms, c.group_min_session_timeout_ms,
            c.group_max_session_timeout_ms, c.group_max_size) == (3000, 6000, 1800000, 2**31 - 1)
    assert (c.offsets_topic_num_partitions, c.offsets_topic_replication_factor) == (50, 3)
    assert (c.offsets_retention_minutes, c.offsets_retention_check_interval_ms) == \
        (10080, 600000)
    assert c.transaction_state_log_num_partitions == 50
    assert (c.transactional_id_expiration_ms, c.producer_id_expiration_ms,
            c.transaction_max_timeout_ms) == (604800000, 86400000, 900000)
    assert (c.log_retention_hours, c.log_retention_minutes, c.log_retention_ms) == \
        (168, None, None)
    assert c.log_cleanup_policy == ("delete",)
    assert c.log_cleaner_min_cleanable_ratio == 0.5
    assert c.log_cleaner_enable is True and c.log_cleaner_backoff_ms == 15000
    assert c.num_recovery_threads_per_data_dir == 2
    assert c.unknown == {} and c.props == {}


def test_every_setting_is_an_attribute() -> None:
    c = BrokerConfig()
    for setting in SETTINGS.values():
        if setting.attr is not None:
            assert hasattr(c, setting.attr), setting.name


def test_broker_defaults_agree_with_log_config() -> None:
    """Every broker synonym LogConfig resolves is a setting, and spelling out every default
    changes nothing: BrokerConfig's table and LogConfig say the same."""
    for _attr, _kind, _default, brokers in TOPIC_SPEC.values():
        for broker_name, _scale in brokers:
            assert broker_name in SETTINGS, broker_name
    explicit = {s.name: s.default for s in SETTINGS.values() if s.default is not None}
    assert LogConfig.resolve(None, explicit) == LogConfig() == BrokerConfig().log_config
    assert BrokerConfig.from_properties(explicit).log_config == LogConfig()


def test_log_manager_settings_are_known_and_agree() -> None:
    config = BrokerConfig.from_properties({
        "log.retention.check.interval.ms": 1000, "log.flush.offset.checkpoint.interval.ms": 2000,
        "log.flush.start.offset.checkpoint.interval.ms": 3000,
        "log.flush.scheduler.interval.ms": 4000, "log.cleaner.enable": False,
        "log.cleaner.backoff.ms": 5000, "num.recovery.threads.per.data.dir": 3,
        "log.segment.delete.delay.ms": 6000,
        "replica.high.watermark.checkpoint.interval.ms": 7000, "log.retention.hours": 1})
    lm = LogManager(config.log_dirs, node_id=config.node_id, broker_props=config.props)
    assert (lm.retention_check_interval_ms, lm.recovery_checkpoint_interval_ms,
            lm.start_offset_checkpoint_interval_ms, lm.flush_check_interval_ms,
            lm.cleaner_enabled, lm.cleaner_backoff_ms, lm.recovery_threads,
            lm.segment_delete_delay_ms, lm.hw_checkpoint_interval_ms) == \
        (1000, 2000, 3000, 4000, False, 5000, 3, 6000, 7000)
    assert lm.config_for("orders") == config.log_config
    assert config.log_config.retention_ms == 3600000 and config.log_config.flush_ms == 4000
    defaults = LogManager(BrokerConfig().log_dirs, broker_props=BrokerConfig().props)
    assert (defaults.retention_check_interval_ms, defaults.recovery_threads,
            defaults.cleaner_backoff_ms) == (300000, 2, 15000)


# ============================================================================ precedence


def test_log_dirs_wins_over_log_dir() -> None:
    both = BrokerConfig.from_properties({"log.dirs": "/data/a , /data/b", "log.dir": "/x"})
    assert both.log_dirs == [Path("/data/a"), Path("/data/b")]
    assert BrokerConfig.from_properties({"log.dir": "/x,/y"}).log_dirs == [Path("/x"), Path("/y")]
    assert BrokerConfig.from_properties({"log.dirs": ["/p", Path("/q")]}).log_dirs == \
        [Path("/p"), Path("/q")]


def test_overrides_win_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text("num.partitions=3\nlog.dirs=/from/file\nlog.retention.hours=24\n")
    config = BrokerConfig.load(path, ["num.partitions=5", "log.retention.hours = 2",
                                      "num.partitions=7", "broker.rack=a=b", "cluster.id="])
    assert config.num_partitions == 7                 # the last override wins
    assert config.log_retention_hours == 2            # keys are trimmed, values parsed trimmed
    assert config.broker_rack == "a=b"                # split at the first '='
    assert config.cluster_id is None                  # an empty value is no value
    assert config.log_dirs == [Path("/from/file")]
    assert config.static["num.partitions"] == "7"
    assert config.describe(["num.partitions"])[0].source is ConfigSource.STATIC_BROKER_CONFIG


def test_load_without_a_file_is_the_standalone_default() -> None:
    config = BrokerConfig.load(None)
    assert config == BrokerConfig() and config.props == {}
    assert BrokerConfig.load(None, ["node.id=4"]).node_id == 4


@pytest.mark.parametrize(("props", "node_id"), [
    ({}, 1),
    ({"node.id": "4"}, 4),
    ({"broker.id": "5"}, 5),
    ({"node.id": "6", "broker.id": " 6"}, 6),
])
def test_broker_id_is_an_alias_of_node_id(props: dict[str, str], node_id: int) -> None:
    config = BrokerConfig.from_properties(props)
    assert config.node_id == config.broker_id == node_id
    for entry in config.describe(["node.id", "broker.id"]):
        assert entry.value == str(node_id)
        assert entry.source is (ConfigSource.STATIC_BROKER_CONFIG if props
                                else ConfigSource.DEFAULT_CONFIG)


def test_node_id_and_broker_id_must_agree() -> None:
    with pytest.raises(InvalidConfigError, match=r"'2' for configuration broker.id.*node.id"):
        BrokerConfig.from_properties({"node.id": "1", "broker.id": "2"})


@pytest.mark.parametrize(("props", "retention_ms"), [
    ({}, 7 * 24 * 3600000),
    ({"log.retention.hours": "1"}, 3600000),
    ({"log.retention.hours": "1", "log.retention.minutes": "2"}, 120000),
    ({"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"}, 3),
    ({"log.retention.ms": "-1"}, -1),
])
def test_retention_finest_unit_wins(props: dict[str, str], retention_ms: int) -> None:
    assert BrokerConfig.from_properties(props).log_config.retention_ms == retention_ms


def test_roll_and_flush_synonyms() -> None:
    config = BrokerConfig.from_properties({"log.roll.hours": "2", "log.roll.ms": "1000",
                                           "log.roll.jitter.hours": "1",
                                           "log.flush.scheduler.interval.ms": "500"})
    assert config.log_config.segment_ms == 1000
    assert config.log_config.segment_jitter_ms == 3600000
    assert config.log_config.flush_ms == 500          # log.flush.interval.ms unset
    assert BrokerConfig.from_properties({"log.flush.scheduler.interval.ms": "500",
                                         "log.flush.interval.ms": "50"}).log_config.flush_ms == 50


def test_python_values_are_accepted() -> None:
    config = BrokerConfig.from_properties({"auto.create.topics.enable": False, "num.partitions": 4,
                                           "log.cleaner.min.cleanable.ratio": 0.25,
                                           "log.cleanup.policy": ["compact", "delete"],
                                           "broker.rack": None})
    assert config.auto_create_topics_enable is False and config.num_partitions == 4
    assert config.log_cleanup_policy == ("compact", "delete")
    assert config.static == {"auto.create.topics.enable": "false", "num.partitions": "4",
                             "log.cleaner.min.cleanable.ratio": "0.25",
                             "log.cleanup.policy": "compact,delete"}


# ============================================================================ listeners


@pytest.mark.parametrize(("listeners", "endpoints"), [
    ("PLAINTEXT://localhost:9092", [Endpoint("PLAINTEXT", "localhost", 9092)]),
    ("PLAINTEXT://:9092", [Endpoint("PLAINTEXT", "", 9092)]),            # all interfaces
    ("PLAINTEXT://127.0.0.1:0", [Endpoint("PLAINTEXT", "127.0.0.1", 0)]),  # ephemeral port
    ("PLAINTEXT://[::1]:9092", [Endpoint("PLAINTEXT", "::1", 9092)]),
    ("PLAINTEXT://[fe80::1%eth0]:9092", [Endpoint("PLAINTEXT", "fe80::1%eth0", 9092)]),
    ("plaintext://my-host.example_1:1", [Endpoint("PLAINTEXT", "my-host.example_1", 1)]),
    (" PLAINTEXT://a:1 , CLIENT://:2 ", [Endpoint("PLAINTEXT", "a", 1), Endpoint("CLIENT", "", 2)]),
    ("PLAINTEXT://127.0.0.1:9092,CLIENT://[::1]:9092",                  # IPv4 and IPv6 may share
     [Endpoint("PLAINTEXT", "127.0.0.1", 9092), Endpoint("CLIENT", "::1", 9092)]),
    ("PLAINTEXT://a:0,CLIENT://b:0", [Endpoint("PLAINTEXT", "a", 0), Endpoint("CLIENT", "b", 0)]),
])
def test_listeners(listeners: str, endpoints: list[Endpoint]) -> None:
    config = BrokerConfig.from_properties({
        "listeners": listeners,
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:plaintext"})
    assert config.listeners == endpoints
    assert config.advertised_listeners == endpoints
    assert config.advertised_listeners is not config.listeners


def test_advertised_listeners() -> None:
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://:9092,CLIENT://:9093",
        "advertised.listeners": "PLAINTEXT://broker1:9092,CLIENT://broker1:9092",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT"})
    # Advertised ports may repeat (one listener advertising another's address).
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", "broker1", 9092),
                                           Endpoint("CLIENT", "broker1", 9092)]
    assert config.listeners == [Endpoint("PLAINTEXT", "", 9092), Endpoint("CLIENT", "", 9093)]


def test_kafka_sample_kraft_listeners_load() -> None:
    # Kafka's config/server.properties maps SSL and SASL names it does not use: that is fine.
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
        "advertised.listeners": "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,"
                                          "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"})
    assert [e.name for e in config.listeners] == ["PLAINTEXT", "CONTROLLER"]


def test_endpoint_str() -> None:
    assert str(Endpoint("PLAINTEXT", "::1", 9092)) == "PLAINTEXT://[::1]:9092"
    assert str(Endpoint("PLAINTEXT", "", 0)) == "PLAINTEXT://:0"
    assert str(Endpoint("CLIENT", "host", 1)) == "CLIENT://host:1"


LISTENER_ERRORS = [
    ({"listeners": "PLAINTEXT://:9092", "security.inter.broker.protocol": "SSL"},
     "the inter-broker listener SSL must be one of the advertised listeners"),
    ({"listeners": "CLIENT://:9092"}, "no security protocol defined for listener CLIENT"),
    ({"listener.security.protocol.map": "PLAINTEXT:TLS"}, "unknown security protocol 'TLS'"),
    ({"listener.security.protocol.map": "PLAINTEXT"}, "is not key:value"),
    ({"listener.security.protocol.map": ",PLAINTEXT:PLAINTEXT"}, "is not key:value"),
    ({"listeners": "localhost:9092"}, "unable to parse 'localhost:9092'"),
    ({"listeners": "PLAINTEXT://localhost"}, "unable to parse"),
    ({"listeners": "PLAINTEXT://host:port"}, "unable to parse"),
    ({"listeners": "PLAINTEXT://bad host:1"}, "unable to parse"),
    ({"listeners": "://:9092"}, "unable to parse"),
    ({"listeners": "PLAINTEXT://:65536"}, "port 65536"),
    ({"listeners": "PLAINTEXT://:-1"}, "port -1"),
    ({"listeners": "PLAINTEXT://a:1,plaintext://b:2"}, "different name"),
    ({"listeners": "PLAINTEXT://a:9092,CLIENT://b:9092",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT"}, "different port"),
    ({"listeners": "PLAINTEXT://1.1.1.1:9092,CLIENT://2.2.2.2:9092",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT"}, "different port"),
    ({"listeners": ""}, "must not be empty"),
    ({"listeners": "PLAINTEXT://a:1,"}, "empty entry"),
    ({"listeners": "PLAINTEXT://a:1,PLAINTEXT://a:1"}, "duplicated"),
    ({"listeners": "PLAINTEXT://0.0.0.0:9092"}, "nonroutable meta-address 0.0.0.0"),
    ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "nonroutable meta-address"),
    ({"advertised.listeners": "CLIENT://h:1",
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT"}, "CLIENT is not"),
    ({"advertised.listeners": ""}, "must not be empty"),
]


@pytest.mark.parametrize(("props", "message"), LISTENER_ERRORS)
def test_listener_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=r"Invalid value .* for configuration") as e:
        BrokerConfig.from_properties(props)
    assert message in str(e.value)
    assert e.value.code == 40


def test_listener_bound_to_all_interfaces_needs_advertised_listeners() -> None:
    config = BrokerConfig.from_properties({"listeners": "PLAINTEXT://0.0.0.0:9092",
                                           "advertised.listeners": "PLAINTEXT://broker:9092"})
    assert config.listeners[0].host == "0.0.0.0"
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", "broker", 9092)]


# ============================================================================ validation

NUMERIC_KINDS = ("int", "short", "long", "ratio")
CHECKED_KINDS = (*NUMERIC_KINDS, "bool", "tstype", "compression", "policy")


@pytest.mark.parametrize("name", sorted(n for n, s in SETTINGS.items()
                                        if s.kind in CHECKED_KINDS))
def test_every_typed_setting_refuses_garbage(name: str) -> None:
    with pytest.raises(InvalidConfigError) as e:
        BrokerConfig.from_properties({name: "garbage"})
    assert f"Invalid value 'garbage' for configuration {name}:" in str(e.value)


@pytest.mark.parametrize("name", sorted(n for n, s in SETTINGS.items()
                                        if s.kind in ("int", "short", "long")))
@pytest.mark.parametrize("value", ["1.5", "1_000", "0x10", "", "9223372036854775808"])
def test_integers_are_parsed_as_java_does(name: str, value: str) -> None:
    with pytest.raises(InvalidConfigError, match=r"Invalid value .* for configuration"):
        BrokerConfig.from_properties({name: value})


@pytest.mark.parametrize(("name", "value"), [
    (n, str(s.at_least - 1)) for n, s in sorted(SETTINGS.items()) if s.at_least is not None])
def test_every_minimum(name: str, value: str) -> None:
    with pytest.raises(InvalidConfigError) as e:
        BrokerConfig.from_properties({name: value})
    assert f"Invalid value '{value}' for configuration {name}: Value must be at least" \
        in str(e.value)
    # The minimum itself is accepted.
    props = {name: str(SETTINGS[name].at_least)}
    if name == "max.connections.per.ip":
        props["max.connections.per.ip.overrides"] = "127.0.0.1:1"
    if name in ("group.consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms"):
        # Never valid: the heartbeat interval (at least 1) must be below the session timeout.
        with pytest.raises(InvalidConfigError, match="must be"):
            BrokerConfig.from_properties(props)
        return
    BrokerConfig.from_properties(props)


@pytest.mark.parametrize(("props", "message"), [
    ({"group.consumer.min.session.timeout.ms": "50000",
      "group.consumer.max.session.timeout.ms": "40000"},
     "group.consumer.max.session.timeout.ms: must be greater than or equal to"),
    ({"group.consumer.session.timeout.ms": "30000"},
     "group.consumer.session.timeout.ms: must be between"),
    ({"group.consumer.session.timeout.ms": "61000"},
     "group.consumer.session.timeout.ms: must be between"),
    ({"group.consumer.heartbeat.interval.ms": "45000"},
     "group.consumer.heartbeat.interval.ms: must be less than"),
    ({"group.consumer.assignors": "uniform,sticky"}, "sticky is not an assignor"),
])
def test_consumer_group_settings_are_checked_together(props: dict[str, str],
                                                      message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        BrokerConfig.from_properties(props)


def test_consumer_group_settings() -> None:
    c = BrokerConfig.from_properties({"group.consumer.assignors": "range",
                                      "group.consumer.min.session.timeout.ms": "1000",
                                      "group.consumer.session.timeout.ms": "2000",
                                      "group.consumer.heartbeat.interval.ms": "500"})
    assert (c.group_consumer_assignors, c.group_consumer_session_timeout_ms,
            c.group_consumer_heartbeat_interval_ms, c.group_consumer_max_size) == \
        (["range"], 2000, 500, 2**31 - 1)
    d = BrokerConfig()
    assert (d.group_consumer_assignors, d.group_consumer_session_timeout_ms,
            d.group_consumer_min_session_timeout_ms, d.group_consumer_max_session_timeout_ms,
            d.group_consumer_heartbeat_interval_ms) == \
        (["uniform", "range"], 45000, 45000, 60000, 5000)


VALUE_ERRORS = [
    ("num.partitions", "2147483648", "not a 32-bit integer"),
    ("offsets.topic.replication.factor", "32768", "not a 16-bit integer"),
    ("log.retention.bytes", "9223372036854775808", "not a 64-bit integer"),
    ("log.retention.ms", "-9223372036854775809", "not a 64-bit integer"),
    ("socket.send.buffer.bytes", "0", "-1 (the OS default) or positive"),
    ("socket.receive.buffer.bytes", "0", "-1 (the OS default) or positive"),
    ("auto.create.topics.enable", "yes", "not true or false"),
    ("delete.topic.enable", "1", "not true or false"),
    ("compression.type", "brotli", "must be one of"),
    ("compression.type", "GZIP", "must be one of"),
    ("log.message.timestamp.type", "createtime", "CreateTime or LogAppendTime"),
    ("log.cleanup.policy", "archive", "delete or compact"),
    ("log.cleaner.min.cleanable.ratio", "1.5", "not within [0, 1]"),
    ("log.cleaner.min.cleanable.ratio", "-0.1", "not within [0, 1]"),
    ("log.cleaner.min.cleanable.ratio", "nan", "not within [0, 1]"),
    ("cluster.id", "my-cluster", "not a Kafka Uuid"),
    ("cluster.id", "MkU3OEVBNTcwNTJENDM2Qk+", "not a Kafka Uuid"),
    ("log.dirs", "", "must not be empty"),
    ("log.dirs", "/a,,/b", "empty entry"),
    ("log.dirs", "/a, /a", "must not be duplicated"),
    ("log.dir", " ", "must not be empty"),
    ("max.connections.per.ip.overrides", "host", "not key:value"),
    ("max.connections.per.ip.overrides", ":5", "not key:value"),
    ("max.connections.per.ip.overrides", "host:x", "not a non-negative 32-bit integer"),
    ("max.connections.per.ip.overrides", "host:-1", "not a non-negative 32-bit integer"),
]


@pytest.mark.parametrize(("name", "value", "reason"), VALUE_ERRORS)
def test_value_errors(name: str, value: str, reason: str) -> None:
    with pytest.raises(InvalidConfigError) as e:
        BrokerConfig.from_properties({name: value})
    assert f"for configuration {name}:" in str(e.value) and reason in str(e.value)
    assert repr(value.strip()) in str(e.value) or name == "max.connections.per.ip.overrides"


@pytest.mark.parametrize(("props", "message"), [
    ({"log.roll.ms": "0"}, "segment.ms: below 1 (from the broker setting log.roll.ms=0)"),
    ({"log.flush.interval.ms": "-1"}, "flush.ms: below 0 (from the broker setting "
                                      "log.flush.interval.ms=-1)"),
    ({"log.retention.ms": "-2"}, "retention.ms: below -1 (from the broker setting "
                                 "log.retention.ms=-2)"),
])
def test_topic_defaults_are_checked_by_log_config(props: dict[str, str], message: str) -> None:
    # Kafka checks the broker's log defaults against the topic-level ranges too
    # (LogConfig.validateBrokerLogConfigValues).
    with pytest.raises(InvalidConfigError, match="Invalid value") as e:
        BrokerConfig.from_properties(props)
    assert message in str(e.value)


def test_negative_retention_hours_means_unlimited() -> None:
    assert BrokerConfig.from_properties({"log.retention.hours": "-1"}).log_config.retention_ms \
        == -1


def test_connections_per_ip_zero_needs_overrides() -> None:
    with pytest.raises(InvalidConfigError, match=r"max\.connections\.per\.ip: can be 0 only if"):
        BrokerConfig.from_properties({"max.connections.per.ip": "0"})
    config = BrokerConfig.from_properties({
        "max.connections.per.ip": "0",
        "max.connections.per.ip.overrides": "127.0.0.1:200, hostName:100,::1:7,"})
    assert config.max_connections_per_ip_overrides == {"127.0.0.1": 200, "hostName": 100,
                                                       "::1": 7}


def test_values_are_trimmed_and_cluster_id_checked() -> None:
    cluster = "MkU3OEVBNTcwNTJENDM2Qk"
    config = BrokerConfig.from_properties({"num.partitions": " 3 ", "cluster.id": f" {cluster}",
                                           "compression.type": "zstd\t",
                                           "log.cleanup.policy": "delete , compact"})
    assert config.num_partitions == 3 and config.cluster_id == cluster
    assert config.compression_type == "zstd"
    assert config.log_cleanup_policy == ("compact", "delete")
    assert config.props["num.partitions"] == " 3 "            # props stay raw
    assert BrokerConfig.from_properties({"cluster.id": cluster + "=="}).cluster_id == \
        cluster + "=="


def test_a_static_value_must_be_valid_even_when_overridden() -> None:
    with pytest.raises(InvalidConfigError, match=r"message\.max\.bytes"):
        BrokerConfig(static={"message.max.bytes": "x"}, dynamic={"message.max.bytes": "5"})


# ============================================================================ unknown keys


def test_unknown_keys_are_kept_and_warned(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kafkapy.config")
    config = BrokerConfig.from_properties({"rack.note": "broker,controller",
                                           "num.partitions": "2", "no.such.setting": "true"})
    assert config.unknown == {"rack.note": "broker,controller", "no.such.setting": "true"}
    assert config.props["rack.note"] == "broker,controller"
    records = [r for r in caplog.records if r.name == "kafkapy.config"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    assert "no.such.setting, rack.note" in records[0].getMessage()
    # As in Kafka, a key of unknown type is described as sensitive, without its value.
    (entry,) = config.describe(["rack.note"])
    assert (entry.value, entry.sensitive, entry.read_only, entry.source) == \
        (None, True, True, ConfigSource.STATIC_BROKER_CONFIG)
    assert entry.config_type is ConfigType.UNKNOWN


def test_no_warning_without_unknown_keys(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kafkapy.config")
    BrokerConfig.from_properties({"num.partitions": "2"})
    assert not [r for r in caplog.records if r.name == "kafkapy.config"]


# ============================================================================ load


def test_load_a_kafka_style_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"\xef\xbb\xbf"            # a UTF-8 BOM is skipped
                     b"# Licensed to the Apache Software Foundation\n"
                     b"process.roles=broker,controller\n"
                     b"node.id=3\n"
                     b"listeners=PLAINTEXT://:19092,CONTROLLER://:19093\n"
                     b"advertised.listeners=PLAINTEXT://localhost:19092\n"
                     b"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,\\\n"
                     b"    SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL\n"
                     b"log.dirs=/tmp/kraft-combined-logs\n"
                     b"num.partitions=1\n"
                     b"offsets.topic.replication.factor=1\n"
                     b"log.retention.hours=168\n"
                     b"log.segment.bytes=1073741824\n"
                     b"rack.note=caf\xc3\xa9\n")
    caplog.set_level(logging.WARNING, logger="kafkapy.config")
    config = BrokerConfig.load(path)
    assert config.node_id == 3 and config.offsets_topic_replication_factor == 1
    assert config.listeners == [Endpoint("PLAINTEXT", "", 19092), Endpoint("CONTROLLER", "", 19093)]
    assert config.advertised_listeners == [Endpoint("PLAINTEXT", "localhost", 19092)]
    assert config.log_dirs == [Path("/tmp/kraft-combined-logs")]
    assert config.unknown == {"rack.note": "caf\u00e9"}
    assert config.kafka_only == {"process.roles": "broker,controller"}
    assert "Unknown broker settings, kept but not used by kafkapy: rack.note" in caplog.text


def test_load_falls_back_to_latin_1(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"broker.rack=caf\xe9\n")        # not UTF-8: read as Java would
    assert BrokerConfig.load(path).broker_rack == "caf\u00e9"


def test_load_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.properties"
    path.write_text("num.partitions=1\nlog.dirs=\\u00G0\n")
    with pytest.raises(InvalidConfigError, match=r"bad.properties: line 2: malformed") as e:
        BrokerConfig.load(path)
    assert isinstance(e.value.__cause__, ValueError)
    with pytest.raises(InvalidConfigError, match=r"Invalid override 'num.partitions'"):
        BrokerConfig.load(None, ["num.partitions"])
    with pytest.raises(InvalidConfigError, match=r"Invalid override '=3'"):
        BrokerConfig.load(None, ["=3"])
    with pytest.raises(InvalidConfigError, match=r"num\.partitions"):
        BrokerConfig.load(None, ["num.partitions=0"])
    with pytest.raises(FileNotFoundError):
        BrokerConfig.load(tmp_path / "missing.properties")


# ============================================================================ describe

# What kafkapy can change at runtime: the topic defaults LogManager re-resolves, the connection
# limits and the handler count. Everything else is read-only.
KAFKAPY_DYNAMIC = {
    # the SSL key and trust stores (Kafka's dynamic SSL update, per broker / per listener)
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "num.io.threads", "replica.alter.log.dirs.io.max.bytes.per.second", "max.connections",
    "max.connections.per.ip", "max.connection.creation.rate",
    "max.connections.per.ip.overrides", "message.max.bytes", "min.insync.replicas",
    "unclean.leader.election.enable", "compression.type", "log.segment.bytes", "log.roll.ms",
    "log.roll.jitter.ms", "log.retention.ms", "log.retention.bytes", "log.cleanup.policy",
    "log.index.size.max.bytes", "log.index.interval.bytes", "log.flush.interval.messages",
    "log.flush.interval.ms", "log.segment.delete.delay.ms", "log.preallocate",
    "log.message.timestamp.type", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "log.message.downconversion.enable",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio",
    # replication quotas (Kafka's DynamicConfig.Broker)
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
}


def test_read_only_marks_what_kafkapy_cannot_change() -> None:
    entries = [e for e in BrokerConfig().describe() if e.name in SETTINGS]
    assert [e.name for e in entries] == list(SETTINGS)
    assert {e.name for e in entries if not e.read_only} == KAFKAPY_DYNAMIC
    for name in KAFKAPY_DYNAMIC:              # a subset of what Kafka can change
        assert SETTINGS[name].update_mode in ("cluster-wide", "per-broker")


@pytest.mark.parametrize(("name", "mode"), [
    ("listeners", "per-broker"), ("listener.security.protocol.map", "per-broker"),
    ("advertised.listeners", "read-only"), ("num.network.threads", "cluster-wide"),
    ("num.io.threads", "cluster-wide"), ("num.recovery.threads.per.data.dir", "cluster-wide"),
    ("log.cleaner.backoff.ms", "cluster-wide"), ("producer.id.expiration.ms", "cluster-wide"),
    ("max.connection.creation.rate", "cluster-wide"), ("log.retention.ms", "cluster-wide"),
    ("log.retention.minutes", "read-only"), ("log.retention.hours", "read-only"),
    ("log.roll.hours", "read-only"), ("log.dirs", "read-only"), ("num.partitions", "read-only"),
    ("log.flush.scheduler.interval.ms", "read-only"), ("node.id", "read-only"),
])
def test_kafka_update_modes(name: str, mode: str) -> None:
    # DynamicBrokerConfig.AllDynamicConfigs; per-broker: the listener configs.
    assert SETTINGS[name].update_mode == mode


def test_describe_sources_and_synonyms() -> None:
    config = BrokerConfig.from_properties({"log.retention.ms": "1000", "num.partitions": "3"})
    by_name = {e.name: e for e in config.describe()}
    ms, hours = by_name["log.retention.ms"], by_name["log.retention.hours"]
    assert (ms.value, ms.source, ms.is_default) == \
        ("1000", ConfigSource.STATIC_BROKER_CONFIG, False)
    assert ms.synonyms == (
        ConfigSynonym("log.retention.ms", "1000", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG))
    # log.retention.hours keeps its own value and source, as in Kafka's ConfigHelper.
    assert (hours.value, hours.source, hours.is_default) == \
        ("168", ConfigSource.DEFAULT_CONFIG, True)
    assert hours.synonyms == (
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),)
    minutes = by_name["log.retention.minutes"]
    assert (minutes.value, minutes.source, minutes.synonyms) == \
        (None, ConfigSource.DEFAULT_CONFIG, ())
    partitions = by_name["num.partitions"]
    assert partitions.synonyms == (
        ConfigSynonym("num.partitions", "3", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("num.partitions", "1", ConfigSource.DEFAULT_CONFIG))
    assert partitions.read_only and not ms.read_only and not ms.sensitive
    flush = by_name["log.flush.interval.ms"]
    assert flush.value is None and flush.synonyms == ()
    assert (partitions.config_type, ms.config_type, by_name["listeners"].config_type,
            by_name["log.preallocate"].config_type,
            by_name["offsets.topic.replication.factor"].config_type,
            by_name["log.cleaner.min.cleanable.ratio"].config_type,
            by_name["compression.type"].config_type) == \
        (ConfigType.INT, ConfigType.LONG, ConfigType.LIST, ConfigType.BOOLEAN,
         ConfigType.SHORT, ConfigType.DOUBLE, ConfigType.STRING)
    assert all(e.documentation for e in by_name.values())


def test_describe_values_are_canonical() -> None:
    config = BrokerConfig.from_properties({"log.cleaner.min.cleanable.ratio": "1",
                                           "log.preallocate": "TRUE",
                                           "log.dirs": " /a ,/b", "num.partitions": "+2",
                                           "log.cleanup.policy": "delete,compact"})
    values = {e.name: e.value for e in config.describe()}
    assert values["log.cleaner.min.cleanable.ratio"] == "1.0"
    assert values["log.preallocate"] == "true"
    assert values["log.dirs"] == "/a,/b"
    assert values["num.partitions"] == "2"
    assert values["log.cleanup.policy"] == "compact,delete"
    assert BrokerConfig.from_properties({"log.cleaner.min.cleanable.ratio": "0.0001"}).describe(
        ["log.cleaner.min.cleanable.ratio"])[0].value == "1.0E-4"      # Java's Double.toString


def test_describe_filters() -> None:
    config = BrokerConfig()
    entries = config.describe(["num.partitions", "no.such.config", "log.retention.hours"])
    assert [e.name for e in entries] == ["num.partitions", "log.retention.hours"]  # table order
    assert all(e.synonyms == () for e in config.describe(include_synonyms=False))
    assert config.describe([]) == []


# ============================================================================ with_updates


def test_with_updates_is_a_dynamic_broker_config() -> None:
    static = BrokerConfig.from_properties({"log.retention.ms": "1000", "log.retention.hours": "1"})
    updated = static.with_updates({"log.retention.ms": 5000, "message.max.bytes": "2000000"})
    assert static.log_config.retention_ms == 1000 and static.message_max_bytes == 1048588
    assert updated.log_config.retention_ms == 5000 and updated.message_max_bytes == 2000000
    assert updated.log_config.max_message_bytes == 2000000
    assert updated.dynamic == {"log.retention.ms": "5000", "message.max.bytes": "2000000"}
    assert updated.props["log.retention.ms"] == "5000"
    (entry,) = updated.describe(["log.retention.ms"])
    assert (entry.value, entry.source) == ("5000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert entry.synonyms == (
        ConfigSynonym("log.retention.ms", "5000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.ms", "1000", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "1", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG))
    reverted = updated.with_updates({"log.retention.ms": None})       # DELETE: back to static
    assert reverted.log_config.retention_ms == 1000 and reverted.dynamic == \
        {"message.max.bytes": "2000000"}
    assert reverted.describe(["log.retention.ms"])[0].source is ConfigSource.STATIC_BROKER_CONFIG
    assert reverted.with_updates({"message.max.bytes": None}) == static


def test_cluster_default_layer() -> None:
    config = BrokerConfig().with_updates({"log.retention.ms": 100, "num.io.threads": 12},
                                         cluster_default=True)
    assert config.log_config.retention_ms == 100
    per_broker = config.with_updates({"log.retention.ms": 200})
    assert per_broker.log_config.retention_ms == 200            # per-broker wins
    (entry,) = per_broker.describe(["log.retention.ms"])
    assert [s.source for s in entry.synonyms] == [
        ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
        ConfigSource.DEFAULT_CONFIG]
    # Describing resource "" lists only what is set at the cluster-default level.
    cluster = per_broker.describe(cluster_default=True)
    assert [(e.name, e.value, e.source) for e in cluster] == [
        ("log.retention.ms", "200", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("num.io.threads", "12", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]
    assert [s.value for s in cluster[0].synonyms] == ["100"]


@pytest.mark.parametrize(("updates", "message"), [
    ({"log.retention.hours": "1"}, "Cannot update these configs dynamically: log.retention.hours"),
    ({"listeners": "PLAINTEXT://:1", "node.id": "2"},
     "Cannot update these configs dynamically: listeners, node.id"),
    ({"num.partitions": "2", "log.retention.ms": "1"}, "dynamically: num.partitions"),
    ({"no.such.config": "1"}, "Unknown broker configs: no.such.config"),
    ({"message.max.bytes": "-1"}, "Invalid value '-1' for configuration message.max.bytes"),
    ({"log.segment.bytes": "13"}, "log.segment.bytes: Value must be at least 14"),
    ({"compression.type": "brotli"}, "configuration compression.type"),
    ({"log.roll.ms": "0"}, "from the broker setting log.roll.ms=0"),
    ({"max.connections.per.ip": "0"}, "can be 0 only if max.connections.per.ip.overrides"),
    ({"max.connections.per.ip.overrides": "a:b"}, "configuration max.connections.per.ip."),
    ({"num.io.threads": 0}, "num.io.threads: Value must be at least 1"),
    ({"num.io.threads": 17}, "not be greater than double the current value 8"),
    ({"num.io.threads": 3}, "at least half the current value 8"),
])
def test_with_updates_validation(updates: dict[str, object], message: str) -> None:
    config = BrokerConfig()
    with pytest.raises(InvalidConfigError) as e:
        config.with_updates(updates)
    assert message in str(e.value)
    assert config.dynamic == {} and config.num_io_threads == 8


def test_thread_count_may_halve_or_double() -> None:
    config = BrokerConfig()
    assert config.with_updates({"num.io.threads": 16}).num_io_threads == 16
    assert config.with_updates({"num.io.threads": 4}).num_io_threads == 4
    assert config.with_updates({"num.io.threads": 16}).with_updates(
        {"num.io.threads": 32}).num_io_threads == 32


# ============================================================================ authorizer


def test_authorizer_settings() -> None:
    c = BrokerConfig.from_properties({
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin;User:ops", "allow.everyone.if.no.acl.found": "true"})
    assert c.authorizer_class_name == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert (c.super_users, c.allow_everyone_if_no_acl_found) == ("User:admin;User:ops", True)
    assert BrokerConfig().authorizer_class_name == ""


@pytest.mark.parametrize(("props", "message"), [
    ({"authorizer.class.name": "com.example.MyAuthorizer"}, "cannot load Java classes"),
    ({"super.users": "User:admin;bob"}, "principalType:principalName"),
])
def test_authorizer_setting_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=r"Invalid value .* for configuration") as e:
        BrokerConfig.from_properties(props)
    assert message in str(e.value)


# ------------------------------------------------------------------- security: sasl


def test_sasl_plaintext_listener_and_listener_settings() -> None:
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN, SCRAM-SHA-256",
        "listener.name.sasl_plaintext.connection.failed.authentication.delay.ms": "5",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": "x.Module required;",
    })
    assert [e.name for e in config.listeners] == ["PLAINTEXT", "SASL_PLAINTEXT"]
    assert config.listener_setting("SASL_PLAINTEXT", "sasl.enabled.mechanisms") == \
        ["PLAIN", "SCRAM-SHA-256"]
    assert config.listener_setting("PLAINTEXT", "sasl.enabled.mechanisms") == ["SCRAM-SHA-512"]
    assert config.listener_setting("SASL_PLAINTEXT",
                                   "connection.failed.authentication.delay.ms") == 5
    assert config.listener_setting("PLAINTEXT", "connection.failed.authentication.delay.ms") \
        == 100
    assert config.unknown == {}     # per-listener keys are known, not "unknown settings"


def test_listener_override_is_validated_like_the_setting() -> None:
    with pytest.raises(InvalidConfigError, match=r"connection\.failed\.authentication\.delay\.ms"):
        BrokerConfig.from_properties({
            "listener.name.plaintext.connection.failed.authentication.delay.ms": "-1"})


def test_sasl_jaas_config_is_sensitive() -> None:
    config = BrokerConfig.from_properties({"sasl.jaas.config": "x.Module required p=\"s\";"})
    (entry,) = config.describe(["sasl.jaas.config"])
    assert entry.sensitive and entry.value is None
    assert all(s.value is None for s in entry.synonyms)
    assert entry.config_type is ConfigType.PASSWORD


def test_sasl_ssl_listeners_are_served() -> None:
    config = BrokerConfig.from_properties({
        "listeners": "PLAINTEXT://:9092,SASL_SSL://:9094,INTERNAL://:9095",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,"
                                          "INTERNAL:SASL_SSL",
        "inter.broker.listener.name": "INTERNAL",
        "listener.name.internal.ssl.client.auth": "required"})
    assert [config.listener_protocol(e.name) for e in config.listeners] == [
        "PLAINTEXT", "SASL_SSL", "SASL_SSL"]
    assert config.inter_broker_listener_name == "INTERNAL"
    assert config.listener_setting("INTERNAL", "ssl.client.auth") == "required"


def test_single_broker_may_listen_on_sasl_only() -> None:
    # No other broker to talk to: the inter-broker listener needs no credentials.
    config = BrokerConfig.from_properties({"listeners": "SASL_PLAINTEXT://:9093"})
    assert config.inter_broker_listener_name == "SASL_PLAINTEXT"
