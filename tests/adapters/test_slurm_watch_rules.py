"""The watcher's decisions and file handling, on literal inputs and real files."""

import json
import os

import pytest

from adapters.base import AdapterError, JobPhase, JobView
from adapters.slurm_live.follow import WatchJob, complete_lines, output_path, read_new
from adapters.slurm_live.rules import JobMemory, WatchConfig, judge
from adapters.slurm_live.watch import load_state, save_state

CFG = WatchConfig(interval_s=10, hang_after_s=60, hang_factor=5)


def answer(steps=None, remaining=None, it=None, failure=None, finished=False):
    return {"progress": {"steps_done": steps, "iteration_time_s": it}, "finished": finished,
            "annotation": {"predicted_remaining_s": remaining, "failure": failure}}


def memory(**kw) -> JobMemory:
    return JobMemory(service_id="slurm-x", cap_known=True, **kw)


def test_a_progressing_job_that_would_outrun_its_limit_is_extended_to_its_remaining_time():
    m = memory(cap_s=3600)
    v = judge(m, answer(steps=100, remaining=600, it=1.0), elapsed_s=100, limit_s=300, now=1000, cfg=CFG)
    assert v.kind == "extend" and v.limit_s == 900  # 100 + 600 x 1.25 + 2 x 10 = 870 s -> 15 min


def test_an_extension_never_goes_beyond_the_users_request():
    m = memory(cap_s=600)
    v = judge(m, answer(steps=100, remaining=3600, it=1.0), elapsed_s=100, limit_s=300, now=1000, cfg=CFG)
    assert v.kind == "extend" and v.limit_s == 600 and "capped" in v.reason
    at_cap = memory(cap_s=600)
    assert judge(at_cap, answer(steps=100, remaining=3600), elapsed_s=100, limit_s=600, now=1000, cfg=CFG).kind == "none"


def test_a_job_that_fits_its_limit_or_runs_unlimited_keeps_it():
    assert judge(memory(cap_s=3600), answer(steps=10, remaining=60), 100, 3000, 1000, CFG).kind == "none"
    assert judge(memory(cap_s=None), answer(steps=10, remaining=6000), 100, None, 1000, CFG).kind == "none"


def test_without_a_known_request_nothing_is_extended():
    m = JobMemory(service_id="slurm-x")  # the service was not asked yet
    assert judge(m, answer(steps=10, remaining=6000), 100, 300, 1000, CFG).kind == "none"


def test_a_progressing_job_without_a_remaining_estimate_gets_a_step_only_when_about_to_run_out():
    m = memory(cap_s=None)
    assert judge(m, answer(steps=10), elapsed_s=100, limit_s=900, now=1000, cfg=CFG).kind == "none"
    v = judge(m, answer(steps=20), elapsed_s=850, limit_s=900, now=1010, cfg=CFG)
    assert v.kind == "extend" and v.limit_s == 1500  # 850 + 600, rounded up to the minute


def test_a_job_with_no_new_step_for_the_hang_window_is_failed_as_hung_and_not_extended():
    m = memory(cap_s=3600)
    judge(m, answer(steps=5, it=2.0), 100, 900, now=1000, cfg=CFG)
    assert judge(m, None, 150, 900, now=1050, cfg=CFG).kind == "none"  # 50 s < window max(60, 5 x 2)
    v = judge(m, None, 170, 900, now=1070, cfg=CFG)
    assert v.kind == "fail" and v.signal.category.value == "hang" and "after step 5" in v.reason
    quiet, no_hangs = memory(cap_s=3600), WatchConfig(interval_s=10, hang_after_s=0, hang_factor=5)
    judge(quiet, answer(steps=5, remaining=6000, it=2.0), 100, 300, now=1000, cfg=no_hangs)
    assert judge(quiet, None, 170, 300, now=1070, cfg=no_hangs).kind == "none"  # idle past the window: no extension


