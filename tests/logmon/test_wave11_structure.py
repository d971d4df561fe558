"""Mechanisms added for the eleventh real-log wave: a failure read by what the log does after it (a log that
ends in advancing progress survived the error; a generic error after the counter reached its total is the
clean-up of a finished run), the fp16 loss scale falling below 1, NaN in any loss-named value, a line pasted as
markdown inline code, and an epoch printed with how far into it the run is. Fixtures are our own lines in the
styles of real frameworks, with our own names and numbers."""

from __future__ import annotations

from schedmate.logmon.ingest import normalize_line
from tests.logmon.logmon_support import report_of

# -- survived: the log ends in progress past the error -------------------------------------------------------


def test_a_worker_crash_the_run_trains_on_after_is_no_failure():
    r = report_of(
        "INFO:vocoder:Train Epoch: 212 [40%]\n"
        "INFO:vocoder:[1.93, 2.71, 13.2, 19.8, 2.05, 118400, 0.00019]\n"
        "ERROR: Unexpected segmentation fault encountered in worker.\n"
        "INFO:vocoder:====> Epoch: 212\n"
        "INFO:vocoder:Train Epoch: 213 [3%]\n")
    assert not r.failure.failed
    assert r.progress.current_step == 213


def test_the_same_worker_crash_followed_by_a_traceback_ending_the_log_is_a_failure():
    r = report_of(
        "Epoch: 9       Time: 48.1200   Loss: 3.2010    LearningRate 0.000100\n"
        "ERROR: Unexpected segmentation fault encountered in worker.\n"
        "ERROR: Unexpected segmentation fault encountered in worker.\n"
        "Traceback (most recent call last):\n"
        '  File "train_restore.py", line 140, in <module>\n'
        "RuntimeError: DataLoader worker (pid 4411) is killed by signal: Segmentation fault.\n")
    assert r.failure.failed and r.failure.category.value == "dataloader"


def test_progress_that_only_repeats_the_count_at_the_error_does_not_clear_it():
    r = report_of(
        "INFO:vocoder:Train Epoch: 30 [10%]\n"
        "ERROR: Unexpected segmentation fault encountered in worker.\n"
        "INFO:vocoder:Train Epoch: 30 [10%]\n")
    assert r.failure.failed


def test_a_nan_loss_is_not_cleared_by_the_steps_that_follow_it():
    r = report_of(
        "disc_loss: nan, gen_loss: nan, gen_reg: nan, seen: 9\n"
        "  0%|          | 8/500000 [00:31<540:10:02,  3.89s/it]\n"
        "  0%|          | 9/500000 [00:35<540:10:00,  3.89s/it]\n")
    assert r.failure.failed and r.failure.category.value == "nan"


# -- finished first: clean-up errors after the counter reached its total ------------------------------------


def test_a_traceback_after_the_last_step_and_the_saved_weights_is_clean_up_of_a_finished_run():
    bar = "Steps: 100%|##########| {n}/250 [05:10<00:00,  1.24s/it, loss=0.31, lr=1e-4]\n"
    r = report_of(
        bar.format(n=249) + bar.format(n=250)
        + "Adapter weights saved in /runs/ab12/adapter_model.safetensors\n"
        + "Traceback (most recent call last):\n"
        + '  File "/runs/finetune_adapter.py", line 1610, in <module>\n'
        + "    main(cfg)\n")
    assert not r.failure.failed
    assert r.finished
    assert r.progress.current_step == 250 and r.progress.total_steps == 250


def test_the_same_traceback_before_the_last_step_is_a_failure():
    r = report_of(
        "Steps:  99%|#########9| 248/250 [05:08<00:02,  1.24s/it, loss=0.31]\n"
        "Traceback (most recent call last):\n"
        '  File "/runs/finetune_adapter.py", line 1610, in <module>\n'
        "    main(cfg)\n")
    assert r.failure.failed


def test_an_out_of_memory_after_the_last_step_keeps_its_category():
    r = report_of(
        "Steps: 100%|##########| 250/250 [05:10<00:00,  1.24s/it, loss=0.31]\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 640.00 MiB\n")
    assert r.failure.failed and r.failure.category.value == "oom"


def test_a_bar_that_restarts_each_epoch_at_its_end_is_no_finished_run_when_epochs_remain():
    r = report_of(
        "Epoch 2/12\n"
        "  100%|##########| 80/80 [00:40<00:00,  2.00it/s]\n"
        "Traceback (most recent call last):\n"
        '  File "fit.py", line 88, in <module>\n'
        "    run()\n")
    assert r.failure.failed


# -- loss-scale underflow ------------------------------------------------------------------------------------


def test_a_loss_scale_reduced_below_one_is_divergence():
    lines = "".join(f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {s}\n"
                    for s in ("3.0517578125e-05", "1.52587890625e-05", "7.62939453125e-06"))
    r = report_of(lines)
    assert r.failure.failed and r.failure.category.value == "nan"
    assert r.failure.onset_line == 1


