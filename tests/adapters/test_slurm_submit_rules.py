"""The submission rules (what job_submit.lua is told to set), on literal inputs."""

import pytest
from pydantic import ValidationError

from adapters.slurm_live.submit import (
    INFINITE,
    NO_VAL,
    SubmitPolicy,
    SubmitRequest,
    answer_text,
    settings_for,
)
from schedmate.records import Annotation

KEY = "0b5d7c3e-1f2a-4b6c-8d9e-0a1b2c3d4e5f"
SID = f"slurm-{KEY}"


def request(**fields) -> SubmitRequest:
    return SubmitRequest.model_validate({"key": KEY, "time_limit": NO_VAL, "time_min": NO_VAL, "nice": NO_VAL,
                                         "min_nodes": NO_VAL, "req_switch": NO_VAL, **fields})


def predicted(p90: float, p50: float | None = None, **fields) -> Annotation:
    p50 = p90 / 2 if p50 is None else p50
    return Annotation.model_validate({"job_id": SID, "predicted_duration": {"p10": p50 / 2, "p50": p50, "p90": p90},
                                      **fields})


def test_time_min_policy_keeps_the_users_limit_and_offers_the_prediction_as_time_min():
    s = settings_for(predicted(600), request(time_limit=60), SubmitPolicy(), SID)
    assert s.time_limit is None and s.time_min == 13  # 600 s x 1.25 = 12.5 min, rounded up


def test_limit_policy_sets_the_prediction_as_time_limit():
    s = settings_for(predicted(600), request(time_limit=60), SubmitPolicy(time_policy="limit"), SID)
    assert s.time_limit == 13 and s.time_min is None


@pytest.mark.parametrize("policy", ["time-min", "limit"])
def test_a_prediction_above_the_users_time_never_raises_it(policy):
    s = settings_for(predicted(7200), request(time_limit=30), SubmitPolicy(time_policy=policy), SID)
    assert s.time_limit is None and s.time_min is None
    assert any("above the requested" in n for n in s.notes)


def test_without_time_the_partition_default_is_the_request_and_its_maximum_the_cap():
    assert request(part_default_time=120, part_max_time=600).requested_minutes() == 120
    assert request(part_default_time=NO_VAL, part_max_time=600).requested_minutes() == 600
    assert request(time_limit=900, part_max_time=600).requested_minutes() == 600
    assert request(time_limit=INFINITE, part_default_time=120, part_max_time=INFINITE).requested_minutes() is None
    s = settings_for(predicted(36000), request(part_default_time=120), SubmitPolicy(time_policy="limit"), SID)
    assert s.time_limit is None  # 12.5 h predicted, 2 h would be given: left alone


def test_the_users_own_time_min_nice_comment_and_switches_are_kept():
    sub = request(time_limit=600, time_min=5, nice=0x80000000 + 7, comment="my run", min_nodes=4,
                  req_switch=2, wait4switch=60)
    ann = predicted(3600, 1800, network_sensitivity=0.9)
    s = settings_for(ann, sub, SubmitPolicy(), SID)
    assert (s.time_min, s.nice, s.comment, s.req_switch) == (None, None, None, None)
    assert len(s.notes) == 4


def test_limit_policy_never_goes_below_the_users_time_min():
    s = settings_for(predicted(600), request(time_limit=120, time_min=30), SubmitPolicy(time_policy="limit"), SID)
    assert s.time_limit == 30


def test_long_predicted_jobs_get_a_higher_nice_and_sensitive_multi_node_jobs_wait_for_one_switch():
    short = settings_for(predicted(300, 200), request(time_limit=60), SubmitPolicy(), SID)
    long = settings_for(predicted(50000, 36000), request(time_limit=1440), SubmitPolicy(), SID)
    assert short.nice == 0 and long.nice == 824
    sensitive = settings_for(predicted(7200, 3600, network_sensitivity=0.8), request(min_nodes=4, time_limit=600),
                             SubmitPolicy(), SID)
    assert (sensitive.req_switch, sensitive.wait4switch) == (1, 300)
    one_node = settings_for(predicted(7200, 3600, network_sensitivity=0.8), request(time_limit=600),
                            SubmitPolicy(), SID)
    assert one_node.req_switch is None


def test_gpus_come_from_per_job_per_node_or_per_task_requests():
    assert request(tres_per_job="gres:gpu:16").num_gpus() == 16
    assert request(tres_per_node="gres:gpu:a100:4", min_nodes=2).num_gpus() == 8
    assert request(tres_per_node="gres/gpu:8,gres/shard:2", min_nodes=NO_VAL).num_gpus() == 8
    assert request(tres_per_task="gres:gpu:1", num_tasks=4).num_gpus() == 4
    assert request(tres_per_node="gres:shard:3").num_gpus() == 0


def test_text_arrives_byte_per_code_point_and_is_decoded_back_to_utf8():
    script = "#!/bin/bash\necho 'é 中文' \"$(whoami)\" \\\n"
    as_sent = script.encode().decode("latin-1")  # what the shim's \u00XX escapes carry
    assert request(script=as_sent, argv=[as_sent]).script == script
    assert request(script="plain ascii").script == "plain ascii"


def test_the_wrapped_command_of_an_sbatch_wrap_job_is_recovered():
    wrapped = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntorchrun --nproc_per_node=8 train.py\n"
    assert request(script=wrapped).wrapped_command() == "torchrun --nproc_per_node=8 train.py"
    assert request(script="#!/bin/sh\nsleep 1\n").wrapped_command() is None


def test_the_answer_is_key_value_lines_of_printable_ascii_only():
    s = settings_for(predicted(600), request(time_limit=60), SubmitPolicy(), SID)
    s.notes.append("line\nbreak time_limit=99999")
    text = answer_text(s)
    lines = text.splitlines()
    assert lines[0] == f"id={SID}" and "time_min=13" in lines
    assert all(line.isascii() and line.isprintable() for line in lines)
    assert "time_limit=99999" not in [line for line in lines if line.startswith("time_limit")]


def test_an_unknown_policy_key_or_a_malformed_key_is_an_error_not_a_silent_default():
    with pytest.raises(ValidationError, match="time_polcy"):
        SubmitPolicy.model_validate({"time_polcy": "limit"})
    with pytest.raises(ValidationError, match="key"):
        SubmitRequest.model_validate({"key": "../../etc"})
