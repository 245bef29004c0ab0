"""Kafka's error codes as one exception hierarchy.

Theory of operation: ``_TABLE`` below is the whole of Kafka's error-code registry, from
UNKNOWN_SERVER_ERROR (-1) to the newest code in Apache Kafka 4.4
(clients/.../common/protocol/Errors.java). Each row is (code, Kafka's name, retriable,
description); the module turns every row into a real ``KafkaError`` subclass bound as a module
attribute (``errors.pyi`` lists them for static tools), so ``CorruptMessageError`` is both
importable and picklable by reference. Code 0 (NONE) means success and has no class.

Class names: CamelCase of Kafka's name with a trailing ``_EXCEPTION``/``_ERROR`` dropped, then
``Error`` appended (INVALID_TOPIC_EXCEPTION -> InvalidTopicError). ``retriable`` is true exactly
when Kafka's Java exception for the code extends ``RetriableException`` (directly or through
``InvalidMetadataException``); it tells a client it may retry the same request unchanged.

Codes this table does not know (a newer peer) map to a generated subclass named
``UNKNOWN_ERROR_CODE_<n>``, created once per code and cached; it is never retriable.

Everything here is immutable after import and safe to use from any thread or task.
"""

from __future__ import annotations

import threading
from typing import ClassVar

__all__ = ["ERRORS", "KafkaError", "error_class", "error_name", "raise_for_code"]


class KafkaError(Exception):
    """Base of every Kafka protocol error. Subclasses carry the wire error code.

    ``KafkaError(message=None)``: the message defaults to the class description.
    """

    code: ClassVar[int] = -1
    name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    retriable: ClassVar[bool] = False
    description: ClassVar[str] = "The server hit an unexpected error while handling the request."

    message: str

    def __init__(self, message: str | None = None) -> None:
        self.message = self.description if message is None else message
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"

    def __reduce__(self) -> tuple[object, ...]:
        cls = type(self)
        if cls in _UNKNOWN.values():
            # Generated classes are not module attributes, so rebuild them from their code.
            return (_rebuild_unknown, (cls.code, self.message), self.__dict__)
        return (cls, (self.message,), self.__dict__)


