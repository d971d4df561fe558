"""Readers added for the seventh real-log wave, each on our own fixture lines (written in the styles of real
frameworks, with our own names and numbers): running elapsed totals, per-epoch batch ids, evaluation and
fetch bars, deep tracebacks, divergence reported by the run's own check, counters without other evidence,
counters whose second number grows, start-up banners and CSV metric records."""

from __future__ import annotations

from schedmate.logmon.progress import side_label
from schedmate.logmon.tables import elapsed_figure
from tests.logmon.logmon_support import report_of

# -- running elapsed totals ------------------------------------------------------------------------------


def test_a_capitalised_time_elapsed_total_is_a_running_total():
    assert elapsed_figure("Step: 4000. Time Elapsed: 52.250 s Mean Score: 1.5") == {"elapsed_s": 52.25}


def test_the_step_time_comes_from_the_growth_of_a_running_elapsed_total():
    lines = "".join(f"INFO:agents.learner: run_a: Walker: Step: {n}. Time Elapsed: {40.0 + 2.5 * (n - 6000) / 500:.3f} s "
                    f"Mean Score: 0.{n // 500}. Training.\n" for n in range(6000, 9500, 500))
    r = report_of(lines)
    assert r.progress.current_step == 9000
    assert abs(r.progress.iteration_time_s - 0.005) < 1e-9


# -- per-epoch batch ids ---------------------------------------------------------------------------------


def test_a_batch_id_beside_the_epoch_is_the_counter_and_the_epoch_summary_is_not():
    lines = []
    for ep in range(3):
        for k, b in enumerate((0, 400, 800)):
            lines.append(f"2023-05-0{ep + 1} 10:{k * 3:02d}:00,000 - INFO - epoch: {ep}, batch_id: {b}, auc: 0.71, "
                         f"loss: 0.{40 - ep}, avg_reader_cost: 0.00010 sec, avg_batch_cost: 0.45000 sec, ips: 900 ins/s")
        lines.append(f"2023-05-0{ep + 1} 10:09:00,000 - INFO - epoch: {ep} done, auc: 0.72, loss: 0.3, epoch time: 540.0 s")
    r = report_of("\n".join(lines) + "\n")
    assert (r.progress.current_step, r.progress.epoch) == (800, 2)
    assert abs(r.progress.iteration_time_s - 0.45) < 1e-9


# -- bars that are not training --------------------------------------------------------------------------


def test_an_inference_bar_is_not_training_even_when_it_names_the_train_set():
    assert side_label("Inferencing model in train datasets.: 100%|█████| ")
    assert side_label("Fetching 9 files:  40%|████      | ")
    assert not side_label("Epoch 3:  40%|████      | ")


# -- failures --------------------------------------------------------------------------------------------


def test_a_deep_traceback_takes_its_category_from_the_exception_that_ends_it():
    frames = "".join(f'  File "/opt/app/pkg/mod{i}.py", line {10 + i}, in f{i}\n    f{i + 1}()\n' for i in range(30))
    r = report_of("step 1/100 loss 2.0 time 0.5\nTraceback (most recent call last):\n" + frames
                  + "RuntimeError: CUDA error: device-side assert triggered\n")
    assert r.failure.category.value == "user_code"
    assert r.failure.onset_line == 2


def test_a_warning_raised_on_a_non_finite_loss_is_divergence():
    r = report_of("loop 3 of 10\nRuntimeWarning: round 2, batch 7, loss nan\n")
    assert (r.failure.category.value, r.failure.failed) == ("nan", True)


def test_a_warning_about_a_non_finite_loss_scale_is_not_divergence():
    r = report_of("loop 3 of 10\nUserWarning: loss_scale is inf, lowering it\n")
    assert r.failure.failed is False


# -- counters with no loss or time beside them ----------------------------------------------------------


def test_a_step_key_that_keeps_growing_is_the_counter_without_loss_or_time():
    lines = "".join(f"INFO:trainer: run-2: Hopper: Step: {n}. Mean Return: {n / 1000 - 3:.3f}. Std of Return: 0.5.\n"
                    for n in range(2000, 12000, 2000))
    lines += "INFO:trainer: run-2: Hopper: Step: 12000. No episode ended since the last summary.\n"
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (12000, None)


