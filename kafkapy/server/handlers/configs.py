"""Dynamic configuration: DescribeConfigs (32), AlterConfigs (33) and IncrementalAlterConfigs
(44) for topics (resource type 2), the broker (4) and its loggers (8, BROKER_LOGGER).

Kafka's ``ConfigHelper.describeConfigs`` (answered by the broker itself) and, for changes,
``ConfigAdminManager.preprocess`` on the broker followed by the controller's
``ConfigurationControlManager``; both halves are the ``AdminManager`` here. Answers are per
resource, in request order.

DescribeConfigs v1-4:

- TOPIC: the topic's every setting with its effective value, source (DYNAMIC_TOPIC_CONFIG 1,
  DYNAMIC_BROKER_CONFIG 2, DYNAMIC_DEFAULT_BROKER_CONFIG 3, STATIC_BROKER_CONFIG 4,
  DEFAULT_CONFIG 5), synonyms (``IncludeSynonyms``), type and documentation (v3+,
  ``IncludeDocumentation``); an illegal name is INVALID_TOPIC_EXCEPTION, an unknown topic
  UNKNOWN_TOPIC_OR_PARTITION.
- BROKER "<node id>": every broker setting (``BrokerConfig.describe``); "" the cluster-wide
  dynamic defaults only; another id is INVALID_REQUEST "Unexpected broker id, expected N or
  empty string, but received M"; a non-number INVALID_REQUEST "Broker id must be an
  integer, but it is: x".
- BROKER_LOGGER "<node id>": the broker's loggers and their levels, source
  DYNAMIC_BROKER_LOGGER_CONFIG (6). Kafka lists its log4j loggers; kafkapy lists Python's
  root logger (as "root") and the ``kafkapy`` loggers, with levels in log4j's names (TRACE,
  DEBUG, INFO, WARN, ERROR, FATAL). An empty name or another id is INVALID_REQUEST.
- ``ConfigurationKeys`` (null or empty: all) keeps the named settings only. CLIENT_METRICS
  (16) and GROUP (32), which kafkapy does not have, are INVALID_REQUEST "Unsupported resource
  type"; an unknown type fails the whole request with INVALID_REQUEST, as Kafka's
  authorization step throws for it.

AlterConfigs v0-2 (replace a resource's whole dynamic set) and IncrementalAlterConfigs v0-1
(per key: SET 0, DELETE 1, APPEND 2 and SUBTRACT 3 for list settings such as
cleanup.policy) on TOPIC and BROKER ("" for the cluster-wide default, or this node's id);
IncrementalAlterConfigs also sets BROKER_LOGGER levels (not persisted, as in Kafka). First
the broker's checks: a resource named twice is INVALID_REQUEST for both entries, a key twice
INVALID_REQUEST "Error due to duplicate config keys", a null value (other than for DELETE)
INVALID_REQUEST "Null value not supported for : k"; then the AdminManager validates (topic
values: INVALID_CONFIG; broker changes: INVALID_REQUEST), persists in the metadata store and
applies the change to the running broker, unless ``ValidateOnly``.

Authorization (with ``authorizer.class.name``): DESCRIBE_CONFIGS (describe) or ALTER_CONFIGS
(changes) on the cluster for BROKER and BROKER_LOGGER resources (else
CLUSTER_AUTHORIZATION_FAILED), on the topic for TOPIC ones (else TOPIC_AUTHORIZATION_FAILED),
per resource.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

from kafkapy.config import ConfigEntry, ConfigSource
from kafkapy.errors import (
    ClusterAuthorizationFailedError,
    InvalidConfigError,
    InvalidRequestError,
    KafkaError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.protocol import ApiKey
from kafkapy.protocol.message_classes import (
    AlterConfigsRequest,
    AlterConfigsRequestAlterConfigsResource,
    AlterConfigsResponse,
    AlterConfigsResponseAlterConfigsResourceResponse,
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsRequestAlterableConfig,
    IncrementalAlterConfigsRequestAlterConfigsResource,
    IncrementalAlterConfigsResponse,
    IncrementalAlterConfigsResponseAlterConfigsResourceResponse,
)
from kafkapy.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.server.admin_manager import (
    APPEND,
    DELETE,
    OP_NAMES,
    SET,
    SUBTRACT,
    api_error,
    check_topic_name,
    parse_node_id,
)
from kafkapy.server.auth_helper import authorize
from kafkapy.server.request_context import Handler, RequestContext

__all__ = ["HANDLERS", "handle_alter_configs", "handle_describe_configs",
           "handle_incremental_alter_configs"]

log = logging.getLogger(__name__)



# Kafka's ConfigResource.Type ids and names.
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
RESOURCE_TYPES = {TOPIC: "TOPIC", BROKER: "BROKER", BROKER_LOGGER: "BROKER_LOGGER",
                  CLIENT_METRICS: "CLIENT_METRICS", GROUP: "GROUP"}


# ========================================================================= broker loggers

ROOT_LOGGER = "root"
# log4j's level names (Kafka's LogLevelConfig.VALID_LOG_LEVELS) and Python's levels.
_LOG4J_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO,
                 "WARN": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
_VALID_LEVELS = ", ".join(sorted(_LOG4J_LEVELS))


def _level_name(level: int) -> str:
    """A Python level as the log4j name of the nearest level at or below it."""
    name = "TRACE"
    for candidate, value in sorted(_LOG4J_LEVELS.items(), key=lambda kv: kv[1]):
        if level >= value:
            name = candidate
    return name


def broker_loggers() -> dict[str, str]:
    """``{logger: level}``: the root logger and every ``kafkapy`` logger, with its effective
    level (Kafka's ``Log4jController.loggers``). Other Python loggers belong to the program
    embedding the broker and are neither listed nor changed."""
    loggers = {ROOT_LOGGER: _level_name(logging.getLogger().getEffectiveLevel())}
    for name, logger in sorted(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and (name == "kafkapy"
                                                   or name.startswith("kafkapy.")):
            loggers[name] = _level_name(logger.getEffectiveLevel())
    return loggers


def _python_logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT_LOGGER else logging.getLogger(name)


def _alter_loggers(resource_name: str, node_id: int,
                   configs: Iterable[IncrementalAlterConfigsRequestAlterableConfig],
                   validate_only: bool) -> None:
    """Kafka's ``RuntimeLoggerManager.applyChangesForResource``: validate every operation,
    then (unless ``validate_only``) apply them all."""
    node = parse_node_id(resource_name)
    if node is None:
        raise InvalidRequestError(f"Node id must be an integer, but it is: {resource_name}")
    if node != node_id:
        raise InvalidRequestError(f"Unexpected node id. Expected {node_id}, but received "
                                  f"{resource_name}")
    known = broker_loggers()
    ops = list(configs)
    for c in ops:
        op = c.config_operation
        if op in (SET, DELETE) and c.name not in known:
            raise InvalidConfigError(f"Logger {c.name} does not exist!")
        if op == SET:
            if c.value not in _LOG4J_LEVELS:
                raise InvalidConfigError(f"Cannot set the log level of {c.name} to {c.value} "
                                         f"as it is not a supported log level. Valid log "
                                         f"levels are {_VALID_LEVELS}")
        elif op == DELETE:
            if c.name == ROOT_LOGGER:
                raise InvalidRequestError(f"Removing the log level of the {ROOT_LOGGER} "
                                          f"logger is not allowed")
        elif op in (APPEND, SUBTRACT):
            raise InvalidRequestError(f"{OP_NAMES[op]} operation is not allowed for the "
                                      f"BROKER_LOGGER resource")
        else:
            raise InvalidRequestError(f"Unknown operation type {op} is not allowed for the "
                                      f"BROKER_LOGGER resource")
    if validate_only:
        return
    for c in ops:
        if c.config_operation == SET:
            assert c.value is not None      # a supported level, checked above
            _python_logger(c.name).setLevel(_LOG4J_LEVELS[c.value])
            log.warning("Updated the log level of %s to %s", c.name, c.value)
        else:
            _python_logger(c.name).setLevel(logging.NOTSET)
            log.warning("Unset the log level of %s", c.name)


# ========================================================================= DescribeConfigs


def _broker_id(resource_name: str) -> int:
    node = parse_node_id(resource_name)
    if node is None:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {resource_name}")
    return node


def _resource_entries(context: RequestContext[DescribeConfigsRequest], resource_type: int,
                      name: str, include_synonyms: bool) -> list[ConfigEntry]:
    server = context.server
    if resource_type == TOPIC:
        check_topic_name(name)
        record = server.metadata_store.topics.get(name)
        if record is None:
            raise UnknownTopicOrPartitionError()
        entries = server.admin.topic_config_entries(record.configs)
    elif resource_type == BROKER:
        if name == "":
            # Kafka shows the cluster-default layer's own values here (describe() gives
            # the effective ones, which a per-broker value may shadow): the value of the
            # entry's DYNAMIC_DEFAULT_BROKER_CONFIG synonym.
            entries = [attrs.evolve(e, value=e.synonyms[0].value) if e.synonyms else e
                       for e in server.config.describe(cluster_default=True)]
        elif _broker_id(name) == server.node_id:
            entries = server.config.describe()
        else:
            raise InvalidRequestError(f"Unexpected broker id, expected {server.node_id} or "
                                      f"empty string, but received {name}")
    elif resource_type == BROKER_LOGGER:
        if name == "":
            raise InvalidRequestError("Broker id must not be empty")
        if _broker_id(name) != server.node_id:
            raise InvalidRequestError(f"Unexpected broker id, expected {server.node_id} but "
                                      f"received {name}")
        entries = [ConfigEntry(logger, level, ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
                               is_default=False, read_only=False, sensitive=False,
                               synonyms=())
                   for logger, level in broker_loggers().items()]
    else:
        raise InvalidRequestError(f"Unsupported resource type: "
                                  f"{RESOURCE_TYPES.get(resource_type, 'UNKNOWN')}")
    if not include_synonyms:
        return [e if not e.synonyms else _without_synonyms(e) for e in entries]
    return entries


def _without_synonyms(entry: ConfigEntry) -> ConfigEntry:
    return attrs.evolve(entry, synonyms=())


def _describe_result(entry: ConfigEntry,
                     include_documentation: bool) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name, value=None if entry.sensitive else entry.value,
        # IsDefault is v0 only (not served): Kafka 4 removed v0.
        read_only=entry.read_only, config_source=int(entry.source),
        is_sensitive=entry.sensitive,
        synonyms=[DescribeConfigsSynonym(name=s.name,
                                         value=None if entry.sensitive else s.value,
                                         source=int(s.source))
                  for s in entry.synonyms],
        config_type=int(entry.config_type),
        documentation=entry.documentation if include_documentation else None)


def _authorize_resource(context: RequestContext[Any], rtype: int, name: str,
                        operation: AclOperation) -> None:
    """Kafka's authorization of a config resource: the cluster for BROKER and BROKER_LOGGER
    (CLUSTER_AUTHORIZATION_FAILED), the topic for TOPIC (TOPIC_AUTHORIZATION_FAILED)."""
    if rtype in (BROKER, BROKER_LOGGER):
        if not authorize(context, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            raise ClusterAuthorizationFailedError("Cluster authorization failed.")
    elif rtype == TOPIC and not authorize(context, operation, ResourceType.TOPIC, name):
        raise TopicAuthorizationFailedError("Topic authorization failed.")


async def handle_describe_configs(
        context: RequestContext[DescribeConfigsRequest]) -> DescribeConfigsResponse:
    body = context.body
    version = context.api_version
    include_synonyms = version >= 1 and body.include_synonyms
    include_documentation = version >= 3 and body.include_documentation
    for resource in body.resources:
        if resource.resource_type not in RESOURCE_TYPES:
            # Kafka's ConfigHelper throws while authorizing, failing the whole request.
            raise InvalidRequestError(f"Unexpected resource type "
                                      f"{resource.resource_type} for resource "
                                      f"{resource.resource_name}")
    results = []
    for resource in body.resources:
        result = DescribeConfigsResult(
            error_code=0, resource_type=resource.resource_type,
            resource_name=resource.resource_name, configs=[])
        try:
            _authorize_resource(context, resource.resource_type, resource.resource_name,
                                AclOperation.DESCRIBE_CONFIGS)
            entries = _resource_entries(context, resource.resource_type,
                                        resource.resource_name, include_synonyms)
        except Exception as e:
            if isinstance(e, UnknownTopicOrPartitionError):
                # ConfigHelper answers an unknown topic with the bare error code.
                result.error_code = e.code
            else:
                if not isinstance(e, KafkaError):
                    log.error("DescribeConfigs of %s failed", resource, exc_info=e)
                result.error_code, result.error_message = api_error(e)
            results.append(result)
            continue
        keys = resource.configuration_keys
        if keys:
            wanted = set(keys)
            entries = [e for e in entries if e.name in wanted]
        result.configs = [_describe_result(e, include_documentation) for e in entries]
        results.append(result)
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


# ===================================================================== Alter configs (both)


def _duplicate_resources(resources: Iterable[AlterConfigsRequestAlterConfigsResource]
                         | Iterable[IncrementalAlterConfigsRequestAlterConfigsResource],
                         ) -> set[tuple[int, str]]:
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    return {key for key, n in counts.items() if n > 1}


def _preprocess(resource: AlterConfigsRequestAlterConfigsResource
                | IncrementalAlterConfigsRequestAlterConfigsResource, incremental: bool) -> None:
    """The broker-side checks of Kafka's ``ConfigAdminManager.preprocess`` that do not
    depend on the resource type."""
    names = [c.name for c in resource.configs]
    if len(set(names)) != len(names):
        raise InvalidRequestError("Error due to duplicate config keys")
    nulls = [c.name for c in resource.configs
             if c.value is None and not (
                 incremental and isinstance(c, IncrementalAlterConfigsRequestAlterableConfig)
                 and c.config_operation == DELETE)]
    if nulls:
        raise InvalidRequestError("Null value not supported for : " + ", ".join(nulls))


async def handle_alter_configs(
        context: RequestContext[AlterConfigsRequest]) -> AlterConfigsResponse:
    body = context.body
    admin = context.server.admin
    duplicates = _duplicate_resources(body.resources)
    responses = []
    for resource in body.resources:
        rtype, name = resource.resource_type, resource.resource_name
        out = AlterConfigsResponseAlterConfigsResourceResponse(
            error_code=0, error_message=None, resource_type=rtype, resource_name=name)
        try:
            if (rtype, name) in duplicates:
                raise InvalidRequestError("Each resource must appear at most once.")
            _authorize_resource(context, rtype, name, AclOperation.ALTER_CONFIGS)
            _preprocess(resource, incremental=False)
            # _preprocess refused null values
            configs = {c.name: c.value for c in resource.configs if c.value is not None}
            if rtype == BROKER:
                admin.alter_broker_configs(name, configs, body.validate_only)
            elif rtype == TOPIC:
                admin.alter_topic_configs(name, configs, body.validate_only)
            else:
                # AlterConfigs never supported BROKER_LOGGER; kafkapy has no client metrics
                # or group configs.
                raise InvalidRequestError(f"Unknown resource type {rtype}")
        except Exception as e:
            _log_failure("AlterConfigs", rtype, name, e)
            out.error_code, out.error_message = api_error(e)
        responses.append(out)
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


async def handle_incremental_alter_configs(
        context: RequestContext[IncrementalAlterConfigsRequest]) -> IncrementalAlterConfigsResponse:
    body = context.body
    server = context.server
    duplicates = _duplicate_resources(body.resources)
    responses = []
    for resource in body.resources:
        rtype, name = resource.resource_type, resource.resource_name
        out = IncrementalAlterConfigsResponseAlterConfigsResourceResponse(
            error_code=0, error_message=None, resource_type=rtype, resource_name=name)
        try:
            if (rtype, name) in duplicates:
                raise InvalidRequestError("Each resource must appear at most once.")
            _authorize_resource(context, rtype, name, AclOperation.ALTER_CONFIGS)
            _preprocess(resource, incremental=True)
            ops = {c.name: (c.config_operation, c.value) for c in resource.configs}
            if rtype == BROKER_LOGGER:
                _alter_loggers(name, server.node_id, resource.configs, body.validate_only)
            elif rtype == BROKER:
                server.admin.incremental_alter_broker_configs(name, ops, body.validate_only)
            elif rtype == TOPIC:
                server.admin.incremental_alter_topic_configs(name, ops, body.validate_only)
            else:
                raise InvalidRequestError(f"Unknown resource type {rtype}")
        except Exception as e:
            _log_failure("IncrementalAlterConfigs", rtype, name, e)
            out.error_code, out.error_message = api_error(e)
        responses.append(out)
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _log_failure(what: str, rtype: int, name: str, exc: Exception) -> None:
    resource = f"{RESOURCE_TYPES.get(rtype, rtype)} {name!r}"
    if isinstance(exc, KafkaError):
        log.info("%s of %s refused: %s", what, resource, exc)
    else:
        log.error("%s of %s failed", what, resource, exc_info=exc)


HANDLERS: dict[int, Handler] = {
    ApiKey.DESCRIBE_CONFIGS: handle_describe_configs,
    ApiKey.ALTER_CONFIGS: handle_alter_configs,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: handle_incremental_alter_configs,
}