# (code, Kafka name, retriable, description)
_TABLE: tuple[tuple[int, str, bool, str], ...] = (
    (-1, "UNKNOWN_SERVER_ERROR", False,
     "The server hit an unexpected error while handling the request."),
    (1, "OFFSET_OUT_OF_RANGE", False,
     "The offset is outside the range the server holds for the partition."),
    (2, "CORRUPT_MESSAGE", True,
     "The message failed its CRC check, has an invalid size, or is otherwise corrupt."),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", True, "This server does not host this topic-partition."),
    (4, "INVALID_FETCH_SIZE", False, "The requested fetch size is invalid."),
    (5, "LEADER_NOT_AVAILABLE", True,
     "The partition has no leader right now (an election is in progress)."),
    (6, "NOT_LEADER_OR_FOLLOWER", True,
     "This broker is not the leader (or not a replica) of the partition."),
    (7, "REQUEST_TIMED_OUT", True, "The request timed out."),
    (8, "BROKER_NOT_AVAILABLE", False, "The broker is not available."),
    (9, "REPLICA_NOT_AVAILABLE", True, "The replica is not available for the partition."),
    (10, "MESSAGE_TOO_LARGE", False,
     "A message is larger than the largest message the server accepts."),
    (11, "STALE_CONTROLLER_EPOCH", False, "The controller moved to another broker."),
    (12, "OFFSET_METADATA_TOO_LARGE", False, "The offset commit metadata is too large."),
    (13, "NETWORK_EXCEPTION", True, "The server disconnected before a response was received."),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", True, "The coordinator is still loading its state."),
    (15, "COORDINATOR_NOT_AVAILABLE", True, "The coordinator is not available."),
    (16, "NOT_COORDINATOR", True,
     "This broker is not the coordinator for the group or transaction."),
    (17, "INVALID_TOPIC_EXCEPTION", False, "The operation targets an invalid topic."),
    (18, "RECORD_LIST_TOO_LARGE", False, "A batch is larger than the configured segment size."),
    (19, "NOT_ENOUGH_REPLICAS", True, "Rejected: fewer in-sync replicas than required."),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True,
     "Written, but to fewer in-sync replicas than required."),
    (21, "INVALID_REQUIRED_ACKS", False, "The produce request has an invalid acks value."),
    (22, "ILLEGAL_GENERATION", False, "The group generation id is not valid."),
    (23, "INCONSISTENT_GROUP_PROTOCOL", False,
     "The member's protocols are incompatible with the group's."),
    (24, "INVALID_GROUP_ID", False, "The group id is invalid."),
    (25, "UNKNOWN_MEMBER_ID", False, "The coordinator does not know this member."),
    (26, "INVALID_SESSION_TIMEOUT", False,
     "The session timeout is outside the range the broker allows."),
    (27, "REBALANCE_IN_PROGRESS", False, "The group is rebalancing; the member must rejoin."),
    (28, "INVALID_COMMIT_OFFSET_SIZE", False, "The committed offset data has an invalid size."),
    (29, "TOPIC_AUTHORIZATION_FAILED", False, "Not authorized to access the topic."),
    (30, "GROUP_AUTHORIZATION_FAILED", False, "Not authorized to access the group."),
    (31, "CLUSTER_AUTHORIZATION_FAILED", False, "Not authorized for this cluster operation."),
    (32, "INVALID_TIMESTAMP", False, "The message timestamp is outside the accepted range."),
    (33, "UNSUPPORTED_SASL_MECHANISM", False, "The broker does not support the SASL mechanism."),
    (34, "ILLEGAL_SASL_STATE", False, "The request is not valid in the current SASL state."),
    (35, "UNSUPPORTED_VERSION", False, "The API version is not supported."),
    (36, "TOPIC_ALREADY_EXISTS", False, "A topic with this name already exists."),
    (37, "INVALID_PARTITIONS", False, "The number of partitions is invalid."),
    (38, "INVALID_REPLICATION_FACTOR", False, "The replication factor is invalid."),
    (39, "INVALID_REPLICA_ASSIGNMENT", False, "The replica assignment is invalid."),
    (40, "INVALID_CONFIG", False, "The configuration is invalid."),
    (41, "NOT_CONTROLLER", True, "This is not the active controller."),
    (42, "INVALID_REQUEST", False, "The request is malformed or not valid for this broker."),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False,
     "The message format version does not support the request."),
    (44, "POLICY_VIOLATION", False, "The request violates the configured policy."),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False,
     "The broker received an out-of-order sequence number."),
    (46, "DUPLICATE_SEQUENCE_NUMBER", False, "The broker received a duplicate sequence number."),
    (47, "INVALID_PRODUCER_EPOCH", False, "The producer epoch is stale."),
    (48, "INVALID_TXN_STATE", False,
     "The transactional operation is invalid in the current state."),
    (49, "INVALID_PRODUCER_ID_MAPPING", False,
     "The producer id is not assigned to this transactional id."),
    (50, "INVALID_TRANSACTION_TIMEOUT", False,
     "The transaction timeout exceeds the broker's maximum."),
    (51, "CONCURRENT_TRANSACTIONS", True,
     "Another operation on this transaction is still in progress."),
    (52, "TRANSACTION_COORDINATOR_FENCED", False,
     "The transaction coordinator sending markers was fenced."),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False,
     "Not authorized to use the transactional id."),
    (54, "SECURITY_DISABLED", False, "Security features are disabled."),
    (55, "OPERATION_NOT_ATTEMPTED", False,
     "Not attempted because another part of the batch failed."),
    (56, "KAFKA_STORAGE_ERROR", True, "A disk error occurred while accessing the log."),
    (57, "LOG_DIR_NOT_FOUND", False, "The log directory is not in the broker configuration."),
    (58, "SASL_AUTHENTICATION_FAILED", False, "SASL authentication failed."),
    (59, "UNKNOWN_PRODUCER_ID", False, "The broker has no state for this producer id."),
    (60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is in progress."),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation tokens are disabled."),
    (62, "DELEGATION_TOKEN_NOT_FOUND", False, "The delegation token was not found."),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH", False,
     "The principal is not the token's owner or renewer."),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False,
     "Delegation token requests are not allowed here."),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "Delegation token authorization failed."),
    (66, "DELEGATION_TOKEN_EXPIRED", False, "The delegation token has expired."),
    (67, "INVALID_PRINCIPAL_TYPE", False, "The principal type is not supported."),
    (68, "NON_EMPTY_GROUP", False, "The group is not empty."),
    (69, "GROUP_ID_NOT_FOUND", False, "The group id does not exist."),
    (70, "FETCH_SESSION_ID_NOT_FOUND", True, "The fetch session id was not found."),
    (71, "INVALID_FETCH_SESSION_EPOCH", True, "The fetch session epoch is invalid."),
    (72, "LISTENER_NOT_FOUND", True, "The leader has no listener matching the request's listener."),
    (73, "TOPIC_DELETION_DISABLED", False, "Topic deletion is disabled."),
    (74, "FENCED_LEADER_EPOCH", True, "The request's leader epoch is older than the broker's."),
    (75, "UNKNOWN_LEADER_EPOCH", True, "The request's leader epoch is newer than the broker's."),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", False,
     "The client does not support the partition's compression."),
    (77, "STALE_BROKER_EPOCH", False, "The broker epoch has changed."),
    (78, "OFFSET_NOT_AVAILABLE", True,
     "The leader cannot serve offsets until its high watermark catches up."),
    (79, "MEMBER_ID_REQUIRED", False, "The member needs a member id before joining the group."),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred leader is not available."),
    (81, "GROUP_MAX_SIZE_REACHED", False, "The group has reached its maximum size."),
    (82, "FENCED_INSTANCE_ID", False, "Another member with the same group.instance.id took over."),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True,
     "No eligible leader is available for the partition."),
    (84, "ELECTION_NOT_NEEDED", True, "No leader election is needed for the partition."),
    (85, "NO_REASSIGNMENT_IN_PROGRESS", False, "No partition reassignment is in progress."),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC", False,
     "The group is subscribed to the topic, so its offsets stay."),
    (87, "INVALID_RECORD", False, "A record failed validation on the broker."),
    (88, "UNSTABLE_OFFSET_COMMIT", True,
     "Unstable (pending transactional) offsets must clear first."),
    (89, "THROTTLING_QUOTA_EXCEEDED", True, "The throttling quota has been exceeded."),
    (90, "PRODUCER_FENCED", False,
     "A newer producer with the same transactional id fenced this one."),
    (91, "RESOURCE_NOT_FOUND", False, "The request refers to a resource that does not exist."),
    (92, "DUPLICATE_RESOURCE", False, "The request refers to the same resource twice."),
    (93, "UNACCEPTABLE_CREDENTIAL", False, "The credential does not meet the acceptance criteria."),
    (94, "INCONSISTENT_VOTER_SET", False,
     "The sender or receiver is not one of the expected voters."),
    (95, "INVALID_UPDATE_VERSION", False, "The update version is invalid."),
    (96, "FEATURE_UPDATE_FAILED", False, "Finalized features could not be updated."),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE", False,
     "A forwarded request's principal could not be read."),
    (98, "SNAPSHOT_NOT_FOUND", False, "The requested snapshot was not found."),
    (99, "POSITION_OUT_OF_RANGE", False, "The position is outside the snapshot."),
    (100, "UNKNOWN_TOPIC_ID", True, "This server does not host this topic id."),
    (101, "DUPLICATE_BROKER_REGISTRATION", False, "This broker id is already registered."),
    (102, "BROKER_ID_NOT_REGISTERED", False, "The broker id is not registered."),
    (103, "INCONSISTENT_TOPIC_ID", True, "The log's topic id does not match the request's."),
    (104, "INCONSISTENT_CLUSTER_ID", False,
     "The request's cluster id does not match the server's."),
    (105, "TRANSACTIONAL_ID_NOT_FOUND", False, "The transactional id was not found."),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR", True, "The fetch session used topic ids inconsistently."),
    (107, "INELIGIBLE_REPLICA", False, "The new ISR contains an ineligible replica."),
    (108, "NEW_LEADER_ELECTED", False, "The partition state was updated but the leader changed."),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "The offset has moved to tiered storage."),
    (110, "FENCED_MEMBER_EPOCH", False, "The member epoch is fenced; the member must rejoin."),
    (111, "UNRELEASED_INSTANCE_ID", False, "Another member still uses this instance id."),
    (112, "UNSUPPORTED_ASSIGNOR", False, "The group does not support the assignor or its version."),
    (113, "STALE_MEMBER_EPOCH", False, "The member epoch is stale."),
    (114, "MISMATCHED_ENDPOINT_TYPE", False, "The request reached an endpoint of the wrong type."),
    (115, "UNSUPPORTED_ENDPOINT_TYPE", False, "This endpoint type is not supported."),
    (116, "UNKNOWN_CONTROLLER_ID", False, "The controller id is not known."),
    (117, "UNKNOWN_SUBSCRIPTION_ID", False,
     "The telemetry subscription id is unknown or outdated."),
    (118, "TELEMETRY_TOO_LARGE", False, "The telemetry push is larger than the broker accepts."),
    (119, "INVALID_REGISTRATION", False,
     "The controller considers the broker registration invalid."),
    (120, "TRANSACTION_ABORTABLE", False, "The transaction hit an error; the client can abort it."),
    (121, "INVALID_RECORD_STATE", False, "The record state does not allow the acknowledgement."),
    (122, "SHARE_SESSION_NOT_FOUND", True, "The share session was not found."),
    (123, "INVALID_SHARE_SESSION_EPOCH", True, "The share session epoch is invalid."),
    (124, "FENCED_STATE_EPOCH", False, "The share-group state epoch does not match."),
    (125, "INVALID_VOTER_KEY", False, "The voter key does not match the replica's key."),
    (126, "DUPLICATE_VOTER", False, "The voter is already in the voter set."),
    (127, "VOTER_NOT_FOUND", False, "The voter is not in the voter set."),
    (128, "INVALID_REGULAR_EXPRESSION", False, "The regular expression is not valid."),
    (129, "REBOOTSTRAP_REQUIRED", False, "The client's metadata is stale; it must rebootstrap."),
    (130, "STREAMS_INVALID_TOPOLOGY", False, "The streams topology is invalid."),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "The streams topology epoch is invalid."),
    (132, "STREAMS_TOPOLOGY_FENCED", False, "The streams topology epoch is outdated."),
    (133, "SHARE_SESSION_LIMIT_REACHED", True, "The share session limit has been reached."),
    (134, "GROUP_DELETION_FAILED", False, "The group could not be deleted."),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", False,
     "The topology description update failed."),
    (136, "CONTROLLER_ID_NOT_REGISTERED", False, "The controller id is not registered."),
)