def test_the_hang_window_grows_with_the_iteration_time_and_is_off_after_training_finished():
    slow = memory()
    judge(slow, answer(steps=5, it=30.0), 0, None, now=1000, cfg=CFG)
    assert judge(slow, None, 0, None, now=1000 + 149, cfg=CFG).kind == "none"  # 5 x 30 s window
    assert judge(slow, None, 0, None, now=1000 + 151, cfg=CFG).kind == "fail"
    done = memory()
    judge(done, answer(steps=5, it=1.0, finished=True), 0, None, now=1000, cfg=CFG)
    assert judge(done, None, 0, None, now=1000 + 10_000, cfg=CFG).kind == "none"
    off = memory()
    judge(off, answer(steps=5, it=1.0), 0, None, now=1000, cfg=WatchConfig(hang_after_s=0))
    assert judge(off, None, 0, None, now=1000 + 10_000, cfg=WatchConfig(hang_after_s=0)).kind == "none"


def test_a_failure_is_acted_on_only_when_it_still_stands_at_the_next_look():
    nccl = {"category": "nccl", "failed": True, "confidence": 0.9, "recoverable": True,
            "action": "restart_from_checkpoint"}
    m = memory()
    assert judge(m, answer(steps=10, failure=nccl), 0, None, 1000, CFG).kind == "none"
    v = judge(m, None, 0, None, 1010, CFG)
    assert v.kind == "fail" and v.signal.category.value == "nccl"
    recovered = memory()
    judge(recovered, answer(steps=10, failure=nccl), 0, None, 1000, CFG)
    assert judge(recovered, answer(steps=13, failure=nccl), 0, None, 1010, CFG).kind == "none"  # progress between
    weak = memory()
    judge(weak, answer(steps=10, failure=nccl | {"confidence": 0.5}), 0, None, 1000, CFG)
    assert judge(weak, None, 0, None, 1010, CFG).kind == "none"


def job(stdout="", **kw) -> WatchJob:
    view = JobView(id=kw.pop("id", "77"), phase=JobPhase.running, raw_state="RUNNING")
    return WatchJob(view=view, stdout=stdout, cwd="/work/alice", user_name="alice", name="gpt", **kw)


def test_output_patterns_expand_like_sbatch_and_unknown_ones_are_refused():
    assert str(output_path(job())) == "/work/alice/slurm-77.out"
    assert str(output_path(job("logs/%x-%4j-%u.%%.out"))) == "/work/alice/logs/gpt-0077-alice.%.out"
    assert str(output_path(job("/s/%A_%a.out", id="80", array_job_id=77, array_task_id=3))) == "/s/77_3.out"
    assert str(output_path(job("", id="80", array_job_id=77, array_task_id=3))) == "/work/alice/slurm-77_3.out"
    for bad in ("out-%N.log", "out-%J.log", "a\\%j", "x-%a.out"):
        with pytest.raises(AdapterError):
            output_path(job(bad))


def test_only_a_regular_file_owned_by_the_jobs_user_is_read(tmp_path):
    log = tmp_path / "job.out"
    log.write_bytes(b"step 1\nstep 2\npartial")
    me = os.getuid()
    assert read_new(log, 0, me) == (b"step 1\nstep 2\npartial", 0)
    assert read_new(log, 7, me) == (b"step 2\npartial", 7)
    assert read_new(log, 100, me) == (b"step 1\nstep 2\npartial", 0)  # truncated (requeued): from the start
    assert read_new(tmp_path / "not-yet.out", 0, me) == (b"", 0)
    with pytest.raises(AdapterError, match="not to the job's user"):
        read_new(log, 0, me + 1)
    with pytest.raises(AdapterError, match="user is unknown"):
        read_new(log, 0, None)
    link = tmp_path / "link.out"
    link.symlink_to(log)
    with pytest.raises(AdapterError, match="symbolic link"):
        read_new(link, 0, me)
    fifo = tmp_path / "fifo.out"
    os.mkfifo(fifo)
    with pytest.raises(AdapterError, match="not a regular file"):
        read_new(fifo, 0, me)


def test_a_partial_last_line_waits_unless_the_job_ended():
    assert complete_lines(b"a\nb\npart", final=False) == b"a\nb\n"
    assert complete_lines(b"part", final=False) == b""
    assert complete_lines(b"a\npart", final=True) == b"a\npart"


def test_the_state_file_round_trips_and_a_foreign_one_is_refused(tmp_path):
    path = tmp_path / "state.json"
    save_state(path, {"12": memory(offset=40, steps=3)})
    assert load_state(path)["12"].offset == 40
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(AdapterError, match="not a watcher state file"):
        load_state(path)
