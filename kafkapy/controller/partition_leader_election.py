"""Kafka's ``PartitionLeaderElectionAlgorithms``: who leads a partition next. Pure functions.

Every algorithm walks the assignment in order (the first replica is the *preferred* leader),
so leadership returns to the same brokers after failures:

- offline (the leader died, or the partition is new): the first replica that is alive and in
  the ISR; with ``unclean`` (``unclean.leader.election.enable``) and no such replica, the
  first live replica, which then is the whole ISR (data may be lost: that is what unclean
  means). New partitions use ISR = the live replicas.
- reassignment: the first replica of the *target* replicas that is alive and in the ISR.
- preferred: the first replica of the assignment, if it is alive and in the ISR.
- controlled shutdown: the first replica in the ISR that is alive and not shutting down; the
  ISR loses the brokers shutting down.

Each returns the new leader (None: no eligible replica) and the ISR to write with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = [
    "controlled_shutdown_leader",
    "offline_leader",
    "preferred_leader",
    "reassignment_leader",
]

Alive = Callable[[int], bool]


def offline_leader(assignment: Sequence[int], isr: Sequence[int], alive: Alive,
                   unclean: bool) -> tuple[int | None, tuple[int, ...]]:
    live_isr = tuple(r for r in isr if alive(r))
    for replica in assignment:
        if replica in live_isr:
            return replica, live_isr
    if unclean:
        for replica in assignment:
            if alive(replica):
                return replica, (replica,)
    return None, tuple(isr)


def reassignment_leader(target: Sequence[int], isr: Sequence[int], alive: Alive
                        ) -> int | None:
    return next((r for r in target if alive(r) and r in isr), None)


def preferred_leader(assignment: Sequence[int], isr: Sequence[int], alive: Alive
                     ) -> int | None:
    if assignment and alive(assignment[0]) and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_leader(assignment: Sequence[int], isr: Sequence[int], alive: Alive,
                               shutting_down: set[int]
                               ) -> tuple[int | None, tuple[int, ...]]:
    new_isr = tuple(r for r in isr if r not in shutting_down)
    leader = next((r for r in assignment if r in new_isr and alive(r)), None)
    return leader, new_isr
