"""Failure categories, onset lines, actions, and the benign look-alikes that must not count."""

from __future__ import annotations

import pytest

from schedmate.logmon.monitor import Monitor, analyze_text
from schedmate.logmon.report import annotation_fields, to_annotation
from schedmate.records import FailureAction, FailureCategory

PROGRESS = "".join(f"iter {s}: loss {3 - s / 100:.4f}, time 250.00ms\n" for s in range(10, 60, 10))  # 5 lines
AFTER = "".join(f"iter {s}: loss 2.0000, time 250.00ms\n" for s in range(60, 120, 10))  # training goes on

FAILURES = {
    "oom": (("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    loss.backward()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"), 6, FailureAction.reduce_memory),
    "oom_host": (("Out of memory: Killed process 4242 (python) total-vm:912345kB, anon-rss:812345kB\n"
                 "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.0.\n"), 6, FailureAction.reduce_memory),
    "nccl": (("[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600321 milliseconds before timing "
             "out.\n"), 6, FailureAction.restart_from_checkpoint),
    "nccl_reset": (("RuntimeError: [3] is setting up NCCL communicator but store->get('0') got error: Connection "
                   "reset by peer\n"), 6, FailureAction.restart_from_checkpoint),
    "nan": ("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding.\n", 6,
            FailureAction.restart_from_checkpoint),
    "dataloader": (("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
                   "memory (shm).\nRuntimeError: DataLoader worker (pid(s) 4321) exited unexpectedly\n"), 6,
                   FailureAction.reduce_memory),
    "segfault": ("Fatal Python error: Segmentation fault\n\nSegmentation fault (core dumped)\n", 6,
                 FailureAction.fix_code),
    "node": (("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
             "RuntimeError: CUDA error: unspecified launch failure\n"), 6, FailureAction.cordon_node),
    "preempted": (("slurmstepd: error: *** JOB 123456 ON node017 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME "
                  "LIMIT ***\n"), 6, FailureAction.restart_from_checkpoint),
    "user_code": (("Traceback (most recent call last):\n  File \"train.py\", line 30, in <module>\n"
                  "KeyError: 'labels'\n"), 6, FailureAction.fix_code),
    "other": (("terminate called after throwing an instance of 'std::runtime_error'\n  what():  boom\n"
              "Aborted (core dumped)\n"), 6, FailureAction.nothing),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_each_failure_category_is_detected_with_its_onset_and_action(name):
    tail, onset, action = FAILURES[name]
    rep = analyze_text(PROGRESS + tail)
    category = name.split("_")[0] if name != "user_code" else "user_code"
    assert rep.failure.failed
    assert rep.failure.category == FailureCategory(category)
    assert rep.failure.onset_line == onset
    assert rep.failure.action == action
    assert rep.failure.root_cause


def test_a_nan_loss_is_a_failure_from_its_first_line_even_if_steps_go_on():
    nan = "".join(f"iter {s}: loss nan, time 250.00ms\n" for s in range(60, 120, 10))
    rep = analyze_text(PROGRESS + nan)
    assert rep.failure.category == FailureCategory.nan and rep.failure.onset_line == 6
    assert rep.progress.last_loss is None  # not a number to report


def test_a_lasting_loss_spike_is_a_nan_failure_but_one_bad_value_is_not():
    base = "".join(f"step {s} loss 2.0{s % 7}\n" for s in range(1, 41))
    rep = analyze_text(base + "".join(f"step {s} loss 51234.0\n" for s in range(41, 45)))
    assert rep.failure.category == FailureCategory.nan and rep.failure.onset_line == 41
    rep = analyze_text(base + "step 41 loss 51234.0\n" + "".join(f"step {s} loss 2.01\n" for s in range(42, 46)))
    assert not rep.failure.failed


def test_argparse_errors_start_at_the_usage_line():
    rep = analyze_text("usage: train.py [-h] [--lr LR]\ntrain.py: error: unrecognized arguments: --lr_schedule\n")
    assert rep.failure.category == FailureCategory.user_code and rep.failure.onset_line == 1


BENIGN = {
    "fp16_overflow_deepspeed": "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n",
    "fp16_overflow_apex": "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n",
    "warning_mentioning_error": "/app/m.py:3: UserWarning: load_state_dict returned error_msgs=['size mismatch']\n"
                                "  warnings.warn(\n",
    "retried_connection_that_succeeds": "RuntimeError: Connection reset by peer while reading from store, retrying "
                                        "(attempt 1/5)\nstore client reconnected after 1 retry\n",
    "nccl_info_with_error_words": "node1:1:2 [0] NCCL INFO NET/IB : error handler installed, timeout 600\n",
    "caught_traceback": "Traceback (most recent call last):\n  File \"data.py\", line 7, in __getitem__\n"
                        "PIL.UnidentifiedImageError: cannot identify image file 'x.jpg'\nskipping sample\n",
}


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_benign_look_alikes_do_not_count_as_failures(name):
    rep = analyze_text(PROGRESS + BENIGN[name] + AFTER)
    assert not rep.failure.failed, rep.failure
    assert rep.failure.category == FailureCategory.none


def test_an_error_followed_by_no_progress_is_a_failure_but_the_same_error_followed_by_progress_is_not():
    err = "RuntimeError: Connection reset by peer\n"
    assert analyze_text(PROGRESS + err).failure.failed
    assert not analyze_text(PROGRESS + err + AFTER).failure.failed


def test_the_earliest_failure_wins_over_its_consequences():
    text = PROGRESS + FAILURES["oom"][0] + FAILURES["preempted"][0].replace("TIME LIMIT", "NODE FAILURE")
    text += "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 9 closing signal SIGTERM\n"
    rep = analyze_text(text)
    assert rep.failure.category == FailureCategory.oom and rep.failure.onset_line == 6


def test_a_hang_is_seen_from_timestamps_when_lines_keep_coming_without_progress():
    base = 1714560000.0
    lines = [f"{base + s:.1f} step {s}/1000 | loss 2.0" for s in range(1, 21)]
    quiet = lines + [f"{base + 20 + 100 * k:.1f} monitor: gpu_util=0%" for k in range(1, 3)]
    assert not analyze_text("\n".join(quiet) + "\n", hang_min_s=300).failure.failed  # 200 s: not yet
    lines += [f"{base + 20 + 400 * k:.1f} monitor: gpu_util=0%" for k in range(1, 3)]
    rep = analyze_text("\n".join(lines) + "\n", hang_min_s=300)
    assert rep.failure.category == FailureCategory.hang and rep.failure.onset_line == 21


def test_a_hang_is_seen_from_the_supplied_clock_when_following_a_log_without_timestamps():
    now = [1000.0]
    mon = Monitor(clock=lambda: now[0], hang_min_s=60)
    for s in range(1, 21):
        now[0] += 1.0
        mon.feed(f"iter {s}: loss 2.0, time 1000.00ms\n")
    assert not mon.report().failure.failed
    now[0] += 30
    assert not mon.report().failure.failed
    now[0] += 100
    rep = mon.report()
    assert rep.failure.category == FailureCategory.hang and rep.failure.action == FailureAction.restart_from_checkpoint


def test_a_report_becomes_scheduler_annotation_fields():
    healthy = analyze_text("".join(f"1714560{s:03d}.0 step {s}/100 | loss 2.0\n" for s in range(1, 51)))
    fields = annotation_fields(healthy)
    assert fields["failure"].failed is False and fields["predicted_remaining_s"] == pytest.approx(50, rel=0.05)
    failed = analyze_text(PROGRESS + FAILURES["node"][0])
    ann = to_annotation(failed, job_id="j1")
    assert ann.failure is not None and ann.failure.category == FailureCategory.node
    assert ann.failure.action == FailureAction.cordon_node and ann.failure.onset_line == 6
    assert ann.predicted_remaining_s is None


BAR = "".join(f"  1%|          | {s}/1500 [00:{2 * s:02d}<1:10:00,  2.91s/it]\n" for s in range(10, 20))


def test_a_crash_printed_onto_a_bar_after_many_bars_is_still_seen():
    r = analyze_text(BAR + "  1%|          | 20/1500 [00:58<1:10:00,  2.90s/it][rank2]:[E512 08:00:01.123456789 "
                     "ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operati\n")
    assert r.failure.category == FailureCategory.nccl and r.failure.onset_line == 11
    assert r.progress.current_step == 20


def test_a_nan_loss_on_a_known_progress_line_keeps_its_onset_while_training_goes_on():
    lines = "".join(f"step: {s}  loss: {'nan' if s >= 50 else '1.2000'}  memory: 30.00GiB(40.00%)  tps: 3,100\n"
                    for s in range(10, 110, 10))
    r = analyze_text(lines)
    assert r.failure.category == FailureCategory.nan and r.failure.onset_line == 5


def test_the_experiment_tracker_failing_is_other_and_its_warnings_and_retries_are_benign():
    warn = ("wandb: WARNING A graphql request initiated by the public wandb API timed out (timeout=19 sec).\n"
            "wandb: Network error (ReadTimeout), entering retry loop.\n")
    assert not analyze_text(PROGRESS + warn + AFTER).failure.failed
    r = analyze_text(PROGRESS + warn + "wandb: ERROR An error occurred while verifying the API key.\n"
                     "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                     "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='api.example', port=443): Read timed "
                     "out.\nwandb.errors.errors.AuthenticationError: An error occurred while verifying the API key.\n")
    assert r.failure.category == FailureCategory.other and r.failure.onset_line == 8