def _class_name(kafka_name: str) -> str:
    for suffix in ("_EXCEPTION", "_ERROR"):
        kafka_name = kafka_name.removesuffix(suffix)
    words = kafka_name.replace("-", "MINUS").split("_")
    return "".join(word.capitalize() for word in words) + "Error"


def _define(code: int, kafka_name: str, retriable: bool, description: str) -> type[KafkaError]:
    cls_name = _class_name(kafka_name)
    cls = type(cls_name, (KafkaError,), {
        "__module__": __name__,
        "__qualname__": cls_name,
        "__doc__": f"{kafka_name} ({code}): {description}",
        "code": code,
        "name": kafka_name,
        "retriable": retriable,
        "description": description,
    })
    return cls


ERRORS: dict[int, type[KafkaError]] = {}
"""Every known error code (0 excluded) to its exception class."""

for _row in _TABLE:
    _cls = _define(*_row)
    ERRORS[_cls.code] = _cls
    globals()[_cls.__name__] = _cls
    __all__.append(_cls.__name__)
del _row, _cls

_UNKNOWN: dict[int, type[KafkaError]] = {}
_UNKNOWN_LOCK = threading.Lock()


def error_class(code: int) -> type[KafkaError]:
    """The exception class for a wire error code.

    A code this module does not know gets a generated subclass named
    ``UNKNOWN_ERROR_CODE_<code>`` (not retriable), created once and cached.

    Raises:
        ValueError: ``code`` is 0 (NONE), which is success, not an error.
    """
    if code == 0:
        raise ValueError("error code 0 (NONE) is not an error")
    cls = ERRORS.get(code)
    if cls is not None:
        return cls
    with _UNKNOWN_LOCK:
        cls = _UNKNOWN.get(code)
        if cls is None:
            cls = _define(code, f"UNKNOWN_ERROR_CODE_{code}", False,
                          f"Error code {code} is not known to this version of kafkapy.")
            _UNKNOWN[code] = cls
        return cls


def _rebuild_unknown(code: int, message: str) -> KafkaError:
    return error_class(code)(message)


def error_name(code: int) -> str:
    """Kafka's name for an error code: "NONE" for 0, ``UNKNOWN_ERROR_CODE_<n>`` if unknown."""
    return "NONE" if code == 0 else error_class(code).name


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the exception for ``code`` (with ``message``, else its description); no-op for 0.

    Raises:
        KafkaError: the subclass for ``code`` whenever ``code`` is not 0.
    """
    if code != 0:
        raise error_class(code)(message)
