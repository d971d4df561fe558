"""A live annotation service: annotations at submission, refreshed from logs, applied by the cluster's own
extension points (Slurm `job_submit.lua`, a Kubernetes mutating webhook; see `adapters/`).

`app` (the HTTP API and its statuses), `annotate` (static answer at once, LLM refinement behind a bounded
queue, log monitors, history), `db` (SQLite WAL or PostgreSQL, migrations, group commit), `auth` (tokens,
scopes, rate limits), `guard` (body limits and timeouts, request metrics), `uploads` (tarball checks),
`admission` (the Kubernetes webhook's route), `metrics` (Prometheus, JSON logs), `cli` (`schedmate serve`,
`schedmate token create|revoke|list`). Needs the `serve` extra (`pip install -e .[serve]`).
"""
