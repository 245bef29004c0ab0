"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554, as Kafka
3.x's ZooKeeper-mode ``ZkAdminManager`` answers them.

Storage: each user's config map (``MetadataStore.user_configs``), SCRAM credentials under the
mechanism names in Kafka's ``salt=...,stored_key=...,server_key=...,iterations=...`` form: in
ZooKeeper ``/config/users/<user>`` with a ``/config/changes`` notification (every broker's
``ConfigChangeListener`` updates its ``CredentialCache``), or the log directory's metadata on
a single broker. Other keys of a user's config (quotas) are kept as they are.

Errors (per user, Kafka's messages): DUPLICATE_RESOURCE for a user described twice or a
(user, mechanism) altered twice; RESOURCE_NOT_FOUND for describing a user without
credentials or deleting a credential that does not exist; UNACCEPTABLE_CREDENTIAL for an
empty user name or an iteration count outside 4096..16384; UNSUPPORTED_SASL_MECHANISM for an
unknown mechanism. A user with any invalid alteration has none of its alterations applied.
"""

from __future__ import annotations

from collections import Counter

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
        creds = credentials.get(name)
        if not creds:
            results.append(DescribeUserScramCredentialsResult(
                user=name, error_code=_RESOURCE_NOT_FOUND,
                error_message=f"Attempt to describe nonexistent SCRAM credentials for user: "
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
    alterations = [(d.name, d.mechanism, None) for d in body.deletions] + \
        [(u.name, u.mechanism, u) for u in body.upsertions]
    users = list(dict.fromkeys(name for name, _, _ in alterations))
    errors: dict[str, tuple[int, str]] = {}
    pairs = Counter((name, mechanism) for name, mechanism, _ in alterations)
    for (name, _), count in pairs.items():
        if count > 1:
            errors.setdefault(name, (_DUPLICATE_RESOURCE, "A user credential cannot be "
                                                          "altered twice in the same request"))
    for name, mechanism_id, upsertion in alterations:
        if name in errors:
            continue
        mechanism = ScramMechanism.from_type(mechanism_id)
        if not name:
            errors[name] = (_UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism is None:
            errors[name] = (_UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif upsertion is not None and upsertion.iterations < mechanism.min_iterations:
            errors[name] = (_UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        elif upsertion is not None and upsertion.iterations > MAX_ITERATIONS:
            errors[name] = (_UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        elif upsertion is None and server.credentials.get(name, mechanism) is None:
            errors[name] = (_RESOURCE_NOT_FOUND, "Attempt to delete a user credential that "
                                                 "does not exist")
    store = server.metadata_store
    results = []
    for name in users:
        if name in errors:
            code, message = errors[name]
            results.append(AlterUserScramCredentialsResult(user_name=name, error_code=code,
                                                           error_message=message))
            continue
        config = dict(store.user_configs.get(name, {}))
        for user, mechanism_id, upsertion in alterations:
            if user != name:
                continue
            mechanism = ScramMechanism.from_type(mechanism_id)
            assert mechanism is not None
            if upsertion is None:
                config.pop(mechanism.value, None)
            else:
                config[mechanism.value] = credential_from_salted(
                    mechanism, bytes(upsertion.salted_password), bytes(upsertion.salt),
                    upsertion.iterations).to_kafka_string()
        store.set_user_config(name, config)
        server.credentials.apply_user_config(name, config)
        results.append(AlterUserScramCredentialsResult(user_name=name, error_code=0,
                                                       error_message=None))
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)


HANDLERS: dict[int, Handler] = {ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: handle_describe,
                                ApiKey.ALTER_USER_SCRAM_CREDENTIALS: handle_alter}
