"""Type stub for kafkapy.errors: the error classes are generated from a table at import
time, so this stub names each one for static tools. tests/test_errors.py checks that it
lists exactly the classes the module defines."""

from typing import ClassVar

__all__: list[str]

class KafkaError(Exception):
    code: ClassVar[int]
    name: ClassVar[str]
    retriable: ClassVar[bool]
    description: ClassVar[str]
    message: str
    def __init__(self, message: str | None = None) -> None: ...

ERRORS: dict[int, type[KafkaError]]

def error_class(code: int) -> type[KafkaError]: ...
def error_name(code: int) -> str: ...
def raise_for_code(code: int, message: str | None = None) -> None: ...

class UnknownServerError(KafkaError): ...  # -1
class OffsetOutOfRangeError(KafkaError): ...  # 1
class CorruptMessageError(KafkaError): ...  # 2
class UnknownTopicOrPartitionError(KafkaError): ...  # 3
class InvalidFetchSizeError(KafkaError): ...  # 4
class LeaderNotAvailableError(KafkaError): ...  # 5
class NotLeaderOrFollowerError(KafkaError): ...  # 6
class RequestTimedOutError(KafkaError): ...  # 7
class BrokerNotAvailableError(KafkaError): ...  # 8
class ReplicaNotAvailableError(KafkaError): ...  # 9
class MessageTooLargeError(KafkaError): ...  # 10
class StaleControllerEpochError(KafkaError): ...  # 11
class OffsetMetadataTooLargeError(KafkaError): ...  # 12
class NetworkError(KafkaError): ...  # 13
class CoordinatorLoadInProgressError(KafkaError): ...  # 14
class CoordinatorNotAvailableError(KafkaError): ...  # 15
class NotCoordinatorError(KafkaError): ...  # 16
class InvalidTopicError(KafkaError): ...  # 17
class RecordListTooLargeError(KafkaError): ...  # 18
class NotEnoughReplicasError(KafkaError): ...  # 19
class NotEnoughReplicasAfterAppendError(KafkaError): ...  # 20
class InvalidRequiredAcksError(KafkaError): ...  # 21
class IllegalGenerationError(KafkaError): ...  # 22
class InconsistentGroupProtocolError(KafkaError): ...  # 23
class InvalidGroupIdError(KafkaError): ...  # 24
class UnknownMemberIdError(KafkaError): ...  # 25
class InvalidSessionTimeoutError(KafkaError): ...  # 26
class RebalanceInProgressError(KafkaError): ...  # 27
class InvalidCommitOffsetSizeError(KafkaError): ...  # 28
class TopicAuthorizationFailedError(KafkaError): ...  # 29
class GroupAuthorizationFailedError(KafkaError): ...  # 30
class ClusterAuthorizationFailedError(KafkaError): ...  # 31
class InvalidTimestampError(KafkaError): ...  # 32
class UnsupportedSaslMechanismError(KafkaError): ...  # 33
class IllegalSaslStateError(KafkaError): ...  # 34
class UnsupportedVersionError(KafkaError): ...  # 35
class TopicAlreadyExistsError(KafkaError): ...  # 36
class InvalidPartitionsError(KafkaError): ...  # 37
class InvalidReplicationFactorError(KafkaError): ...  # 38
class InvalidReplicaAssignmentError(KafkaError): ...  # 39
class InvalidConfigError(KafkaError): ...  # 40
class NotControllerError(KafkaError): ...  # 41
class InvalidRequestError(KafkaError): ...  # 42
class UnsupportedForMessageFormatError(KafkaError): ...  # 43
class PolicyViolationError(KafkaError): ...  # 44
class OutOfOrderSequenceNumberError(KafkaError): ...  # 45
class DuplicateSequenceNumberError(KafkaError): ...  # 46
class InvalidProducerEpochError(KafkaError): ...  # 47
class InvalidTxnStateError(KafkaError): ...  # 48
class InvalidProducerIdMappingError(KafkaError): ...  # 49
class InvalidTransactionTimeoutError(KafkaError): ...  # 50
class ConcurrentTransactionsError(KafkaError): ...  # 51
class TransactionCoordinatorFencedError(KafkaError): ...  # 52
class TransactionalIdAuthorizationFailedError(KafkaError): ...  # 53
class SecurityDisabledError(KafkaError): ...  # 54
class OperationNotAttemptedError(KafkaError): ...  # 55
class KafkaStorageError(KafkaError): ...  # 56
class LogDirNotFoundError(KafkaError): ...  # 57
class SaslAuthenticationFailedError(KafkaError): ...  # 58
class UnknownProducerIdError(KafkaError): ...  # 59
class ReassignmentInProgressError(KafkaError): ...  # 60
class DelegationTokenAuthDisabledError(KafkaError): ...  # 61
class DelegationTokenNotFoundError(KafkaError): ...  # 62
class DelegationTokenOwnerMismatchError(KafkaError): ...  # 63
class DelegationTokenRequestNotAllowedError(KafkaError): ...  # 64
class DelegationTokenAuthorizationFailedError(KafkaError): ...  # 65
class DelegationTokenExpiredError(KafkaError): ...  # 66
class InvalidPrincipalTypeError(KafkaError): ...  # 67
class NonEmptyGroupError(KafkaError): ...  # 68
class GroupIdNotFoundError(KafkaError): ...  # 69
class FetchSessionIdNotFoundError(KafkaError): ...  # 70
class InvalidFetchSessionEpochError(KafkaError): ...  # 71
class ListenerNotFoundError(KafkaError): ...  # 72
class TopicDeletionDisabledError(KafkaError): ...  # 73
class FencedLeaderEpochError(KafkaError): ...  # 74
class UnknownLeaderEpochError(KafkaError): ...  # 75
class UnsupportedCompressionTypeError(KafkaError): ...  # 76
class StaleBrokerEpochError(KafkaError): ...  # 77
class OffsetNotAvailableError(KafkaError): ...  # 78
class MemberIdRequiredError(KafkaError): ...  # 79
class PreferredLeaderNotAvailableError(KafkaError): ...  # 80
class GroupMaxSizeReachedError(KafkaError): ...  # 81
class FencedInstanceIdError(KafkaError): ...  # 82
class EligibleLeadersNotAvailableError(KafkaError): ...  # 83
class ElectionNotNeededError(KafkaError): ...  # 84
class NoReassignmentInProgressError(KafkaError): ...  # 85
class GroupSubscribedToTopicError(KafkaError): ...  # 86
class InvalidRecordError(KafkaError): ...  # 87
class UnstableOffsetCommitError(KafkaError): ...  # 88
class ThrottlingQuotaExceededError(KafkaError): ...  # 89
class ProducerFencedError(KafkaError): ...  # 90
class ResourceNotFoundError(KafkaError): ...  # 91
class DuplicateResourceError(KafkaError): ...  # 92
class UnacceptableCredentialError(KafkaError): ...  # 93
class InconsistentVoterSetError(KafkaError): ...  # 94
class InvalidUpdateVersionError(KafkaError): ...  # 95
class FeatureUpdateFailedError(KafkaError): ...  # 96
class PrincipalDeserializationFailureError(KafkaError): ...  # 97
class SnapshotNotFoundError(KafkaError): ...  # 98
class PositionOutOfRangeError(KafkaError): ...  # 99
class UnknownTopicIdError(KafkaError): ...  # 100
class DuplicateBrokerRegistrationError(KafkaError): ...  # 101
class BrokerIdNotRegisteredError(KafkaError): ...  # 102
class InconsistentTopicIdError(KafkaError): ...  # 103
class InconsistentClusterIdError(KafkaError): ...  # 104
class TransactionalIdNotFoundError(KafkaError): ...  # 105
class FetchSessionTopicIdError(KafkaError): ...  # 106
class IneligibleReplicaError(KafkaError): ...  # 107
class NewLeaderElectedError(KafkaError): ...  # 108
class OffsetMovedToTieredStorageError(KafkaError): ...  # 109
class FencedMemberEpochError(KafkaError): ...  # 110
class UnreleasedInstanceIdError(KafkaError): ...  # 111
class UnsupportedAssignorError(KafkaError): ...  # 112
class StaleMemberEpochError(KafkaError): ...  # 113
class MismatchedEndpointTypeError(KafkaError): ...  # 114
class UnsupportedEndpointTypeError(KafkaError): ...  # 115
class UnknownControllerIdError(KafkaError): ...  # 116
class UnknownSubscriptionIdError(KafkaError): ...  # 117
class TelemetryTooLargeError(KafkaError): ...  # 118
class InvalidRegistrationError(KafkaError): ...  # 119
class TransactionAbortableError(KafkaError): ...  # 120
class InvalidRecordStateError(KafkaError): ...  # 121
class ShareSessionNotFoundError(KafkaError): ...  # 122
class InvalidShareSessionEpochError(KafkaError): ...  # 123
class FencedStateEpochError(KafkaError): ...  # 124
class InvalidVoterKeyError(KafkaError): ...  # 125
class DuplicateVoterError(KafkaError): ...  # 126
class VoterNotFoundError(KafkaError): ...  # 127
class InvalidRegularExpressionError(KafkaError): ...  # 128
class RebootstrapRequiredError(KafkaError): ...  # 129
class StreamsInvalidTopologyError(KafkaError): ...  # 130
class StreamsInvalidTopologyEpochError(KafkaError): ...  # 131
class StreamsTopologyFencedError(KafkaError): ...  # 132
class ShareSessionLimitReachedError(KafkaError): ...  # 133
class GroupDeletionFailedError(KafkaError): ...  # 134
class StreamsTopologyDescriptionUpdateFailedError(KafkaError): ...  # 135
class ControllerIdNotRegisteredError(KafkaError): ...  # 136