@pytest.mark.parametrize("line,category", [
    (("2025-01-01 10:00:00.000001: W tensorflow/core/framework/op_kernel.cc:1 OP_REQUIRES failed : Resource "
      "exhausted: OOM when allocating tensor with shape[64,512,512]"), FailureCategory.oom),
    ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.2GiB.",
     FailureCategory.oom),
    ("Killed", FailureCategory.oom),
    ("NaN or Inf found in input tensor.", FailureCategory.nan),
])
def test_more_failure_phrasings_get_their_category(line, category):
    r = analyze_text(PROGRESS + line + "\n")
    assert r.failure.category == category and r.failure.onset_line == 6


def test_python_s_exception_chain_lines_are_structure_and_a_network_library_exception_is_other():
    chain = ("During handling of the above exception, another exception occurred:\n"
             "The above exception was the direct cause of the following exception:\n")
    assert not analyze_text(PROGRESS + chain + AFTER).failure.failed
    r = analyze_text(PROGRESS + "Traceback (most recent call last):\n  File \"dl.py\", line 5, in fetch\n"
                     "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub.example', port=443)\n")
    assert r.failure.category == FailureCategory.other and r.failure.onset_line == 6


def test_pytorch_s_notes_under_a_cuda_error_do_not_change_its_category():
    r = analyze_text(PROGRESS + "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
                     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                     "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n")
    assert r.failure.category == FailureCategory.node and r.failure.onset_line == 6
    assert not analyze_text(PROGRESS + "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n" + AFTER).failure.failed


@pytest.mark.parametrize("line,category", [
    ("OSError: [Errno 12] Cannot allocate memory", FailureCategory.oom),
    ("srun: error: gpu-node-07: task 3: Killed", FailureCategory.oom),
    ("ERROR: Unexpected segmentation fault encountered in worker.", FailureCategory.dataloader),
])
def test_memory_and_worker_crash_phrasings_get_their_category(line, category):
    assert analyze_text(PROGRESS + line + "\n").failure.category == category
