"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554, as Kafka
3.x's ZooKeeper-mode ``ZkAdminManager`` answers them.

Storage: each user's config map (``MetadataStore.user_configs``), SCRAM credentials under the
mechanism names in Kafka's ``salt=...,stored_key=...,server_key=...,iterations=...`` form: in
ZooKeeper ``/config/users/<user>`` with a ``/config/changes`` notification (every broker's
``ConfigChangeListener`` updates its ``CredentialCache``), or the log directory's metadata on
a single broker. Other keys of a user's config (quotas) are kept as they are.

Errors (per user, Kafka's messages and precedence): Describe: RESOURCE_NOT_FOUND for an
empty name or a user without credentials, DUPLICATE_RESOURCE for a user named twice. Alter,
in this order: UNACCEPTABLE_CREDENTIAL for an empty name or iterations outside 4096..16384,
UNSUPPORTED_SASL_MECHANISM for an unknown mechanism; DUPLICATE_RESOURCE for a (user,
mechanism) altered twice; RESOURCE_NOT_FOUND for deleting a credential the user does not
have. A user with any failed alteration has none of its alterations applied; a user whose
config cannot be written (ZooKeeper away) gets that error, the others are still written.
"""

from __future__ import annotations

import logging
from collections import Counter

from kafkapy.errors import KafkaError, UnknownServerError
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)
from kafkapy.security.scram import (
    MAX_ITERATIONS,
    ScramMechanism,
    credential_from_salted,
)
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS"]

log = logging.getLogger(__name__)

_UNSUPPORTED_SASL_MECHANISM = 33
_RESOURCE_NOT_FOUND = 91
_DUPLICATE_RESOURCE = 92
_UNACCEPTABLE_CREDENTIAL = 93


async def handle_describe(context: RequestContext[DescribeUserScramCredentialsRequest]
                          ) -> DescribeUserScramCredentialsResponse:
    credentials = context.server.credentials.users()
    requested = context.body.users
    results: list[DescribeUserScramCredentialsResult] = []
    if not requested:                       # null or empty: every user with credentials
        names = sorted(credentials)
        duplicates: set[str] = set()
    else:
        counts = Counter(u.name for u in requested)
        duplicates = {name for name, count in counts.items() if count > 1}
        names = list(dict.fromkeys(u.name for u in requested))
    for name in names:
        if name in duplicates:
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=_DUPLICATE_RESOURCE,
                error_message=f"Cannot describe SCRAM credentials for the same user twice in "
                              f"a single request: {name}"))
            continue
        if not name:
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=_RESOURCE_NOT_FOUND,
                error_message="Username must not be empty"))
            continue
        creds = credentials.get(name)
        if not creds:
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=_RESOURCE_NOT_FOUND,
                error_message=f"Attempt to describe a user credential that does not exist: "
                              f"{name}"))
            continue
        results.append(DescribeUserScramCredentialsResult(
            user=name, error_code=0, error_message=None,
            credential_infos=[CredentialInfo(mechanism=m.type_id, iterations=c.iterations)
                              for m, c in sorted(creds.items(), key=lambda i: i[0].type_id)]))
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=0,
                                                error_message=None, results=results)


async def handle_alter(context: RequestContext[AlterUserScramCredentialsRequest]
                       ) -> AlterUserScramCredentialsResponse:
    body = context.body
    server = context.server
    store = server.metadata_store
    alterations = [(d.name, d.mechanism, None) for d in body.deletions] + \
        [(u.name, u.mechanism, u) for u in body.upsertions]
    results: list[AlterUserScramCredentialsResult] = []

    def fail(user: str, code: int, message: str) -> None:
        results.append(AlterUserScramCredentialsResult(user_name=user, error_code=code,
                                                       error_message=message))

    # 1. illegal alterations: an empty name, an unknown mechanism, iterations out of range
    illegal: dict[str, tuple[int, str]] = {}
    for name, mechanism_id, upsertion in alterations:
        mechanism = ScramMechanism.from_type(mechanism_id)
        if not name:
            illegal[name] = (_UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism is None:
            illegal[name] = (_UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif upsertion is not None and upsertion.iterations > MAX_ITERATIONS:
            illegal[name] = (_UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        elif upsertion is not None and upsertion.iterations < mechanism.min_iterations:
            illegal[name] = (_UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    for name, (code, message) in illegal.items():
        fail(name, code, message)
    # 2. a (user, mechanism) altered twice
    pairs = Counter((name, mechanism) for name, mechanism, _ in alterations
                    if name not in illegal)
    duplicated = list(dict.fromkeys(name for (name, _), count in pairs.items() if count > 1))
    for name in duplicated:
        fail(name, _DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the "
                                        "same request")
    candidates = list(dict.fromkeys(name for name, _, _ in alterations
                                    if name not in illegal and name not in duplicated))
    configs = {name: dict(store.user_configs.get(name, {})) for name in candidates}
    # 3. deleting a credential the user does not have
    missing = list(dict.fromkeys(
        name for name, mechanism_id, upsertion in alterations
        if name in configs and upsertion is None
        and _mechanism(mechanism_id).value not in configs[name]))
    for name in missing:
        fail(name, _RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not "
                                        "exist")
    for name in candidates:
        if name in missing:
            continue
        config = configs[name]
        for user, mechanism_id, upsertion in alterations:
            if user != name:
                continue
            mechanism = _mechanism(mechanism_id)
            if upsertion is None:
                config.pop(mechanism.value, None)
            else:
                config[mechanism.value] = credential_from_salted(
                    mechanism, bytes(upsertion.salted_password), bytes(upsertion.salt),
                    upsertion.iterations).to_kafka_string()
        try:
            store.set_user_config(name, config)
        except Exception as exc:
            # Kafka reports a failed write per user (Errors.forException) and goes on.
            error = exc if isinstance(exc, KafkaError) else UnknownServerError(str(exc))
            log.warning("Altering the SCRAM credentials of user %s failed: %s", name, exc)
            fail(name, error.code, error.message)
            continue
        server.credentials.apply_user_config(name, config)
        results.append(AlterUserScramCredentialsResult(user_name=name, error_code=0,
                                                       error_message=None))
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)


def _mechanism(type_id: int) -> ScramMechanism:
    mechanism = ScramMechanism.from_type(type_id)
    assert mechanism is not None        # unknown ones were refused first
    return mechanism


HANDLERS: dict[int, Handler] = {ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: handle_describe,
                                ApiKey.ALTER_USER_SCRAM_CREDENTIALS: handle_alter}
