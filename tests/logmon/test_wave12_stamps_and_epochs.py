"""Mechanisms added for the twelfth real-log wave (iteration time and failure look-alikes), each on our own
fixture lines written in the styles of real frameworks with our own names and numbers: a logging stamp glued to
its level or logger (`,250:INFO: `, `:07-runner.py-INFO:`), the informational level header dropped so anchored
progress rules read the message, an epoch's duration in brackets beside its counter, and a loss that jumps at a
new training stage and comes down again (not a divergence)."""

from __future__ import annotations

from schedmate.logmon.failures import FailureTracker
from schedmate.logmon.ingest import normalize_line
from schedmate.logmon.tables import bracketed_duration
from tests.logmon.logmon_support import report_of


def test_a_stamp_glued_to_its_level_by_a_colon_is_a_stamp_and_the_level_is_dropped():
    ll = normalize_line("2023-11-04 08:12:30,250:INFO: Epoch: [7][20/60]\tLoss 0.4 (0.5)", 1)
    assert ll.ts is not None and ll.ts % 60 == 30.25
    assert ll.text.startswith("Epoch: [7][20/60]")


def test_a_bracketed_stamp_glued_to_a_logger_by_a_dash_keeps_only_the_message():
    ll = normalize_line("[2023-11-04 08:12:07-runner.py-INFO:epoch: 4, split: holdout, f1: 0.61]", 1)
    assert ll.ts is not None and ll.ts % 60 == 7
    assert ll.text.startswith("epoch: 4, split: holdout")


def test_a_level_header_with_logger_and_line_number_is_dropped_but_a_warning_keeps_its_word():
    assert normalize_line("2023-11-04 08:12:07 - INFO - fit_loop.py - 88 - step 12/300 loss 1.5", 1).text \
        == "step 12/300 loss 1.5"
    assert normalize_line("2023-11-04 08:12:07 INFO:root:step 12", 1).text == "step 12"
    assert normalize_line("2023-11-04 08:12:07 - WARNING - disk almost full", 1).text.startswith("WARNING")


def test_a_metric_logger_counter_behind_a_glued_logging_stamp_gives_steps_and_iteration_time():
    lines = "".join(f"2023-11-04 08:{10 + i // 6:02d}:{(i % 6) * 10:02d},000:INFO: Epoch: [3][{i * 8:3d}/96]\t"
                    f"Loss {1.0 / (i + 1):.4f} ({1.0:.4f})\n" for i in range(12))
    rep = report_of(lines)
    assert (rep.progress.current_step, rep.progress.total_steps) == (88, 96)
    assert abs(rep.progress.iteration_time_s - 10 / 8) < 1e-6


def test_an_epochs_duration_in_brackets_is_the_time_per_epoch_when_the_epoch_is_the_counter():
    assert bracketed_duration(" [212.4s] | lr 1e-4") == 212.4
    assert bracketed_duration(" done (3 min)") == 180.0
    assert bracketed_duration(" [12/40] loss 2.0") is None
    text = "".join(f"Epoch {e}/60 [{40 + e % 3}.5s] | LR: 1e-4 | Train Loss: {2 - e / 10:.3f} | Val Loss: 1.0\n"
                   for e in range(1, 8))
    rep = report_of(text)
    assert (rep.progress.current_step, rep.progress.total_steps) == (7, 60)
    assert rep.progress.iteration_time_s == 41.5


def test_a_loss_that_jumps_at_a_new_stage_and_comes_down_again_is_no_divergence():
    tracker = FailureTracker()
    for i in range(30):
        tracker.on_loss(0.002 + i * 1e-5, i + 1, "loss", None)
    for i, loss in enumerate((5.9, 3.8, 0.9, 0.6, 0.4)):  # a second stage starts with a fresh head
        tracker.on_loss(loss, 31 + i, f"loss {loss}", None)
    assert tracker.verdict() is None


def test_a_loss_that_jumps_and_stays_up_is_still_a_divergence():
    tracker = FailureTracker()
    for i in range(30):
        tracker.on_loss(2.0 + (i % 5) * 0.01, i + 1, "loss", None)
    for i, loss in enumerate((310.0, 290.0, 420.0, 380.0)):
        tracker.on_loss(loss, 31 + i, f"loss {loss}", None)
    c = tracker.verdict()
    assert c is not None and c.category == "nan" and c.onset_line == 31


def test_the_interpreter_refusing_a_missing_script_or_module_is_a_code_error():
    for line in ("python: can't open file '/srv/jobs/fit_model.py': [Errno 2] No such file or directory\n",
                 "/opt/venv/bin/python3.10: No module named trainer.entry\n",
                 "python3: Error while finding module specification for 'trainer.entry' "
                 "(ModuleNotFoundError: No module named 'trainer')\n"):
        rep = report_of(line)
        assert rep.failure.category.value == "user_code" and rep.failure.onset_line == 1, line


def test_a_script_that_only_mentions_an_unopenable_file_is_not_a_launch_error():
    rep = report_of("step 1/10 loss 2.0\nnote: we can't open file handles beyond the ulimit, raising it\n"
                    "step 2/10 loss 1.9\nstep 3/10 loss 1.8\n")
    assert not rep.failure.failed


def test_a_logging_header_with_no_message_stamps_the_line_that_carries_the_message():
    text = "".join(f"2023-11-04 {8 + e // 3:02d}:{(e % 3) * 20:02d}:00 - INFO - fit_loop.py - 71 - \n"
                   f"EPOCH {e} of 12\nsome untimed detail\n" for e in range(1, 6))
    rep = report_of(text)
    assert (rep.progress.current_step, rep.progress.total_steps) == (5, 12)
    assert rep.progress.iteration_time_s == 1200.0


def test_total_steps_beside_an_epoch_number_is_a_running_count_but_alone_is_a_total():
    text = "".join(f"report at (epoch {e}, total_steps {e * 640})\nloss: 0.{9 - e}\n" for e in range(1, 6))
    rep = report_of(text)
    assert rep.progress.current_step == 3200 and rep.progress.total_steps is None
    rep = report_of("config: total steps: 9000\n" + "".join(f"step {s} loss 1.0\n" for s in range(1, 4)))
    assert rep.progress.total_steps == 9000


def test_errors_of_earlier_launches_do_not_fail_a_run_that_then_trains_to_its_end():
    text = ("Traceback (most recent call last):\n  File \"fit.py\", line 3, in <module>\n    import torch\n"
            "ModuleNotFoundError: No module named 'torch'\n"
            + "".join(f"report at (epoch {e}, total_steps {e * 640})\nloss: 0.{9 - e}\n" for e in range(1, 6))
            + "saving the model at the end of epoch 5, total_steps 3200\n")
    rep = report_of(text)
    assert not rep.failure.failed and rep.progress.current_step == 3200
