"""Adapters: what connects annotations to schedulers.

* `adapters.simulated`: inside the replay simulator, for every policy alike.
* `adapters.base`: the `ClusterAdapter` interface for real clusters (read state, plan, apply), the
  decisions shared by every cluster, and the `ADAPTERS` registry;
* `adapters.slurm`, `adapters.kubernetes`: `scontrol`/`scancel` and `kubectl` renderings of those decisions;
* `adapters.cli`: `schedmate adapt slurm|kubernetes`.
"""

from adapters import kubernetes, slurm  # noqa: F401  (fill the ADAPTERS registry)
