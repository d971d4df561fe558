"""The Slurm adapter: squeue parsing, the commands it plans, and what hostile input cannot do."""

import io
import json

import pytest
from conftest import EXAMPLES, NOW, compare_with_reference

from adapters.base import Action, ActionKind, AdapterError, JobPhase, Plan, load_annotations
from adapters.slurm import (
    SlurmAdapter,
    SlurmConfig,
    parse_slurm_duration,
    parse_squeue_format,
    parse_squeue_json,
)
from schedmate.records import Annotation, DurationEstimate


def example_plan(state_file: str) -> Plan:
    adapter = SlurmAdapter()
    state = adapter.parse_state((EXAMPLES / state_file).read_text(), now=NOW)
    return adapter.plan(load_annotations(EXAMPLES / "annotations.jsonl"), state)


def test_the_example_plan_matches_the_committed_reference():
    compare_with_reference(example_plan("squeue.json").render(), "slurm_plan.txt")


def test_the_json_and_the_format_dumps_of_the_same_jobs_give_the_same_plan():
    assert example_plan("squeue.json").render() == example_plan("squeue.txt").render()


@pytest.mark.parametrize("text, seconds", [
    ("0:00", 0), ("45:10", 2710), ("1:00:00", 3600), ("2-03:04:05", 183845), ("UNLIMITED", None), ("NOT_SET", None),
])
def test_squeue_durations(text, seconds):
    assert parse_slurm_duration(text) == seconds


def test_squeue_json_reads_both_the_22_05_and_the_newer_number_shapes():
    doc = {"jobs": [
        {"job_id": 7, "job_state": "RUNNING", "start_time": NOW - 100, "time_limit": 60, "node_count": 2,
         "nice": None, "comment": "", "requeue": True},
        {"job_id": {"set": True, "infinite": False, "number": 8}, "job_state": ["PENDING"],
         "time_limit": {"set": True, "infinite": True, "number": 0}, "node_count": {"set": True, "number": 4},
         "nice": 50, "comment": "mine", "requeue": False, "array_job_id": {"set": True, "number": 5},
         "array_task_id": {"set": True, "number": 3}},
    ]}
    jobs = parse_squeue_json(json.dumps(doc), now=NOW)
    assert (jobs["7"].phase, jobs["7"].elapsed_s, jobs["7"].time_limit_s, jobs["7"].nice) == \
        (JobPhase.running, 100, 3600, 0)
    assert (jobs["8"].phase, jobs["8"].time_limit_s, jobs["8"].nodes, jobs["8"].requeueable) == \
        (JobPhase.pending, None, 4, False)
    assert jobs["5_3"].comment == "mine"  # an array task is reachable by its array id too


@pytest.mark.parametrize("text", ["not json", "{}", '{"jobs": 3}'])
def test_unreadable_squeue_json_is_an_error_not_an_empty_cluster(text):
    with pytest.raises(AdapterError, match="squeue --json"):
        parse_squeue_json(text)


def test_a_comment_holding_the_separator_stays_whole_and_short_lines_are_errors():
    jobs = parse_squeue_format("9|PENDING|0:00|10:00|1|0|a|b|c=d\n")
    assert jobs["9"].comment == "a|b|c=d"
    with pytest.raises(AdapterError, match="line 1"):
        parse_squeue_format("9|PENDING|0:00\n")


@pytest.mark.parametrize("job_id", ["1 2", "-1", "1;scancel -u root", "--uid=0", "1\n2", "", "1_", "JobId=1", "１２"])
def test_malformed_job_ids_are_skipped_before_any_command_is_built(job_id):
    adapter = SlurmAdapter()
    state = parse_squeue_format("1|PENDING|0:00|10:00|1|0|(null)\n")
    plan = adapter.plan([Annotation(job_id=job_id, predicted_duration=DurationEstimate.point(60))], state)
    assert plan.actions == []
    assert [s.reason for s in plan.skips] == ["malformed slurm job id"]


def test_every_value_is_one_argv_element_so_it_cannot_add_a_second_key():
    plan = example_plan("squeue.json")
    for a in plan.actions:
        if a.argv[1] == "update":
            assert len(a.argv) == 4 and a.argv[2] == f"JobId={a.job_id}"
    comment = next(a for a in plan.actions if a.kind is ActionKind.annotate)
    assert comment.argv[3].startswith("Comment=schedmate: ")


def test_a_user_comment_is_kept_unless_asked():
    state = parse_squeue_format("5|PENDING|0:00|10:00|1|0|my notes\n")
    a = [Annotation(job_id="5", predicted_duration=DurationEstimate.point(60))]
    assert not any(x.kind is ActionKind.annotate for x in SlurmAdapter().plan(a, state).actions)
    assert any(x.kind is ActionKind.annotate
               for x in SlurmAdapter(SlurmConfig(overwrite_comment=True)).plan(a, state).actions)


def test_the_comment_is_capped():
    state = parse_squeue_format("5|PENDING|0:00|10:00|1|0|(null)\n")
    a = Annotation(job_id="5", predicted_duration=DurationEstimate.point(60), network_sensitivity=0.1)
    plan = SlurmAdapter(SlurmConfig(summary_max_len=40)).plan([a], state)
    assert len(next(x for x in plan.actions if x.kind is ActionKind.annotate).argv[3]) == len("Comment=") + 40


def test_a_recoverable_failure_of_a_job_that_cannot_be_requeued_is_left_alone_not_cancelled():
    doc = {"jobs": [{"job_id": 3, "job_state": "RUNNING", "start_time": NOW - 60, "time_limit": 60, "node_count": 1,
                     "comment": "", "requeue": False}]}
    a = Annotation.model_validate({"job_id": "3", "failure": {
        "category": "nccl", "failed": True, "confidence": 0.99, "recoverable": True,
        "action": "restart_from_checkpoint"}})
    plan = SlurmAdapter().plan([a], parse_squeue_json(json.dumps(doc), now=NOW))
    assert {x.kind for x in plan.actions} == {ActionKind.annotate}
    assert any("not requeueable" in s.reason for s in plan.skips)


def test_a_missing_binary_is_reported_per_command_and_blocks_that_jobs_later_commands():
    missing = "/nonexistent/scontrol"
    plan = Plan(adapter="slurm", actions=[
        Action(job_id="1", kind=ActionKind.time_limit, argv=(missing, "update", "JobId=1", "TimeLimit=5"), reason="t"),
        Action(job_id="1", kind=ActionKind.priority, argv=(missing, "update", "JobId=1", "Nice=5"), reason="p"),
        Action(job_id="2", kind=ActionKind.priority, argv=("true",), reason="a command that succeeds"),
    ])
    out = io.StringIO()
    results = SlurmAdapter().apply(plan, dry_run=False, out=out)
    assert [r.ok for r in results] == [False, False, True]
    assert results[0].output == f"{missing}: command not found"
    assert "earlier command for this job failed" in results[1].output


def test_reading_state_without_squeue_installed_is_a_clear_error():
    with pytest.raises(AdapterError, match="command not found"):
        SlurmAdapter(SlurmConfig(squeue="/nonexistent/squeue")).read_state()


def test_a_dry_run_prints_the_plan_and_runs_nothing():
    plan = example_plan("squeue.json")
    out = io.StringIO()
    assert SlurmAdapter().apply(plan, dry_run=True, out=out) == []
    assert out.getvalue() == plan.render()
