"""General readers of counters, rates and failure lines as real logs print them (our own fixture lines)."""

from __future__ import annotations

from schedmate.logmon.ingest import normalize_line, parse_timestamp
from schedmate.logmon.tables import elapsed_figure
from tests.logmon.logmon_support import report_of


def test_a_tqdm_bar_with_a_custom_unit_gives_its_counter_and_rate():
    r = report_of("Round 1/5:   1%|1         | 12/900 [00:30<37:00,  2.50s/batch, loss=0.8, seen=5012]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (12, 900)
    assert abs(r.progress.iteration_time_s - 2.5) < 1e-9


def test_a_tqdm_bar_counting_frames_per_second_gives_the_inverse_rate():
    r = report_of("Fold 2:  40%|####      | 40/100 [00:10<00:15,  4.00frames/s, loss=0.3]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (40, 100)
    assert abs(r.progress.iteration_time_s - 0.25) < 1e-9


def test_an_evaluation_bar_named_beside_the_epoch_is_not_the_training_counter():
    r = report_of("Epoch 4 loss=0.31: 100%|##########| 250/250 [05:00<00:00,  1.20s/it]\n"
                  "Epoch 4 (validation) acc=0.72:   8%|8         | 30/400 [00:10<02:00,  3.00it/s]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (250, 250)
    assert abs(r.progress.iteration_time_s - 1.2) < 1e-9


def test_a_shell_job_report_of_a_killed_command_is_an_oom_kill():
    r = report_of("step 10 loss 1.0\nstep 20 loss 0.9\n"
                  "./launch.sh: line 12: 40211 Killed                  python fit.py --cfg a.yaml\n")
    assert r.failure.category.value == "oom" and r.failure.failed and r.failure.onset_line == 3


def test_an_interactive_shell_killed_job_is_an_oom_kill():
    r = report_of("step 10 loss 1.0\n[1]+  Killed                  python fit.py\n")
    assert r.failure.category.value == "oom"


def test_epoch_lines_without_a_total_count_epochs_and_time_them_from_timestamps():
    lines = "".join(f"2025-03-01 10:{i * 2:02d}:00,000 [INFO] Epoch {i}, Time {120.0 * i:.1f}s, Loss 0.{50 - i}\n"
                    for i in range(1, 7))
    r = report_of(lines)
    assert r.progress.current_step == 6 and r.progress.total_steps is None
    assert abs(r.progress.iteration_time_s - 120.0) < 1e-6


def test_an_epoch_line_does_not_displace_a_step_counter():
    lines = "".join(f"step {s}/400 loss 0.5\n" for s in (10, 20, 30)) + "Epoch 1: train_loss 0.5 val_acc 0.7\n"
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (30, 400)


def test_a_counter_on_a_timed_line_without_loss_is_the_step_and_seconds_per_n_iterations_are_divided():
    r = report_of("Epoch: 2\tIteration: 40\tTime 9.000s / 20iters, (0.450)\tData 0.1s / 20iters\n"
                  "lr = [0.01]\tLoss = 1.2\n")
    assert r.progress.current_step == 40 and r.progress.total_steps is None
    assert abs(r.progress.iteration_time_s - 0.45) < 1e-9


def test_a_report_per_range_of_batches_counts_the_range_end():
    r = report_of("2024-06-01 08:00:00,000 (trainer:1) INFO: 2epoch:train:1-50batch: loss=2.0\n"
                  "2024-06-01 08:00:40,000 (trainer:1) INFO: 2epoch:train:51-100batch: loss=1.9\n")
    assert r.progress.current_step == 100 and r.progress.total_steps is None


def test_two_agreeing_timestamp_intervals_over_many_steps_beat_a_framework_time_field():
    lines = ("2024-06-01 08:00:00,000 INFO: 1-100batch: loss=2.0, iter_time=0.2\n"
             "2024-06-01 08:01:30,000 INFO: 101-200batch: loss=1.9, iter_time=0.2\n"
             "2024-06-01 08:03:01,000 INFO: 201-300batch: loss=1.8, iter_time=0.2\n")
    r = report_of(lines)
    assert r.progress.current_step == 300
    assert abs(r.progress.iteration_time_s - 0.905) < 0.01


def test_a_resume_line_and_a_total_in_words_give_the_counters():
    r = report_of("Planned: 500 epochs for total iters 40000.\nStart training from epoch: 311, iter: 25000\n")
    assert (r.progress.current_step, r.progress.total_steps) == (25000, 40000)


def test_a_bracketed_timestamp_followed_by_a_bracketed_logger_tag_is_parsed():
    ts, rest = parse_timestamp("[2024-02-03 04:05:06][trainer][INFO] - Epoch 3: loss 0.2")
    assert ts is not None and rest.startswith("[trainer]")


def test_a_nan_loss_in_a_tqdm_postfix_is_a_nan_failure():
    r = report_of("Fitting:   5%|5         | 50/1000 [00:20<06:20,  2.50it/s, Loss=0.91]\n"
                  "Fitting:  10%|#         | 100/1000 [00:40<06:00,  2.50it/s, Loss=nan]\n")
    assert r.failure.category.value == "nan" and r.failure.failed
    assert r.progress.current_step == 100


def test_json_lines_with_an_epoch_and_a_loss_count_epochs():
    lines = "".join(f'{{"train_lr": 0.001, "train_loss": {2.0 - e / 10:.3f}, "epoch": {e}, "n_parameters": 1000}}\n'
                    for e in range(3, 8))
    r = report_of(lines)
    assert r.progress.current_step == 7 and r.progress.total_steps is None


def test_json_lines_with_a_quoted_step_key_are_step_events():
    r = report_of('{"step": 10, "loss": 1.5, "time": 0.2}\n{"step": 20, "loss": 1.4, "time": 0.2}\n')
    assert r.progress.current_step == 20
    assert abs(r.progress.iteration_time_s - 0.2) < 1e-9


def test_bars_of_data_work_in_examples_or_bytes_are_not_the_training_counter():
    r = report_of("Map: 100%|##########| 870/870 [00:00<00:00, 1846.48 examples/s]\n"
                  "weights.bin: 100%|##########| 512/512 [00:09<00:00, 55.1MB/s]\n"
                  "  3%|3         | 1/30 [00:20<09:40, 20.00s/it]\n  7%|6         | 2/30 [00:25<05:00, 10.70s/it]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (2, 30)


def test_a_bare_bar_is_described_by_the_short_line_before_it():
    r = report_of("loading label files.\n100% 40/40 [00:00<00:00, 900.00it/s]\nbuilding cache...\n"
                  "100% 8/8 [00:16<00:00,  2.00s/it]\nstarting the run\n")
    assert r.progress.current_step is None and r.progress.iteration_time_s is None


def test_a_bare_bar_after_a_training_banner_is_the_training_counter():
    r = report_of("***** Running training *****\n  1%|1         | 10/1000 [00:05<08:15,  2.00it/s]\n"
                  "  2%|2         | 20/1000 [00:10<08:10,  2.00it/s]\n")
    assert (r.progress.current_step, r.progress.total_steps) == (20, 1000)
    assert abs(r.progress.iteration_time_s - 0.5) < 1e-9


def test_a_running_elapsed_total_on_counter_lines_gives_the_time_per_step():
    lines = "".join(f"[ fit | step = {s}/900 | loss = {3.0 - s / 1000:.2f} | elapsed time = {2.0 + 0.08 * s:.2f} (s) ]\n"
                    for s in range(0, 250, 50))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (200, 900)
    assert abs(r.progress.iteration_time_s - 0.08) < 1e-6


def test_elapsed_time_per_iteration_is_not_a_running_total():
    assert elapsed_figure("iteration 10/100 | elapsed time per iteration (ms): 512.0 |") == {}
    assert elapsed_figure("step 3 elapsed: 93.5s") == {"elapsed_s": 93.5}


def test_a_current_and_average_time_pair_with_units_is_the_time_per_iteration():
    r = report_of("Epoch: [4][120/3000]\tTime: 0.410s (0.455s)\tSpeed: 39.0 samples/s\tData: 0.001s (0.020s)\n")
    assert (r.progress.current_step, r.progress.total_steps) == (120, 3000)
    assert abs(r.progress.iteration_time_s - 0.41) < 1e-9


def test_a_log_pasted_as_a_markdown_quote_is_read_like_the_log():
    lines = "".join(f"> [2024-03-0{d} 0{h}:00:00][run][INFO] - Epoch {i}: train_mse 0.{90 - i}\n"
                    for i, (d, h) in enumerate([(1, 1), (1, 2), (1, 3), (1, 4)]))
    r = report_of(lines)
    assert r.progress.current_step == 3
    assert abs(r.progress.iteration_time_s - 3600.0) < 1e-6


def test_a_counter_in_brackets_after_the_epoch_is_the_within_epoch_counter():
    r = report_of("[epoch 2][40/800] loss 0.7 time 0.25\n[epoch 2][80/800] loss 0.6 time 0.27\n")
    assert (r.progress.current_step, r.progress.total_steps, r.progress.epoch) == (80, 800, 2)
    assert abs(r.progress.iteration_time_s - 0.26) < 1e-9


def test_epoch_and_step_pairs_in_adjacent_brackets_are_read():
    r = report_of("Train: [3/50][25/250] Loss 0.9\nTrain: [3/50][50/250] Loss 0.8\n")
    assert (r.progress.current_step, r.progress.total_steps, r.progress.total_epochs) == (50, 250, 50)


def test_a_counter_with_its_unit_and_a_time_before_its_figure_are_read():
    r = report_of("| epoch   2 |   100/ 1500 batches | lr 5.00 | ms/batch 40.00 | loss  4.10\n"
                  "| epoch   2 |   200/ 1500 batches | lr 5.00 | ms/batch 42.00 | loss  4.00\n")
    assert (r.progress.current_step, r.progress.total_steps) == (200, 1500)
    assert abs(r.progress.iteration_time_s - 0.041) < 1e-9


def test_an_epoch_and_batch_tuple_with_a_loss_is_a_counter():
    r = report_of("[2,   500] loss: 1.912\n[2,  1000] loss: 1.804\n")
    assert r.progress.current_step == 1000 and r.progress.epoch == 2


def test_named_step_times_in_ms_or_seconds_are_read():
    assert report_of("step 10 | loss 3.0 | dt 250.0ms\nstep 20 | loss 2.9 | dt 270.0ms\n").progress.iteration_time_s == 0.26
    assert report_of("global_step=5 loss=1.0 sec_per_step=0.5\n").progress.iteration_time_s == 0.5
    assert report_of("Step 7 | Loss 1.0 | Step time 1.5s\n").progress.iteration_time_s == 1.5


def test_data_or_forward_time_without_a_colon_is_not_the_step_time():
    r = report_of("iter 10 loss 2.0 data time 0.05\niter 20 loss 1.9 forward time 0.2\n")
    assert r.progress.current_step == 20 and r.progress.iteration_time_s is None


def test_a_traceback_python_says_it_ignored_is_no_failure():
    r = report_of("100%|##########| 500/500 [04:10<00:00,  2.00it/s]\nTraining completed.\n"
                  "Exception ignored in: <function Worker.__del__ at 0x7f0000>\nTraceback (most recent call last):\n"
                  '  File "pool.py", line 40, in __del__\nTypeError: \'NoneType\' object is not callable\n')
    assert r.failure.category.value == "none" and not r.failure.failed


def test_a_real_traceback_after_an_ignored_one_is_still_a_failure():
    r = report_of("step 10 loss 1.0\nException ignored in: <function Worker.__del__ at 0x7f0000>\n"
                  "Traceback (most recent call last):\n  File \"pool.py\", line 40, in __del__\nTypeError: boom\n"
                  "step 20 loss 0.9\nTraceback (most recent call last):\n  File \"fit.py\", line 9, in <module>\n"
                  "ValueError: shapes do not match\n")
    assert r.failure.category.value == "user_code" and r.failure.failed


def test_an_old_keras_bar_counting_samples_is_read_with_its_per_sample_time():
    r = report_of("Epoch 1/4\n5000/5000 [==============================] - 10s 2ms/sample - loss: 0.40\n"
                  "Epoch 2/4\n2500/5000 [==============>...............] - ETA: 5s - loss: 0.35\n")
    assert (r.progress.current_step, r.progress.total_steps, r.progress.epoch) == (2500, 5000, 2)
    assert abs(r.progress.iteration_time_s - 0.002) < 1e-9
    r = report_of("Epoch 1/2\n8000/8000 [==============================] - 2s 250us/sample - loss: 0.3\n")
    assert abs(r.progress.iteration_time_s - 0.00025) < 1e-12


def test_a_floating_point_exception_crash_is_a_signal_crash():
    r = report_of("iter 10 loss 1.0\niter 20 loss 0.9\nFloating point exception (core dumped)\n")
    assert r.failure.category.value == "segfault" and r.failure.failed and r.failure.onset_line == 3


def test_day_first_and_time_of_day_stamps_are_parsed():
    assert normalize_line("04/07/2021 03:15:20 PM: [ step 3 ]", 1).ts is not None
    assert normalize_line("28-02-2023 16:05 | INFO: go", 1).text == "INFO: go"
    a, b = normalize_line("[10:00:05] step 1", 1), normalize_line("[10:00:35] step 2", 1)
    assert b.ts - a.ts == 30.0 and a.text == "step 1"
    assert normalize_line("(3, 4) is a pair", 1).ts is None


def test_steps_stamped_with_the_time_of_day_are_timed():
    r = report_of("".join(f"[11:{m:02d}:00] step {s} loss 1.0\n" for m, s in ((0, 100), (2, 200), (4, 300), (6, 400))))
    assert r.progress.current_step == 400 and abs(r.progress.iteration_time_s - 1.2) < 1e-9


def test_batch_and_update_counters_with_a_loss_are_step_counters_not_epoch_lines():
    r = report_of("Epoch 2 Batch 300 Loss 1.2345\nEpoch 2 Batch 400 Loss 1.2001\n")
    assert (r.progress.current_step, r.progress.epoch) == (400, 2)
    r = report_of("update 50 | loss 2.0 | ups 4.0\nupdate 60 | loss 1.9 | ups 4.0\n")
    assert r.progress.current_step == 60 and r.progress.iteration_time_s == 0.25


def test_key_value_lines_with_a_train_step_key_are_step_events():
    r = report_of("train_step=10 train_loss=0.9 step_time=0.5\ntrain_step=20 train_loss=0.8 step_time=0.5\n")
    assert r.progress.current_step == 20 and r.progress.iteration_time_s == 0.5
