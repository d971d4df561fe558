"""Live Slurm integration: the submission plugin and the watcher (issue 13).

* `job_submit.lua`: a thin Slurm job_submit/lua shim; asks the service at submission, applies its answer,
  fails open. Installed by `schedmate adapt slurm-plugin` (`install`).
* `submit`: the request it sends and the settings it gets back, decided in Python (`settings_for`).
* `routes`: `POST /v1/slurm/submit` on the annotation service.
* `follow`, `rules`, `watch`: `schedmate watch slurm`: jobs from squeue, their logs into the service,
  extensions, requeues and cancels through `adapters/slurm.py`.
* `cli`: the two commands.
"""
