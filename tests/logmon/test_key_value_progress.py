"""Counters, step times and divergence read from key/value progress prints by their structure (our own fixture
lines, in the styles of real frameworks, with our own names and numbers)."""

from __future__ import annotations

from schedmate.logmon.tables import (
    epoch_seconds,
    field_of_key,
    fields_of,
    inline_pairs,
    nonfinite_loss,
    parse_value,
)
from tests.logmon.logmon_support import report_of


def test_a_bare_bracketed_counter_beside_an_epoch_is_the_within_epoch_step():
    lines = "".join(f"[03/09 14:02:{10 + i:02d}] trainer.hooks INFO: Ep: [2] [{150 + i}/900] lr: 0.000120 "
                    f"loss: {1.25 - i / 100:.4f} loss_box: 0.4100 batch_cost: 0.{210 + i}0 reader_cost: 0.0010 "
                    f"ips: 38.1 images/s\n" for i in range(3))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps, r.progress.epoch) == (152, 900, 2)
    assert abs(r.progress.iteration_time_s - 0.211) < 1e-9


def test_a_bare_bracketed_counter_without_an_epoch_is_not_taken_for_training():
    r = report_of("Embedding pass: [40/120]    Time 0.512 (0.600)    Data 0.001 (0.050)\n"
                  "Embedding pass: [80/120]    Time 0.498 (0.560)    Data 0.001 (0.030)\n")
    assert r.progress.current_step is None


def test_dates_and_ranges_in_brackets_are_not_counters():
    pairs = dict(inline_pairs("[12/31/2024 10:00] epoch: 3 shard [7/2] window [0.1/0.9] loss: 2.0"))
    assert "_bracket" not in pairs


def test_counters_written_in_parentheses_without_a_colon_are_read():
    lines = "".join(f"Round (2/8), batch ({n}/1200), loss: {0.9 - n / 10000:.3f}\n" for n in (100, 200, 300))
    r = report_of(lines.replace("Round", "Epoch"))
    assert (r.progress.current_step, r.progress.total_steps) == (300, 1200)
    assert (r.progress.epoch, r.progress.total_epochs) == (2, 8)


def test_a_batch_size_alone_is_not_a_step_counter():
    assert fields_of(inline_pairs("batch: 32, loss: 0.5, lr: 0.1")) is None
    assert fields_of(inline_pairs("batch (5/40), loss: 0.5, lr: 0.1")) == {"step": 5, "total_steps": 40, "loss": 0.5,
                                                                         "lr": 0.1}


def test_a_time_per_iteration_is_read_from_any_key_that_names_it():
    assert field_of_key("elapsed_time_per_iteration_ms") == "ms_it"
    assert field_of_key("train_step_time") == "s_it"
    assert field_of_key("data_time_per_iter") is None
    assert parse_value("2.4K", "ms_it") == 2400.0


def test_many_steps_stamped_within_one_second_take_the_printed_step_time_not_zero():
    lines = "".join(f"2025-03-01 10:00:07 [INFO|rank=0]: iteration: {n} / 600 | lm_loss: 4.1 | "
                    f"duration_per_step_ms: 52.{n % 10} | grad_norm: 0.5\n" for n in range(410, 414))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (413, 600)
    assert r.progress.iteration_time_s is not None and abs(r.progress.iteration_time_s - 0.0525) < 1e-3


def test_a_thousands_suffixed_step_time_in_milliseconds_is_read_as_seconds():
    lines = "".join(f"iteration: {n} / 9000 | tok_per_s: 3.1K | time_per_iteration_ms: 4.2K | lm_loss: 2.9\n"
                    for n in (7001, 7002, 7003))
    r = report_of(lines)
    assert abs(r.progress.iteration_time_s - 4.2) < 1e-9


def test_a_seconds_key_on_a_step_line_is_the_step_time():
    lines = "".join(f"finished step: {n}, seconds: 1.8{n % 10}, model_tflops: 120.5, loss: 2.2\n"
                    for n in (120, 121, 122))
    r = report_of(lines)
    assert r.progress.current_step == 122
    assert abs(r.progress.iteration_time_s - 1.81) < 1e-9