def test_an_attempted_scale_halved_to_a_fraction_is_divergence():
    r = report_of("[fp16] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 0.5\n")
    assert r.failure.failed and r.failure.category.value == "nan"


def test_loss_scale_skips_at_healthy_scales_stay_benign():
    r = report_of(
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 4096.0\n"
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 2.0\n"
        "Rank 0 Skipping step. Attempted loss scale: 131072, reducing to 65536\n")
    assert not r.failure.failed


# -- nan in a loss-named value -------------------------------------------------------------------------------


def test_a_nan_in_any_loss_named_value_is_divergence():
    r = report_of(
        "Detector loss(epoch 3): cls_loss: 0.81, box_loss: 0.12, total_loss: 0.93\n"
        "Detector loss(epoch 3): cls_loss: nan, box_loss: 0.12, total_loss: nan\n")
    assert r.failure.failed and r.failure.category.value == "nan"
    assert r.failure.onset_line == 2


def test_a_nan_grad_norm_with_finite_losses_is_a_skipped_step_not_divergence():
    r = report_of(
        "{'loss': 0.2231, 'grad_norm': nan, 'learning_rate': 0.0002, 'epoch': 0.05}\n"
        "{'loss': 0.2187, 'grad_norm': 0.4120, 'learning_rate': 0.0002, 'epoch': 0.1}\n")
    assert not r.failure.failed


# -- lines pasted as markdown inline code -------------------------------------------------------------------


def test_a_killed_line_pasted_as_inline_code_is_read_as_the_line():
    assert normalize_line("`Killed`", 3).text == "Killed"
    r = report_of("`2025-03-04 10:00:01,100 INFO Training Started.`\n`Killed`\n")
    assert r.failure.failed and r.failure.category.value == "oom"


def test_a_line_with_inline_code_inside_it_keeps_its_backticks():
    assert normalize_line("set `num_workers` to 0 and `pin_memory` off", 1).text == \
        "set `num_workers` to 0 and `pin_memory` off"


# -- a bar faster than any training step counts data ---------------------------------------------------------


def test_a_bar_at_thousands_of_items_per_second_is_data_work_not_the_training_counter():
    r = report_of(
        "Using GPU for training\n"
        "100%|##########| 400000/400000 [00:31<00:00, 12903.22it/s]\n"
        "Killed\n")
    assert r.progress.current_step is None and r.progress.total_steps is None
    assert r.failure.category.value == "oom"


def test_a_slow_bar_after_a_fast_data_bar_is_the_training_counter():
    r = report_of(
        "100%|##########| 12/12 [00:00<00:00, 5120.50it/s]\n"
        " 10%|#         | 30/300 [00:45<06:45,  1.50s/it]\n"
        " 10%|#         | 31/300 [00:46<06:43,  1.50s/it]\n")
    assert r.progress.current_step == 31 and r.progress.total_steps == 300
    assert r.progress.iteration_time_s is not None and abs(r.progress.iteration_time_s - 1.5) < 0.2


# -- an epoch line's own time when the epoch is the counter --------------------------------------------------


def test_the_time_on_an_epoch_summary_line_is_the_time_of_that_epoch_when_the_epoch_is_the_counter():
    r = report_of("".join(
        f"Epoch: {e}       Time: {t}   Loss: {l}    LearningRate 0.000300\n"
        for e, t, l in ((21, "44.1020", "5.1201"), (22, "43.8810", "5.0412"), (23, "44.3005", "4.9987"))))
    assert r.progress.current_step == 23
    assert r.progress.iteration_time_s is not None and abs(r.progress.iteration_time_s - 44.1) < 1.0


# -- a save that names its step ------------------------------------------------------------------------------


def test_a_save_line_naming_its_iteration_moves_the_counter_and_clears_an_earlier_warning():
    r = report_of(
        "Epoch: 6\n"
        "Validation loss 3120:  0.201733\n"
        "Saving model and optimizer state at iteration 3120 to run_a.pt\n"
        "Epoch 6 time 21.117 lr 0.001\n"
        "Epoch: 7\n"
        "Warning: NaN or Inf found in input tensor.\n"
        "Validation loss 3640:  0.498812\n"
        "Saving model and optimizer state at iteration 3640 to run_a.pt\n")
    assert r.progress.current_step == 3640
    assert not r.failure.failed


def test_an_epoch_lines_time_is_not_taken_for_a_step_time_when_steps_are_counted():
    r = report_of(
        "Saving model and optimizer state at iteration 500 to run_b.pt\n"
        "Epoch 1 time 30.200 lr 0.001\n"
        "Saving model and optimizer state at iteration 1000 to run_b.pt\n"
        "Epoch 2 time 30.400 lr 0.001\n")
    assert r.progress.current_step == 1000
    assert r.progress.iteration_time_s is None or r.progress.iteration_time_s < 1.0
