"""A live annotation service: annotations at submission, refreshed from logs, applied by the cluster's own
extension points (Slurm `job_submit.lua`, a Kubernetes mutating webhook; see `adapters/`).

`db` (the store: SQLite WAL or PostgreSQL, migrations), `annotate` (static answer at once, LLM refinement
behind a bounded queue, log monitors), `app` (the HTTP API, auth, limits, metrics), `cli` (`schedmate serve`,
`schedmate token create`). Needs the `serve` extra (`pip install -e .[serve]`).
"""
