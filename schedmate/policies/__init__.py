"""Scheduling policies, found by name through the registries in `base`."""

from schedmate.policies import orders as _orders  # noqa: F401  (registers)
from schedmate.policies import placements as _placements  # noqa: F401
from schedmate.policies import preemption as _preemption  # noqa: F401
from schedmate.policies.base import ORDERS, PLACEMENTS, PREEMPTIONS, Decision, QueueOrder, Wait

__all__ = ["ORDERS", "PLACEMENTS", "PREEMPTIONS", "Decision", "QueueOrder", "Wait"]

from schedmate.policies.schedulers import SCHEDULERS, build_scheduler, policy_options

__all__ += ["SCHEDULERS", "build_scheduler", "policy_options"]
