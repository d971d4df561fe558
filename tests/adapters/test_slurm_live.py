"""The Slurm adapter against a real slurmctld/slurmd on localhost (skipped when Slurm is not installed).

What each planned command did is read back with squeue/scontrol, not with the adapter's own parser.
"""

import pytest

from adapters.base import ActionKind, AdapterConfig
from adapters.slurm import SlurmAdapter, SlurmConfig
from schedmate.records import Annotation

pytestmark = pytest.mark.slow


def annotation(job_id: str, **fields) -> Annotation:
    return Annotation.model_validate({"job_id": job_id, **fields})


def test_planned_commands_change_real_jobs(local_slurm, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(local_slurm.conf))
    s = local_slurm
    # A hostile name is submitted as-is; the adapter never reads or passes it.
    limit_job = s.sbatch("--job-name=x' Comment=pwn; scancel -u root", "--time=60", "--wrap=sleep 600")
    hung_job = s.sbatch("--job-name=hung", "--time=60", "--wrap=sleep 600")
    crashed_job = s.sbatch("--job-name=nccl", "--time=60", "--requeue", "--wrap=sleep 600")
    waiting_job = s.sbatch("--job-name=later", "--time=1440", "--begin=now+3600", "--wrap=sleep 600")
    for j in (limit_job, hung_job, crashed_job):
        s.wait_for_state(j, {"RUNNING"})

    adapter = SlurmAdapter(SlurmConfig(max_nice=1000))
    state = adapter.read_state()
    assert state[limit_job].phase.value == "running" and state[waiting_job].phase.value == "pending"
    plan = adapter.plan([
        annotation(limit_job, predicted_duration={"p10": 300, "p50": 450, "p90": 600}),
        annotation(hung_job, failure={"category": "hang", "failed": True, "confidence": 0.95}),
        annotation(crashed_job, failure={"category": "nccl", "failed": True, "confidence": 0.9,
                                         "recoverable": True, "action": "restart_from_checkpoint"}),
        annotation(waiting_job, predicted_duration={"p10": 20000, "p50": 36000, "p90": 50000}),
        annotation("999999", predicted_duration={"p10": 1, "p50": 2, "p90": 3}),
    ], state)
    assert [s.reason for s in plan.skips] == ["no such job in the cluster"]
    results = adapter.apply(plan, dry_run=False)
    assert all(r.ok for r in results), [(r.action.command(), r.output) for r in results if not r.ok]

    assert s.squeue_field(limit_job, "%l") == "13:00"  # 600 s x 1.25, rounded up to the minute
    assert s.squeue_field(limit_job, "%k") == "schedmate: p10=300s p50=450s p90=600s"
    assert s.wait_for_state(hung_job, {"CANCELLED"}) == "CANCELLED"
    assert s.show_job(crashed_job)["Restarts"] == "1"
    assert s.squeue_field(waiting_job, "%y") == "824"
    assert s.squeue_field(waiting_job, "%l") == "17:22:00"  # 50000 s x 1.25 < the 24 h asked

    # Applying the same plan inputs again changes nothing: the state now matches.
    again = adapter.plan([annotation(limit_job, predicted_duration={"p10": 300, "p50": 450, "p90": 600})],
                         adapter.read_state())
    assert again.actions == []


def test_an_unprivileged_time_limit_increase_fails_cleanly_and_is_reported(local_slurm, monkeypatch):
    """As root every update is allowed, so provoke a real scontrol error instead: an unknown job id."""
    monkeypatch.setenv("SLURM_CONF", str(local_slurm.conf))
    from adapters.base import Action, Plan

    plan = Plan(adapter="slurm", actions=[Action(job_id="424242", kind=ActionKind.time_limit, reason="test",
                                                 argv=("scontrol", "update", "JobId=424242", "TimeLimit=5"))])
    (result,) = SlurmAdapter(SlurmConfig(**AdapterConfig().model_dump())).apply(plan, dry_run=False)
    assert not result.ok and result.returncode != 0 and "Invalid job id" in result.output
