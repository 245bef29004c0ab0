# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled leader append: the bodies of ``ReplicaManager._append_to_leaders`` (Kafka's
appendToLocalLog), ``ReplicaManager._complete_appends`` and
``Partition.append_records_to_leader`` (Kafka's Partition.appendRecordsToLeader). Those methods
call these functions; the state stays on the Python objects (the replica manager's partitions
and purgatories, a partition's leadership, ISR and log), which are read and changed through
their own attributes and methods. What goes is the interpreter's work per partition appended:
its frames, its bytecode, and the results built field by field.

``append_now(rm, acks, entries)`` is ``ReplicaManager.append_records_now``: the compiled
Produce path (``_produce.produce_now``) calls it with no Python frame in between.

Per-partition errors are results, never exceptions (one bad partition does not fail the
others): a ``RecordValidationError`` keeps its record errors and message (KIP-467); any other
exception becomes a KafkaError by ``ReplicaManager.append_error`` (storage errors logged).
"""

from kafkapy._log import append_as_leader as _log_append_as_leader

# The Python classes used here, imported on first use: their modules import this one.
cdef object _ProducePartitionResult = None
cdef object _RecordValidationError = None
cdef object _NotLeaderOrFollowerError = None
cdef object _NotEnoughReplicasError = None
cdef object _NotEnoughReplicasAfterAppendError = None
cdef object _InvalidRequiredAcksError = None
cdef object _DelayedProduce = None
cdef object _CLIENT = None


cdef int _load() except -1:
    global _ProducePartitionResult, _RecordValidationError, _NotLeaderOrFollowerError
    global _NotEnoughReplicasError, _NotEnoughReplicasAfterAppendError
    global _InvalidRequiredAcksError, _DelayedProduce, _CLIENT
    from kafkapy.errors import (InvalidRequiredAcksError, NotEnoughReplicasAfterAppendError,
                                NotEnoughReplicasError, NotLeaderOrFollowerError)
    from kafkapy.log.log_validator import RecordValidationError
    from kafkapy.log.producer_state import AppendOrigin
    from kafkapy.server.delayed_produce import DelayedProduce
    from kafkapy.server.replica_manager import ProducePartitionResult
    _ProducePartitionResult, _RecordValidationError = ProducePartitionResult, RecordValidationError
    _NotLeaderOrFollowerError, _NotEnoughReplicasError = (NotLeaderOrFollowerError,
                                                          NotEnoughReplicasError)
    _NotEnoughReplicasAfterAppendError = NotEnoughReplicasAfterAppendError
    _InvalidRequiredAcksError, _DelayedProduce = InvalidRequiredAcksError, DelayedProduce
    _CLIENT = AppendOrigin.CLIENT
    return 0


def append_to_leader(partition, records, int required_acks, origin):
    """``Partition.append_records_to_leader``: leadership, min.insync.replicas for acks=all,
    the log append (offsets, leader epoch), then the high watermark."""
    if _CLIENT is None:
        _load()
    return _to_leader(partition, records, required_acks, origin)


cdef object _to_leader(partition, records, int required_acks, origin):
    if partition.leader_id != partition.node_id:
        raise _NotLeaderOrFollowerError(
            f"this broker is not the leader of {partition.tp} (leader {partition.leader_id})")
    log = partition.log
    if required_acks == -1:
        min_isr = log.config.min_insync_replicas
        if len(partition.isr) < min_isr:
            raise _NotEnoughReplicasError(
                f"{partition.tp}: the ISR has {len(partition.isr)} replica(s), below "
                f"min.insync.replicas {min_isr}")
    info = _log_append_as_leader(log, records, partition.leader_epoch, origin)
    # This is the partition's own method body: its private flag is read here as there.
    if partition._sole:
        log.update_high_watermark(log.log_end_offset)
    else:
        partition.maybe_increment_leader_hw()
    return info


def append_to_leaders(rm, int required_acks, dict entries):
    """``ReplicaManager._append_to_leaders``: each partition's records appended as leader,
    in order; returns ``({tp: ProducePartitionResult}, [partitions that appended records])``.
    Raises InvalidRequiredAcksError for acks outside {-1, 0, 1} before anything is
    appended."""
    if _CLIENT is None:
        _load()
    if required_acks < -1 or required_acks > 1:
        raise _InvalidRequiredAcksError(f"acks must be -1, 0 or 1, not {required_acks}")
    cdef dict results = {}
    cdef list appended = []
    cdef dict partitions = rm.partitions
    metrics = getattr(rm.server, "metrics", None)
    stats = None if metrics is None else metrics.topic_stats
    for tp, records in entries.items():
        partition = partitions.get(tp)
        try:
            if partition is None:
                raise rm.not_hosted_error(tp)
            info = _to_leader(partition, records, required_acks, _CLIENT)
        except _RecordValidationError as rve:
            # Kafka's appendToLocalLog: the log start offset, the refused records and the
            # exception's message (hasCustomErrorMessage) go back to the client.
            invalid = rve.invalid
            results[tp] = _ProducePartitionResult(
                error=invalid, log_start_offset=partition.log.log_start_offset,
                record_errors=rve.record_errors, error_message=invalid.message)
            if stats is not None:
                stats.produce_failed(tp.topic, invalid.code)
            continue
        except Exception as exc:
            error = rm.append_error(tp, exc)
            results[tp] = _ProducePartitionResult(error=error)
            if stats is not None:
                stats.produce_failed(tp.topic, error.code)
            continue
        first, last = info.first_offset, info.last_offset
        if stats is not None:
            # BrokerTopicMetrics per partition appended: the batch set's offsets give its
            # record count (a producer's offsets are contiguous), never a record loop.
            stats.produced(tp.topic, last - first + 1 if last >= 0 else 0, len(records))
        # ProducePartitionResult's fields in order: error, base_offset, log_append_time,
        # log_start_offset, last_offset.
        results[tp] = _ProducePartitionResult(None, first, info.log_append_time,
                                              info.log_start_offset, last)
        if last >= 0:
            appended.append(partition)
    return results, appended


def complete_appends(rm, timeout_ms, int required_acks, dict results, list appended):
    """``ReplicaManager._complete_appends``: after the appends (and their flushes), the
    delayed fetches and produces of the appended partitions tried, and for acks=all the
    answer now (``(results, None)``) or a parked ``DelayedProduce`` (``(results, op)``)."""
    if _CLIENT is None:
        _load()
    fetch_purgatory = rm.fetch_purgatory
    produce_purgatory = rm.produce_purgatory
    for partition in appended:
        tp = partition.tp
        fetch_purgatory.check_and_complete(tp)
        produce_purgatory.check_and_complete(tp)
    if required_acks != -1 or not appended:
        return results, None
    for partition in appended:
        if partition.log.high_watermark <= results[partition.tp].last_offset:
            break
    else:
        # Replicated already (always so with a single replica): no delayed operation.
        for partition in appended:
            isr = partition.isr
            if len(isr) < partition.log.config.min_insync_replicas:
                results[partition.tp].error = _NotEnoughReplicasAfterAppendError(
                    f"{partition.tp}: the ISR has {len(isr)} replica(s), below "
                    f"min.insync.replicas")
        return results, None
    op = _DelayedProduce(timeout_ms, rm, results)
    if not produce_purgatory.try_complete_else_watch(op, [p.tp for p in appended]):
        return results, op
    return results, None


def append_now(rm, int required_acks, dict entries):
    """``ReplicaManager.append_records_now``: ``append_to_leaders`` then ``complete_appends``
    for a caller that has checked that nothing waits (no flush on append; for acks=all,
    every partition its sole replica). Returns the results."""
    results, appended = append_to_leaders(rm, required_acks, entries)
    _, parked = complete_appends(rm, 0, required_acks, results, appended)
    if parked is not None:
        raise AssertionError("append_now's caller must check that nothing waits")
    return results