def test_an_elapsed_running_total_is_not_taken_as_the_step_time():
    lines = "".join(f"[ fit | step = {s}/900 | elapsed time = {2.0 + 0.08 * s:.2f} (s) ]\n" for s in range(0, 250, 50))
    r = report_of(lines)
    assert abs(r.progress.iteration_time_s - 0.08) < 1e-6


def test_a_nan_in_any_loss_like_metric_is_a_divergence():
    ok = "[2024-05-02 08:00:00,100 INFO] Step 300/9000; acc:  40.10; ppl:  9.21; xent: 2.22; lr: 0.00050;  612 sec\n"
    bad = "[2024-05-02 08:03:00,100 INFO] Step 350/9000; acc:   0.20; ppl:   nan; xent:  nan; lr: 0.00050;  792 sec\n"
    r = report_of(ok + bad + bad.replace("350", "400").replace("08:03", "08:06"))
    assert r.failure.category.value == "nan" and r.failure.failed and r.failure.onset_line == 2


def test_a_nan_loss_in_a_progress_bar_postfix_is_a_divergence():
    r = report_of("train:  10%|#         | 10/100 [00:10<01:30,  1.00s/it, running_loss=nan]\n"
                  "train:  20%|##        | 20/100 [00:20<01:20,  1.00s/it, running_loss=nan]\n")
    assert r.failure.category.value == "nan"


def test_an_infinite_loss_scale_or_gradient_norm_is_not_a_divergence():
    assert not nonfinite_loss("step 10/100 loss 2.31 loss_scale: inf grad_norm 1.2 (inf)")
    assert nonfinite_loss("epoch 3 | CELoss: nan | top1: 0.01")
    r = report_of("Train: [3/90][40/500]  time 0.61 (0.62)  loss 5.61 (5.70)  grad_norm 2.04 (inf)  mem 9000MB\n"
                  "Train: [3/90][50/500]  time 0.60 (0.62)  loss 5.55 (5.69)  grad_norm 1.98 (inf)  mem 9000MB\n")
    assert r.failure.category.value == "none" and not r.failure.failed


def test_a_gpu_kernel_memory_fault_is_a_crash_not_an_out_of_memory():
    r = report_of("epoch: 4/40, iter: 60/300, iter_time: 0.41s, total_loss: 2.0\n"
                  "terminate called after throwing an instance of 'c10::Error'\n"
                  "  what():  CUDA error: an illegal memory access was encountered\n")
    assert r.failure.category.value == "segfault" and r.failure.onset_line == 2


def test_an_update_counter_of_a_key_value_block_is_the_step():
    block = ("-------------------------------\n| fps              | 61        |\n| nupdates         | 512       |\n"
             "| policy_loss      | -0.0123   |\n| time_elapsed     | 8400      |\n| total_timesteps  | 262144    |\n-------------------------------\n")
    r = report_of(block + block.replace("| 512 ", "| 513 ").replace("8400 ", "8416 "))
    assert r.progress.current_step == 513


def test_the_time_an_epoch_took_is_the_time_per_increment_when_the_epoch_is_the_counter():
    text = ("------------------ Epoch  7 / 40 ------------------\n"
            "| Progress [####      ][40.00%] | LR 0.0010 | Loss   1.2000 (  1.3000) |\n"
            "- Mean Loss: 1.150\n- Epoch Time: 0:02:10\n"
            "------------------ Epoch  8 / 40 ------------------\n"
            "| Progress [####      ][40.00%] | LR 0.0010 | Loss   1.1000 (  1.2000) |\n"
            "- Mean Loss: 1.050\n- Epoch Time: 0:02:14\n")
    r = report_of(text)
    assert (r.progress.current_step, r.progress.total_steps) == (8, 40)
    assert abs(r.progress.iteration_time_s - 132.0) < 1e-9


def test_only_a_line_that_states_an_epoch_duration_alone_is_read_as_one():
    assert epoch_seconds("This epoch took 95.25 s") == 95.25
    assert epoch_seconds("  - epoch_time: 3600") == 3600.0
    assert epoch_seconds("Epoch Time: 0:04:41 (remaining 3:00:00)") is None
    assert epoch_seconds("epoch time budget exceeded") is None