def test_json_records_with_a_step_key_are_progress():
    lines = "".join(f'{{"episode": {k * 20}.0, "return": {k * 3.5}, "eval_seconds": 12.5, "step": {k * 5000}}}\n'
                    for k in range(4))
    assert report_of(lines).progress.current_step == 15000


def test_numbered_setup_steps_are_not_a_counter():
    r = report_of("Step: 1. Downloading the corpus\nStep: 2. Building the vocabulary\nStep: 3. Writing shards\n")
    assert r.progress.current_step is None


def test_a_step_key_that_does_not_grow_is_not_a_counter():
    r = report_of("step: 2 files: 40 size: 1.5\nstep: 2 files: 41 size: 1.5\nstep: 1 files: 39 size: 1.6\n")
    assert r.progress.current_step is None


# -- CSV metric records ----------------------------------------------------------------------------------


def test_csv_metric_rows_under_a_header_with_a_step_column_are_progress_dated_by_their_timestamp_cell():
    rows = ["train/loss,val/score,global_step,epoch,created_at"]
    rows += [f"0.{50 - k},0.8,{100 * k + 99}.0,0,2024-02-03 10:{2 * k:02d}:00.250000" for k in range(6)]
    r = report_of("\n".join(rows) + "\n")
    assert r.progress.current_step == 599
    assert abs(r.progress.iteration_time_s - 1.2) < 1e-9


def test_comma_separated_prose_is_not_a_csv_table():
    r = report_of("loading shards,tokenizer,vocab\n1,2,3\nsteps,epochs,done\n")
    assert r.progress.current_step is None


# -- counters whose second number grows, banners, cut bars -----------------------------------------------


def test_a_pair_whose_second_number_grows_is_the_epoch_and_the_counter():
    lines = ("2024-03-01 09:00:00,000 INFO TRAIN Batch 4/1200 loss 2.10 acc 0.41 lr 0.0004 rank 0\n"
             "2024-03-01 09:00:40,000 INFO TRAIN Batch 4/1300 loss 2.05 acc 0.42 lr 0.0004 rank 0\n")
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps, r.progress.epoch) == (1300, None, 4)
    assert abs(r.progress.iteration_time_s - 0.4) < 1e-9


def test_a_counter_out_of_a_fixed_total_stays_a_counter():
    lines = "".join(f"2024-03-01 09:00:{10 * k:02d},000 INFO train step {100 + 10 * k}/5000 loss 1.{k} lr 0.1\n"
                    for k in range(4))
    r = report_of(lines)
    assert (r.progress.current_step, r.progress.total_steps) == (130, 5000)


def test_a_start_banner_with_the_total_means_no_step_is_done_yet():
    r = report_of("==(( banner ))==  Finetune kit | Num GPUs = 1\n"
                  "   Num examples = 640 | Num Epochs = 3\n"
                  "   Total batch size = 16 | Total steps = 120\n")
    assert (r.progress.current_step, r.progress.total_steps) == (0, 120)


def test_without_a_banner_an_unstarted_log_has_no_step():
    assert report_of("loading weights\nbuilding the model\n").progress.current_step is None


def test_a_bar_cut_before_its_rate_is_read_with_its_elapsed_time():
    rows = "".join(f"      {e}/49      1.20    0.3{e}: 100%|##########| 80/80 [00:{20 + e % 2:02d}<00:00,\n"
                   for e in range(4))
    r = report_of(rows)
    assert (r.progress.current_step, r.progress.total_steps) == (80, 80)
    assert 0.25 <= r.progress.iteration_time_s <= 0.2625


# -- process prefixes ------------------------------------------------------------------------------------


def test_a_ray_worker_prefix_is_not_part_of_the_message():
    r = report_of("(TrainActor pid=5120) Traceback (most recent call last):\n"
                  '(TrainActor pid=5120)   File "/srv/job/loop.py", line 40, in update\n'
                  "(TrainActor pid=5120)     out.backward()\n"
                  "(TrainActor pid=5120) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB.\n")
    assert (r.failure.category.value, r.failure.onset_line) == ("oom", 1)


def test_a_ray_prefix_in_front_of_a_rank_prefix_and_a_timestamp_is_removed_too():
    from schedmate.logmon.ingest import normalize_line
    ll = normalize_line("(Worker pid=77, ip=10.1.2.3) [2024-05-01 12:00:00,500] step 10/50 loss 1.0", 1)
    assert ll.text == "step 10/50 loss 1.0" and ll.ts is not None
